"""How both command lines end (``python -m predictor``, ``python -m replay``): the exit status and what stderr shows.

A mistake of the user's -- a bad option, file or value, raised as one of the
project's own errors (``predictor.errors.SoftwalltimeError``) -- is one line and status 2. Anything else is a bug:
its traceback is shown, then one line asking to report it, and the status is 1.
"""

import atexit
import contextlib
import os
import signal
import sys
import threading

from ..errors import SoftwalltimeError
from .parser import one_line

__all__ = ["exit_status", "end_process", "BROKEN_PIPE_STATUS", "INTERRUPTED_STATUS", "TERMINATED_STATUS",
           "Terminated", "sigterm_raises", "missing_extra"]

BROKEN_PIPE_STATUS = 128 + 13
"""What a shell reports for a tool killed by SIGPIPE."""

INTERRUPTED_STATUS = 128 + 2
"""What a shell reports for a tool stopped by Ctrl-C (SIGINT)."""


TERMINATED_STATUS = 128 + 15
"""What a shell reports for a tool stopped by SIGTERM (kill, systemd, a batch system)."""


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised where the program is, as Ctrl-C raises KeyboardInterrupt: the same clean-up runs."""


def _terminated(signum, frame):
    raise Terminated()


def _raised_again(previous_hook):
    """An unraisable-exception hook: an interrupt that Python raised where it cannot propagate (a weakref
    callback during an import, a ``__del__``) is only printed there, and the command would run on and exit 0;
    its signal is sent again 10 ms later, by a timer thread, so that it is raised once this hook has returned,
    where the program is next (sent from here, it would be raised in the hook, and lost again)."""
    def hook(unraisable):
        if isinstance(unraisable.exc_value, KeyboardInterrupt):  # Terminated included
            signum = signal.SIGTERM if isinstance(unraisable.exc_value, Terminated) else signal.SIGINT
            again = threading.Timer(0.01, os.kill, (os.getpid(), signum))
            again.daemon = True
            again.start()
        else:
            previous_hook(unraisable)
    return hook


@contextlib.contextmanager
def sigterm_raises():
    """SIGTERM raises ``Terminated`` inside the block (in the main thread), as it was before after it; an
    interrupt lost where Python cannot raise it is raised again (``_raised_again``)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, _terminated)
    previous_hook = getattr(sys, "unraisablehook", None)  # Python 3.8 on; before it, nothing to do
    if previous_hook is not None:
        setattr(sys, "unraisablehook", _raised_again(previous_hook))
    try:
        yield
    finally:
        if previous_hook is not None:
            setattr(sys, "unraisablehook", previous_hook)
        signal.signal(signal.SIGTERM, previous)


_EXTRAS = {"numpy": "pbs-softwalltime[replay]", "pandas": "pbs-softwalltime[replay]",
           "matplotlib": "pbs-softwalltime[replay]", "psycopg2": "pbs-softwalltime[admin]"}
"""A module another package provides -> what installs it with pbs-softwalltime."""


def missing_extra(err):
    """The one line for an ImportError of a module an extra installs (None for any other: a bug)."""
    name = (getattr(err, "name", None) or "").split(".")[0]
    if name not in _EXTRAS:
        return None
    return "this command needs {0}, which is not installed: pip install '{1}' (or your distribution's " \
           "python3-{0})".format(name, _EXTRAS[name])


def exit_status(prog, run):
    """``run()``'s exit status; ``prog`` names the command line in the one line of an error."""
    _tolerant_streams()
    try:
        status = run()
        sys.stdout.flush()
        return status
    except KeyboardInterrupt as err:
        return _interrupted(prog, err)
    except Exception as err:
        interrupt = _interrupt_behind(err)
        if interrupt is None:
            return _answer(prog, err)
        return _interrupted(prog, interrupt)


