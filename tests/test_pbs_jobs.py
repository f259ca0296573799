"""The end PBS plans for a job: soft walltime, extension by whole soft walltimes, walltime, five years."""

from hypothesis import given
from hypothesis import strategies as st

from replay.pbs.jobs import JOB_INFINITY_S, PbsJob, planned_duration, planned_end, total
from replay.pbs.resources import Place, parse_select


def job(soft=None, walltime=None, select="1:ncpus=1"):
    return PbsJob(0, "1.svr", "u", "g", "p", "workq", parse_select(select), Place(), walltime, soft, 0, 0)


def test_soft_walltime_first():
    """A job is planned with its soft walltime, not its walltime."""
    assert planned_duration(job(soft=300, walltime=3600)) == 300


def test_extension_by_whole_soft_walltimes():
    """Past its soft walltime a job is planned S, 2S, 3S ... capped at walltime (extend_soft_walltime)."""
    j = job(soft=100, walltime=250)
    assert [planned_duration(j, e) for e in (100, 101, 199, 200, 201)] == [100, 200, 200, 250, 250]


def test_without_soft_walltime():
    """Walltime, then now + 1 once past it; five years with neither."""
    assert planned_duration(job(walltime=60), 10) == 60
    assert planned_end(job(walltime=60), 0, 70) == 71
    assert planned_duration(job()) == JOB_INFINITY_S


@given(st.integers(1, 10 ** 4), st.integers(1, 10 ** 5), st.integers(0, 10 ** 6))
def test_planned_end_never_before_the_start_of_the_plan(soft, extra, elapsed):
    """The planned duration is at least the soft walltime and never above the walltime."""
    j = job(soft=soft, walltime=soft + extra)
    assert soft <= planned_duration(j, elapsed) <= soft + extra


def test_totals_over_chunks():
    """ncpus of 2:ncpus=4+1:ncpus=1 is 9; a job-wide Resource_List value wins over the sum."""
    j = job(select="2:ncpus=4+1:ncpus=1")
    assert total(j, "ncpus") == 9 and j.resource("ncpus") == 9
    assert j._replace(resources=(("ncpus", 12),)).resource("ncpus") == 12
