"""Decisions: the S records of one cycle grouped, the state rebuilt from the logs, the model's set compared."""

import os

from hypothesis import given, settings
from hypothesis import strategies as st
from test_fidelity_records import HEAD, REQUEST, e, line, q, read, s
from test_pbs_fairshare import EVERY_SECOND

from replay.fidelity.decisions import check_decisions, decision_groups, summarise
from replay.fidelity.machine import SiteModel, site_model
from replay.fidelity.records import read_records
from replay.pbs.jobs import PbsJob
from replay.pbs.placement import Machine
from replay.pbs.policy import FairsharePolicy, SchedulingPolicy
from replay.pbs.resources import Place, parse_select
from replay.pbs.run import simulate_run
from replay.pbs.vnodes import Vnode

STRICT = SchedulingPolicy(strict_ordering=True, backfill_fuzzy_s=0)


def groups(acc):
    return [(group.time, group.started) for group in decision_groups(acc, site_model(None, acc).vnodes)]


def one_cpu(record):
    return record.replace("ncpus=2", "ncpus=1")


def busy_log(third_etime=102, third_started=True):
    """Job 1 holds both cpus of n1 from 100 to 110; jobs 2 and 3 (one cpu each) wait, then start at 110."""
    lines = [q("00:00", "1.s", 100, 100), s("00:00", "1.s", 100, 100, 100, "(n1:ncpus=2)"),
             one_cpu(q("00:01", "2.s", 101, 101)), one_cpu(q("00:02", "3.s", 102, third_etime)),
             e("00:10", "1.s", 100, 100, 100, 110, "(n1:ncpus=2)"),
             s("00:10", "2.s", 101, 101, 110, "(n1:ncpus=1)")]
    if third_started:
        lines.append(s("00:10", "3.s", 102, third_etime, 110, "(n1:ncpus=1)"))
    return lines


def test_starts_of_one_cycle_form_one_decision(tmp_path):
    """S records in a row within a second, of jobs queued and eligible before the first, are one decision."""
    acc, _ = read(tmp_path, busy_log())
    assert groups(acc) == [(100, ("1.s",)), (110, ("2.s", "3.s"))]


def test_a_job_queued_after_the_first_start_is_a_new_decision(tmp_path):
    """A job whose Q record follows the group's first S cannot have been seen by that cycle."""
    acc, _ = read(tmp_path, [q("00:00", "1.s", 100, 100), s("00:00", "1.s", 100, 100, 100, "(n1:ncpus=1)"),
                             q("00:00", "2.s", 100, 100), s("00:01", "2.s", 100, 100, 101, "(n1:ncpus=1)")])
    assert groups(acc) == [(100, ("1.s",)), (101, ("2.s",))]


def test_a_start_on_resources_still_held_is_a_new_decision(tmp_path):
    """A start that needs what the jobs running at the group's first start held belongs to a later cycle."""
    acc, _ = read(tmp_path, [q("00:00", "1.s", 100, 100), q("00:00", "2.s", 100, 100),
                             q("00:00", "3.s", 100, 100),
                             s("00:00", "1.s", 100, 100, 100, "(n1:ncpus=2)"),
                             e("00:05", "1.s", 100, 100, 100, 105, "(n1:ncpus=2)"),
                             s("00:05", "2.s", 100, 100, 105, "(n1:ncpus=2)"),
                             e("00:06", "2.s", 100, 100, 105, 106, "(n1:ncpus=2)"),
                             s("00:06", "3.s", 100, 100, 106, "(n1:ncpus=2)")])
    assert groups(acc) == [(100, ("1.s",)), (105, ("2.s",)), (106, ("3.s",))]


def test_model_agrees_when_it_starts_the_same_jobs(tmp_path):
    """PBS's defaults (no strict ordering): both waiting jobs fit once job 1 ends; so did PBS."""
    acc, _ = read(tmp_path, busy_log())
    checks = check_decisions(acc, site_model(None, acc))
    assert [check.agrees for check in checks] == [True, True]
    assert [job.name for job in checks[1].state.queued] == ["2.s", "3.s"] and checks[1].state.running == ()
    assert summarise(checks).agreeing == 2


def test_model_disagrees_when_it_starts_more(tmp_path):
    """PBS started only job 2 although job 3 fitted too: no reading of that second gives PBS's set (job 1's
    end in that second makes it ambiguous), the decision disagrees."""
    acc, _ = read(tmp_path, busy_log(third_started=False))
    check = check_decisions(acc, site_model(None, acc))[1]
    assert not check.agrees and check.ambiguous
    assert check.group.started == ("2.s",) and check.model_started == ("2.s", "3.s")


def test_job_eligible_in_the_cycles_second_is_ambiguous(tmp_path):
    """Job 3 released in the very second of the cycle: PBS may not have seen it; left out, the sets agree."""
    acc, _ = read(tmp_path, busy_log(third_etime=110, third_started=False))
    check = check_decisions(acc, site_model(None, acc))[1]
    assert check.agrees and check.ambiguous and check.left_out == 1
    assert summarise([check]).agreeing_on_another_reading == 1


