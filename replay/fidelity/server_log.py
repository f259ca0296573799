"""The order within a second that a PBS server's own log keeps and its accounting log does not.

The accounting log gives times to the second. The server's log (``server_logs/YYYYMMDD``) writes its lines
in the order things happened: a job queued ("Job Queued at request of ...", its ``qsub``) or released from hold
("Holds ... released at request of ..."), the end of a
job's process received from its execution host ("Obit received"), the job finished ("Exit_status=...", as its
E record is written), and between them its requests for a scheduler cycle ("Scheduler sent command"). Each
such line's position in the logs, read in date order, ranks those events within their second for the whole-run
replay, and events with no request between them shared one cycle (``replay.pbs.run.WithinSecond``). Other lines
are left alone; a line too short to be a job's line is skipped, as the server's log holds many kinds of lines.

Some lines are kept with their second too: the server finishing a job and running one at the scheduler's request
("Job Run at request of Scheduler"), the seconds the whole-run replay holds a job's vnodes between
(``replay.fidelity.measure``), and, for the fairshare usage the scheduler charged (``replay.fidelity.server_usage``),
its requests for a cycle and, when ``log_events`` includes 1024 (as 2047 does), each update of a running job's
``resources_used`` received from its MoM ("Received session ID for job" with the first, "Received the same SID as
before" with each later one). A line's second is its time read as UTC; the server writes local time, and
``server_usage`` takes the offset from the accounting log.
"""

import calendar
import os
import re
import time
from typing import Dict, List, NamedTuple, Tuple

from ..traces.files import accounting_files, raw_lines
from ..traces.trace import ReadStats

__all__ = ["ServerLog", "log_days", "log_files", "read_server_log"]

DAY_S = 86400

RELEASED = b"released at request of"
QUEUED = b"Job Queued at request of"
OBIT = b"Obit received"
FINISHED = b"Exit_status="
CYCLE = b"Scheduler sent command"
RUN = b"Job Run at request of Scheduler"
UPDATES = (b"Received session ID for job", b"Received the same SID as before")


class ServerLog(NamedTuple):
    """Job name -> position (the line's number over all the files read, in date order) of the first line saying
    the job was released, of its obit and of its finish; the positions of the server's requests for a scheduler
    cycle ("Scheduler sent command"), in order; how many files were read; the second of each of those requests;
    job name -> ``(position, second)`` of its first "Job Run" line; job name -> ``(position, second)`` of each
    update of its ``resources_used`` received from its MoM, in order (none below ``log_events`` 1024); job name ->
    the second of its finish; job name -> position of the line saying it was queued ("Job Queued at request of",
    its ``qsub``). Seconds are the lines' times read as UTC."""

    released: Dict[str, int]
    obit: Dict[str, int]
    finished: Dict[str, int]
    cycles: List[int]
    files: int
    cycle_seconds: List[int] = []
    runs: Dict[str, Tuple[int, int]] = {}
    updates: Dict[str, List[Tuple[int, int]]] = {}
    finished_seconds: Dict[str, int] = {}
    queued: Dict[str, int] = {}


def log_days(first_time, last_time):
    """The ``YYYYMMDD`` names (local time, as PBS names its log files) of the days from ``first_time`` to
    ``last_time`` (epoch seconds), a day more on each side."""
    start, end = first_time - DAY_S, last_time + DAY_S
    return {time.strftime("%Y%m%d", time.localtime(moment)) for moment in range(start, end, 3600)} | \
        {time.strftime("%Y%m%d", time.localtime(end))}


def _day(path):
    """The ``YYYYMMDD`` a log file is named for, or None."""
    match = re.match(r"(\d{8})(\.gz)?$", os.path.basename(path))
    return match.group(1) if match else None


def log_files(paths, days=None):
    """The files of ``paths`` (files, and directories of ``YYYYMMDD`` files) to read, in date order when all are
    named for their day, however they were given; with ``days`` (``log_days``), none named for another day: a
    log directory may hold years."""
    found = [(path, _day(path)) for path in accounting_files(paths, ReadStats())]
    if all(day for _, day in found):
        found.sort(key=lambda item: item[1])
    return [path for path, day in found if days is None or not day or day in days]


def read_server_log(paths, on_reject, days=None):
    """Read server log files and directories of ``YYYYMMDD`` files into a ``ServerLog``; TraceError if a file
    cannot be read at all. A damaged compressed file goes to ``on_reject(path, line_no, message)``. Files all named
    for their day are read in date order, whatever order they were given in. With ``days`` (``log_days``), a file
    named for another day is not read: a server's log directory may hold years."""
    released, obit, finished, cycles, position, files, queued = {}, {}, {}, [], 0, 0, {}
    cycle_seconds, runs, updates, finished_seconds, seconds = [], {}, {}, {}, _Seconds()
    for path in log_files(paths, days):
        files += 1
        for _, raw in raw_lines(path, on_reject):
            position += 1
            fields = raw.split(b";", 5)
            if len(fields) < 6:
                continue
            if fields[3] != b"Job":
                if fields[5].startswith(CYCLE):
                    second = seconds(fields[0])
                    if second is not None:
                        cycles.append(position)
                        cycle_seconds.append(second)
                continue
            message = fields[5]
            kind = (released if RELEASED in message else obit if message.startswith(OBIT)
                    else finished if message.startswith(FINISHED) else queued if message.startswith(QUEUED)
                    else None)
            if kind is not None:
                name = fields[4].decode("utf-8", "replace")
                kind.setdefault(name, position)
                if kind is finished and name not in finished_seconds:
                    second = seconds(fields[0])
                    if second is not None:
                        finished_seconds[name] = second
            elif message.startswith(RUN) or message.startswith(UPDATES):
                second = seconds(fields[0])
                if second is None:
                    continue
                name = fields[4].decode("utf-8", "replace")
                if message.startswith(RUN):
                    runs.setdefault(name, (position, second))
                else:
                    updates.setdefault(name, []).append((position, second))
    return ServerLog(released, obit, finished, cycles, files, cycle_seconds, runs, updates, finished_seconds, queued)


class _Seconds:
    """A log line's ``MM/DD/YYYY HH:MM:SS`` time as seconds since the epoch read as UTC (None if it is not a
    time), remembering the last one: a server writes many lines in one second."""

    def __init__(self):
        self.text, self.second = None, None

    def __call__(self, text):
        if text != self.text:
            self.text = text
            try:
                self.second = calendar.timegm(time.strptime(text.decode("ascii")[:19], "%m/%d/%Y %H:%M:%S"))
            except (UnicodeDecodeError, ValueError):
                self.second = None
        return self.second
