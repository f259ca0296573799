"""simulate --site: the trace's jobs through the PBS scheduler model configured as the site's."""

import json
import os

import pytest

from replay.cli import main
from replay.pbs.policy import FairsharePolicy, SchedulingPolicy
from replay.pbs.vnodes import Vnode
from replay.shared.predictors import resolve
from replay.simulation.cluster import Cluster
from replay.simulation.engine import SchedulerSettings, simulate_jobs
from replay.simulation.site import SiteMachine, pbs_jobs, simulate_site
from replay.traces.readers import read_trace
from replay.traces.trace import Job

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUNDLED_PBS = os.path.join(REPO, "traces", "hpc2n-2002-accounting")
BUNDLED_SWF = os.path.join(REPO, "traces", "HPC2N-2002-subset.swf")
NEUTRAL_SITE = os.path.join(REPO, "tests", "data", "site", "neutral")


@pytest.fixture(scope="module")
def bundled():
    trace, _ = read_trace([BUNDLED_PBS], None, 100)
    return [job for job in trace.jobs[:300] if job.ncpus <= 120]


def one_vnode(cores):
    return (Vnode("n1", "n1", (("ncpus", cores),)),)


def test_the_plain_pbs_policy_schedules_as_the_built_in_scheduler(bundled):
    """Strict ordering, one top job, fifo, no fuzzy windows on one vnode: the same starts as the core-pool
    engine, job for job, planned with the users' walltimes."""
    engine = simulate_jobs(bundled, resolve("user"), Cluster.of_cores(120), SchedulerSettings())
    site = SiteMachine(SchedulingPolicy(strict_ordering=True, backfill_fuzzy_s=0), one_vnode(120), 600)
    modelled = simulate_site(bundled, resolve("user"), site)
    assert [(done.job.job_id, done.start_time) for done in modelled] == \
        [(done.job.job_id, done.start_time) for done in engine]


def test_predictions_are_what_the_scheduler_plans_with(bundled):
    """The runjob soft walltime of each job is the predictor's (clairvoyant: its runtime within [1, walltime]),
    and other soft walltimes give another schedule."""
    site = SiteMachine(SchedulingPolicy(strict_ordering=True), one_vnode(120), 600)
    clairvoyant = simulate_site(bundled, resolve("clairvoyant"), site)
    assert all(done.soft_walltime_started_s == min(max(done.job.runtime_s, 1), done.job.walltime_s)
               for done in clairvoyant if done.job.walltime_s)
    user = simulate_site(bundled, resolve("user"), site)
    assert [done.start_time for done in clairvoyant] != [done.start_time for done in user]


def job(job_id, ncpus, nodes=None):
    return Job(job_id, "u", 0, 10, 100, ncpus, nodes=nodes)


def test_jobs_ask_for_chunks_the_machine_can_hold():
    """A node count becomes one chunk per host when there are enough hosts; a job wider than every vnode
    gets one chunk per cpu placed freely; otherwise one chunk."""
    vnodes = tuple(Vnode("n{}".format(i), "n{}".format(i), (("ncpus", 4),)) for i in range(3))
    wide, spread, plain, too_many = pbs_jobs([job("1", 8, 2), job("2", 6), job("3", 4), job("4", 8, 4)], vnodes)
    assert (wide.chunks[0].count, wide.place.arrangement) == (2, "scatter")
    assert (spread.chunks[0].count, spread.place.arrangement) == (6, "free")
    assert (plain.chunks[0].count, plain.place.arrangement) == (1, "pack")
    assert (too_many.chunks[0].count, too_many.place.arrangement) == (8, "free")


def test_a_user_without_shares_never_runs_under_enforce_no_shares():
    """Fairshare with no share for the unknown group: PBS runs none of their jobs, and neither does the model."""
    policy = SchedulingPolicy(fairshare=FairsharePolicy(usage_resource="walltime"))
    assert simulate_site([job("1", 1)], resolve("user"), SiteMachine(policy, one_vnode(4), 600)) == []


def test_simulate_with_a_site_folder_from_a_real_server(tmp_path, capsys):
    """--site with the folder exported from a real OpenPBS: the report names the site's scheduler."""
    out, trace = tmp_path / "out.json", tmp_path / "first.swf"
    with open(BUNDLED_SWF, encoding="utf-8") as swf:
        lines = [line for line in swf if line.startswith(";")]
    with open(BUNDLED_SWF, encoding="utf-8") as swf:
        trace.write_text("".join(lines + [line for line in swf if not line.startswith(";")][:300]))
    status = main(["simulate", str(trace), "--site", NEUTRAL_SITE, "--predictors", "user,v3", "--json", str(out)])
    assert status == 0
    report = json.loads(out.read_text())
    assert any("the site's PBS" in note for note in report["notes"])
    assert {row["predictor"] for row in report["tables"][0]["rows"]} == {"user", "v3"}


