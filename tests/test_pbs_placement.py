"""Where PBS puts a job's chunks: vnode order, resources compared, exclusivity, place, the calendar."""

from replay.pbs.jobs import PbsJob
from replay.pbs.placement import FutureUse, Machine
from replay.pbs.policy import SortKey
from replay.pbs.resources import parse_place, parse_select
from replay.pbs.vnodes import Vnode


def job(select="1:ncpus=1", place="free", queue="workq"):
    return PbsJob(0, "1.svr", "u", "g", "p", queue, parse_select(select), parse_place(place), 100, None, 0, 0)


def vnode(name, ncpus=4, host=None, sharing="default_shared", priority=0, **more):
    available = tuple(sorted(dict(ncpus=ncpus, **more).items()))
    return Vnode(name, host or name, available, sharing, None, priority)


def names(allocation):
    return [name for name, _ in allocation]


def test_first_fit_in_server_order():
    """Each chunk goes on the first vnode, in the server's order, with room for it."""
    machine = Machine([vnode("a", 2), vnode("b", 4), vnode("c", 4)])
    assert names(machine.place(job("1:ncpus=3"), {}, set())) == ["b"]


def test_sort_priority_first():
    """node_sort_key sort_priority HIGH searches high-priority vnodes first."""
    machine = Machine([vnode("a", priority=1), vnode("b", priority=5)], node_sort_key=(SortKey("sort_priority", True),))
    assert names(machine.place(job(), {}, set())) == ["b"]


def test_used_amounts_count():
    """Amounts held by running jobs are not free."""
    machine = Machine([vnode("a", 4), vnode("b", 4)])
    assert names(machine.place(job("1:ncpus=2"), {"a": {"ncpus": 3}}, set())) == ["b"]


def test_free_chunks_share_a_vnode():
    """With place=free several chunks of one job may share a vnode."""
    machine = Machine([vnode("a", 4), vnode("b", 4)])
    assert names(machine.place(job("3:ncpus=1"), {}, set())) == ["a", "a", "a"]


def test_scatter_one_chunk_per_host():
    """With place=scatter no two chunks share a host."""
    machine = Machine([vnode("a", 4), vnode("b", 4), vnode("c", 4)])
    assert names(machine.place(job("3:ncpus=1", "scatter"), {}, set())) == ["a", "b", "c"]


def test_scatter_fails_without_enough_hosts():
    """Three scattered chunks do not fit on two hosts, however large."""
    machine = Machine([vnode("a", 64), vnode("b", 64)])
    assert machine.place(job("3:ncpus=1", "scatter"), {}, set()) is None


def test_pack_on_one_host():
    """With place=pack every chunk lands on one host: the first that holds them all."""
    machine = Machine([vnode("a", 2), vnode("b", 4)])
    assert names(machine.place(job("2:ncpus=2", "pack"), {}, set())) == ["b", "b"]


def test_vscatter_one_chunk_per_vnode_of_a_host():
    """With place=vscatter two chunks use two vnodes of one host."""
    machine = Machine([vnode("h[0]", 4, host="h"), vnode("h[1]", 4, host="h")])
    assert names(machine.place(job("2:ncpus=1", "vscatter"), {}, set())) == ["h[0]", "h[1]"]


def test_excl_needs_an_empty_vnode():
    """place=excl skips a vnode that runs any job, even with room left."""
    machine = Machine([vnode("a", 8), vnode("b", 8)])
    assert names(machine.place(job("1:ncpus=1", "excl"), {"a": {"ncpus": 1}}, set())) == ["b"]


def test_exclusive_vnode_takes_no_job():
    """A vnode held exclusively by a running job takes no other job."""
    machine = Machine([vnode("a", 8), vnode("b", 8)])
    assert names(machine.place(job(), {"a": {"ncpus": 1}}, {"a"})) == ["b"]


def test_job_busy_vnode_takes_no_job():
    """A vnode whose cpus are all assigned takes no job, not even one asking no cpus."""
    machine = Machine([vnode("a", 2, mem=100), vnode("b", 2, mem=100)])
    assert names(machine.place(job("1:ncpus=0:mem=10kb"), {"a": {"ncpus": 2}}, set())) == ["b"]


def test_exclhost_takes_the_whole_host():
    """place=exclhost takes every vnode of the host it uses."""
    machine = Machine([vnode("h[0]", 4, host="h"), vnode("h[1]", 4, host="h")])
    assert names(machine.place(job("1:ncpus=1", "exclhost"), {}, set())) == ["h[0]", "h[1]"]


def test_only_listed_resources_are_compared():
    """ngpus is not checked unless sched_config's resources line lists it."""
    gpus = job("1:ncpus=1:ngpus=2")
    assert Machine([vnode("a")], ("ncpus",)).place(gpus, {}, set()) is not None
    assert Machine([vnode("a")], ("ncpus", "ngpus")).place(gpus, {}, set()) is None


