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

One ingester at a time loads a directory into a database (``IngestStore.lock``:
a second plain run refuses, a second follower waits). The database side may
fail at any instant: a plain run opens a lost connection again once, a
follower keeps trying for as long as it takes (``Outage``); either way a file
goes on from its stored progress.

Parsing is the expensive part, so with ``workers`` > 0 chunks are parsed by
worker processes while this process streams the previous chunks to
PostgreSQL; chunks are still committed strictly in file order, and at most
``2 x workers`` chunks are in flight, so memory stays bounded.
"""

import collections
import concurrent.futures
import os
import signal
import sys
import time

from ..accounting.logfile import READ_ERRORS, LogFile, tail_sha1_of_lines
from ..errors import DatabaseError, PredictorError
from .chunks import chunk_rows, parse_chunk
from .outage import Outage
from .paths import empty_directories, expand_paths, ignored_files, lock_keys, looks_like_swf, nothing_to_load
from .store import IngestStore

__all__ = ["Ingester", "IngestStats", "expand_paths", "empty_directories", "looks_like_swf", "nothing_to_load",
           "lock_keys"]


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


def _size(path):
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


def _compressed(path):
    """Whether ``path`` is gzip-compressed (its offsets are in the decompressed text, not the file's bytes)."""
    try:
        with open(path, "rb") as probe:
            return probe.read(2) == b"\x1f\x8b"
    except OSError:
        return False


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

    ``connection`` is a psycopg2 connection, or a function that opens one (then
    a lost connection is opened again: ``follow`` rides out database outages).
    ``lines_per_chunk`` lines are parsed and committed together; ``workers``
    processes parse (0: parse in this process). Call ``close()`` when done.
    """

    def __init__(self, connection, lines_per_chunk=10000, on_reject=None, on_warning=None, workers=0):
        self.store = IngestStore(connection)
        self.lines_per_chunk = lines_per_chunk
        self.workers = workers
        self.stats = IngestStats()
        self._on_reject = on_reject or (lambda path, line_no, message: None)
        self._on_warning = on_warning or (lambda message: None)
        self._pool = None
        self._files = set()
        self._waiting_for = None
        self._on_chunk = None  # (path, offset committed): moves a progress bar within a file
        self._reported = (None, set())  # a chunk reported but not committed yet: its progress, its bad lines

    def close(self):
        """Stop the worker processes, if any, and close the connection this ingester opened.

        A process pool whose workers were killed (systemd's stop sends SIGTERM to
        every process of the service) must not wait for them: multiprocessing.Pool
        hung for ever on a queue lock a killed worker held. The executor sees
        dead workers and stops; live ones finish the chunk in hand (those chunks
        are not committed) and exit.
        """
        if self._pool is not None:
            pool, self._pool = self._pool, None
            pool.shutdown(wait=True)
        self.store.close()

    def ingest(self, paths, on_progress=None):
        """Load every file under ``paths``; return the stats. ``on_progress(bytes done, bytes)`` after each
        chunk of a plain file and after each file (a compressed one moves it at its end only).

        Another ingester loading one of these directories into this database makes
        it refuse (PredictorError) before loading anything. A connection lost on
        the way (a database restart) is opened again once and the file read on
        from its stored progress; if that fails too, the DatabaseError names both.
        """
        files = self._check_paths(paths)
        keys = lock_keys(paths)
        self._lock_or_refuse(keys)
        sizes = [_size(path) for path in files]
        for number, path in enumerate(files):
            before = sum(sizes[:number])
            if on_progress is not None and not _compressed(path):
                self._on_chunk = lambda _, offset, before=before, size=sizes[number]: on_progress(
                    before + min(offset, size), sum(sizes))
            try:
                self._ingest_file_reconnecting(path, keys)
            finally:
                self._on_chunk = None
            if on_progress is not None:
                on_progress(before + sizes[number], sum(sizes))
        return self.stats

    def _lock_or_refuse(self, keys):
        holder = self.store.lock(keys)
        if holder is not None:
            raise PredictorError("{}: not started (one ingester per directory and database; stop the other first, "
                                 "or let it do the work)".format(holder))

    def _ingest_file_reconnecting(self, path, keys):
        try:
            self.ingest_file(path)
            return
        except DatabaseError as err:
            if not self.store.lost():
                raise
            lost = err
        self.store.drop()
        try:
            self._lock_or_refuse(keys)
        except DatabaseError as again:
            raise DatabaseError("{}; reconnecting: {}".format(lost, again)) from again
        self.ingest_file(path)

    def _check_paths(self, paths, count=True):
        """The files under ``paths``; missing paths and empty directories reported (and counted if ``count``),
        other files in directories reported."""
        files, missing = expand_paths(paths)
        for path, ignored in ignored_files(paths):
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
        self._files.add(log.path)
        self.stats.files = len(self._files)
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

    def follow(self, paths, interval_s=5.0, should_stop=lambda: False, sleep=time.sleep, clock=time.monotonic):
        """Keep loading new lines and new files until ``should_stop()``, whatever the database does.

        Missing paths and empty directories are reported once, not counted as errors, and watched:
        files may appear there. A database error of any kind (the server down,
        restarting, refusing, a disk full) drops the connection and the pass,
        which are tried again after a pause that doubles up to a cap (``Outage``:
        one warning when the database is lost, one when it is back); each file
        then goes on from its stored progress, so nothing is lost or loaded twice.
        While another ingester holds one of the directories, this one waits.
        """
        seen, outage, keys = {}, Outage(self._on_warning, clock), lock_keys(paths)
        self._check_paths(paths, count=False)
        while not should_stop():
            try:
                if self._hold_or_wait(keys):
                    self._follow_pass(paths, seen)
                outage.over()
                pause_s = interval_s
            except DatabaseError as err:
                self.store.drop()
                pause_s = outage.failed(err)
            _pause(pause_s, should_stop, sleep)

    def _follow_pass(self, paths, seen):
        for path in expand_paths(paths)[0]:
            try:
                signature = LogFile(path).signature()
            except OSError:  # rotated away between listing and looking
                continue
            if seen.get(path) != signature:
                self.ingest_file(path)
                seen[path] = signature

    def _hold_or_wait(self, keys):
        """Hold the directories' locks (taking them again after a reconnect); False while another ingester
        holds one, said once when the wait begins and once when it ends."""
        if self.store.locked == keys:
            return True
        holder = self.store.lock(keys)
        if holder is not None:
            if self._waiting_for is None:
                self._on_warning("{}; waiting until it stops".format(holder))
            self._waiting_for = holder.key
            return False
        if self._waiting_for is not None:
            self._on_warning("the other ingester of {} stopped: loading".format(self._waiting_for))
            self._waiting_for = None
        return True

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
        """Commit a parsed chunk's rows with the new position, its bad lines reported just before the commit;
        then count it.

        Reported after the commit, a bad line was lost when the ingester was killed in between: the next run
        goes on past the chunk. Reported before it, a kill in between has the next run read the chunk again and
        report the line again. A chunk committed on a second try (a lost connection) reports each line once;
        the same chunk is known by its progress (file, offset, line, checksums), so a file replaced meanwhile
        is reported afresh.
        """
        parsed = chunk.result.result()
        progress = (log.path, head, chunk.tail_sha1, chunk.end_offset, chunk.first_line_no + parsed.lines - 1)

        def report(refused):
            if self._reported[0] != progress:
                self._reported = (progress, set())
            reported = self._reported[1]
            for line_no, message in sorted(parsed.rejections + refused):
                if line_no not in reported:
                    reported.add(line_no)
                    self._reject(log.path, line_no, message)

        jobs = self.store.commit(progress, parsed.copy_text, parsed.jobs,
                                 lambda: list(chunk_rows(chunk.lines, chunk.first_line_no)[0].values()), report)
        self._reported = (None, set())
        self.stats.lines += parsed.lines
        self.stats.end_records += parsed.end_records
        self.stats.jobs += jobs
        if self._on_chunk is not None:
            self._on_chunk(log.path, chunk.end_offset)

    def _reject(self, path, line_no, message):
        self.stats.rejected += 1
        self._on_reject(path, line_no, message)

    def _resume_point(self, log, head):
        """``(offset, line_no)`` to continue from; the start if the file changed."""
        progress = self.store.progress(log.path)
        if progress is None:
            return 0, 0
        old_head, old_tail, offset, line_no = progress
        if old_head != head or log.tail_sha1(offset) != old_tail:
            self._on_warning("{}: replaced or truncated since it was last read; reading it again "
                             "from the start".format(log.path))
            return 0, 0
        return offset, line_no