@pytest.mark.parametrize("spec", ["model:error=0.2:adoption=0.5:seed=3", "adaboost"])
def test_learning_predictors_give_the_site_model_their_estimates(bundled, spec):
    """The performance-model tool and the AdaBoost regression (which learns from each completion) give each job
    the same runjob soft walltime on the site model's plain policy as in the core-pool engine."""
    engine = simulate_jobs(bundled, resolve(spec), Cluster.of_cores(120), SchedulerSettings())
    site = SiteMachine(SchedulingPolicy(strict_ordering=True, backfill_fuzzy_s=0), one_vnode(120), 600)
    modelled = simulate_site(bundled, resolve(spec), site)
    assert [(done.job.job_id, done.soft_walltime_started_s) for done in modelled] == \
        [(done.job.job_id, done.soft_walltime_started_s) for done in engine]
    assert any(done.soft_walltime_started_s != done.job.walltime_s for done in modelled)


def ran(job_id, user, ncpus, submit, start, end):
    return Job(job_id, user, submit, end - start, 3600, ncpus, start_time=start, end_time=end)


def test_fairshare_warm_up_charges_the_logged_runs_with_decay():
    """ana's run (2 cpus, 0 to 50 s) is charged at its end and halved by the decay at 200 s; bob's (1 cpu from
    10 s) still runs at the end of the warm-up and is charged up to it; cy's job, submitted after, is left to
    simulate."""
    from replay.simulation.site import warm_up
    policy = SchedulingPolicy(fairshare=FairsharePolicy(usage_resource="ncpus*walltime", decay_time_s=100,
                                                        unknown_shares=10))
    jobs = [ran("1", "ana", 2, 0, 0, 50), ran("2", "bob", 1, 10, 10, 300), ran("3", "cy", 1, 250, 250, 260)]
    warmed = warm_up(jobs, SiteMachine(policy, one_vnode(4), 600), 200)
    assert (warmed.fairshare.usage("ana"), warmed.fairshare.usage("bob")) == (50.5, 191)
    assert [job.job_id for job in warmed.jobs] == ["3"] and (warmed.charged, warmed.running_at_end) == (2, 1)


def test_warmed_up_usage_orders_the_simulated_jobs():
    """ana's and bob's jobs wait for the one cpu behind dan's; without a warm-up ana's (submitted first) runs
    next, after a warm-up in which ana used the machine bob's does."""
    from replay.simulation.site import warm_up
    policy = SchedulingPolicy(fairshare=FairsharePolicy(usage_resource="ncpus*walltime", unknown_shares=10))
    site = SiteMachine(policy, one_vnode(1), 600)
    later = [Job("b", "dan", 1000, 100, 3600, 1), Job("2", "ana", 1010, 100, 3600, 1),
             Job("3", "bob", 1020, 100, 3600, 1)]
    cold = simulate_site(later, resolve("user"), site)
    warmed = warm_up([ran("1", "ana", 1, 0, 0, 900)] + later, site, 1000)
    warm = simulate_site(warmed.jobs, resolve("user"), site, fairshare=warmed.fairshare)
    assert _start_order(cold) == ["b", "2", "3"] and _start_order(warm) == ["b", "3", "2"]


def test_warm_up_jobs_are_the_predictors_history():
    """The jobs that ended during the warm-up are in the hooks' history when the simulation starts: v3 gives
    ana's first simulated job its walltime scaled by her warm-up job's runtime over walltime (900 of 3600 s),
    plus 15 minutes; bob's job still running at the end of the warm-up is not history."""
    from replay.simulation.site import warm_up
    policy = SchedulingPolicy(fairshare=FairsharePolicy(usage_resource="ncpus*walltime", unknown_shares=10))
    site = SiteMachine(policy, one_vnode(2), 600)
    later = [Job("2", "ana", 1010, 100, 3600, 1), Job("3", "bob", 1020, 100, 3600, 1)]
    warmed = warm_up([ran("1", "ana", 1, 0, 0, 900), ran("4", "bob", 1, 0, 0, 2000)] + later, site, 1000)
    assert [trace.job_id for trace, _, _ in warmed.history] == ["1"]
    runs = {done.job.job_id: done for done in simulate_site(warmed.jobs, resolve("v3"), site,
                                                            fairshare=warmed.fairshare, history=warmed.history)}
    assert runs["2"].soft_walltime_queued_s == 3600 * 900 // 3600 + 900
    assert runs["3"].soft_walltime_queued_s == 3600  # no history: v3 keeps the walltime
    cold = {done.job.job_id: done for done in simulate_site(warmed.jobs, resolve("v3"), site)}
    assert cold["2"].soft_walltime_queued_s == 3600


