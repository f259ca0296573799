"""Fairshare as OpenPBS 23.06's scheduler keeps it (fairshare.cpp, init_scheduling_cycle)."""

from typing import NamedTuple, Optional

import pytest
from hypothesis import given
from hypothesis import strategies as st

from replay.pbs.fairshare import Fairshare
from replay.pbs.formula import stored
from replay.pbs.jobs import PbsJob
from replay.pbs.order import Walk, job_order
from replay.pbs.policy import FairsharePolicy, SchedulingPolicy, ShareGroup
from replay.pbs.resources import Place, parse_select

TREE = (ShareGroup("phys", 10, "root", 30), ShareGroup("chem", 11, "root", 10),
        ShareGroup("ana", 20, "phys", 1), ShareGroup("bob", 21, "phys", 3), ShareGroup("cy", 22, "chem", 5))


class Running(NamedTuple):
    job: PbsJob
    start: int
    exiting: bool = False
    process_s: Optional[int] = None
    allocation: tuple = (("n1", (("ncpus", 1),)),)


def job(index=0, user="ana", group="g", queue="workq", ncpus=1, walltime=100, account=None):
    return PbsJob(index, "{}.svr".format(index), user, group, "p", queue, parse_select("1:ncpus={}".format(ncpus)),
                  Place(), walltime, None, 0, 0, account=account)


EVERY_SECOND = {"min_check_poll_s": 1, "max_check_poll_s": 1, "usage_report_delay_s": 0}
"""A MoM measuring its jobs every second, seen by the scheduler at once: usage is the elapsed time."""


def tree(**changes):
    return Fairshare(FairsharePolicy(tree=TREE, **changes))


def test_shares_of_the_tree():
    """A node's share is its shares over its siblings', times its parent's."""
    fs = tree()
    assert fs.factors(job(user="ana"))["fairshare_perc"] == stored(stored(0.75) * stored(0.25))
    assert fs.factors(job(user="cy"))["fairshare_perc"] == stored(0.25)


def test_unknown_entity_without_unknown_shares_never_runs():
    """With unknown_shares 0 (the default) an entity not in the tree has no share; its jobs never run."""
    fs = tree()
    assert fs.factors(job(user="zed"))["fairshare_perc"] == 0 and fs.no_shares(job(user="zed"))
    assert not fs.no_shares(job(user="ana"))
    assert not tree(enforce_no_shares=False).no_shares(job(user="zed"))


def test_unknown_entities_share_the_unknown_group():
    """Each entity added under unknown has 1 share and dilutes the others."""
    fs = tree(unknown_shares=40)
    first = fs.factors(job(user="x"))["fairshare_perc"]
    fs.add_entities([job(user="y")])
    assert first == stored(0.5) and fs.factors(job(user="x"))["fairshare_perc"] == stored(0.25)


def test_duplicate_and_orphan_lines_are_ignored():
    """A name already in the tree (unknown included) or an undefined parent makes PBS skip the line."""
    fs = Fairshare(FairsharePolicy(tree=(ShareGroup("a", 1, "root", 1), ShareGroup("a", 2, "root", 9),
                                         ShareGroup("unknown", 3, "root", 5), ShareGroup("b", 4, "nope", 1))))
    assert fs.factors(job(user="a"))["fairshare_perc"] == 1.0
    assert fs.factors(job(user="b"))["fairshare_perc"] == 0.0


@pytest.mark.parametrize("entity, expected", [("euser", "ana"), ("egroup", "g"), ("queue", "workq"),
                                               ("Account_Name", "g:ana"), ("egroup:euser", "g:ana")])
def test_entities(entity, expected):
    """euser, egroup, queue; Account_Name without an account and egroup:euser are group:user."""
    assert Fairshare(FairsharePolicy(entity=entity)).entity(job()) == expected


def test_account_entity():
    """Account_Name uses the job's account when it has one."""
    assert Fairshare(FairsharePolicy(entity="Account_Name")).entity(job(account="proj7")) == "proj7"


