"""Output files of both command lines: checked before the work starts, written whole or not at all.

A command turns its output options into an ``OutputPaths`` once;
``check_outputs`` looks at them before minutes of replay or a long query are
spent: the directory exists and is writable, a file is not a directory, a
directory is not a file, no two outputs share a path or stdout (``-``), no
output overwrites an input.

``OutputFiles`` gives each output a temporary name in its own directory and
renames them all into place when its ``with`` block ends without error; on an
error it removes them, so a failed run (a full disk, an interrupt) leaves no
half-written file and no temporary one. Nothing but a regular file is ever
replaced: a device or FIFO (``/dev/full``, ``/dev/stdout``) is written
directly, since renaming over it would put a plain file in its place, and a
symbolic link stays a link while the file it points to is replaced. An
OSError while writing becomes one ``OutputError`` naming the option and the path.
"""

import contextlib
import itertools
import os
import shutil
import stat
import sys
from typing import NamedTuple, Optional

from ..errors import OutputError, UsageError
from .tables import write_csv, write_json, write_rows_csv, write_text

__all__ = ["STDOUT", "OutputPaths", "OutputFiles", "check_outputs", "check_file", "check_directory",
           "check_not_input", "output_stream", "write_outputs", "publish"]

STDOUT = "-"
"""The path that means standard output."""

_names = itertools.count()


class OutputPaths(NamedTuple):
    """What a command's output options name (None: not given); ``-`` is stdout. ``plot`` is a directory."""

    json: Optional[str] = None
    csv: Optional[str] = None
    jobs_csv: Optional[str] = None
    plot: Optional[str] = None

    def given(self):
        """``[(option, path)]`` of the options given, files first, in field order."""
        return [("--" + field.replace("_", "-"), path) for field, path in zip(self._fields, self) if path]


def _is_special(path):
    """An existing file that is neither regular nor a directory (a device, a FIFO), links followed."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return not stat.S_ISREG(mode) and not stat.S_ISDIR(mode)


def _writable_directory(label, directory):
    if not os.path.isdir(directory):
        raise UsageError("{}: directory {} does not exist".format(label, directory))
    if not os.access(directory, os.W_OK | os.X_OK):
        raise UsageError("{}: cannot write in directory {}".format(label, directory))


def check_file(label, path):
    """UsageError unless ``path`` can become a file (``label`` names the option in the message)."""
    label = "{} {}".format(label, path)
    if os.path.isdir(path):
        raise UsageError("{}: is a directory; give a file name".format(label))
    if _is_special(path):
        if not os.access(path, os.W_OK):
            raise UsageError("{}: not writable".format(label))
        return
    if os.path.exists(path) and not os.access(path, os.W_OK):
        raise UsageError("{}: the file exists and is read-only".format(label))
    _writable_directory(label, os.path.dirname(os.path.realpath(path)))


def check_directory(label, path):
    """UsageError unless ``path`` is, or can be made, a directory to write files into."""
    label = "{} {}".format(label, path)
    bare = os.path.normpath(path)  # "file/" is not there when "file" is a file, yet renaming onto it fails
    if os.path.exists(bare) and not os.path.isdir(bare):
        raise UsageError("{}: exists and is not a directory".format(label))
    existing = os.path.abspath(path)
    while not os.path.isdir(existing):
        existing = os.path.dirname(existing)
    _writable_directory(label, existing)


def _same_file(one, other):
    try:
        return os.path.samefile(one, other)
    except OSError:
        return os.path.abspath(one) == os.path.abspath(other)


def check_outputs(outputs, inputs=()):
    """Check every path ``outputs`` (an ``OutputPaths``) names before any work; UsageError names the option."""
    given = outputs.given()
    on_stdout = [option for option, path in given if path == STDOUT]
    if len(on_stdout) > 1:
        raise UsageError("{}: only one output can go to stdout ('-'); give the others a file name".format(
            " and ".join(on_stdout)))
    files = [(option, path) for option, path in given if path != STDOUT]
    for index, (option, path) in enumerate(files):
        if option == "--plot":
            check_directory(option, path)
        else:
            check_file(option, path)
        _check_distinct(option, path, files[:index], inputs)


def _check_distinct(option, path, earlier, inputs):
    for other_option, other in earlier:
        if _same_file(path, other):
            raise UsageError("{} and {} both name {}: give each output its own file".format(
                other_option, option, path))
    check_not_input(option, path, inputs)


def check_not_input(label, path, inputs):
    """UsageError if ``path`` is one of the ``inputs``."""
    for source in inputs:
        if os.path.exists(path) and _same_file(path, source):
            raise UsageError("{} {}: the output would overwrite the input".format(label, path))


class OutputFiles:
    """Outputs written under temporary names, renamed into place together when the ``with`` block succeeds."""

    def __init__(self):
        self._files = []  # (temporary path, final path)
        self._directories = []  # (temporary directory, final directory, whether it existed)
        self._labels = {}  # temporary or final path -> "OPTION PATH"
        self._current = None

    def file(self, path, label=None):
        """The path to write ``path``'s content to (a device or FIFO: ``path`` itself)."""
        self._current = self._labels[path] = "{} {}".format(label, path) if label else path
        if _is_special(path):
            return path
        final = os.path.realpath(path) if os.path.islink(path) else path  # the link stays, its file is replaced
        temporary = self._temporary_name(final)
        self._files.append((temporary, final))
        self._labels[temporary] = self._labels[final] = self._current
        return temporary

    def directory(self, path, label=None):
        """A new empty directory whose files end up in ``path`` (created if need be)."""
        self._current = self._labels[path] = "{} {}".format(label, path) if label else path
        existed = os.path.isdir(path)
        parent = path if existed else os.path.dirname(os.path.abspath(path))
        os.makedirs(parent, exist_ok=True)
        temporary = self._temporary_name(os.path.join(parent, os.path.basename(os.path.normpath(path))))
        os.mkdir(temporary)
        self._directories.append((temporary, path, existed))
        self._labels[temporary] = self._current
        return temporary

    @staticmethod
    def _temporary_name(path):
        directory, name = os.path.split(os.path.abspath(path))
        return os.path.join(directory, ".{}.{}-{}.tmp".format(name, os.getpid(), next(_names)))

    def __enter__(self):
        return self

    def __exit__(self, kind, error, traceback):
        if kind is None:
            try:
                self._commit()
                return False
            except OSError as err:
                kind, error = OSError, err
        self._discard()
        if isinstance(error, OSError) and not isinstance(error, BrokenPipeError):  # a closed pipe ends quietly
            raise OutputError("{}: cannot write: {}".format(self._label_of(error), error.strerror or error)) from error
        return False

    def _label_of(self, error):
        return self._labels.get(getattr(error, "filename", None)) or self._current or error.filename

    def _commit(self):
        for temporary, path in self._files:
            self._current = self._labels[path]
            os.replace(temporary, path)
        for temporary, path, existed in self._directories:
            self._current = self._labels[path]
            if not existed:
                os.rename(temporary, path)
                continue
            for name in sorted(os.listdir(temporary)):
                os.replace(os.path.join(temporary, name), os.path.join(path, name))
            os.rmdir(temporary)
        self._files, self._directories = [], []

    def _discard(self):
        for temporary, _ in self._files:
            try:
                os.unlink(temporary)
            except OSError:
                pass
        for temporary, _, _ in self._directories:
            shutil.rmtree(temporary, ignore_errors=True)
        self._files, self._directories = [], []


