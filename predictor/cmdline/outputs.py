"""The one output writer of both command lines: every output checked before the work, written whole or not at all.

A command names its outputs once -- ``OutputPaths`` for the report options
(``--json``, ``--csv``, ``--jobs-csv``, ``--plot``), or ``(label, path,
is_directory)`` targets -- and checks them with its inputs before minutes of
replay or a long query are spent (``check_outputs``, ``check_targets``): what
each path is (``destinations``), no two outputs on one path or descriptor, no
output that is, or lies inside, an input.

``OutputFiles`` then writes them: a regular file under a temporary name in its
own directory, renamed over the old one (its permissions kept) when the
``with`` block ends without error; a directory's files the same way; on an
error every temporary is removed, so a failed run (a full disk, an interrupt)
leaves no half-written file. Standard output, a descriptor (``/dev/stderr``)
and a device or FIFO (``/dev/full``) are written in place, never replaced.
An OSError while writing becomes one ``OutputError`` naming the option and
the path; a closed pipe (``| head``) ends quietly.
"""

import contextlib
import os
import shutil
import stat
import sys
import tempfile
from typing import NamedTuple, Optional

from ..errors import OutputError, UsageError
from .destinations import DEVICE, STDOUT, STREAM, InputFiles, destination
from .tables import write_csv, write_json, write_rows_csv, write_text

__all__ = ["STDOUT", "OutputPaths", "CheckedOutputs", "OutputFiles", "check_outputs", "check_targets",
           "write_outputs", "publish"]

class OutputPaths(NamedTuple):
    """What a command's output options name (None: not given); ``-`` is stdout. ``plot`` is a directory."""

    json: Optional[str] = None
    csv: Optional[str] = None
    jobs_csv: Optional[str] = None
    plot: Optional[str] = None

    def given(self):
        """``[(option, path)]`` of the options given, files first, in field order."""
        return [("--" + field.replace("_", "-"), path) for field, path in zip(self._fields, self) if path]

    def targets(self):
        """``[(option, path, is_directory)]`` of the options given."""
        return [(option, path, option == "--plot") for option, path in self.given()]


class CheckedOutputs(NamedTuple):
    """``OutputPaths`` after ``check_outputs``: each option's ``Destination`` and the inputs to keep."""

    paths: OutputPaths
    destinations: dict
    inputs: InputFiles

    def of(self, option):
        return self.destinations.get(option)

    @property
    def on_stdout(self):
        """Whether one of the files is standard output (then the text table is not printed)."""
        return any(found.kind == STREAM and found.descriptor == 1 for found in self.destinations.values())


def _key(found):
    """What two outputs must not share: a descriptor, or a resolved path."""
    return ("descriptor", found.descriptor) if found.kind == STREAM else ("path", found.real)


def _check_apart(found, earlier, inputs):
    for other in earlier:
        if _key(other) == _key(found) or (found.kind != STREAM and other.kind != STREAM and _same(found, other)):
            if found.kind == STREAM and found.descriptor == 1:
                raise UsageError("{} and {}: only one output can go to stdout ('-'); give the others a file "
                                 "name".format(other.label, found.label))
            raise UsageError("{} and {} both name {}: give each output its own file".format(
                other.label, found.label, found.path))
    clash = None if found.kind == STREAM else inputs.clash(found.real)
    if clash:
        raise UsageError("{}: {}".format(found.named, clash))


def _same(one, other):
    try:
        return os.path.samefile(one.real, other.real)
    except OSError:
        return False


def check_targets(targets, inputs=()):
    """``[Destination]`` of ``[(label, path, is_directory)]``; UsageError names the first that cannot be written."""
    inputs = inputs if isinstance(inputs, InputFiles) else InputFiles(inputs)
    found = []
    for label, path, is_directory in targets:
        target = destination(label, path, is_directory)
        _check_apart(target, found, inputs)
        found.append(target)
    return found


def check_outputs(outputs, inputs=()):
    """``CheckedOutputs`` of ``outputs`` (an ``OutputPaths``) and the command's ``inputs``, before any work;
    ``--plot`` needs matplotlib (an ImportError the command lines turn into one line naming the extra)."""
    inputs = inputs if isinstance(inputs, InputFiles) else InputFiles(inputs)
    found = check_targets(outputs.targets(), inputs)
    if outputs.plot:
        import matplotlib  # noqa: F401 -- missing, it is one line naming the extra now, not after the work
    return CheckedOutputs(outputs, {target.label: target for target in found}, inputs)


class _Borrowed:
    """A stream the writer does not own (stdout, stderr): closing it only flushes it."""

    def __init__(self, stream):
        self._stream = stream

    def __getattr__(self, name):
        return getattr(self._stream, name)

    def close(self):
        self._stream.flush()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False


def _umask():
    mask = os.umask(0)
    os.umask(mask)
    return mask