def test_charge_reaches_every_group_above():
    """Usage charged to an entity is added to it and each group up to the root."""
    fs = tree()
    fs.charge("ana", 10)
    assert (fs.usage("ana"), fs.usage("phys"), fs.usage("TREEROOT"), fs.usage("bob")) == (11, 11, 11, 1)


def test_decay_per_whole_period_and_clock_on_the_boundary():
    """1.5 periods after the last decay: one decay, and the last decay is one period later."""
    fs = tree(decay_time_s=100, decay_factor=0.5)
    fs.decay(1000)
    fs.charge("ana", 99)
    fs.decay(1150)
    assert fs.usage("ana") == 50 and fs.last_decay == 1100
    fs.decay(1199)
    assert fs.usage("ana") == 50
    fs.decay(1301)
    assert fs.usage("ana") == 12.5 and fs.last_decay == 1300


def test_decay_never_below_one():
    """Usage never decays below 1."""
    fs = tree(decay_time_s=10)
    fs.decay(0)
    fs.charge("ana", 1)
    fs.decay(1000)
    assert fs.usage("ana") == 1


@given(st.lists(st.floats(0, 1e9), max_size=5), st.integers(0, 10 ** 6), st.sampled_from([0.1, 0.5, 0.9]))
def test_decay_never_increases_usage(charges, later, factor):
    """Decaying never increases any usage and never takes it below 1."""
    fs = tree(decay_time_s=3600, decay_factor=factor)
    fs.decay(0)
    for amount in charges:
        fs.charge("bob", amount)
    before = {name: fs.usage(name) for name in ("bob", "phys", "TREEROOT", "cy")}
    fs.decay(later)
    for name, usage in before.items():
        assert 1 <= fs.usage(name) <= usage


def test_sample_accrues_running_jobs_between_cycles():
    """Each cycle adds the increase of the usage resource since the previous cycle; a new job from 0."""
    fs = tree(usage_resource="walltime", decay_time_s=0, **EVERY_SECOND)
    fs.sample(100, [Running(job(1), 40)])
    assert fs.usage("ana") == 1 + 60
    fs.sample(130, [Running(job(1), 40)])
    assert fs.usage("ana") == 1 + 90


def test_a_job_ending_between_cycles_loses_its_last_stretch():
    """A job no longer running at a cycle adds nothing for the time since the previous cycle."""
    fs = tree(usage_resource="walltime", decay_time_s=0, **EVERY_SECOND)
    fs.sample(100, [Running(job(1), 40)])
    fs.sample(500, [])
    assert fs.usage("ana") == 61


def test_default_usage_is_cpu_time():
    """fairshare_usage_res defaults to cput: ncpus busy for the elapsed time in a simulation."""
    fs = tree(decay_time_s=0, **EVERY_SECOND)
    fs.sample(10, [Running(job(1, ncpus=4), 0)])
    assert fs.usage("ana") == 41


def test_usage_as_the_mom_reported_it():
    """A running job is charged the walltime its MoM measured last, as the scheduler sees it 2 s later: with
    PBS's default polling a lone job is measured 10, 26 and 48 s after its start."""
    fs = tree(usage_resource="walltime", decay_time_s=0)
    charged = []
    for now in (11, 12, 27, 28, 49, 50):
        fs.sample(now, [Running(job(1), 0)])
        charged.append(fs.usage("ana") - 1)
    assert charged == [0, 10, 10, 26, 26, 48]


def test_with_pbs_default_polling_a_mom_starting_jobs_often_measures_none():
    """Each start puts the MoM's next measurement $min_check_poll (10 s) after it: a MoM that starts a job
    every 5 s never measures the jobs it runs, and fairshare charges them nothing."""
    fs = tree(usage_resource="walltime", decay_time_s=0)
    running = []
    for now in range(0, 60, 5):
        running.append(Running(job(now, user="ana"), now))
        fs.sample(now, running)
    fs.sample(66, running)  # measured at 65, 10 s after the last start, but not seen yet
    assert fs.usage("ana") == 1
    fs.sample(67, running)
    assert fs.usage("ana") == 1 + sum(65 - item.start for item in running)