def test_state_uses_the_soft_walltime_known_then(tmp_path):
    """A running job's soft walltime altered before the cycle is the one in the state."""
    lines = busy_log()
    lines.insert(2, line("00:00", "a", "1.s", "Resource_List.soft_walltime=00:00:05"))
    acc, _ = read(tmp_path, lines[:5] + [s("00:03", "2.s", 101, 101, 103, "(n1:ncpus=1)")])
    check = check_decisions(acc, site_model(None, acc))[1]
    (running,) = check.state.running
    assert running.job.name == "1.s" and running.job.soft_walltime_s == 5


def model_log(jobs, runs):
    """Accounting lines of a run of the model itself: at each second its ends and releases, then its starts."""
    lines = []
    for job in jobs:
        select = "+".join("{}:ncpus={}".format(chunk.count, chunk.amount("ncpus")) for chunk in job.chunks)
        cpus = "Resource_List.ncpus={} Resource_List.select={} Resource_List.place={} Resource_List.walltime={}".format(
            job.resource("ncpus"), select, job.place.arrangement, job.walltime_s)
        head = "user=u group=g queue=workq ctime={0} qtime={0} etime={0} {1}".format(job.eligible_time, cpus)
        lines.append((job.eligible_time, 1, "Q", job.name, head))
        run = runs.get(job.name)
        if run is None:  # it can never run (two chunks packed on one small host)
            continue
        vnode = "exec_vnode=" + "+".join("({}:ncpus={})".format(name, dict(amounts)["ncpus"])
                                         for name, amounts in run.allocation)
        lines.append((run.start, 2, "S", job.name, "{} start={} {}".format(head, run.start, vnode)))
        lines.append((run.end, 0, "E", job.name, "{} start={} {} end={}".format(head, run.start, vnode, run.end)))
    return ["01/01/2026 00:00:00;{};{};{}".format(kind, name, body)
            for _, _, kind, name, body in sorted(lines, key=lambda item: item[:2])]


@settings(max_examples=25, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 2), st.integers(1, 4), st.sampled_from(["free", "pack", "scatter"]),
                          st.integers(1, 30), st.integers(0, 40), st.integers(1, 60)), min_size=1, max_size=14))
def test_the_model_agrees_with_a_log_of_its_own_run(tmp_path_factory, specs):
    """Every decision in the log of the model's own whole run (strict ordering, three vnodes, jobs of one or
    two chunks, free, pack or scatter) agrees (jobs submitted in the order of their indices, PBS's tie-break)."""
    jobs = [PbsJob(index, "{}.s".format(index), "u", "g", "p", "workq",
                   parse_select("{}:ncpus={}".format(count, ncpus)), Place(place), max(walltime, runtime), None,
                   1000 + eligible, 1000 + eligible, runtime)
            for index, (count, ncpus, place, runtime, eligible, walltime)
            in enumerate(sorted(specs, key=lambda spec: spec[4]))]
    vnodes = tuple(Vnode("n{}".format(i), "n{}".format(i), (("ncpus", 4),)) for i in range(1, 4))
    site = SiteModel(STRICT, vnodes, 600, (), ())
    runs = simulate_run(STRICT, Machine(vnodes), jobs, 600)
    path = tmp_path_factory.mktemp("log") / "20260101"
    path.write_text("\n".join(model_log(jobs, runs)) + "\n")
    checks = check_decisions(read_records([str(path)], None), site)
    assert [check.group.started for check in checks if not check.agrees] == []


def test_an_exiting_job_is_planned_to_end_now(tmp_path):
    """A running job whose process ended before the cycle is exiting in the state: PBS plans its end in 1 s."""
    lines = busy_log()[:4] + [s("00:09", "2.s", 101, 101, 109, "(n1:ncpus=1)").replace("n1:ncpus=1", "n2:ncpus=1")]
    lines.append(e("00:10", "1.s", 100, 100, 100, 110, "(n1:ncpus=2)").replace("00:00:05", "00:00:09"))
    acc, _ = read(tmp_path, lines)
    (running,) = check_decisions(acc, site_model(None, acc))[1].state.running
    assert running.job.name == "1.s" and running.exiting


def test_two_cycles_in_one_second(tmp_path):
    """Two ends in one second, a cycle after each: the first saw one end (started C), the second the other
    (started D, X still too big); read as one cycle the model would start X, read as two it agrees."""
    two = "(n1:ncpus=2)"
    lines = [q("00:00", "a.s", 100, 100), q("00:00", "b.s", 100, 100), s("00:00", "a.s", 100, 100, 100, two),
             s("00:00", "b.s", 100, 100, 100, two),
             q("00:01", "x.s", 101, 101).replace("ncpus=2", "ncpus=4"), q("00:02", "c.s", 102, 102),
             q("00:03", "d.s", 103, 103),
             e("00:10", "a.s", 100, 100, 100, 110, two), e("00:10", "b.s", 100, 100, 100, 110, two),
             s("00:10", "c.s", 102, 102, 110, two), s("00:10", "d.s", 103, 103, 110, two)]
    acc, _ = read(tmp_path, lines)
    check = check_decisions(acc, site_model(None, acc))[-1]
    assert check.group.started == ("c.s", "d.s") and check.agrees and check.left_out
    assert check.model_started == ("c.s", "d.s")