@contextlib.contextmanager
def output_stream(path, files=None, label=None):
    """A text stream to ``path``, or stdout for ``-``; through ``files`` (an ``OutputFiles``) if given."""
    if path == STDOUT:
        yield sys.stdout
        return
    target = path if files is None else files.file(path, label)
    try:
        stream = open(target, "w", encoding="utf-8", newline="")
    except OSError as err:
        raise OutputError("{}: cannot write: {}".format(path if label is None else "{} {}".format(label, path),
                                                        err.strerror or err)) from err
    with stream:
        yield stream


def write_outputs(outputs, report, job_table=None, files=None):
    """The report on stdout (unless a file option is ``-``) and in every file ``outputs`` names.

    ``job_table`` is ``(header, rows)`` for ``--jobs-csv``. The files are
    written through ``files`` (an ``OutputFiles``, committed by the caller),
    else through one of their own. ``--plot`` is the caller's to draw.
    """
    if files is None:
        with OutputFiles() as own:
            write_outputs(outputs, report, job_table, own)
        return
    targets = [(outputs.json, "--json", lambda out: write_json(report, out)),
               (outputs.csv, "--csv", lambda out: write_csv(report, out))]
    if job_table is not None:
        targets.append((outputs.jobs_csv, "--jobs-csv", lambda out: write_rows_csv(job_table[0], job_table[1], out)))
    if STDOUT not in (outputs.json, outputs.csv, outputs.jobs_csv):
        write_text(report, sys.stdout)
    for path, label, writer in targets:
        if path:
            with output_stream(path, files, label) as stream:
                writer(stream)


def publish(outputs, report, job_table=None, draw=None):
    """``write_outputs``, and the figures ``draw(directory)`` makes for ``--plot``: all in place, or none."""
    with OutputFiles() as files:
        write_outputs(outputs, report, job_table, files)
        if outputs.plot and draw is not None:
            draw(files.directory(outputs.plot, "--plot"))