def test_usage_stops_at_the_end_of_the_process():
    """A job whose process ran 70 s is charged at most 70 s, however long the server takes to end it."""
    fs = tree(usage_resource="walltime", decay_time_s=0, **EVERY_SECOND)
    fs.sample(100, [Running(job(1), 40, process_s=70)])
    fs.sample(130, [Running(job(1), 40, process_s=70)])  # ended, the server not told yet: still state R
    fs.sample(135, [Running(job(1), 40, process_s=70)])
    assert fs.usage("ana") == 1 + 70


def test_an_exiting_job_is_not_charged():
    """Once its process has ended and the server is finishing it (state E), PBS's scheduler no longer counts
    a job among the running ones: what it used since the last cycle that saw it running is never charged
    (``init_scheduling_cycle`` charges only jobs running at both cycles)."""
    fs = tree(usage_resource="walltime", decay_time_s=0, **EVERY_SECOND)
    fs.sample(100, [Running(job(1), 40, process_s=70)])
    fs.sample(130, [Running(job(1), 40, exiting=True, process_s=70)])
    fs.sample(135, [])
    assert fs.usage("ana") == 1 + 60


def test_a_job_whose_process_ended_this_second_is_still_running_for_the_scheduler():
    """The server hears of most ends a second after them: at a cycle in the very second a job's process ended,
    the job still holding its vnodes past it is still running for PBS's scheduler, and charged; once its
    vnodes are given back that second, or a second later, it is not."""
    held = job(1)._replace(runtime_s=75)  # holds its vnodes 75 s, its process ran 70
    for now, end, charged in ((110, held, 70), (111, held, 60), (110, job(1)._replace(runtime_s=70), 60)):
        fs = tree(usage_resource="walltime", decay_time_s=0, **EVERY_SECOND)
        fs.sample(100, [Running(end, 40, process_s=70)])
        fs.sample(now, [Running(end, 40, exiting=True, process_s=70)])
        assert fs.usage("ana") == 1 + charged, now


@pytest.mark.parametrize("anchor, first, expected", [(1795702133, 1795701960, 1795701953),
                                                     (1000, 1000, 1000), (1000, 1059, 1000), (1000, 940, 940)])
def test_decay_on_the_usage_files_grid(anchor, first, expected):
    """With the usage file's last decay, the first cycle puts the clock on that decay's grid."""
    fs = tree(decay_time_s=60, decay_anchor=anchor)
    fs.decay(first)
    assert fs.last_decay == expected


@given(st.lists(st.integers(0, 1000), min_size=1, max_size=6))
def test_without_decay_usage_is_the_elapsed_time_at_the_last_sample(gaps):
    """A job sampled at every cycle is charged its whole elapsed time up to the last sample."""
    fs = tree(usage_resource="walltime", decay_time_s=0, **EVERY_SECOND)
    now = 0
    for gap in gaps:
        now += gap
        fs.sample(now, [Running(job(1), 0)])
    assert fs.usage("ana") == 1 + now


def test_less_usage_per_share_is_more_deserving():
    """compare_path: at the first differing groups, lower usage / share comes first."""
    fs = tree()
    fs.charge("ana", 100)
    jobs = [job(1, user="ana"), job(2, user="cy"), job(3, user="bob")]
    # phys: 101 / 0.75, chem: 1 / 0.25 -> chem (cy) first; within phys: bob 1/(0.75*0.75) < ana 101/(...)
    assert [j.index for j in sorted(jobs, key=fs.deserving_key)] == [2, 3, 1]