def test_host_requirement():
    """A chunk asking host=b goes on host b only."""
    machine = Machine([vnode("a"), vnode("b")])
    assert names(machine.place(job("1:ncpus=1:host=b"), {}, set())) == ["b"]


def test_queue_bound_vnode():
    """A vnode tied to a queue takes only that queue's jobs."""
    machine = Machine([Vnode("a", "a", (("ncpus", 4),), queue="gpu"), vnode("b")])
    assert names(machine.place(job(), {}, set())) == ["b"]
    assert names(machine.place(job(queue="gpu"), {}, set())) == ["a"]


def test_reservation_blocks_an_overlapping_job():
    """A job that would still run when a top job starts on the vnode does not fit there."""
    machine = Machine([vnode("a", 4)])
    future = {"a": [FutureUse(50, True, False, (("ncpus", 4),))]}
    assert machine.place(job(), {}, set(), future, now=0, end=100) is None
    assert machine.place(job(), {}, set(), future, now=0, end=50) is not None


def test_room_beside_a_reservation():
    """A job may overlap a top job's window when the vnode has room for both."""
    machine = Machine([vnode("a", 4)])
    future = {"a": [FutureUse(50, True, False, (("ncpus", 3),))]}
    assert machine.place(job(), {}, set(), future, now=0, end=100) is not None
    assert machine.place(job("1:ncpus=2"), {}, set(), future, now=0, end=100) is None


def test_ends_before_a_reservation_give_room():
    """A running job ending before the reservation starts gives its cpus back for the check."""
    machine = Machine([vnode("a", 4)])
    future = {"a": [FutureUse(20, False, False, (("ncpus", 2),)), FutureUse(50, True, False, (("ncpus", 4),))]}
    assert machine.place(job("1:ncpus=2"), {"a": {"ncpus": 2}}, set(), future, now=0, end=100) is None
    future["a"][1] = FutureUse(50, True, False, (("ncpus", 2),))
    assert machine.place(job("1:ncpus=2"), {"a": {"ncpus": 2}}, set(), future, now=0, end=100) is not None


def test_exclusive_reservation_admits_no_overlap():
    """An exclusive top job admits no overlapping job on its vnode, however small."""
    machine = Machine([vnode("a", 64)])
    future = {"a": [FutureUse(50, True, True, (("ncpus", 1),))]}
    assert machine.place(job(), {}, set(), future, now=0, end=100) is None


def test_fits_empty():
    """A job asking more than the machine's totals can never run; within them it may."""
    machine = Machine([vnode("a", 4), vnode("b", 4)])
    assert machine.fits_empty(job("2:ncpus=4"))
    assert not machine.fits_empty(job("3:ncpus=4"))
    assert not machine.fits_empty(job("3:ncpus=1", "scatter"))


def test_eligibility_judged_before_the_first_chunk():
    """An excl job's chunks may share a vnode: PBS judges a vnode empty before placing any chunk."""
    machine = Machine([vnode("a", 4), vnode("b", 4)])
    assert names(machine.place(job("2:ncpus=1", "excl"), {}, set())) == ["a", "a"]


def test_never_fits_a_missing_host():
    """A chunk asking for a host that does not exist can never run."""
    assert not Machine([vnode("a")]).fits_empty(job("1:ncpus=1:host=zz"))


def test_chunk_spread_over_vnodes_of_one_host():
    """On a host of several vnodes a chunk no vnode holds whole is spread over them in order."""
    machine = Machine([vnode("h[0]", 4, host="h"), vnode("h[1]", 4, host="h")])
    assert machine.place(job("1:ncpus=6"), {}, set()) == (("h[0]", (("ncpus", 4),)), ("h[1]", (("ncpus", 2),)))


def test_chunk_kept_whole_when_a_vnode_holds_it():
    """A chunk that fits whole on some vnode of the host is not spread."""
    machine = Machine([vnode("h[0]", 4, host="h"), vnode("h[1]", 4, host="h")])
    assert names(machine.place(job("1:ncpus=3"), {"h[0]": {"ncpus": 2}}, set())) == ["h[1]"]


ONE_HOST = [vnode("h[0]", 2, host="h"), vnode("h[1]", 4, host="h"), vnode("h[2]", 4, host="h"),
            vnode("h[3]", 8, host="h")]
"""Four vnodes of one MoM on one host, as a recording on the real server had them."""


def test_vscatter_judges_a_whole_chunk_on_the_vnodes_before_the_job():
    """vscatter, one host: the first chunk takes h[1] whole, and h[1] as it was before the job could hold the
    second whole too, so PBS does not spread it (and h[2] and h[3] each have one ncpu left): the job does not
    fit. Recorded: PBS started a job of 1:ncpus=4 on those three vnodes instead."""
    used = {"h[0]": {"ncpus": 2}, "h[1]": {"ncpus": 2}, "h[2]": {"ncpus": 3}, "h[3]": {"ncpus": 7}}
    machine = Machine(ONE_HOST)
    assert machine.place(job("2:ncpus=2", "vscatter"), used, set()) is None
    assert machine.place(job("1:ncpus=4", "pack"), used, set()) == (
        ("h[1]", (("ncpus", 2),)), ("h[2]", (("ncpus", 1),)), ("h[3]", (("ncpus", 1),)))