def _interrupt_behind(err):
    """The Ctrl-C or SIGTERM that ``err`` was raised from, if any: an extension module being imported when the
    signal came turns the interrupt into its own error (``ImportError: initialization failed``, caused by it),
    and an error raised while the interrupt was being handled has it as its context."""
    seen = set()
    while err is not None and id(err) not in seen:
        if isinstance(err, KeyboardInterrupt):
            return err
        seen.add(id(err))
        err = err.__cause__ or err.__context__
    return None


def _interrupted(prog, err):
    terminated = isinstance(err, Terminated)
    sys.stderr.write("{}: {}\n".format(prog, "terminated (SIGTERM)" if terminated else "interrupted"))
    return TERMINATED_STATUS if terminated else INTERRUPTED_STATUS


def _answer(prog, err):
    """The status of ``err``, being handled, and its one line (or, for a bug, its traceback)."""
    if isinstance(err, BrokenPipeError):
        return _closed_pipe()
    if isinstance(err, SoftwalltimeError):
        return _error(prog, err)
    if isinstance(err, OSError):  # one the readers did not expect: the system's word for it is the user's answer
        return _error(prog, "{}: {}".format(err.filename, err.strerror) if err.filename and err.strerror else err)
    if isinstance(err, ImportError) and missing_extra(err) is not None:
        return _error(prog, missing_extra(err))
    return _bug(prog)  # a bug: the traceback is what a report needs


def end_process(status, teardown=True):
    """End the process with ``status``, an ``exit_status``: after Ctrl-C (130) by SIGINT itself, its one line
    written, as Python ends a program whose Ctrl-C nothing caught, so that a shell running the command in a
    loop stops the loop too (the shell reports 130 all the same); any other status through ``sys.exit``.

    Left to Python, a caught Ctrl-C ended the process either way: by ``sys.exit(130)``, or by SIGINT when the
    interrupt had passed through code Python runs with ``exec`` or ``eval`` of a string (a named tuple being
    made during an import, say), which Python counts as a Ctrl-C nothing caught.

    ``teardown`` False (the replay): once the ``atexit`` functions have run and stdout and stderr are flushed,
    the process ends without Python's teardown, which frees what the command still holds one object at a time
    and unloads every module (numpy's among them): about 10 ms of a half-second simulation, for nothing, since
    a command has written and closed its outputs before it returns. With a thread of its own still running
    (not a daemon), the process ends through ``sys.exit``, which waits for it."""
    if status != INTERRUPTED_STATUS:
        if teardown or _threads_running() or not hasattr(atexit, "_run_exitfuncs"):
            sys.exit(status)
        atexit._run_exitfuncs()
        _flush_streams()
        os._exit(status)
    _flush_streams()
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    os.kill(os.getpid(), signal.SIGINT)
    os._exit(status)  # SIGINT blocked in this thread: the status alone


def _flush_streams():
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):  # a closed pipe, a full disk: the status matters more
            stream.flush()


def _threads_running():
    """Whether a thread other than this one, and not a daemon, is still running."""
    current = threading.current_thread()
    return any(thread is not current and not thread.daemon for thread in threading.enumerate())


def _bug(prog):
    import traceback  # here: only a bug needs it, and its imports would add to every command's start
    traceback.print_exc()
    sys.stderr.write("{}: internal error (a bug): please report it with the traceback above\n".format(prog))
    return 1


def _tolerant_streams():
    """A path or name that is not UTF-8 (undecodable bytes, kept as surrogates) goes out as its bytes on
    stdout, and as ``\\xff`` in a message, instead of failing the command at its last line."""
    for stream, errors in ((sys.stdout, "surrogateescape"), (sys.stderr, "backslashreplace")):
        try:
            stream.reconfigure(errors=errors)
        except (AttributeError, ValueError, OSError):  # not a text file the interpreter opened
            pass


def _error(prog, message):
    text = "{}: error: {}\n".format(prog, one_line(str(message)))
    sys.stderr.write(text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace"))
    return 2


def _closed_pipe():
    """The reader went away (| head): stop quietly, and let nothing flush into the closed pipe at exit."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    for stream in (sys.stdout, sys.stderr):
        os.dup2(devnull, stream.fileno())
    return BROKEN_PIPE_STATUS
