"""Output files of the commands: checked before the work starts, written whole or not at all.

``check_outputs`` looks at every output option before minutes of replay are
spent: the directory exists and is writable, a file is not a directory, a
directory is not a file, no two outputs share a path or stdout (``-``), no
output overwrites an input.

``OutputFiles`` gives each output a temporary name in its own directory and
renames them all into place when its ``with`` block ends without error; on an
error it removes them, so a failed run (a full disk, an interrupt) leaves no
half-written file and no temporary one. A device or FIFO (``/dev/full``,
``/dev/stdout``) is written directly: it cannot be renamed over. An OSError
while writing becomes one ``ReplayError`` naming the option and the path.
"""

import itertools
import os
import shutil
import stat

from .errors import ReplayError

__all__ = ["STDOUT", "OutputFiles", "check_outputs", "check_file", "check_directory", "check_not_input"]

STDOUT = "-"
"""The path that means standard output."""

_FILE_OPTIONS = ("json", "csv", "jobs_csv")
_DIRECTORY_OPTIONS = ("plot",)
_names = itertools.count()


def _option(dest):
    return "--" + dest.replace("_", "-")


def _is_special(path):
    """An existing file that is neither regular nor a directory (a device, a FIFO)."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return not stat.S_ISREG(mode) and not stat.S_ISDIR(mode)


def _writable_directory(label, directory):
    if not os.path.isdir(directory):
        raise ReplayError("{}: directory {} does not exist".format(label, directory))
    if not os.access(directory, os.W_OK | os.X_OK):
        raise ReplayError("{}: cannot write in directory {}".format(label, directory))


def check_file(label, path):
    """ReplayError unless ``path`` can become a file (``label`` names the option in the message)."""
    label = "{} {}".format(label, path)
    if os.path.isdir(path):
        raise ReplayError("{}: is a directory; give a file name".format(label))
    if _is_special(path):
        if not os.access(path, os.W_OK):
            raise ReplayError("{}: not writable".format(label))
        return
    if os.path.exists(path) and not os.access(path, os.W_OK):
        raise ReplayError("{}: the file exists and is read-only".format(label))
    _writable_directory(label, os.path.dirname(os.path.abspath(path)))


def check_directory(label, path):
    """ReplayError unless ``path`` is, or can be made, a directory to write files into."""
    label = "{} {}".format(label, path)
    bare = os.path.normpath(path)  # "file/" is not there when "file" is a file, yet renaming onto it fails
    if os.path.exists(bare) and not os.path.isdir(bare):
        raise ReplayError("{}: exists and is not a directory".format(label))
    existing = os.path.abspath(path)
    while not os.path.isdir(existing):
        existing = os.path.dirname(existing)
    _writable_directory(label, existing)


def _same_file(one, other):
    try:
        return os.path.samefile(one, other)
    except OSError:
        return os.path.abspath(one) == os.path.abspath(other)


def check_outputs(args, inputs=()):
    """Check the output options of ``args`` (``--json --csv --jobs-csv --plot``) before any work."""
    given = [(_option(dest), getattr(args, dest)) for dest in _FILE_OPTIONS + _DIRECTORY_OPTIONS
             if getattr(args, dest, None)]
    on_stdout = [option for option, path in given if path == STDOUT]
    if len(on_stdout) > 1:
        raise ReplayError("{}: only one output can go to stdout ('-'); give the others a file name".format(
            " and ".join(on_stdout)))
    files = [(option, path) for option, path in given if path != STDOUT]
    for index, (option, path) in enumerate(files):
        if option[2:].replace("-", "_") in _DIRECTORY_OPTIONS:
            check_directory(option, path)
        else:
            check_file(option, path)
        _check_distinct(option, path, files[:index], inputs)


def _check_distinct(option, path, earlier, inputs):
    for other_option, other in earlier:
        if _same_file(path, other):
            raise ReplayError("{} and {} both name {}: give each output its own file".format(
                other_option, option, path))
    check_not_input(option, path, inputs)


def check_not_input(label, path, inputs):
    """ReplayError if ``path`` is one of the ``inputs``."""
    for source in inputs:
        if os.path.exists(path) and _same_file(path, source):
            raise ReplayError("{} {}: the output would overwrite the input".format(label, path))


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
        temporary = self._temporary_name(path)
        self._files.append((temporary, path))
        self._labels[temporary] = self._current
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
            raise ReplayError("{}: cannot write: {}".format(self._label_of(error), error.strerror or error)) from error
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
