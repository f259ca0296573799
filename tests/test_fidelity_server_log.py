"""The server's own log read for the order of releases, obits and finishes within a second."""

import gzip
import os

import pytest

from replay.fidelity.server_log import log_days, read_server_log
from replay.shared.errors import TraceError

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "fidelity")

# lines as a real OpenPBS 23.06.06 server writes them (vnodes-light-seed9's server log, other kinds of line added)
FIRST_DAY = [
    "11/28/2026 16:20:54;0080;Server@pbshost;Job;12.pbshost;Obit received momhop:1 serverhop:1 state:R substate:42",
    "11/28/2026 16:20:54;0080;Server@pbshost;Job;8.pbshost;Obit received momhop:1 serverhop:1 state:R substate:42",
    "11/28/2026 16:20:54;0100;Server@pbshost;Node;pbshost[0];set_vnode_state;vnode.state=0x0 vnode_o.state=0x10",
    "11/28/2026 16:20:54;0010;Server@pbshost;Job;12.pbshost;Exit_status=0 resources_used.cpupercent=0",
    "11/28/2026 16:20:54;0040;Server@pbshost;Svr;pbshost;Scheduler sent command 2",
    "11/28/2026 16:20:54;0008;Server@pbshost;Job;20.pbshost;Job Run at request of Scheduler@pbshost on exec_vnode",
    "11/28/2026 16:20:54;0010;Server@pbshost;Job;8.pbshost;Exit_status=0 resources_used.cpupercent=0",
    "a line cut short",
    "11/28/2026 16:20:55;0008;Server@pbshost;Job;21.pbshost;Holds u released at request of root@pbshost",
]
SECOND_DAY = [
    "11/29/2026 00:00:01;0008;Server@pbshost;Job;7[2].pbshost;Holds u released at request of root@pbshost",
    "11/29/2026 00:00:02;0008;Server@pbshost;Job;21.pbshost;Holds u released at request of root@pbshost",
]


def _write(path, lines, opener=open):
    with opener(str(path), "wt") as handle:
        handle.write("".join(line + "\n" for line in lines))


def _rejects():
    seen = []
    return seen, lambda path, line_no, message: seen.append((path, line_no, message))


def test_positions_count_every_line_of_the_files_in_date_order(tmp_path):
    """Each job's release, obit and finish is placed by its line's number over the days' files (a directory read in
    name order, a gzip'ed day too); a job released twice keeps its first release; other lines only count."""
    _write(tmp_path / "20261128", FIRST_DAY)
    _write(tmp_path / "20261129.gz", SECOND_DAY, gzip.open)
    seen, on_reject = _rejects()
    log = read_server_log([str(tmp_path)], on_reject)
    assert log.files == 2 and not seen
    assert log.obit == {"12.pbshost": 1, "8.pbshost": 2}
    assert log.finished == {"12.pbshost": 4, "8.pbshost": 7}
    assert log.released == {"21.pbshost": 9, "7[2].pbshost": 10}
    assert log.cycles == [5]


def test_days_given_out_of_order_are_read_in_date_order(tmp_path):
    """Log files named for their days count their lines in date order, whatever order they were given in."""
    _write(tmp_path / "20261128", FIRST_DAY)
    _write(tmp_path / "20261129", SECOND_DAY)
    _, on_reject = _rejects()
    given = read_server_log([str(tmp_path / "20261129"), str(tmp_path / "20261128")], on_reject)
    assert given == read_server_log([str(tmp_path)], on_reject)
    assert given.released == {"21.pbshost": 9, "7[2].pbshost": 10}


def test_only_the_days_of_the_accounting_logs_are_read(tmp_path):
    """Given ``days`` (the accounting logs' days and one more on each side), a directory's files named for other days
    are not read; a file named otherwise is."""
    _write(tmp_path / "20261128", FIRST_DAY)
    _write(tmp_path / "20250101", SECOND_DAY)
    _write(tmp_path / "server.log", SECOND_DAY[:1])
    _, on_reject = _rejects()
    days = log_days(1795844518, 1795844600)  # two minutes of 2026-11-28 (UTC here, as in CI)
    assert {"20261127", "20261128", "20261129"} <= days and "20250101" not in days
    log = read_server_log([str(tmp_path), str(tmp_path / "server.log")], on_reject, days)
    assert log.files == 2 and set(log.released) == {"21.pbshost", "7[2].pbshost"}


def test_a_file_that_cannot_be_read_is_one_clear_error(tmp_path):
    _, on_reject = _rejects()
    with pytest.raises(TraceError, match="cannot read"):
        read_server_log([str(tmp_path / "20261128")], on_reject)


def test_a_recordings_server_log_has_each_job_once():
    """On a recording's server.log (pbs_record.py keeps it), every job has its release, obit and finish, in that
    order."""
    folder = os.path.join(DATA, "vnodes-light-seed9")
    _, on_reject = _rejects()
    log = read_server_log([os.path.join(folder, "server.log")], on_reject)
    assert len(log.released) == len(log.obit) == len(log.finished) == 60
    assert all(log.released[job] < log.obit[job] < log.finished[job] for job in log.finished)


def test_runs_finishes_cycles_and_updates_are_kept_with_their_second(tmp_path):
    """A job's first "Job Run" line, its finish, each request for a cycle and each update of its resources_used from
    its MoM (logged at log_events 2047) are kept with their position and their second, the time read as UTC."""
    lines = FIRST_DAY[:4] + [
        "11/28/2026 16:20:56;0400;Server@pbshost;Job;20.pbshost;Received session ID for job: 4242",
        "11/28/2026 16:20:58;0400;Server@pbshost;Job;20.pbshost;Received the same SID as before: 4242",
        "11/28/2026 16:20:59;0008;Server@pbshost;Job;20.pbshost;Job Run at request of Scheduler@pbshost on x",
        "not a time;0040;Server@pbshost;Svr;pbshost;Scheduler sent command 1"] + FIRST_DAY[4:6]
    _write(tmp_path / "20261128", lines)
    seen, on_reject = _rejects()
    log = read_server_log([str(tmp_path)], on_reject)
    at = 1795882854  # 11/28/2026 16:20:54 UTC
    assert log.updates == {"20.pbshost": [(5, at + 2), (6, at + 4)]}
    assert log.runs == {"20.pbshost": (7, at + 5)}  # its first "Job Run" line
    assert log.cycles == [9] and log.cycle_seconds == [at]  # a line whose time is not a time is no request
    assert log.finished_seconds == {"12.pbshost": at} and not seen


def test_a_job_queued_without_a_hold_is_kept_at_its_queued_line(tmp_path):
    """A job's "Job Queued at request of" line (its qsub) is kept with its position, apart from its release: a job
    submitted without a hold becomes eligible there, a held one at its release."""
    lines = ["11/28/2026 16:20:53;0008;Server@pbshost;Job;22.pbshost;Job Queued at request of fid_ana@pbshost, "
             "owner = fid_ana@pbshost, job name = j001, queue = workq"] + FIRST_DAY
    _write(tmp_path / "20261128", lines)
    seen, on_reject = _rejects()
    log = read_server_log([str(tmp_path)], on_reject)
    assert log.queued == {"22.pbshost": 1} and "22.pbshost" not in log.released and not seen