def test_jobs_running_across_the_warm_up_hold_their_vnodes():
    """bob's job holds both cpus from 0 to 2000 s, across the end of the warm-up at 1000 s: ana's job,
    submitted at 1010 s, waits for it (it would start at once on an empty machine); bob's job is charged up to
    1000 s by the warm-up and is not in the result."""
    from replay.simulation.site import simulate_warmed, warm_up, warm_up_note
    policy = SchedulingPolicy(fairshare=FairsharePolicy(usage_resource="ncpus*walltime", unknown_shares=10))
    site = SiteMachine(policy, one_vnode(2), 600)
    later = [Job("2", "ana", 1010, 100, 3600, 1)]
    warmed = warm_up([ran("4", "bob", 2, 0, 0, 2000)] + later, site, 1000)
    assert [item.job.name for item in warmed.running] == ["4"] and warmed.fairshare.usage("bob") == 1 + 2 * 1000
    assert "1 still running then, charged up to it, 1 of them holding their vnodes" in warm_up_note(warmed)
    runs = simulate_warmed(warmed.jobs, resolve("user"), site, None, warmed)
    assert [(done.job.job_id, done.start_time) for done in runs] == [("2", 2000)]
    assert [done.start_time for done in simulate_site(warmed.jobs, resolve("user"), site)] == [1010]


def _start_order(runs):
    return [done.job.job_id for done in sorted(runs, key=lambda done: done.start_time)]


def test_fairshare_warm_up_on_the_command_line(tmp_path, capsys):
    """The report says what the warm-up charged and simulates the later jobs; without --site, or with
    fair_share off, the option is one line and exit 2."""
    site = os.path.join(REPO, "traces", "sites", "fairshare")
    status = main(["simulate", BUNDLED_PBS, "--site", site, "--cores", "120", "--predictors", "user",
                   "--fairshare-warm-up", "168:00:00", "--json", str(tmp_path / "out.json")])
    out = capsys.readouterr().out
    assert status == 0 and "fairshare warm-up: 132 jobs that ran before" in out
    assert json.loads((tmp_path / "out.json").read_text())["tables"][0]["rows"][0]["jobs"] == 2997
    for extra in (["--site", os.path.join(REPO, "traces", "sites", "strict")], []):
        assert main(["simulate", BUNDLED_PBS, "--fairshare-warm-up", "1:00:00", "--predictors", "user"] + extra) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and err[0].count("--fairshare-warm-up") == 1


def test_workers_run_the_predictors_side_by_side_with_the_same_output(tmp_path, capsys, monkeypatch):
    """--workers 2 shares the site's runs among forked processes; every output is the same bytes as one
    process gives, warm-up included, and the runs are made in other processes than the command's."""
    import replay.simulation.site_parallel as site_parallel
    made_in = []
    simulate = site_parallel.simulate_warmed
    monkeypatch.setattr(site_parallel, "simulate_warmed",
                        lambda *args, **kwargs: made_in.append(os.getpid()) or simulate(*args, **kwargs))
    site, trace = os.path.join(REPO, "traces", "sites", "fairshare"), tmp_path / "first.swf"
    with open(BUNDLED_SWF, encoding="utf-8") as swf:
        lines = swf.readlines()
    trace.write_text("".join([line for line in lines if line.startswith(";")]
                             + [line for line in lines if not line.startswith(";")][:400]))
    outputs = {}
    for workers in ("1", "2"):
        folder = tmp_path / workers
        folder.mkdir()
        status = main(["simulate", str(trace), "--site", site, "--cores", "120", "--predictors", "user,v1,v3",
                       "--fairshare-warm-up", "72:00:00", "--workers", workers, "--json", str(folder / "out.json"),
                       "--jobs-csv", str(folder / "jobs.csv")])
        assert status == 0
        outputs[workers] = ((folder / "out.json").read_bytes(), (folder / "jobs.csv").read_bytes(),
                            capsys.readouterr().out)
    assert outputs["1"] == outputs["2"]
    assert made_in == [os.getpid()] * 3  # the workers' own calls are counted in their copies of the list