def test_parting_names_the_groups_compare_path_compares():
    """Where two entities part in the tree, with the usage over tree share compare_path compares there."""
    fs = tree()
    fs.charge("ana", 100)
    (phys, phys_value), (chem, chem_value) = fs.parting(job(1, user="ana"), job(2, user="cy"))
    assert (phys, chem) == ("phys", "chem")
    assert phys_value == fs.node("phys").usage / fs.node("phys").tree_percentage == 101 / stored(0.75)
    assert chem_value == 1 / stored(0.25)
    assert [name for name, _ in fs.parting(job(1, user="ana"), job(3, user="bob"))] == ["ana", "bob"]
    assert fs.parting(job(1, user="ana"), job(4, user="ana")) is None  # one entity
    assert fs.parting(job(1, user="ana"), job(5, user="zed"))[1][1] is None  # zed has no share


@given(st.lists(st.tuples(st.sampled_from(["ana", "bob", "cy"]), st.integers(0, 10 ** 6)), max_size=6),
       st.sampled_from(["ana", "bob", "cy"]), st.sampled_from(["ana", "bob", "cy"]))
def test_parting_orders_as_deserving_key(charges, first, second):
    """The side with the lower value at the parting is the one deserving_key puts first."""
    fs = tree()
    for user, amount in charges:
        fs.charge(user, amount)
    one, other = job(1, user=first), job(2, user=second)
    parting = fs.parting(one, other)
    if parting is None:
        assert first == second
    elif parting[0][1] != parting[1][1]:
        assert (parting[0][1] < parting[1][1]) == (fs.deserving_key(one) < fs.deserving_key(other))


def test_no_share_is_least_deserving():
    """An entity without a share comes after every entity with one."""
    fs = tree()
    fs.charge("ana", 10 ** 9)
    assert sorted([job(1, user="zed"), job(2, user="ana")], key=fs.deserving_key)[0].index == 2


def test_charge_started_makes_the_next_job_less_deserving():
    """A started job's requested usage is charged for the cycle, so the other entity goes next."""
    fs = Fairshare(FairsharePolicy(usage_resource="ncpus*walltime",
                                   tree=(ShareGroup("ana", 1, "root", 1), ShareGroup("bob", 2, "root", 1))))
    ana, bob = job(1, user="ana"), job(2, user="bob")

    def first(jobs):
        return sorted(jobs, key=lambda j: (fs.deserving_key(j), j.index))[0]

    assert first([bob, ana]) == ana
    fs.charge_started(ana)
    assert first([ana, bob]) == bob
    assert fs.usage("ana") == 1  # the charge is temporary: real usage is unchanged
    fs.sample(0, [])
    assert first([bob, ana]) == ana


def test_default_temporary_charge_is_zero():
    """With fairshare_usage_res cput a job rarely requests cput: the temporary charge is 0."""
    fs = tree()
    fs.charge_started(job(1))
    assert fs.deserving_key(job(1)) == fs.deserving_key(job(1))
    assert fs.node("ana").temp_usage == 1


def test_formula_factors():
    """fairshare_factor is 2 ** -(tree_usage / perc); tree usage averages up by group shares."""
    fs = Fairshare(FairsharePolicy(tree=(ShareGroup("ana", 1, "root", 1), ShareGroup("bob", 2, "root", 3))))
    fs.charge("ana", 3)
    fs.charge("bob", 4)
    values = fs.factors(job(user="ana"))
    assert values["fairshare_tree_usage"] == 0.5 and values["fairshare_perc"] == 0.25
    assert values["fairshare_factor"] == 0.25


def test_tree_usage_pulled_toward_the_group():
    """Below the root's children, an entity's tree usage moves toward its group's by its share."""
    fs = tree()
    fs.charge("ana", 7)
    ratio = stored(8 / 8)  # ana's usage over the root's
    group = stored(8 / 8)  # phys's
    expected = stored(ratio + stored(stored(group - ratio) * stored(0.25)))
    assert fs.factors(job(user="ana"))["fairshare_tree_usage"] == expected
    bob = stored(1 / 8)
    assert fs.factors(job(user="bob"))["fairshare_tree_usage"] == stored(bob + stored(stored(group - bob) * 0.75))