def test_fairshare_usage_replayed_from_the_logs(tmp_path):
    """With fairshare, the usage at a decision is what the logs' runs accrued at the cycles PBS saw them
    run (ncpus * walltime: 2 cpus from 100 to the submissions at 101 and 102; the stretch to the end lost)."""
    lines = busy_log()
    lines[2] = lines[2].replace("user=ana", "user=bob")
    acc, _ = read(tmp_path, lines)
    policy = SchedulingPolicy(fairshare=FairsharePolicy(usage_resource="ncpus*walltime", unknown_shares=10,
                                                        **EVERY_SECOND))
    site = site_model(None, acc)._replace(policy=policy)
    state = check_decisions(acc, site)[1].state
    assert state.fairshare.usage("ana") == 1 + 2 * 2 and state.fairshare.usage("bob") == 1


def test_a_release_is_a_cycle_that_accrues_usage(tmp_path):
    """A job released after its submission (etime 104) asked for a cycle then: the running job's usage
    accrues up to 104; with a MoM polling every 1 to 2 s (measuring the job at 101 and 103) and its
    reports seen 2 s later, up to 101."""
    lines = busy_log(third_etime=104)
    lines[2] = lines[2].replace("user=ana", "user=bob")
    acc, _ = read(tmp_path, lines)
    for polls, used_s in ((EVERY_SECOND, 4), ({"min_check_poll_s": 1, "max_check_poll_s": 2}, 1)):
        policy = SchedulingPolicy(fairshare=FairsharePolicy(usage_resource="ncpus*walltime", unknown_shares=10,
                                                            **polls))
        state = check_decisions(acc, site_model(None, acc)._replace(policy=policy))[1].state
        assert state.fairshare.usage("ana") == 1 + 2 * used_s


def test_usage_stops_at_the_last_cycle_before_the_process_ended(tmp_path):
    """A job whose process ended at 105 (start + resources_used.walltime) is exiting at the release at 107:
    PBS charges it nothing there, so its usage is what the cycle at 102 (the last Q record) charged."""
    lines = busy_log(third_etime=107)
    lines[2] = lines[2].replace("user=ana", "user=bob")
    acc, _ = read(tmp_path, lines)
    policy = SchedulingPolicy(fairshare=FairsharePolicy(usage_resource="ncpus*walltime", unknown_shares=10,
                                                        **EVERY_SECOND))
    state = check_decisions(acc, site_model(None, acc)._replace(policy=policy))[1].state
    assert state.fairshare.usage("ana") == 1 + 2 * 2


def test_second_cycle_sees_new_starts_one_second_later(tmp_path):
    """In the second cycle of a second, the jobs the first started have no confirmed start: PBS takes it
    as one second from now, so the top job X waits one second more and D (ending then) backfills."""
    acc = two_cycle_log(tmp_path)
    check = check_decisions(acc, site_model(None, acc)._replace(policy=STRICT))[-1]
    assert check.group.started == ("c.s", "d.s") and check.agrees


def test_an_end_in_the_next_second_starts_a_new_decision(tmp_path):
    """A start in the next second after an E record of that second belongs to the cycle that end asked for."""
    one = "(n1:ncpus=1)"
    lines = [one_cpu(q("00:00", name, 100, 100)) for name in ("a.s", "b.s", "c.s")]
    lines += [s("00:00", "a.s", 100, 100, 100, one), s("00:05", "b.s", 100, 100, 105, one),
              e("00:06", "a.s", 100, 100, 100, 106, one), s("00:06", "c.s", 100, 100, 106, one)]
    acc, _ = read(tmp_path, lines + [one_cpu(q("00:09", "d.s", 109, 109)).replace("ncpus=1", "ncpus=3"),
                                     s("00:09", "d.s", 109, 109, 109, "(n1:ncpus=3)")])
    assert [started for _, started in groups(acc)][1:3] == [("b.s",), ("c.s",)]


def test_a_process_ended_the_second_before_may_still_be_running(tmp_path):
    """Job 1's process ended at 104 and its E record follows job 3's start at 105: PBS had not heard of the
    end, planned job 1 to its walltime, so job 3 (soft walltime 1 min) backfilled before top job 2. Read as exiting
    (the likeliest), job 1 would free its cpu at 106 and job 3 could not start: the decision agrees on the
    other reading."""
    ended = one_cpu(e("00:05", "1.s", 100, 100, 100, 105, "(n1:ncpus=1)")).replace(
        "resources_used.walltime=00:00:05", "resources_used.walltime=00:00:04")
    lines = [one_cpu(q("00:00", "1.s", 100, 100)), one_cpu(s("00:00", "1.s", 100, 100, 100, "(n1:ncpus=1)")),
             q("00:01", "2.s", 101, 101), one_cpu(q("00:02", "3.s", 102, 102, "Resource_List.soft_walltime=00:01:00")),
             one_cpu(s("00:05", "3.s", 102, 102, 105, "(n1:ncpus=1)")), ended]
    acc, _ = read(tmp_path, lines)
    check = check_decisions(acc, site_model(None, acc)._replace(policy=STRICT))[1]
    assert check.group.started == ("3.s",) and check.agrees and check.left_out == 1


