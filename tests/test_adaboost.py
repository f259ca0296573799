"""replay.shared.adaboost: Rubio et al.'s AdaBoost regression, learning only from jobs completed before."""

import numpy as np
from hypothesis import given, settings
from strategies import replay_jobs

from replay.accuracy.predictions import NO_PREDICTION, replay_accuracy
from replay.shared.adaboost import AdaBoostLearner, features
from replay.shared.predictors import resolve
from replay.simulation.cluster import Cluster
from replay.simulation.engine import SchedulerSettings, simulate_jobs
from replay.traces.trace import Job

EVERY_PREDICTION = resolve("adaboost:refit_hours=0")


def job(job_id, submit, start, runtime, walltime, user="alice", ncpus=1):
    return Job(job_id, user, submit, runtime, walltime, ncpus, start, start + runtime)


# alice's jobs all ask for 1000 s on one core: the same features, so a model can only learn their runtimes.
# Job 1 ends at 100 and job 2 at 950; jobs 3-5 are predicted at 200, 950 (job 2 ends then: not yet seen)
# and 951.
ONE_USER = [job("1", 0, 0, 100, 1000), job("2", 50, 50, 900, 1000), job("3", 200, 2000, 10, 1000),
            job("4", 950, 2000, 10, 1000), job("5", 951, 2000, 10, 1000)]


def _fitted_on(jobs):
    """What scikit-learn's AdaBoostRegressor (seed 0) fitted on ``jobs`` predicts for alice's 1000 s request."""
    from sklearn.ensemble import AdaBoostRegressor

    model = AdaBoostRegressor(random_state=0).fit([features(done, 0) for done in jobs],
                                                  [done.runtime_s for done in jobs])
    return int(model.predict([features(ONE_USER[-1], 0)])[0])


def test_learns_only_jobs_completed_before_the_submission():
    """Before job 2 ends (at 950) alice's estimate is learned from job 1 alone (100 s); from 951 on, from both:
    job 2's runtime, still running at the submissions of jobs 3 and 4, is not learned from."""
    both = _fitted_on(ONE_USER[:2])
    assert both != 100
    submit = replay_accuracy(ONE_USER, [EVERY_PREDICTION], instants=("submit",)).at("submit", "adaboost:refit_hours=0")
    assert submit.tolist() == [1000, 1000, _fitted_on(ONE_USER[:1]), 100, both]


def test_no_completion_yet_gives_the_walltime():
    """Before any job has completed there is nothing to learn from: the walltime."""
    learner = AdaBoostLearner(ONE_USER, seed=0, refit_s=0)
    assert learner.estimate(ONE_USER[0], 0) == 1000


def test_refits_only_after_the_refit_interval():
    """With a 24 h interval the model fitted at the first prediction stands until a day has passed."""
    learner = AdaBoostLearner(ONE_USER, seed=0, refit_s=86400)
    learner.observe(ONE_USER[0], 100, 100)
    assert learner.estimate(ONE_USER[2], 200) == 100
    learner.observe(ONE_USER[1], 950, 900)
    assert learner.estimate(ONE_USER[4], 951) == 100
    assert learner.estimate(ONE_USER[4], 200 + 86400) == _fitted_on(ONE_USER[:2])


def test_simulation_learns_from_simulated_completions_only():
    """In the simulation, job 3 (submitted at 200 while job 2 runs) is planned with job 1's runtime alone; it runs
    at once and ends at 210, and job 2 at 950, before job 4's submission at that instant (ends come first)."""
    done = simulate_jobs(ONE_USER, EVERY_PREDICTION, Cluster.of_cores(2), SchedulerSettings(cycle_interval_s=0))
    assert [scheduled.end_time for scheduled in done][:3] == [100, 950, 210]
    later = _fitted_on([ONE_USER[0], ONE_USER[2], ONE_USER[1]])
    assert [scheduled.soft_walltime_queued_s for scheduled in done] == [1000, 1000, 100, later, later]


def test_features_are_user_walltime_and_requested_processors():
    """The paper's features the traces hold; no walltime is -1, requested processors before allocated."""
    assert features(job("1", 0, 0, 5, None, ncpus=4)._replace(requested_ncpus=8), 3) == (3, -1, 8)


def _trace(count=120):
    """A deterministic trace of three users whose runtimes depend on the walltime they ask for."""
    jobs = []
    for index in range(count):
        walltime = (1 + index % 4) * 900
        submit = index * 300
        jobs.append(job(str(index), submit, submit, walltime // (2 + index % 3), walltime,
                        user=("alice", "bob", "carol")[index % 3], ncpus=1 + index % 5))
    return jobs


def test_same_input_same_predictions_twice():
    """Seeded: two replays of one trace give the same predictions, as do two simulations."""
    jobs = _trace()
    first, second = (replay_accuracy(jobs, [resolve("adaboost")]).values for _ in range(2))
    assert np.array_equal(first, second)
    assert (first[0, 10:, 0] != 900 * (1 + np.arange(10, 120) % 4)).any()  # it did learn something
    runs = [[done.soft_walltime_queued_s for done in simulate_jobs(jobs, resolve("adaboost"), Cluster.of_cores(8))]
            for _ in range(2)]
    assert runs[0] == runs[1]


@settings(max_examples=40, deadline=None)
@given(replay_jobs())
def test_estimate_within_one_second_and_the_walltime(jobs):
    """Like every predictor: no walltime gives none, else whole seconds in [1, walltime]."""
    values = replay_accuracy(jobs, [EVERY_PREDICTION]).values
    for index, trace_job in enumerate(jobs):
        for value in values[:, index, 0].tolist():
            if not trace_job.walltime_s:
                assert value == NO_PREDICTION
            else:
                assert 1 <= value <= trace_job.walltime_s