def test_copy_is_independent():
    """Charging a copy leaves the original as it was."""
    fs = tree()
    other = fs.copy()
    other.charge("ana", 5)
    other.charge_started(job())
    assert fs.usage("ana") == 1 and other.usage("ana") == 6


def test_order_by_fairshare():
    """job_order puts the most deserving entity first when fair_share is on."""
    fs = tree()
    fs.charge("cy", 50)
    policy = SchedulingPolicy(fairshare=fs.policy, by_queue=False)
    jobs = [job(1, user="cy"), job(2, user="ana")]
    assert [j.index for j in job_order(policy, jobs, 0, fs)[0]] == [2, 1]
    assert [j.index for j in job_order(policy._replace(fairshare=None), jobs, 0, fs)[0]] == [1, 2]


@given(st.lists(st.tuples(st.sampled_from(["ana", "bob", "cy", "zed"]), st.floats(0, 1e6)), max_size=8),
       st.sampled_from(["ana", "bob", "cy", "zed"]), st.floats(1, 1e6))
def test_charging_never_makes_an_entity_more_deserving(charges, charged, amount):
    """After more usage an entity's jobs never move ahead of another entity's."""
    fs = tree(unknown_shares=5)
    for name, value in charges:
        fs.charge(name, value)
    jobs = [job(i, user=name) for i, name in enumerate(["ana", "bob", "cy", "zed"])]
    ahead_before = {j.user for j in jobs if fs.deserving_key(j) < fs.deserving_key(job(9, user=charged))}
    fs.charge(charged, amount)
    ahead_after = {j.user for j in jobs if fs.deserving_key(j) < fs.deserving_key(job(9, user=charged))}
    assert ahead_before - {charged} <= ahead_after


def test_walk_with_temporary_charges_as_seen_on_a_real_server():
    """ben, ben, ana submitted in that order, equal shares: PBS ran ben, ana, ben in one cycle
    (OpenPBS 23.06.06, fairshare_usage_res ncpus*walltime): the charge and re-sort after each run."""
    policy = FairsharePolicy(usage_resource="ncpus*walltime", unknown_shares=10,
                             tree=(ShareGroup("fid_ana", 11, "root", 1), ShareGroup("fid_ben", 12, "root", 1)))
    fs = Fairshare(policy)
    jobs = [job(621, user="fid_ben"), job(622, user="fid_ben"), job(623, user="fid_ana")]
    walk = Walk(SchedulingPolicy(fairshare=policy), jobs, 0, fs)
    order = []
    for _ in jobs:
        picked = walk.next_job()
        order.append(picked.index)
        fs.charge_started(picked)
        walk.resort(fs)
    assert order == [621, 623, 622]


def test_cput_usage_follows_the_jobs_cpu_load():
    """fairshare_usage_res cput charges the CPU time the job uses: nothing for a job that keeps no CPU busy."""
    fs = tree(decay_time_s=0, **EVERY_SECOND)
    fs.sample(10, [Running(job(1, ncpus=4)._replace(cpu_load=0.0), 0), Running(job(2, user="bob")._replace(
        cpu_load=0.5), 0)])
    assert (fs.usage("ana"), fs.usage("bob")) == (1, 6)


def test_a_job_seen_running_is_charged_only_its_growth_since():
    """A job a warm-up charged up to 100 s and marked as seen running then is charged at the next cycle only
    what it used since."""
    fs = tree(usage_resource="walltime", decay_time_s=0, **EVERY_SECOND)
    fs.charge("ana", 60)
    fs.seen_running(100, [Running(job(1), 40)])
    fs.sample(130, [Running(job(1), 40)])
    assert fs.usage("ana") == 1 + 60 + 30