def test_three_cycles_in_one_second(tmp_path):
    """Jobs 1 and 2 end at 110, each asking for a cycle: PBS ran X (both still exiting, one cpu free), then
    Y (one end processed), then Z (both), never the 2-cpu job W that two free cpus would have started
    at once; top job T waits for 3 cpus. Only a reading with one cycle per end gives PBS's starts."""
    def job(clock, name, ncpus, soft=None, start=None, end=None):
        request = REQUEST.replace("ncpus=2", "ncpus={}".format(ncpus))
        extra = " Resource_List.soft_walltime=00:00:0{}".format(soft) if soft else ""
        records = [line(clock, "Q", name, "{} ctime=100 qtime=100 etime=100 {} Resource_List.walltime=00:10:00{}"
                        .format(HEAD, request, extra))]
        if start is not None:
            records.append(line(clock, "S", name, "{} ctime=100 qtime=100 etime=100 start={} "
                                "exec_vnode=(n1:ncpus={}) {}".format(HEAD, start, ncpus, request)))
        if end is not None:
            records.append(line("00:10", "E", name, "{} ctime=100 qtime=100 etime=100 start={} "
                                "exec_vnode=(n1:ncpus={}) {} end={} Exit_status=0 resources_used.walltime=00:00:10"
                                .format(HEAD, start, ncpus, request, end)))
        return records
    lines = (job("00:00", "1.s", 1, start=100)[:2] + job("00:00", "2.s", 1, start=100)[:2]
             + job("00:00", "3.s", 1, start=100)[:2] + job("00:00", "T.s", 3) + job("00:00", "W.s", 2, soft=1)
             + job("00:00", "X.s", 1, soft=1) + job("00:00", "Y.s", 1, soft=1) + job("00:00", "Z.s", 1, soft=1)
             + job("00:00", "1.s", 1, start=100, end=110)[2:] + job("00:00", "2.s", 1, start=100, end=110)[2:])
    for name in ("X.s", "Y.s", "Z.s"):
        lines.append(line("00:10", "S", name, "{} ctime=100 qtime=100 etime=100 start=110 exec_vnode=(n1:ncpus=1) "
                          "{}".format(HEAD, REQUEST.replace("ncpus=2", "ncpus=1"))))
    acc, rejected = read(tmp_path, lines)
    site = SiteModel(STRICT, (Vnode("n1", "n1", (("ncpus", 4),)),), 600, (), ())
    check = check_decisions(acc, site)[-1]
    assert rejected == [] and check.group.started == ("X.s", "Y.s", "Z.s")
    assert check.agrees and check.model_started == ("X.s", "Y.s", "Z.s")


def test_each_decision_keeps_the_usage_of_its_own_instant(tmp_path):
    """A decision's state holds the fairshare usage as it was then, not as the later ones leave it: the report
    shows each disagreement's order and sort values from its own state, after every decision is checked."""
    lines = busy_log(third_etime=107)
    lines[2] = lines[2].replace("user=ana", "user=bob")
    acc, _ = read(tmp_path, lines)
    policy = SchedulingPolicy(fairshare=FairsharePolicy(usage_resource="ncpus*walltime", unknown_shares=10,
                                                        **EVERY_SECOND))
    checks = check_decisions(acc, site_model(None, acc)._replace(policy=policy))
    assert [check.state.fairshare.usage("ana") for check in checks] == [1, 1 + 2 * 2]


def recorded_group_agrees(recording, started):
    """Whether, in ``tests/data/fidelity/RECORDING``, the model starts exactly ``started``, the jobs PBS started
    at one instant (the check's decision for that group agrees)."""
    folder = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "fidelity", recording)
    acc = read_records([os.path.join(folder, "accounting")], lambda *rejected: None)
    checks = check_decisions(acc, site_model(os.path.join(folder, "site"), acc))
    (check,) = [check for check in checks if check.group.started == started]
    return check.agrees and check.model_started == started


def test_an_end_logged_between_the_starts_of_a_second_may_ask_for_its_next_cycle():
    """Recorded on a real 23.06.06 server (vnodes-seed3): at 23:11:16 the log has S 229, E 223, S 235, and
    the scheduler's own log two cycles in that second: the first ran 229 and made 235 a top job, the
    second, after 223's end, ran 235. 223 held its two vnodes exclusively (scatter:excl) and 235 takes the
    same two, so 235's start is a decision of its own, after 223's end; both agree."""
    assert recorded_group_agrees("vnodes-seed3", ("229.pbshost",))
    assert recorded_group_agrees("vnodes-seed3", ("235.pbshost",))


