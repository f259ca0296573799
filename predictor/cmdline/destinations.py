"""What an output path names, decided once before any work: standard output, a descriptor, a device, a file.

An admin runs these commands as root, so an output path is looked at before
anything is written to it:

* ``-``, ``/dev/stdout`` and any path that is the command's standard output
  is standard output (``STREAM``, descriptor 1); ``/dev/stderr``,
  ``/dev/fd/N`` and ``/proc/self/fd/N`` are that descriptor, appended to,
  never truncated or replaced (a shell's ``2>>log`` keeps its log);
* an existing device, FIFO or socket (``/dev/full``, ``/dev/null``, a named
  pipe) is written in place (``DEVICE``): renaming over it would put a plain
  file where the device was;
* anything else is a regular ``FILE``, new or replaced whole through a
  temporary file renamed over it; a symbolic link stays a link and the file
  it points to is replaced -- unless the link lies in a shared sticky
  directory (``/tmp``) and belongs to someone else, the links Linux's
  ``fs.protected_symlinks`` refuses to follow, which are refused;
* a ``DIRECTORY`` for the outputs that are folders (``--plot``).

An output that is, or lies inside, one of the command's inputs is refused
(``InputFiles``): the files named, and the files in the directories named,
compared through symbolic links and hard links.
"""

import fcntl
import os
import re
import stat
from typing import NamedTuple, Optional

from ..errors import UsageError

__all__ = ["STDOUT", "STREAM", "DEVICE", "FILE", "DIRECTORY", "Destination", "destination", "InputFiles"]

STDOUT = "-"
"""The path that means standard output."""

STREAM, DEVICE, FILE, DIRECTORY = "stream", "device", "file", "directory"

_DESCRIPTOR = re.compile(r"/(?:dev/fd|proc/(?:self|thread-self|[0-9]+)(?:/task/[0-9]+)?/fd)/([0-9]+)")
_DEV_STREAMS = {"/dev/stdin": 0, "/dev/stdout": 1, "/dev/stderr": 2}
_MAX_LINKS = 40


class Destination(NamedTuple):
    """One output as the writer will treat it. ``real`` is the path to write (``FILE``: the file replaced)."""

    label: str
    path: str
    kind: str
    real: Optional[str] = None
    descriptor: Optional[int] = None

    @property
    def named(self):
        """``--json out.json``: the option and the path as the user gave them, for messages."""
        return "{} {}".format(self.label, self.path)


def _refuse(label, path, why):
    return UsageError("{} {}: {}".format(label, path, why))


def _descriptor_of(path):
    """The descriptor a ``/dev/stdout``-like path (or a link to one) names; None for any other path."""
    current = os.path.abspath(path)
    for _ in range(_MAX_LINKS):
        if current in _DEV_STREAMS and not os.path.islink(current):
            return _DEV_STREAMS[current]
        match = _DESCRIPTOR.fullmatch(current)
        if match:
            return int(match.group(1))
        if not os.path.islink(current):
            return None
        current = os.path.join(os.path.dirname(current), os.readlink(current))
        current = os.path.join(os.path.realpath(os.path.dirname(current)), os.path.basename(current))
    return None


def _is_stdout(path):
    """Whether ``path`` is the very file or pipe standard output writes to (``cmd --json out > out``)."""
    try:
        return os.path.samestat(os.stat(path), os.fstat(1))
    except (OSError, ValueError):
        return False


def _safe_link(label, path):
    """UsageError for a link Linux's protected_symlinks would not let this user follow."""
    link = os.lstat(path)
    parent = os.stat(os.path.dirname(os.path.abspath(path)))
    shared = parent.st_mode & stat.S_ISVTX and parent.st_mode & stat.S_IWOTH
    if shared and link.st_uid not in (os.geteuid(), parent.st_uid):
        raise _refuse(label, path, "a symbolic link another user owns in a shared directory: not followed "
                                   "(give the path of the file it points to)")


