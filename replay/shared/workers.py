"""Worker processes that stop with their command: at once on Ctrl-C or SIGTERM, and when it dies.

``concurrent.futures.ProcessPoolExecutor`` waits for its running workers when
the ``with`` block is left, even by an interrupt: Ctrl-C waited minutes for
simulations whose result no one would read, and SIGTERM killed the parent
and left the workers computing. ``worker_pool`` is the same pool whose
workers ignore Ctrl-C (the parent decides), die on SIGTERM and with their
parent (Linux), and which kills them when its block is left by an exception.
"""

import contextlib
import os
import signal

__all__ = ["worker_pool"]

_PR_SET_PDEATHSIG = 1
_JOIN_S = 5.0


def _in_worker():
    """A worker's signals: Ctrl-C is the parent's, SIGTERM kills at once, the parent's death too."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    try:
        import ctypes
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):  # not Linux: a worker ends once its pipe to the parent closes
        pass
    if os.getppid() == 1:  # the parent died before prctl took effect
        os._exit(0)


def _kill(pool):
    """Kill the pool's workers and forget its queued work, without waiting for a running one."""
    processes = list((getattr(pool, "_processes", None) or {}).values())
    for process in processes:
        with contextlib.suppress(OSError, ValueError):
            process.kill()
    pool.shutdown(wait=False, cancel_futures=True)
    for process in processes:
        with contextlib.suppress(OSError, ValueError, AssertionError):
            process.join(_JOIN_S)


@contextlib.contextmanager
def worker_pool(workers, context=None):
    """A ``ProcessPoolExecutor`` of ``workers`` whose workers stop with the command (module docstring)."""
    import concurrent.futures  # here: a command that runs in one process never needs it
    pool = concurrent.futures.ProcessPoolExecutor(workers, mp_context=context, initializer=_in_worker)
    try:
        yield pool
    except BaseException:
        _kill(pool)
        raise
    pool.shutdown(wait=True)
