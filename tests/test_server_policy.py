"""predictor.server.policy: which job events get a prediction, and the safe fallback."""

from hypothesis import given
from hypothesis import strategies as st

from predictor.server.config import parse_hook_config
from predictor.server.events import JobView
from predictor.server.policy import Plan, plan, within_walltime

CONFIG = parse_hook_config({"reader_dsn": "host=127.0.0.1"})
KEEP = CONFIG._replace(keep_admin_soft_walltime=True)


def view(hook_event="queuejob", walltime=3600, explicit=None, existing=None, user="alice", queue="workq",
         shrink=False):
    return JobView(hook_event, None, user, queue, walltime, explicit, existing, shrink)


def test_queuejob_with_walltime_is_predicted():
    """A submission with a walltime and no soft_walltime gets a prediction."""
    assert plan(view(), CONFIG) == Plan(True, None)


def test_no_walltime_means_nothing():
    """Without a walltime there is nothing to predict (runjob will see the default)."""
    assert plan(view(walltime=None), CONFIG) == Plan(False, None)


def test_shrink_to_fit_jobs_are_left_alone():
    """PBS forbids soft_walltime on shrink-to-fit jobs."""
    assert plan(view(shrink=True), CONFIG) == Plan(False, None)


def test_admin_value_at_qsub_kept_when_configured():
    """keep_admin_soft_walltime keeps a soft_walltime given at qsub."""
    assert plan(view(explicit=600), KEEP) == Plan(False, None)


def test_admin_value_at_qsub_replaced_by_default():
    """By default a soft_walltime given at qsub is replaced by the prediction."""
    assert plan(view(explicit=600), CONFIG).predict


def test_qalter_of_soft_walltime_is_never_overridden():
    """A qalter that sets soft_walltime itself is left to PBS to check."""
    assert plan(view("modifyjob", walltime=600, explicit=300, existing=3000), CONFIG) == Plan(False, None)


def test_qalter_lowering_walltime_repredicts_with_fallback():
    """A qalter lowering walltime under soft_walltime predicts again, falling back to the new walltime."""
    assert plan(view("modifyjob", walltime=600, existing=3000), CONFIG) == Plan(True, 600)


def test_skipped_user_gets_only_the_fallback():
    """A skipped user gets no prediction, but soft_walltime still stays within walltime."""
    config = CONFIG._replace(skip_users=frozenset(["alice"]))
    assert plan(view("runjob", walltime=600, existing=3000), config) == Plan(False, 600)


def test_skipped_queue_gets_no_prediction():
    """A job in a skipped queue gets no prediction."""
    assert plan(view(queue="debug"), CONFIG._replace(skip_queues=frozenset(["debug"]))) == Plan(False, None)


def test_keep_admin_keeps_existing_values_at_runjob():
    """With keep_admin_soft_walltime, runjob keeps whatever soft_walltime the job has."""
    assert plan(view("runjob", existing=1200), KEEP) == Plan(False, None)


def test_unknown_user_gets_no_prediction():
    """An event without a user name cannot be matched to a history."""
    assert not plan(view(user=None), CONFIG).predict


def test_within_walltime_only_changes_illegal_values():
    """Legal values need no change; too large ones become the walltime, zero becomes 1."""
    assert [within_walltime(soft, 600) for soft in (None, 1, 600, 601, 0)] == [None, None, None, 600, 1]


views = st.builds(view, hook_event=st.sampled_from(["queuejob", "runjob", "modifyjob"]),
                  walltime=st.one_of(st.none(), st.integers(-5, 10 ** 6)),
                  explicit=st.one_of(st.none(), st.integers(0, 10 ** 6)),
                  existing=st.one_of(st.none(), st.integers(0, 10 ** 6)),
                  user=st.sampled_from([None, "", "alice", "bob"]), shrink=st.booleans())
configs = st.builds(lambda keep, users: CONFIG._replace(keep_admin_soft_walltime=keep, skip_users=frozenset(users)),
                    st.booleans(), st.lists(st.sampled_from(["alice", "bob"])))


@given(views, configs)
def test_fallback_is_always_legal(job_view, config):
    """Whatever the event, a fallback value lies within [1, walltime]."""
    fallback = plan(job_view, config).fallback_s
    assert fallback is None or 1 <= fallback <= job_view.walltime_s


@given(views, configs)
def test_existing_value_above_walltime_is_always_lowered(job_view, config):
    """A soft_walltime above the walltime is never left there, unless the request itself set one."""
    decision = plan(job_view, config)
    too_large = job_view.existing_soft_s is not None and job_view.walltime_s is not None \
        and job_view.existing_soft_s > job_view.walltime_s >= 1
    if too_large and job_view.explicit_soft_s is None and not job_view.shrink_to_fit:
        assert decision.fallback_s == job_view.walltime_s


HOURLY = parse_hook_config({"reader_dsn": "host=127.0.0.1", "runjob_after_queued_s": 3600})


def submitted(hook_event, ctime, existing=None):
    return view(hook_event, existing=existing)._replace(submit_time=ctime)


def test_runjob_predicts_again_only_for_jobs_queued_an_hour():
    """runjob_after_queued_s 3600 (CESNET's production hook): a job submitted 59:59 before its start keeps its
    soft_walltime, one submitted an hour before gets a new prediction; queuejob is not affected."""
    assert plan(submitted("runjob", 10000, existing=600), HOURLY, now=10000 + 3599) == Plan(False, None)
    assert plan(submitted("runjob", 10000, existing=600), HOURLY, now=10000 + 3600) == Plan(True, None)
    assert plan(submitted("queuejob", 10000), HOURLY, now=10000) == Plan(True, None)


def test_runjob_always_predicts_again_by_default():
    """Without runjob_after_queued_s, or without a ctime, runjob predicts for every job."""
    assert plan(submitted("runjob", 10000, existing=600), CONFIG, now=10001) == Plan(True, None)
    assert plan(submitted("runjob", None, existing=600), HOURLY, now=10001) == Plan(True, None)


def test_runjob_queued_briefly_still_gets_the_fallback():
    """A job kept from re-prediction still has a soft_walltime above its walltime lowered to it."""
    assert plan(submitted("runjob", 10000, existing=7200), HOURLY, now=10001) == Plan(False, 3600)