class OutputFiles:
    """Outputs written under temporary names, renamed into place together when the ``with`` block succeeds."""

    def __init__(self, inputs=None):
        self._inputs = inputs if inputs is not None else InputFiles()
        self._files = []  # (temporary path, Destination)
        self._directories = []  # (temporary directory, Destination, whether it existed)
        self._created = []  # parent directories made for a new output directory, deepest last
        self._current = None

    def open(self, target, binary=False):
        """A stream writing ``target`` (a ``Destination``); closing it does not publish it (the block's end does)."""
        self._current = target.named
        if target.kind == STREAM:
            stream = {1: sys.stdout, 2: sys.stderr}.get(target.descriptor)
            if stream is not None:
                stream.flush()
                return _Borrowed(stream.buffer if binary else stream)
            return open(os.dup(target.descriptor), "wb" if binary else "w", **_text(binary))
        if target.kind == DEVICE:
            return open(target.real, "wb" if binary else "w", **_text(binary))
        descriptor, temporary = tempfile.mkstemp(prefix="." + os.path.basename(target.real) + ".", suffix=".tmp",
                                                 dir=os.path.dirname(target.real))
        self._files.append((temporary, target))
        return open(descriptor, "wb" if binary else "w", **_text(binary))

    def directory(self, target):
        """A new empty directory whose files end up in ``target`` (a ``DIRECTORY`` Destination)."""
        self._current = target.named
        existed = os.path.isdir(target.real)
        parent = target.real if existed else os.path.dirname(target.real)
        self._make_parents(parent)
        temporary = tempfile.mkdtemp(prefix="." + os.path.basename(target.real) + ".", suffix=".tmp", dir=parent)
        os.chmod(temporary, 0o777 & ~_umask())
        self._directories.append((temporary, target, existed))
        return temporary

    def _make_parents(self, parent):
        missing = []
        while not os.path.isdir(parent):
            missing.append(parent)
            parent = os.path.dirname(parent)
        for folder in reversed(missing):
            os.mkdir(folder)
            self._created.append(folder)

    def __enter__(self):
        return self

    def __exit__(self, kind, error, traceback):
        if kind is None:
            try:
                self._commit()
                return False
            except (OSError, UsageError) as err:
                error = err
        self._discard()
        if isinstance(error, UsageError):
            raise error
        if isinstance(error, OSError) and not isinstance(error, BrokenPipeError):  # a closed pipe ends quietly
            raise OutputError("{}: cannot write: {}".format(self._current, error.strerror or error)) from error
        return False

    def _commit(self):
        moves = [(temporary, target.real, target) for temporary, target in self._files]
        moves += self._directory_moves()
        for temporary, final, target in moves:
            self._current = target.named
            _keep_mode(temporary, final)
            os.replace(temporary, final)
        for temporary, target, existed in self._directories:
            self._current = target.named
            if existed:
                os.rmdir(temporary)
            else:
                os.rename(temporary, target.real)
        self._files, self._directories, self._created = [], [], []

    def _directory_moves(self):
        """The files to move into the directories that existed, each checked before the first is moved."""
        moves = []
        for temporary, target, existed in self._directories:
            for name in sorted(os.listdir(temporary)) if existed else ():
                final = os.path.join(target.real, name)
                if os.path.lexists(final) and not stat.S_ISREG(os.lstat(final).st_mode):
                    raise UsageError("{}: {} exists and is not a regular file: not replaced".format(
                        target.named, name))
                if self._inputs.holds(final):
                    raise UsageError("{}: {} is an input: not replaced".format(target.named, name))
                moves.append((os.path.join(temporary, name), final, target))
        return moves

    def _discard(self):
        for temporary, _ in self._files:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
        for temporary, _, _ in self._directories:
            shutil.rmtree(temporary, ignore_errors=True)
        for folder in reversed(self._created):
            with contextlib.suppress(OSError):
                os.rmdir(folder)
        self._files, self._directories, self._created = [], [], []


def _text(binary):
    """Text files are UTF-8; a name that was not (a file name's undecodable bytes) is written back as it was."""
    return {} if binary else {"encoding": "utf-8", "errors": "surrogateescape", "newline": ""}


def _keep_mode(temporary, final):
    """The new file gets the permissions (and, for root, the owner) of the file it replaces; a new one the umask's."""
    try:
        old = os.stat(final)
    except FileNotFoundError:
        os.chmod(temporary, 0o666 & ~_umask())
        return
    os.chmod(temporary, stat.S_IMODE(old.st_mode) & 0o777)
    if os.geteuid() == 0 and (old.st_uid, old.st_gid) != (0, 0):
        os.chown(temporary, old.st_uid, old.st_gid)


def write_outputs(checked, report, job_table=None, files=None, wide=False):
    """The report on stdout (unless a file option is stdout) and in every file ``checked`` names.

    ``job_table`` is ``(header, rows)`` for ``--jobs-csv``. The files are
    written through ``files`` (an ``OutputFiles``, committed by the caller),
    else through one of their own. ``--plot`` is the caller's to draw. ``wide``: every column of the text
    tables, not only the essential ones.
    """
    if files is None:
        with OutputFiles(checked.inputs) as own:
            write_outputs(checked, report, job_table, own, wide)
        return
    writers = [("--json", lambda out: write_json(report, out)), ("--csv", lambda out: write_csv(report, out))]
    if job_table is not None:
        writers.append(("--jobs-csv", lambda out: write_rows_csv(job_table[0], job_table[1], out)))
    if not checked.on_stdout:
        write_text(report, sys.stdout, wide)
    for option, writer in writers:
        target = checked.of(option)
        if target is not None:
            with files.open(target) as stream:
                writer(stream)


def publish(checked, report, job_table=None, draw=None, wide=False):
    """``write_outputs``, and the figures ``draw(directory)`` makes for ``--plot``: all in place, or none."""
    with OutputFiles(checked.inputs) as files:
        write_outputs(checked, report, job_table, files, wide)
        plot = checked.of("--plot")
        if plot is not None and draw is not None:
            draw(files.directory(plot))
