"""Load PBS accounting logs into ``completed_jobs``, exactly once.

Each file is read from where the last run stopped, in chunks of lines. A
chunk's rows and the new position are committed in one transaction, so a
crash at any instant loses nothing and duplicates nothing (re-loading a job
is an upsert anyway). A last line without its newline is still being
written: it is left for the next pass. A malformed line is reported as
``file:line: reason`` and skipped. A file that cannot be read further (a .gz
cut short, a disk error) has every whole line before the damage loaded, and
is reported as ``file:line: cannot read ...`` with the first line not read.
A path that is missing, a directory with no file in it, and a file that is an
SWF trace rather than an accounting log are each reported once and counted
(the CLI exits 2 for them: the path given is most likely wrong).

Parsing is the expensive part, so with ``workers`` > 0 chunks are parsed by
worker processes while this process streams the previous chunks to
PostgreSQL; chunks are still committed strictly in file order, and at most
``2 x workers`` chunks are in flight, so memory stays bounded.
"""

import collections
import concurrent.futures
import io
import os
import re
import signal
import sys
import time

import psycopg2

from ..accounting.logfile import READ_ERRORS, LogFile, directory_logs, tail_sha1_of_lines
from ..db.sessions import describe_error
from ..errors import DatabaseError
from ..queries import COPY_STAGING, CREATE_STAGING, PROGRESS_GET, PROGRESS_PUT, UPSERT_ONE, UPSERT_STAGED
from .chunks import chunk_rows, parse_chunk

__all__ = ["Ingester", "IngestStats", "expand_paths", "empty_directories", "looks_like_swf", "nothing_to_load"]


class IngestStats:
    """Counters of one ingest run."""

    COUNTERS = ("files", "lines", "end_records", "jobs", "rejected", "missing", "empty", "unreadable",
                "not_accounting")

    def __init__(self):
        for name in self.COUNTERS:
            setattr(self, name, 0)

    def __repr__(self):
        text = ("{0.files} files, {0.lines} lines, {0.end_records} E records, {0.jobs} jobs loaded, "
                "{0.rejected} lines rejected".format(self))
        text += ", {} files unreadable".format(self.unreadable) if self.unreadable else ""
        return text + (", {} SWF files skipped".format(self.not_accounting) if self.not_accounting else "")


def expand_paths(paths):
    """``(files, missing)``: files as given, directories as their ``YYYYMMDD[.gz]`` files sorted by name
    (``logfile.directory_logs``, the rule the replay follows too)."""
    files, missing = [], []
    for path in paths:
        if os.path.isdir(path):
            files.extend(directory_logs(path)[0])
        elif os.path.isfile(path):
            files.append(path)
        else:
            missing.append(path)
    return files, missing


_SWF_JOB_LINE = re.compile(rb"\s*(-?[0-9.]+\s+){17}-?[0-9.]+\s*")
_SWF_HEADER_LINE = re.compile(rb"\s*;\s*(Version|Computer|Installation|Acknowledge|Information|Conversion|MaxJobs|"
                              rb"MaxRecords|Preemption|UnixStartTime|TimeZone|TimeZoneString|StartTime|EndTime|"
                              rb"MaxNodes|MaxProcs|MaxRuntime|MaxMemory|AllowOveruse|MaxQueues|Queues?|"
                              rb"MaxPartitions|Partitions?|Note)\s*:")
_RECORD_START = re.compile(rb"\s*[0-9]{2}/[0-9]{2}/[0-9]{4} ")
_SNIFF_BYTES = 4096


def _head_lines(log):
    """The non-blank whole lines among the file's first bytes."""
    try:
        head = log.read_at(0, _SNIFF_BYTES)
    except READ_ERRORS:
        return []  # reading it for real reports the error
    return [line for line in head.split(b"\n")[:-1] if line.strip()]


