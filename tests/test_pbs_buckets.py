"""Node buckets: PBS's path for exclusive jobs on machines of one vnode per host."""

from replay.pbs.buckets import uses_buckets
from replay.pbs.jobs import PbsJob
from replay.pbs.placement import FutureUse, Machine
from replay.pbs.resources import parse_place, parse_select
from replay.pbs.vnodes import Vnode


def job(select="1:ncpus=1", place="excl"):
    return PbsJob(0, "1.svr", "u", "g", "p", "workq", parse_select(select), parse_place(place), 100, None, 0, 0)


def machine(*sizes, host=None):
    names = ["n{}".format(i) for i in range(len(sizes))]
    return Machine([Vnode(name, host or name, (("ncpus", size),)) for name, size in zip(names, sizes)])


def names(allocation):
    return [name for name, _ in allocation]


def test_only_exclusive_unpacked_jobs_on_single_vnode_hosts():
    """Buckets serve excl and exclhost jobs, not shared, pack, host-naming jobs or multi-vnode hosts."""
    m = machine(4, 4)
    assert uses_buckets(m, job()) and uses_buckets(m, job(place="scatter:exclhost"))
    assert not uses_buckets(m, job(place="free"))
    assert not uses_buckets(m, job(place="pack:excl"))
    assert not uses_buckets(m, job("1:ncpus=1:host=n1"))
    assert not uses_buckets(machine(4, 4, host="h"), job())


def test_gap_before_a_reservation_comes_first():
    """An exclusive job that ends before a top job's reservation takes that vnode before an empty one."""
    m = machine(4, 4)
    future = {"n1": [FutureUse(200, True, True, (("ncpus", 4),))]}
    assert names(m.place(job(), {}, set(), future, now=0, end=100)) == ["n1"]


def test_reservation_too_soon_is_skipped():
    """A vnode reserved before the job would end is not used."""
    m = machine(4, 4)
    future = {"n0": [FutureUse(50, True, True, (("ncpus", 4),))]}
    assert names(m.place(job(), {}, set(), future, now=0, end=100)) == ["n1"]


def test_vnodes_with_jobs_are_busy():
    """A vnode running any job is not used."""
    assert names(machine(4, 4).place(job(), {"n0": {"ncpus": 1}}, set())) == ["n1"]


def test_copies_per_vnode():
    """A vnode takes as many copies of a chunk as it holds empty; scatter takes one per vnode."""
    m = machine(4, 4)
    assert names(m.place(job("3:ncpus=2"), {}, set())) == ["n0", "n0", "n1"]
    assert names(m.place(job("2:ncpus=2", "scatter:excl"), {}, set())) == ["n0", "n1"]


def test_buckets_by_resources():
    """Vnodes of another size form another bucket, searched in its own turn."""
    m = machine(2, 8, 2)
    assert names(m.place(job("1:ncpus=4"), {}, set())) == ["n1"]
    assert m.place(job("2:ncpus=4", "scatter:excl"), {}, set()) is None