def test_a_vnode_passed_over_is_not_looked_at_again_for_the_same_part_of_the_select():
    """2:ncpus=3 pack, one host with 0, 0, 2 and 5 ncpus free: the first chunk passes over h[2] and takes h[3];
    the second may be spread (no vnode has 3 left) but only over the vnodes not passed over, h[3] with 2: it
    does not fit. Recorded: PBS started a job of 1:ncpus=6 there instead (h[0] kept free for a top job). A
    part of its own (2:ncpus=3+1:ncpus=1) looks at every vnode again."""
    used = {"h[0]": {"ncpus": 2}, "h[1]": {"ncpus": 4}, "h[2]": {"ncpus": 2}, "h[3]": {"ncpus": 3}}
    machine = Machine(ONE_HOST)
    assert machine.place(job("2:ncpus=3", "pack"), used, set()) is None
    assert machine.place(job("1:ncpus=6", "pack"), used, set()) == (
        ("h[2]", (("ncpus", 2),)), ("h[3]", (("ncpus", 4),)))
    assert machine.place(job("1:ncpus=3+1:ncpus=1", "pack"), used, set()) == (
        ("h[3]", (("ncpus", 3),)), ("h[2]", (("ncpus", 1),)))


def test_spread_never_crosses_hosts():
    """A chunk is spread over the vnodes of one host only."""
    machine = Machine([vnode("a[0]", 2, host="a"), vnode("a[1]", 2, host="a"), vnode("b", 2)])
    assert machine.place(job("1:ncpus=6"), {}, set()) is None
    assert names(machine.place(job("1:ncpus=4"), {}, set())) == ["a[0]", "a[1]"]


def test_spread_respects_reservations():
    """A spread chunk takes from each vnode only what stays free until the job ends."""
    machine = Machine([vnode("h[0]", 4, host="h"), vnode("h[1]", 4, host="h")])
    future = {"h[0]": [FutureUse(50, True, False, (("ncpus", 3),))]}
    assert machine.place(job("1:ncpus=6"), {}, set(), future, now=0, end=100) is None
    placed = machine.place(job("1:ncpus=5"), {}, set(), future, now=0, end=100)
    assert placed == (("h[0]", (("ncpus", 1),)), ("h[1]", (("ncpus", 4),)))


def test_node_sort_on_unused_amounts():
    """node_sort_key ncpus HIGH unused searches the emptiest vnode first, as the vnodes fill."""
    machine = Machine([vnode("a", 8), vnode("b", 8)], node_sort_key=(SortKey("ncpus", True, "unused"),))
    assert names(machine.place(job(), {"a": {"ncpus": 2}}, set())) == ["b"]
    assert names(machine.place(job("3:ncpus=2"), {"a": {"ncpus": 1}}, set())) == ["b", "a", "b"]


def test_exclhost_needs_a_whole_empty_host():
    """An exclhost job skips a host any of whose vnodes runs a job."""
    machine = Machine([vnode("h[0]", 4, host="h"), vnode("h[1]", 4, host="h"), vnode("g", 4)])
    assert names(machine.place(job("1:ncpus=1", "exclhost"), {"h[1]": {"ncpus": 1}}, set())) == ["g"]


def test_multivnode_mom_places_host_by_host():
    """Vnodes of one MoM (in_multivnode_host) are placed host by host even with a host each: no buckets."""
    machine = Machine([Vnode("a", "a", (("ncpus", 4),), in_multivnode_host=True),
                       Vnode("b", "b", (("ncpus", 4),), in_multivnode_host=True)])
    future = {"b": [FutureUse(200, True, True, (("ncpus", 4),))]}
    assert names(machine.place(job("1:ncpus=1", "excl"), {}, set(), future, now=0, end=100)) == ["a"]
    single = Machine([vnode("a", 4), vnode("b", 4)])
    assert names(single.place(job("1:ncpus=1", "excl"), {}, set(), future, now=0, end=100)) == ["b"]


def test_hosts_ordered_by_their_totals():
    """With node_sort_key ncpus HIGH, hosts are searched by their vnodes' total ncpus."""
    vnodes = [Vnode("a[0]", "a", (("ncpus", 3),)), Vnode("a[1]", "a", (("ncpus", 3),)),
              Vnode("b", "b", (("ncpus", 4),))]
    machine = Machine(vnodes, node_sort_key=(SortKey("ncpus", True),))
    assert names(machine.place(job(), {}, set())) == ["a[0]"]


def test_queue_with_vnodes_uses_only_them():
    """A job of a queue with vnodes of its own runs only there, however full they are."""
    machine = Machine([Vnode("a", "a", (("ncpus", 1),), queue="gpu"), vnode("b")])
    assert machine.place(job("1:ncpus=2", queue="gpu"), {}, set()) is None
    assert not machine.fits_empty(job("1:ncpus=2", queue="gpu"))