def looks_like_swf(log):
    """Does the file open like a Standard Workload Format trace, with no accounting record among its first lines?

    SWF lines are ``; Key: value`` header comments and jobs of 18 numbers; an
    accounting record starts with its date, so damaged lines do not make a log SWF.
    """
    lines = _head_lines(log)
    if any(_RECORD_START.match(line) for line in lines):
        return False
    return any(_SWF_HEADER_LINE.match(line) or _SWF_JOB_LINE.fullmatch(line) for line in lines)


def nothing_to_load(paths):
    """Why ``paths`` hold no accounting file at all (naming the first culprit), or None if one is there."""
    files, missing = expand_paths(paths)
    if any(not looks_like_swf(LogFile(path)) for path in files):
        return None
    if files:
        return "{}: an SWF trace, not a PBS accounting log (python -m replay convert turns it into " \
               "accounting logs)".format(files[0])
    if missing:
        return "{}: no such file or directory".format(missing[0])
    return "{}: no accounting file in this directory".format(empty_directories(paths)[0])


def empty_directories(paths):
    """The directories among ``paths`` that hold no file to read."""
    return [path for path in paths if os.path.isdir(path) and not expand_paths([path])[0]]


def _ignored_files(paths):
    """``(directory, count)`` for the directories among ``paths`` holding files that are not accounting files."""
    counts = [(path, directory_logs(path)[1]) for path in paths if os.path.isdir(path)]
    return [(path, count) for path, count in counts if count]


def _pause(interval_s, should_stop, sleep):
    """Sleep ``interval_s`` in short steps (at least one), waking early to stop."""
    remaining = interval_s
    while True:
        step = min(0.2, max(remaining, 0))
        sleep(step)
        remaining -= step
        if remaining <= 0 or should_stop():
            return


class _Parsed:
    """A chunk parsed in this process, shaped like a worker's Future."""

    def __init__(self, value):
        self._value = value

    def result(self):
        return self._value


class _Chunk(collections.namedtuple("_Chunk", "lines first_line_no end_offset tail_sha1 result")):
    """Lines read from a file, where they end, the checksum before that, and their (pending) parse."""


class _ReadFailed(Exception):
    """Reading a file failed after ``lines_read`` lines (None: before its lines were reached)."""

    def __init__(self, lines_read):
        super().__init__(lines_read)
        self.lines_read = lines_read


def _worker_signals():
    """In a worker: die at once on SIGTERM, as Pool.terminate expects, leave Ctrl-C to the main process,
    and die with the main process.

    A worker inherits the main process's handlers; the CLI's SIGTERM -> sys.exit
    made a terminated worker start a clean exit that could block for ever on a
    queue lock the terminating pool holds, and ``close()`` with it. A worker
    that outlived a killed ingester printed a BrokenPipeError traceback when it
    tried to return its chunk.
    """
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _die_with_parent()


_SIGNALS_SET = False


def _parse_in_worker(lines, first_line_no):
    """``parse_chunk`` in a worker, its signals set first (Python 3.6 has no executor initializer)."""
    global _SIGNALS_SET
    if not _SIGNALS_SET:
        _worker_signals()
        _SIGNALS_SET = True
    return parse_chunk(lines, first_line_no)


def _die_with_parent():
    """Linux: SIGKILL this process when its parent dies (elsewhere a worker exits once its pipe closes)."""
    try:
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):
        pass
    if os.getppid() == 1:  # the parent died before prctl took effect
        os._exit(0)


_PR_SET_PDEATHSIG = 1