def _followed(label, path):
    """The path ``path`` leads to, every link on the way checked by ``_safe_link``."""
    current = os.path.abspath(path)
    for _ in range(_MAX_LINKS):
        if not os.path.islink(current):
            return os.path.join(os.path.realpath(os.path.dirname(current)), os.path.basename(current))
        _safe_link(label, current)
        current = os.path.join(os.path.dirname(current), os.readlink(current))
    raise _refuse(label, path, "too many levels of symbolic links")


def _writable_directory(label, path, directory):
    if not os.path.isdir(directory):
        raise _refuse(label, path, "directory {} does not exist".format(directory))
    if not os.access(directory, os.W_OK | os.X_OK):
        raise _refuse(label, path, "cannot write in directory {}".format(directory))


def _file(label, path):
    descriptor = 1 if path == STDOUT else _descriptor_of(path)
    if descriptor is not None or _is_stdout(path):
        return _stream(label, path, 1 if descriptor is None else descriptor)
    if path.endswith(os.sep) or os.path.isdir(path):
        raise _refuse(label, path, "is a directory; give a file name")
    real = _followed(label, path)
    try:
        mode = os.stat(real).st_mode
    except FileNotFoundError:
        _writable_directory(label, path, os.path.dirname(real))
        return Destination(label, path, FILE, real)
    except OSError as err:
        raise _refuse(label, path, err.strerror or str(err)) from None
    if not os.access(real, os.W_OK):
        raise _refuse(label, path, "not writable" if not stat.S_ISREG(mode) else "the file exists and is read-only")
    if not stat.S_ISREG(mode):
        return Destination(label, path, DEVICE, real)
    _writable_directory(label, path, os.path.dirname(real))
    return Destination(label, path, FILE, real)


def _stream(label, path, descriptor):
    try:
        flags = fcntl.fcntl(descriptor, fcntl.F_GETFL)
    except OSError:
        raise _refuse(label, path, "descriptor {} is not open".format(descriptor)) from None
    if flags & os.O_ACCMODE == os.O_RDONLY:
        raise _refuse(label, path, "descriptor {} is not open for writing".format(descriptor))
    return Destination(label, path, STREAM, None, descriptor)


def _directory(label, path):
    bare = os.path.normpath(path)  # "file/" is not there when "file" is a file, yet renaming onto it fails
    if os.path.lexists(bare) and not os.path.isdir(bare):
        raise _refuse(label, path, "exists and is not a directory" if os.path.exists(bare)
                      else "a symbolic link to nothing")
    real = _followed(label, bare)
    existing = real
    while not os.path.isdir(existing):
        existing = os.path.dirname(existing)
    _writable_directory(label, path, existing)
    return Destination(label, path, DIRECTORY, real)


def destination(label, path, directory=False):
    """The ``Destination`` of output ``path`` (``label``: its option); UsageError if it cannot be written."""
    return _directory(label, path) if directory else _file(label, path)


def _identity(path):
    try:
        found = os.stat(path)
    except OSError:
        return None
    return found.st_dev, found.st_ino


class InputFiles:
    """A command's inputs: the paths named (links resolved) and the files they hold, to keep outputs off them."""

    def __init__(self, paths=()):
        self.roots = []
        self._identities = set()
        for path in paths:
            self.roots.append(os.path.realpath(path))
            self._identities.add(_identity(path))
            if os.path.isdir(path):
                self._identities.update(_identity(os.path.join(path, name)) for name in _listing(path))
        self._identities.discard(None)

    def holds(self, real):
        """Whether the (resolved) path ``real`` is an input, the same file as one (a hard link), or lies
        inside an input directory."""
        return self.clash(real) is not None

    def clash(self, real):
        """Why ``real`` may not be written: ``the output would overwrite the input`` or ``lies inside the
        input directory DIR``; None when it may."""
        for root in self.roots:
            if real == root:
                return "the output would overwrite the input"
            if real.startswith(root.rstrip(os.sep) + os.sep):
                return "lies inside the input directory {}: write it elsewhere".format(root)
        return "the output would overwrite the input" if _identity(real) in self._identities else None


def _listing(directory):
    try:
        return sorted(os.listdir(directory))
    except OSError:
        return []