def test_a_release_in_the_second_of_a_start_may_ask_for_its_next_cycle():
    """Recorded on a real 23.06.06 server (roundrobin): at 00:46:17 PBS started 144, and 146, released in that
    second, after it. A job's release asks the scheduler for a cycle, as an end does (the server sets the job's
    etime and SCH_SCHEDULE_NEW); in that next cycle, 144 running, the top job's start fell later, within the
    same opt_backfill_fuzzy window, and 146 could backfill. The rest of the group is asked as that cycle."""
    assert recorded_group_agrees("roundrobin", ("144.pbshost", "146.pbshost"))


def test_a_start_confirmed_before_the_next_cycle_runs_from_its_recorded_start():
    """Recorded on a real 23.06.06 server (roundrobin-seed2): at 01:06:50 the log has E 282, S 287, S 276. The
    scheduler's own log has the cycle of 01:06:49 running 287 (its execution host confirmed it, and the
    server wrote its S record, at :50), then a cycle at :50 that saw 287 running from :50: its top job 291
    would start when 287 ends, at :57 (the end of 285 at :51 and of 287 fall in one opt_backfill_fuzzy
    window), so 279 (ending at :58) could not backfill and 276 (ending at :53) could. Taken as not yet
    confirmed (start one second from now), 287 would end at :58 and 279 backfill instead: the next cycle is
    asked with the first part running from its recorded start too."""
    assert recorded_group_agrees("roundrobin-seed2", ("287.pbshost", "276.pbshost"))


def test_a_part_first_in_log_order_may_be_the_first_cycle_on_another_reading():
    """Recorded on a real 23.06.06 server (limits-seed8, max_run 2 per user): at 09:00:30 the log has S 384,
    E 376, S 380. 376's process had ended at :29, so the likeliest reading has it exiting, out of its user's
    run limit: the model then starts 380 (its user's second job), and after it 384 would overlap the top
    job's reservation. PBS's first cycle had not heard of that end: 376 still counted, 380 waited and 384
    backfilled; after 376's end a second cycle, whose top job fell later in the same opt_backfill_fuzzy
    window, started 380. Each reading that starts part of PBS's set is tried as the first cycle, the part
    that comes first in the log first."""
    assert recorded_group_agrees("limits-seed8", ("384.pbshost", "380.pbshost"))


def test_a_cycle_begun_the_second_before_its_starts(tmp_path):
    """Jobs a and b end at 109 (their E records at :09); PBS's S records of c and d say 110. The scheduler began
    a cycle at 109 after a's end only (c fits, X does not), and another after b's end (d): read with b's end
    not yet processed, the model starts c, then d in the next cycle; with both ends processed it would start X."""
    two = "(n1:ncpus=2)"
    lines = [q("00:00", "a.s", 100, 100), q("00:00", "b.s", 100, 100), s("00:00", "a.s", 100, 100, 100, two),
             s("00:00", "b.s", 100, 100, 100, two), q("00:01", "x.s", 101, 101).replace("ncpus=2", "ncpus=4"),
             q("00:02", "c.s", 102, 102), q("00:03", "d.s", 103, 103),
             e("00:09", "a.s", 100, 100, 100, 109, two), e("00:09", "b.s", 100, 100, 100, 109, two),
             s("00:10", "c.s", 102, 102, 110, two), s("00:10", "d.s", 103, 103, 110, two)]
    acc, _ = read(tmp_path, lines)
    check = check_decisions(acc, site_model(None, acc))[-1]
    assert check.group.started == ("c.s", "d.s") and check.ambiguous
    assert check.agrees and check.left_out and check.model_started == ("c.s", "d.s")


def cpus(record, count):
    return record.replace("ncpus=2", "ncpus={}".format(count))


def begun_the_second_before(b_ends):
    """Job a (one cpu, soft walltime 10 s) runs from 100 to 110, b (three cpus) until its E record at
    ``b_ends``; top job X needs all four cpus, so it waits for a; c (three cpus, soft walltime 2 s) starts
    at 109 by its S record. At 109 c would end at 111, after X's start: only a cycle begun at 108 could run
    it (ending at 110, as X starts)."""
    soft = "Resource_List.soft_walltime=00:00:{:02d}"
    ended = cpus(e("00:{:02d}".format(b_ends - 100), "b.s", 100, 100, 100, b_ends, "(n1:ncpus=3)"), 3)
    lines = [cpus(q("00:00", "a.s", 100, 100, soft.format(10)), 1), cpus(q("00:00", "b.s", 100, 100), 3),
             cpus(s("00:00", "a.s", 100, 100, 100, "(n1:ncpus=1)"), 1),
             cpus(s("00:00", "b.s", 100, 100, 100, "(n1:ncpus=3)"), 3),
             cpus(q("00:01", "x.s", 101, 101), 4), cpus(q("00:02", "c.s", 102, 102, soft.format(2)), 3),
             ended.replace("resources_used.walltime=00:00:05",
                           "resources_used.walltime=00:00:{:02d}".format(b_ends - 100)),
             cpus(s("00:09", "c.s", 102, 102, 109, "(n1:ncpus=3)"), 3)]
    return lines