class Ingester:
    """Loads accounting files through one (synchronous) psycopg2 connection.

    ``lines_per_chunk`` lines are parsed and committed together; ``workers``
    processes parse (0: parse in this process). Call ``close()`` when done.
    """

    def __init__(self, conn, lines_per_chunk=10000, on_reject=None, on_warning=None, workers=0):
        # The server, not psycopg2, must judge what the database can store.
        conn.set_client_encoding("UTF8")
        self.conn = conn
        self.lines_per_chunk = lines_per_chunk
        self.workers = workers
        self.stats = IngestStats()
        self._on_reject = on_reject or (lambda path, line_no, message: None)
        self._on_warning = on_warning or (lambda message: None)
        self._staging_ready = False
        self._pool = None

    def close(self):
        """Stop the worker processes, if any.

        A process pool whose workers were killed (systemd's stop sends SIGTERM to
        every process of the service) must not wait for them: multiprocessing.Pool
        hung for ever on a queue lock a killed worker held. The executor sees
        dead workers and stops; live ones finish the chunk in hand (those chunks
        are not committed) and exit.
        """
        if self._pool is not None:
            pool, self._pool = self._pool, None
            pool.shutdown(wait=True)

    def ingest(self, paths, on_progress=None):
        """Load every file under ``paths``; return the stats. ``on_progress(files done, files)`` after each file."""
        files = self._check_paths(paths)
        for done, path in enumerate(files, 1):
            self.ingest_file(path)
            if on_progress is not None:
                on_progress(done, len(files))
        return self.stats

    def _check_paths(self, paths, count=True):
        """The files under ``paths``; missing paths and empty directories reported (and counted if ``count``),
        other files in directories reported."""
        files, missing = expand_paths(paths)
        for path, ignored in _ignored_files(paths):
            self._on_warning("{}: {} file(s) not named YYYYMMDD or YYYYMMDD.gz, not read".format(path, ignored))
        for path in missing:
            self.stats.missing += count
            self._on_warning("{}: no such file or directory".format(path))
        for path in empty_directories(paths):
            self.stats.empty += count
            self._on_warning("{}: no accounting file in this directory".format(path))
        return files

    def ingest_file(self, path):
        """Load the new complete lines of one file; a file that cannot be read is reported."""
        log = LogFile(os.path.abspath(path))
        self.stats.files += 1
        if looks_like_swf(log):
            self.stats.not_accounting += 1
            self._on_warning("{}: an SWF trace, not a PBS accounting log: skipped (python -m replay convert "
                             "turns it into accounting logs)".format(log.path))
            return
        try:
            self._ingest_log(log)
        except _ReadFailed as failure:
            self.stats.unreadable += 1
            err = failure.__cause__
            if failure.lines_read is None:
                self._on_warning("{}: cannot read it: {}".format(log.path, err))
            else:
                self._on_warning("{}:{}: cannot read the file from this line on: {}".format(
                    log.path, failure.lines_read + 1, err))

    def follow(self, paths, interval_s=5.0, should_stop=lambda: False, sleep=time.sleep):
        """Keep loading new lines and new files until ``should_stop()``.

        Missing paths and empty directories are reported once, not counted as errors, and watched:
        files may appear there.
        """
        seen = {}
        self._check_paths(paths, count=False)
        while not should_stop():
            for path in expand_paths(paths)[0]:
                try:
                    signature = LogFile(path).signature()
                except OSError:  # rotated away between listing and looking
                    continue
                if seen.get(path) != signature:
                    self.ingest_file(path)
                    seen[path] = signature
            _pause(interval_s, should_stop, sleep)

    def _ingest_log(self, log):
        try:
            head = log.head_sha1()
            if head is None:
                return
            offset, line_no = self._resume_point(log, head)
        except READ_ERRORS as err:
            raise _ReadFailed(None) from err
        in_flight = collections.deque()
        chunks = log.line_chunks(offset, self.lines_per_chunk)
        while True:
            try:
                lines, end_offset, tail = self._read_chunk(log, chunks)
            except READ_ERRORS as err:
                self._finish_all(log, head, in_flight)  # keep what was read before the damage
                raise _ReadFailed(line_no) from err
            if not lines:
                break
            in_flight.append(_Chunk(lines, line_no + 1, end_offset, tail, self._parse(lines, line_no + 1)))
            line_no += len(lines)
            if len(in_flight) > 2 * self.workers:
                self._finish(log, head, in_flight.popleft())
        self._finish_all(log, head, in_flight)

    @staticmethod
    def _read_chunk(log, chunks):
        """``(lines, end_offset, tail_sha1)`` of the next chunk, no lines at the end; only reading happens here."""
        lines, end_offset = next(chunks, ([], None))
        if not lines:
            return lines, end_offset, None
        return lines, end_offset, tail_sha1_of_lines(lines, end_offset) or log.tail_sha1(end_offset)

    def _parse(self, lines, first_line_no):
        if not self.workers:
            return _Parsed(parse_chunk(lines, first_line_no))
        if self._pool is None:
            extra = {"initializer": _worker_signals} if sys.version_info >= (3, 7) else {}
            self._pool = concurrent.futures.ProcessPoolExecutor(self.workers, **extra)
        return self._pool.submit(_parse_in_worker, lines, first_line_no)

    def _finish_all(self, log, head, in_flight):
        while in_flight:
            self._finish(log, head, in_flight.popleft())

    def _finish(self, log, head, chunk):
        """Report a parsed chunk's bad lines and commit its rows with the new position."""
        parsed = chunk.result.result()
        for line_no, message in parsed.rejections:
            self._reject(log.path, line_no, message)
        self.stats.lines += parsed.lines
        self.stats.end_records += parsed.end_records
        progress = (log.path, head, chunk.tail_sha1, chunk.end_offset, chunk.first_line_no + parsed.lines - 1)
        self._commit(progress, parsed, chunk)

    def _reject(self, path, line_no, message):
        self.stats.rejected += 1
        self._on_reject(path, line_no, message)

    def _resume_point(self, log, head):
        """``(offset, line_no)`` to continue from; the start if the file changed."""
        progress = self._query_progress(log.path)
        if progress is None:
            return 0, 0
        old_head, old_tail, offset, line_no = progress
        if old_head != head or log.tail_sha1(offset) != old_tail:
            self._on_warning("{}: replaced or truncated since it was last read; reading it again "
                             "from the start".format(log.path))
            return 0, 0
        return offset, line_no

    def _query_progress(self, path):
        try:
            with self.conn, self.conn.cursor() as cursor:
                cursor.execute(PROGRESS_GET, (path,))
                return cursor.fetchone()
        except psycopg2.Error as err:
            raise DatabaseError(describe_error(err)) from err

    def _commit(self, progress, parsed, chunk):
        try:
            self._prepare_staging()
            with self.conn, self.conn.cursor() as cursor:
                if parsed.jobs:
                    cursor.copy_expert(COPY_STAGING, io.StringIO(parsed.copy_text))
                    cursor.execute(UPSERT_STAGED)
                cursor.execute(PROGRESS_PUT, progress)
            self.stats.jobs += parsed.jobs
        except (psycopg2.DataError, psycopg2.IntegrityError):
            self._commit_row_by_row(progress, chunk)
        except psycopg2.Error as err:
            raise DatabaseError(describe_error(err)) from err

    def _prepare_staging(self):
        """Create the session's staging table once, in its own transaction."""
        if not self._staging_ready:
            with self.conn, self.conn.cursor() as cursor:
                cursor.execute(CREATE_STAGING)
            self._staging_ready = True

    def _commit_row_by_row(self, progress, chunk):
        """The database refused the chunk: isolate the refused rows, load the others."""
        rows = chunk_rows(chunk.lines, chunk.first_line_no)[0]
        try:
            with self.conn, self.conn.cursor() as cursor:
                for values, line_no in rows.values():
                    cursor.execute("SAVEPOINT job")
                    try:
                        cursor.execute(UPSERT_ONE, values)
                        self.stats.jobs += 1
                    except (psycopg2.DataError, psycopg2.IntegrityError) as err:
                        cursor.execute("ROLLBACK TO SAVEPOINT job")
                        self._reject(progress[0], line_no, "refused by the " + describe_error(err))
                cursor.execute(PROGRESS_PUT, progress)
        except psycopg2.Error as err:
            raise DatabaseError(describe_error(err)) from err
