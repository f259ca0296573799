"""Room on one vnode over a job's time, and vnode sharing (check_resources_for_node, is_excl)."""

from replay.pbs.jobs import PbsJob
from replay.pbs.resources import parse_place, parse_select
from replay.pbs.room import FutureUse, Window, fits_over_time, free_over_time, hold, is_excl, is_exclhost, release
from replay.pbs.vnodes import Vnode

A = Vnode("a", "a", (("ncpus", 8),))


def window(future, place="free", now=0, end=100):
    job = PbsJob(0, "1.svr", "u", "g", "p", "workq", parse_select("1:ncpus=1"), parse_place(place), 100, None, 0, 0)
    return Window(job, {"a": future}, now, end)


def test_sharing_rules():
    """is_excl and is_exclhost follow the vnode's sharing and the job's place as PBS does."""
    assert is_excl(parse_place("free"), "default_excl")
    assert not is_excl(parse_place("shared"), "default_excl")
    assert is_excl(parse_place("shared"), "force_excl")
    assert not is_excl(parse_place("excl"), "ignore_excl")
    assert is_excl(parse_place("exclhost"), "default_shared")
    assert is_exclhost(parse_place("free"), "default_exclhost")
    assert not is_exclhost(parse_place("excl"), "default_exclhost")


def test_hold_and_release():
    """release undoes hold, and a vnode with no job left leaves the used map."""
    used, counts = {}, {}
    allocation = (("a", (("ncpus", 2),)), ("a", (("ncpus", 1),)))
    hold(used, counts, allocation)
    assert used == {"a": {"ncpus": 3}} and counts == {"a": 1}
    release(used, counts, allocation)
    assert used == {} and counts == {}


def test_least_free_over_the_window():
    """What stays free is the least at any start inside the window, ends before it given back."""
    future = [FutureUse(10, False, False, (("ncpus", 2),)), FutureUse(20, True, False, (("ncpus", 6),)),
              FutureUse(150, True, False, (("ncpus", 8),))]
    assert free_over_time(window(future), A, "ncpus", {"ncpus": 4}) == 0
    assert free_over_time(window(future, end=20), A, "ncpus", {"ncpus": 4}) == 4


def test_changes_before_now_ignored():
    """A change dated before now is not walked."""
    future = [FutureUse(5, True, False, (("ncpus", 8),))]
    assert fits_over_time(window(future, now=10), A, (("ncpus", 8),), {})


def test_exclusive_job_admits_no_change_in_its_window():
    """A job holding the vnode exclusively cannot overlap any change on it before it ends."""
    future = [FutureUse(50, True, False, (("ncpus", 1),))]
    assert not fits_over_time(window(future, "excl"), A, (("ncpus", 1),), {})
    assert fits_over_time(window(future, "excl", end=50), A, (("ncpus", 1),), {})
