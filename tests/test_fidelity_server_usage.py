"""Fairshare usage charged at the server's own cycles, with the MoMs' updates its log records."""

import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_fidelity_decisions import busy_log
from test_fidelity_records import read

from replay.fidelity.decisions import check_decisions, usage_at_end
from replay.fidelity.machine import site_model
from replay.fidelity.server_log import read_server_log
from replay.fidelity.server_usage import has_updates
from replay.pbs.fairshare import Fairshare
from replay.pbs.policy import FairsharePolicy, SchedulingPolicy

POLICY = SchedulingPolicy(fairshare=FairsharePolicy(usage_resource="ncpus*walltime", unknown_shares=10,
                                                    min_check_poll_s=1, max_check_poll_s=2))


def server_line(second, job, message, shift_s=0):
    """A server log line at epoch ``second`` written ``shift_s`` ahead of UTC (a server's local time)."""
    clock = time.strftime("%m/%d/%Y %H:%M:%S", time.gmtime(second + shift_s))
    if job is None:
        return "{};0040;Server@pbshost;Svr;pbshost;{}".format(clock, message)
    level = "0400" if message.startswith("Received") else "0008"
    return "{};{};Server@pbshost;Job;{};{}".format(clock, level, job, message)


def busy_server_log(obit_before_cycle=True, shift_s=0, updates=True):
    """busy_log's job 1.s (2 cpus, ana) run at 100; its MoM's updates arrive at 103 (measured at 101) and 105
    (measured at 103); its obit comes at 105, before or after that second's cycle; jobs 2.s and 3.s run at 110."""
    cycle = "Scheduler sent command 1"
    events = [(100, None, cycle), (100, "1.s", "Job Run at request of Scheduler@pbshost on exec_vnode (n1:ncpus=2)")]
    if updates:
        events.append((103, "1.s", "Received session ID for job: 4242"))
    events.append((103, None, cycle))
    if updates:
        events.append((105, "1.s", "Received the same SID as before: 4242"))
    obit = (105, "1.s", "Obit received momhop:1 serverhop:1 state:R substate:42")
    events += [obit, (105, None, cycle)] if obit_before_cycle else [(105, None, cycle), obit]
    events += [(110, "1.s", "Exit_status=0 resources_used.walltime=00:00:05"), (110, None, "Scheduler sent command 2"),
               (110, "2.s", "Job Run at request of Scheduler@pbshost on exec_vnode (n1:ncpus=1)"),
               (110, "3.s", "Job Run at request of Scheduler@pbshost on exec_vnode (n1:ncpus=1)")]
    return [server_line(second, job, message, shift_s) for second, job, message in events]


def usage_at_last_decision(tmp_path, server_lines):
    lines = busy_log()
    lines[2] = lines[2].replace("user=ana", "user=bob")
    acc, _ = read(tmp_path, lines)
    log = None
    if server_lines is not None:
        path = tmp_path / "server.log"
        path.write_text("\n".join(server_lines) + "\n")
        log = read_server_log([str(path)], lambda *reject: None)
    site = site_model(None, acc)._replace(policy=POLICY)
    checks = check_decisions(acc, site, server_log=log)
    assert checks[-1].group.started == ("2.s", "3.s")
    return checks[-1].state.fairshare.usage("ana"), acc, site, log


@pytest.mark.parametrize("shift_s", [0, 3600, -5 * 3600])
def test_a_job_is_charged_what_its_last_update_before_the_cycle_carried(tmp_path, shift_s):
    """At the cycle of 103 the update received that second (measured at 101) is charged: 2 cpus * 1 s. At 105
    the server already has the job's obit: the job is exiting, charged nothing more. Whatever the server's time
    zone, the offset comes from the accounting log."""
    usage, *_ = usage_at_last_decision(tmp_path, busy_server_log(shift_s=shift_s))
    assert usage == 1 + 2 * 1


def test_a_cycle_before_the_obit_charges_the_last_update(tmp_path):
    """When the cycle of 105 comes before the obit, the job is still running for PBS and is charged the update
    received just before (measured at 103): 2 cpus * 3 s in all."""
    usage, *_ = usage_at_last_decision(tmp_path, busy_server_log(obit_before_cycle=False))
    assert usage == 1 + 2 * 3


def test_without_updates_the_logs_cycles_and_the_mom_model_are_used(tmp_path):
    """A server's log without the MoMs' updates (log_events below 1024) leaves the usage to the accounting log's
    cycles and the MoM model, as without any server's log."""
    without_log, *_ = usage_at_last_decision(tmp_path, None)
    log_lines = busy_server_log(updates=False)
    without_updates, _, _, log = usage_at_last_decision(tmp_path, log_lines)
    assert not has_updates(log) and without_updates == without_log


def test_the_usage_at_the_end_is_charged_at_every_cycle_of_the_log(tmp_path):
    """``usage_at_end`` given the same log charges through its last cycle: the usage of the last decision, since
    the jobs it ran were not yet charged. From the accounting log alone, job 1.s is charged nothing: no cycle the
    accounting log implies falls between its MoM's first report, seen at 103, and its end."""
    usage, acc, site, log = usage_at_last_decision(tmp_path, busy_server_log(obit_before_cycle=False))
    assert usage_at_end(acc, Fairshare(site.policy.fairshare), log).usage("ana") == usage == 7
    assert usage_at_end(acc, Fairshare(site.policy.fairshare)).usage("ana") == 1


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(101, 109), min_size=1, max_size=5, unique=True))
def test_a_job_is_charged_its_last_update_before_its_obit(tmp_path_factory, seconds):
    """Whatever seconds job 1.s's updates arrive in before the cycle of 109 (its obit after it), that cycle charges
    it the walltime the last of them carried: 2 s before it arrived, from its start at 100, at most its process's
    5 s; the first update is the one with the session ID."""
    seconds = sorted(seconds)
    events = [(100, None, "Scheduler sent command 1"),
              (100, "1.s", "Job Run at request of Scheduler@pbshost on exec_vnode (n1:ncpus=2)")]
    for number, second in enumerate(seconds):
        events.append((second, "1.s", ("Received session ID for job: 7" if number == 0
                                        else "Received the same SID as before: 7")))
    events += [(109, None, "Scheduler sent command 1"),
               (109, "1.s", "Obit received momhop:1 serverhop:1 state:R substate:42"),
               (110, "1.s", "Exit_status=0"), (110, None, "Scheduler sent command 2"),
               (110, "2.s", "Job Run at request of Scheduler@pbshost on exec_vnode (n1:ncpus=1)"),
               (110, "3.s", "Job Run at request of Scheduler@pbshost on exec_vnode (n1:ncpus=1)")]
    usage, *_ = usage_at_last_decision(tmp_path_factory.mktemp("log"),
                                       [server_line(second, job, message) for second, job, message in events])
    assert usage == 1 + 2 * min(5, max(0, seconds[-1] - 2 - 100))


def test_a_start_the_servers_log_does_not_have_sees_the_cycles_of_its_second(tmp_path):
    """A job the server's log has no "Job Run" line for (a log of fewer days than the accounting log) is decided on
    the usage of the cycles up to its start's second, not of the whole log: the later decisions still see theirs."""
    later = [server_line(113, "3.s", "Received session ID for job: 43"),
             server_line(113, None, "Scheduler sent command 1")]
    lines = [line for line in busy_server_log(obit_before_cycle=False) if "2.s;Job Run" not in line] + later
    usage, *_ = usage_at_last_decision(tmp_path, lines)
    assert usage == 1 + 2 * 3  # the cycles up to 110 charged job 1.s; the one at 113 charges ana's 3.s later