def test_a_cycle_begun_the_second_before_plans_from_then(tmp_path):
    """The S records of a cycle come when the execution host confirms, up to a second after the cycle began:
    with b's E record at 108 and no S record since, the cycle that end asked for may have begun at 108, when
    c, ending at 110, did not delay X. If b's E record comes at 109, the room c took was only known then, and
    no reading runs c."""
    acc, _ = read(tmp_path, begun_the_second_before(108))
    check = check_decisions(acc, site_model(None, acc)._replace(policy=STRICT))[-1]
    assert check.group.started == ("c.s",) and check.agrees and check.left_out == 1 and check.state.now == 108
    acc, _ = read(tmp_path, begun_the_second_before(109))
    check = check_decisions(acc, site_model(None, acc)._replace(policy=STRICT))[-1]
    assert check.group.started == ("c.s",) and not check.agrees and check.state.now == 109


def confirmed_late(late_first):
    """r0 (two cpus) ends at 110 and r1 (one) at 111, r2 (one) runs on: c and d (one cpu each) fit at 110, f at
    111. The S records say c at 110, then r1's E record at 111 and the S records of the next second, d's first
    when ``late_first``."""
    def one(record):
        return cpus(record, 1)
    lines = [cpus(q("00:00", "r0.s", 100, 100), 2)] + [one(q("00:00", name, 100, 100)) for name in ("r1.s", "r2.s")]
    lines += [cpus(s("00:00", "r0.s", 100, 100, 100), 2)] + [one(s("00:00", name, 100, 100, 100))
                                                             for name in ("r1.s", "r2.s")]
    lines += [one(q("00:01", name, 101, 101)) for name in ("c.s", "d.s", "f.s")]
    lines += [cpus(e("00:10", "r0.s", 100, 100, 100, 110), 2), one(s("00:10", "c.s", 101, 101, 110)),
              one(e("00:11", "r1.s", 100, 100, 100, 111))]
    later = [one(s("00:11", "d.s", 101, 101, 111)), one(s("00:11", "f.s", 101, 101, 111))]
    return lines + (later if late_first else later[::-1])


def test_a_start_confirmed_in_the_next_second(tmp_path):
    """The server writes a start's S record when the execution host confirms it, after the cycle decided: the
    cycle of 110 that started c may have started d too, d's S record coming at 111 after r1's E record (seen in
    a real scheduler's log). The model, starting c and d at 110, agrees when d's is the first S record of
    111; when f's comes first, d's start belongs to 111's cycle and the decision of 110 disagrees."""
    acc, _ = read(tmp_path, confirmed_late(True))
    checks = check_decisions(acc, site_model(None, acc))
    assert [check.group.started for check in checks][-2:] == [("c.s",), ("d.s", "f.s")]
    assert checks[-2].model_started == ("c.s", "d.s") and checks[-2].agrees and checks[-2].left_out == 1
    acc, _ = read(tmp_path, confirmed_late(False))
    checks = check_decisions(acc, site_model(None, acc))
    assert checks[-2].group.started == ("c.s",) and not checks[-2].agrees


def cycle_per_end(third):
    """n1 has four cpus, held by r3 (two, queued first) and r1 and r2 (one each) until their E records at 110,
    r1's, r2's, then r3's; w and x (two cpus each), then a and b (one each) wait, in submission order. The S
    records of 110 say a, then b, then ``third``."""
    lines = [q("00:00", "r3.s", 100, 100), cpus(q("00:00", "r1.s", 100, 100), 1), cpus(q("00:00", "r2.s", 100, 100), 1),
             s("00:00", "r3.s", 100, 100, 100), cpus(s("00:00", "r1.s", 100, 100, 100, "(n1:ncpus=1)"), 1),
             cpus(s("00:00", "r2.s", 100, 100, 100, "(n1:ncpus=1)"), 1)]
    lines += [q("00:01", "w.s", 101, 101), q("00:01", "x.s", 101, 101)]
    lines += [cpus(q("00:02", name, 102, 102), 1) for name in ("a.s", "b.s")]
    lines += [cpus(e("00:10", "r1.s", 100, 100, 100, 110, "(n1:ncpus=1)"), 1),
              cpus(e("00:10", "r2.s", 100, 100, 100, 110, "(n1:ncpus=1)"), 1), e("00:10", "r3.s", 100, 100, 100, 110)]
    lines += [cpus(s("00:10", name, 102, 102, 110, "(n1:ncpus=1)"), 1) for name in ("a.s", "b.s")]
    return lines + [s("00:10", third, 101, 101, 110)]


