"""Load PBS accounting logs into ``completed_jobs``, exactly once.

Each file is read from where the last run stopped. Rows and the new position
are committed in one transaction, so a crash at any instant loses nothing and
duplicates nothing (re-loading a job is an upsert anyway). A last line
without its newline is still being written: it is left for the next pass.
A malformed line is reported as ``file:line: reason`` and skipped.
"""

import io
import os
import time

import psycopg2

from .accounting import completed_job, parse_fields, parse_record
from .errors import AccountingError, DatabaseError
from .logfile import READ_ERRORS, LogFile
from .pgstore import describe_error
from .queries import (COPY_STAGING, CREATE_STAGING, PROGRESS_GET, PROGRESS_PUT, UPSERT_ONE, UPSERT_STAGED,
                      job_values)

__all__ = ["Ingester", "IngestStats", "expand_paths"]

class IngestStats:
    """Counters of one ingest run."""

    def __init__(self):
        self.files = 0
        self.lines = 0
        self.end_records = 0
        self.jobs = 0
        self.rejected = 0
        self.missing = 0
        self.unreadable = 0

    def __repr__(self):
        text = ("{0.files} files, {0.lines} lines, {0.end_records} E records, {0.jobs} jobs loaded, "
                "{0.rejected} lines rejected".format(self))
        return text + (", {} files unreadable".format(self.unreadable) if self.unreadable else "")


def expand_paths(paths):
    """``(files, missing)``: files as given, directories as their files sorted by name."""
    files, missing = [], []
    for path in paths:
        if os.path.isdir(path):
            names = sorted(name for name in os.listdir(path) if not name.startswith("."))
            files.extend(os.path.join(path, name) for name in names if os.path.isfile(os.path.join(path, name)))
        elif os.path.isfile(path):
            files.append(path)
        else:
            missing.append(path)
    return files, missing


def _copy_text(value):
    """One value in COPY text format."""
    if value is None:
        return "\\N"
    if value.__class__ is str:
        return value.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n").replace("\r", "\\r")
    return str(value)


def _copy_buffer(rows):
    return io.StringIO("".join("\t".join(map(_copy_text, row)) + "\n" for row in rows))


def _job_of_line(raw):
    """``(is_end_record, job_or_None)`` for one line; AccountingError if malformed."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as err:
        raise AccountingError("not valid UTF-8 (byte {})".format(err.start)) from None
    if not text or text.isspace():
        return False, None
    record = parse_record(text)
    if record.record_type != "E":
        return False, None
    return True, completed_job(record, parse_fields(record.body))


def _pause(interval_s, should_stop, sleep):
    """Sleep ``interval_s`` in short steps (at least one), waking early to stop."""
    remaining = interval_s
    while True:
        step = min(0.2, max(remaining, 0))
        sleep(step)
        remaining -= step
        if remaining <= 0 or should_stop():
            return


class Ingester:
    """Loads accounting files through one (synchronous) psycopg2 connection."""

    def __init__(self, conn, batch_size=5000, on_reject=None, on_warning=None):
        # The server, not psycopg2, must judge what the database can store.
        conn.set_client_encoding("UTF8")
        self.conn = conn
        self._staging_ready = False
        self.batch_size = batch_size
        self.stats = IngestStats()
        self._on_reject = on_reject or (lambda path, line_no, message: None)
        self._on_warning = on_warning or (lambda message: None)

    def ingest(self, paths):
        """Load every file under ``paths``; return the stats."""
        files, missing = expand_paths(paths)
        for path in missing:
            self.stats.missing += 1
            self._on_warning("{}: no such file or directory".format(path))
        for path in files:
            self.ingest_file(path)
        return self.stats

    def ingest_file(self, path):
        """Load the new complete lines of one file; a file that cannot be read is reported."""
        log = LogFile(os.path.abspath(path))
        self.stats.files += 1
        try:
            self._ingest_log(log)
        except READ_ERRORS as err:
            self.stats.unreadable += 1
            self._on_warning("{}: cannot read it: {}".format(log.path, err))

    def _ingest_log(self, log):
        head = log.head_sha1()
        if head is None:
            return
        offset, line_no = self._resume_point(log, head)
        start, batch = offset, {}
        for raw, offset in log.complete_lines(offset):
            line_no += 1
            self._take_line(log.path, line_no, raw, batch)
            if len(batch) >= self.batch_size:
                self._commit(log, head, offset, line_no, batch)
                batch = {}
        if offset != start:
            self._commit(log, head, offset, line_no, batch)

    def follow(self, paths, interval_s=5.0, should_stop=lambda: False, sleep=time.sleep):
        """Keep loading new lines and new files until ``should_stop()``."""
        seen = {}
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

    def _take_line(self, path, line_no, raw, batch):
        self.stats.lines += 1
        try:
            is_end, job = _job_of_line(raw.rstrip(b"\r"))
        except AccountingError as err:
            self._reject(path, line_no, str(err))
            return
        if is_end:
            self.stats.end_records += 1
        if job is not None:
            batch.pop(job.job_id, None)  # a later record of the same job wins
            batch[job.job_id] = (job_values(job), line_no)

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

    def _commit(self, log, head, offset, line_no, batch):
        path = log.path
        progress = (path, head, log.tail_sha1(offset), offset, line_no)
        rows = [values for values, _ in batch.values()]
        try:
            self._prepare_staging()
            with self.conn, self.conn.cursor() as cursor:
                if rows:
                    cursor.copy_expert(COPY_STAGING, _copy_buffer(rows))
                    cursor.execute(UPSERT_STAGED)
                cursor.execute(PROGRESS_PUT, progress)
            self.stats.jobs += len(rows)
        except (psycopg2.DataError, psycopg2.IntegrityError):
            self._commit_row_by_row(path, progress, batch)
        except psycopg2.Error as err:
            raise DatabaseError(describe_error(err)) from err

    def _prepare_staging(self):
        """Create the session's staging table once, in its own transaction."""
        if not self._staging_ready:
            with self.conn, self.conn.cursor() as cursor:
                cursor.execute(CREATE_STAGING)
            self._staging_ready = True

    def _commit_row_by_row(self, path, progress, batch):
        """The batch was refused: isolate the refused rows, load the others."""
        try:
            with self.conn, self.conn.cursor() as cursor:
                for values, line_no in batch.values():
                    cursor.execute("SAVEPOINT job")
                    try:
                        cursor.execute(UPSERT_ONE, values)
                        self.stats.jobs += 1
                    except (psycopg2.DataError, psycopg2.IntegrityError) as err:
                        cursor.execute("ROLLBACK TO SAVEPOINT job")
                        self._reject(path, line_no, "refused by the " + describe_error(err))
                cursor.execute(PROGRESS_PUT, progress)
        except psycopg2.Error as err:
            raise DatabaseError(describe_error(err)) from err
