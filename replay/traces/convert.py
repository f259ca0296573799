"""``python -m replay convert IN OUT``: SWF to PBS accounting logs and back.

The input is read by the replay's readers; the output is the other format:

* SWF -> PBS: Q, S, (D,) E records in time order (pbslog.record_line). OUT is
  one file, or, if it is a directory (or ends with ``/``), one ``YYYYMMDD``
  file per UTC day as in ``server_priv/accounting``. ``.gz`` on OUT, or
  ``gzip=True`` for a directory, compresses (with no time stamp inside, so
  the output is byte-identical from run to run). SWF times are relative: the
  header's UnixStartTime (or ``epoch``) is added. Job ids get ``.server``.
* PBS -> SWF: one file (swf.write_swf), times relative to the first submission.

OUT ``-`` is standard output (one plain file). Files are written under
temporary names and renamed into place only once all are complete
(``predictor.cmdline.outputs.OutputFiles``): a failed conversion leaves no half-written file.

Jobs that never ran are not converted (the readers skip them and say so).
"""

import gzip
import io
import os
import time

import numpy as np

from ..shared.errors import ReplayError
from ..shared.options import LATEST_EPOCH
from predictor.cmdline.destinations import DIRECTORY, STDOUT, InputFiles
from predictor.cmdline.outputs import OutputFiles, check_targets
from predictor.errors import UsageError
from .pbslog import RECORD_ORDER, record_kinds, record_line, record_time
from .readers import load_trace
from .swf import write_swf

__all__ = ["convert", "write_accounting", "output_target"]


def _open_text(path, compress, opener=None):
    """A text stream writing ``path`` (through ``opener(path)``, a binary stream), gzip without name or mtime
    if ``compress``."""
    raw = opener(path) if opener is not None else open(path, "wb")
    if not compress:
        return io.TextIOWrapper(raw, encoding="utf-8", newline="\n")
    zipped = gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0)
    return _ClosingText(zipped, raw)


class _ClosingText(io.TextIOWrapper):
    """A text wrapper over a GzipFile that also closes the file under it."""

    def __init__(self, zipped, raw):
        super().__init__(zipped, encoding="utf-8", newline="\n")
        self._raw = raw

    def close(self):
        try:
            super().close()
        finally:
            self._raw.close()


def _record_order(jobs):
    """``(kinds, job indexes)`` of every record, sorted by time, then Q<S<D<E, then job."""
    entries = [(record_time(job, kind), RECORD_ORDER[kind], index, kind)
               for index, job in enumerate(jobs) for kind in record_kinds(job)]
    if not entries:
        return [], []
    times = np.array([entry[0] for entry in entries], dtype=np.int64)
    ranks = np.array([entry[1] for entry in entries], dtype=np.int64)
    order = np.lexsort((ranks, times)).tolist()
    return [entries[i][3] for i in order], [entries[i][2] for i in order]


def _day(epoch):
    return time.strftime("%Y%m%d", time.gmtime(epoch))


def write_accounting(jobs, out_path, epoch=0, server="pbsserver", daily=False, compress=False, opener=None):
    """Write the jobs' records to one file, or to daily ``YYYYMMDD`` files in directory ``out_path``;
    ``opener(path)`` opens one file to write bytes (default: ``open(path, "wb")``)."""
    jobs = [job if "." in job.job_id else job._replace(job_id="{}.{}".format(job.job_id, server)) for job in jobs]
    kinds, indexes = _record_order(jobs)
    stream, day, written = None, None, []
    try:
        for kind, index in zip(kinds, indexes):
            job = jobs[index]
            if daily and _day(record_time(job, kind) + epoch) != day:
                stream, day = _next_day(stream, out_path, _day(record_time(job, kind) + epoch), compress, written,
                                        opener)
            elif stream is None:
                stream = _open_text(out_path, compress, opener)
                written.append(out_path)
            stream.write(record_line(job, kind, epoch) + "\n")
    finally:
        if stream is not None:
            stream.close()
    return written


def _next_day(stream, directory, day, compress, written, opener):
    if stream is not None:
        stream.close()
    path = os.path.join(directory, day + (".gz" if compress else ""))
    written.append(path)
    return _open_text(path, compress, opener), day


def _check_epoch(jobs, epoch, source):
    """ReplayError unless every record, shifted by ``epoch``, falls in the years 1970..9999."""
    times = [record_time(job, kind) for job in jobs for kind in record_kinds(job)]
    if times and not (0 <= min(times) + epoch and max(times) + epoch <= LATEST_EPOCH):
        raise ReplayError("{} {}: the records would fall outside the years 1970..9999 an accounting log can "
                          "date (trace times {}..{} s)".format(source, epoch, min(times), max(times)))


def output_target(out_path, inputs, compress=False):
    """The checked ``Destination`` of OUT (a directory if it is one or ends with ``/``); UsageError if it
    cannot be written or would overwrite one of the ``inputs``."""
    if out_path == STDOUT and compress:
        raise UsageError("--gzip compresses the daily files of a directory; stdout ('-') is one plain file")
    daily = out_path != STDOUT and (os.path.isdir(out_path) or out_path.endswith(os.sep))
    return check_targets([("OUT", out_path, daily)], inputs)[0]


def _to_pbs(trace, files, target, epoch, server, compress):
    source = "--epoch" if epoch is not None else "the SWF header's UnixStartTime"
    epoch = (trace.unix_start_time or 0) if epoch is None else epoch
    _check_epoch(trace.jobs, epoch, source)
    compress = compress or target.path.endswith(".gz")
    if target.kind == DIRECTORY:
        folder = files.directory(target)
        written = write_accounting(trace.jobs, folder, epoch, server, True, compress)
        return [os.path.join(target.path, os.path.basename(path)) for path in written]
    write_accounting(trace.jobs, target.path, epoch, server, False, compress, lambda _: files.open(target, True))
    return [target.path]


def _to_swf(trace, files, target, compress):
    if target.kind == DIRECTORY:
        raise UsageError("{}: an SWF trace is one file; give a file name".format(target.named))
    stream = _open_text(target.path, compress or target.path.endswith(".gz"), lambda _: files.open(target, True))
    try:
        write_swf(trace, stream)
    finally:
        stream.close()
    return [target.path]


def convert(in_paths, out_path, in_format="auto", on_reject=None, epoch=None, server="pbsserver", compress=False):
    """Convert ``in_paths`` to the other format at ``out_path``; ``(trace, files written)``."""
    target = output_target(out_path, in_paths, compress)
    trace = load_trace(in_paths, in_format, on_reject)
    with OutputFiles(InputFiles(in_paths)) as files:
        if trace.source_format == "swf":
            return trace, _to_pbs(trace, files, target, epoch, server, compress)
        return trace, _to_swf(trace, files, target, compress)