def test_a_cycle_after_each_end_of_the_second(tmp_path):
    """Three E records of one second, then three S records: the server asked for a cycle at each end (seen in a
    real scheduler's log). After r1's end one cpu is free and a starts; after r2's, b; after r3's, w. One
    cycle after all three would start w and x; r3's end read as not yet processed, w, and then x after it; a
    cycle after each end, in the E records' order, gives a, b and w. Had PBS started x third, it would not."""
    acc, _ = read(tmp_path, cycle_per_end("w.s"))
    check = check_decisions(acc, site_model(None, acc))[-1]
    assert check.group.started == ("a.s", "b.s", "w.s") and check.agrees and check.left_out
    assert sorted(check.model_started) == ["a.s", "b.s", "w.s"]
    acc, _ = read(tmp_path, cycle_per_end("x.s"))
    check = check_decisions(acc, site_model(None, acc))[-1]
    assert check.group.started == ("a.s", "b.s", "x.s") and not check.agrees


def test_a_start_on_a_vnode_held_exclusively_is_a_new_decision(tmp_path):
    """r holds one cpu of n1 (four cpus) with place=excl, so nothing else fits on n1 until r's end. At 110 x's end
    frees n2 and a starts there; r's end is logged next, then b (three cpus) and c (one) on n1: both need the
    vnode r held, so they belong to the cycle after r's end (counted by cpus alone, b would join a's cycle and
    c would be split from b)."""
    def excl(record):
        return record.replace("Resource_List.place=pack", "Resource_List.place=excl")
    lines = [cpus(q("00:00", "z.s", 90, 90), 4), cpus(s("00:00", "z.s", 90, 90, 90, "(n1:ncpus=4)"), 4),
             cpus(e("00:00", "z.s", 90, 90, 90, 95, "(n1:ncpus=4)"), 4),
             excl(cpus(q("00:00", "r.s", 100, 100), 1)),
             excl(cpus(s("00:00", "r.s", 100, 100, 100, "(n1:ncpus=1)"), 1)),
             cpus(q("00:00", "x.s", 100, 100), 4), cpus(s("00:00", "x.s", 100, 100, 100, "(n2:ncpus=4)"), 4),
             cpus(q("00:01", "a.s", 101, 101), 4), cpus(q("00:01", "b.s", 101, 101), 3),
             cpus(q("00:01", "c.s", 101, 101), 1),
             cpus(e("00:10", "x.s", 100, 100, 100, 110, "(n2:ncpus=4)"), 4),
             cpus(s("00:10", "a.s", 101, 101, 110, "(n2:ncpus=4)"), 4),
             excl(cpus(e("00:10", "r.s", 100, 100, 100, 110, "(n1:ncpus=1)"), 1)),
             cpus(s("00:10", "b.s", 101, 101, 110, "(n1:ncpus=3)"), 3),
             cpus(s("00:10", "c.s", 101, 101, 110, "(n1:ncpus=1)"), 1)]
    acc, _ = read(tmp_path, lines)
    assert groups(acc)[-2:] == [(110, ("a.s",)), (110, ("b.s", "c.s"))]


def with_server_log(tmp_path, events):
    """A server's log of ``events`` (``(epoch second, job or None, message)``, in order), read."""
    from test_fidelity_server_usage import server_line

    from replay.fidelity.server_log import read_server_log
    path = tmp_path / "server.log"
    path.write_text("\n".join(server_line(*event) for event in events) + "\n")
    return read_server_log([str(path)], lambda *rejected: None)


RUN = "Job Run at request of Scheduler@pbshost on exec_vnode (n1:ncpus=2)"

TWO_CYCLES = [(100, None, "Scheduler sent command 1"), (100, "a.s", RUN), (100, "b.s", RUN),
              (110, "a.s", "Exit_status=0"), (110, None, "Scheduler sent command 2"), (110, "c.s", RUN),
              (110, "b.s", "Exit_status=0"), (110, None, "Scheduler sent command 2"), (110, "d.s", RUN)]
"""The server's log of ``two_cycle_log``: a's end, a cycle that ran c; b's end, a cycle that ran d."""


def two_cycle_log(tmp_path):
    """a and b (2 cpus each) end at 110; c (soft walltime 3 s) and d (4 s) start then, x (4 cpus) waits."""
    two = "(n1:ncpus=2)"
    soft = "Resource_List.soft_walltime=00:00:0{}"
    lines = [q("00:00", "a.s", 100, 100), q("00:00", "b.s", 100, 100), s("00:00", "a.s", 100, 100, 100, two),
             s("00:00", "b.s", 100, 100, 100, two), q("00:01", "c.s", 101, 101, soft.format(3)),
             q("00:02", "x.s", 102, 102).replace("ncpus=2", "ncpus=4"), q("00:03", "d.s", 103, 103, soft.format(4)),
             e("00:10", "a.s", 100, 100, 100, 110, two), e("00:10", "b.s", 100, 100, 100, 110, two),
             s("00:10", "c.s", 101, 101, 110, two), s("00:10", "d.s", 103, 103, 110, two)]
    return read(tmp_path, lines)[0]


def test_given_the_servers_log_its_cycles_are_the_decisions(tmp_path):
    """The S records of c and d, in one second with no end between, would be one decision; the server's log shows
    two cycles (each "Scheduler sent command" line starts one: the server sends a command only to an idle
    scheduler), and the check follows it."""
    acc = two_cycle_log(tmp_path)
    assert groups(acc)[-1] == (110, ("c.s", "d.s"))
    log = with_server_log(tmp_path, TWO_CYCLES)
    assert [(group.time, group.started) for group in decision_groups(acc, site_model(None, acc).vnodes, log)] == \
        [(100, ("a.s", "b.s")), (110, ("c.s",)), (110, ("d.s",))]


def test_starts_the_servers_log_cannot_place_are_grouped_by_their_records(tmp_path):
    """A log without the scheduler's events (no "Scheduler sent command" line), or one that begins after the
    cycle that ran a job, leaves those starts to the S records' rule."""
    acc = two_cycle_log(tmp_path)
    by_records = groups(acc)
    no_commands = with_server_log(tmp_path, [event for event in TWO_CYCLES if event[1] is not None])
    assert [(group.time, group.started) for group in decision_groups(acc, site_model(None, acc).vnodes,
                                                                     no_commands)] == by_records
    begun_late = with_server_log(tmp_path, TWO_CYCLES[1:])
    assert [(group.time, group.started) for group in decision_groups(acc, site_model(None, acc).vnodes,
                                                                     begun_late)][0] == (100, ("a.s", "b.s"))


def test_a_job_an_earlier_cycle_of_the_second_ran_is_read_as_unconfirmed_first(tmp_path):
    """In the second cycle of 110, c (run by the first) has its S record already, but PBS's scheduler took its
    start as one second from now: top job x waits for c's end at 114, not 113, and d (ending at 114) backfills.
    Read from c's recorded start, d would not: the first reading agrees."""
    acc = two_cycle_log(tmp_path)
    site = site_model(None, acc)._replace(policy=STRICT)
    check = check_decisions(acc, site, server_log=with_server_log(tmp_path, TWO_CYCLES))[-1]
    assert check.group.started == ("d.s",) and check.agrees and check.left_out == 0
    assert {item.job.name: item.start for item in check.state.running}["c.s"] == 111


def test_a_cycles_last_run_request_handled_after_the_next_command(tmp_path):
    """One cycle ran a and b, but the server handled the request to run b after the cycle's end and the command a
    release made it send next, so its log puts b in the next cycle: the decision of a agrees when the model starts
    a and the next cycle's first start (b) of that second, and the next one then agrees on b."""
    two = "(n1:ncpus=2)"
    lines = [q("00:00", "x.s", 100, 100).replace("ncpus=2", "ncpus=4"),
             s("00:00", "x.s", 100, 100, 100, "(n1:ncpus=4)"),
             q("00:01", "a.s", 101, 101), q("00:02", "b.s", 102, 102), e("00:10", "x.s", 100, 100, 100, 110,
                                                                            "(n1:ncpus=4)"),
             s("00:10", "a.s", 101, 101, 110, two), s("00:10", "b.s", 102, 102, 110, two)]
    acc = read(tmp_path, lines)[0]
    events = [(100, None, "Scheduler sent command 1"), (100, "x.s", RUN), (110, "x.s", "Exit_status=0"),
              (110, None, "Scheduler sent command 2"), (110, "a.s", RUN), (110, "y.s", "Holds u released at request"),
              (110, None, "Scheduler sent command 1"), (110, "b.s", RUN)]
    checks = check_decisions(acc, site_model(None, acc), server_log=with_server_log(tmp_path, events))
    assert [(check.group.started, check.model_started, check.agrees) for check in checks[1:]] == [
        (("a.s",), ("a.s", "b.s"), True), (("b.s",), ("b.s",), True)]


def test_of_the_readings_that_agree_the_one_with_fewest_changes_is_kept():
    """limits-legacy-seed3 at 07:36:39, the fourth cycle of four releases in one second (the server's log): PBS
    considered 873 to 876 and ran 876, the others held back by their group's and users' limits. Two readings
    start 876: all four seen with job 872 still running (its obit not yet in, one change), and 873 to 875 not
    yet seen with 872 exiting (three changes). The check keeps the first, the state the scheduler's log shows."""
    from predictor.cmdline.rejects import RejectPrinter
    from replay.fidelity.server_log import read_server_log
    folder = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "fidelity", "limits-legacy-seed3")
    acc = read_records([os.path.join(folder, "accounting")], RejectPrinter(0))
    checks = check_decisions(acc, site_model(os.path.join(folder, "site"), acc),
                             server_log=read_server_log([os.path.join(folder, "server.log")], RejectPrinter(0)))
    check = next(check for check in checks if check.group.started == ("876.pbshost",))
    assert check.agrees and check.left_out == 1
    assert [job.name for job in check.state.queued] == ["873.pbshost", "874.pbshost", "875.pbshost", "876.pbshost"]
    assert [(item.job.name, item.exiting) for item in check.state.running] == [
        ("871.pbshost", False), ("872.pbshost", False)]
