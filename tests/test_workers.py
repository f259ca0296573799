"""replay.shared.workers: simulate's and sweep's worker processes stop with the command, at once.

A real run on the bundled accounting logs, stopped two seconds in: the
command ends within seconds, by SIGINT after Ctrl-C (a shell reports 130) or with 143 after SIGTERM, one
line, and none of its worker processes is left computing.
"""

import os
import signal
import subprocess
import sys
import time

import pytest

from predictor.cmdline.exits import Terminated, exit_status

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LOGS = os.path.join(REPO, "traces", "hpc2n-2002-accounting")
SWF = os.path.join(REPO, "traces", "HPC2N-2002-subset.swf")


def children(pid):
    """The processes ``pid`` started (Linux's /proc)."""
    found = []
    for task in os.listdir("/proc/{}/task".format(pid)):
        with open("/proc/{}/task/{}/children".format(pid, task)) as stream:
            found += [int(child) for child in stream.read().split()]
    return found


def alive(pid):
    try:
        with open("/proc/{}/stat".format(pid)) as stream:
            return stream.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


@pytest.mark.parametrize("argv", [
    # three workers: the parent runs one share of the predictors itself, two worker processes the others
    ["simulate", LOGS, "--predictors", "v1,v2,v3", "--workers", "3", "--policy", "small-first"],
    ["sweep", "--jobs", "2", "--predictors", "v1,v2,v3", "--policy", "small-first,sjf", SWF],
], ids=["simulate", "sweep"])
@pytest.mark.parametrize("signum, status", [(signal.SIGINT, -signal.SIGINT), (signal.SIGTERM, 143)])
def test_stop_ends_the_workers_at_once(argv, signum, status):
    """Ctrl-C or SIGTERM stops the command and every worker within seconds, by SIGINT or with 143, and one
    line."""
    process = subprocess.Popen([sys.executable, "-m", "replay"] + argv, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, env=dict(os.environ, PYTHONPATH=REPO))
    deadline = time.monotonic() + 60
    while len(children(process.pid)) < 2:
        assert process.poll() is None and time.monotonic() < deadline, process.communicate()
        time.sleep(0.1)
    workers = children(process.pid)
    time.sleep(1)
    sent = time.monotonic()
    process.send_signal(signum)
    _, err = process.communicate(timeout=60)
    took = time.monotonic() - sent
    assert process.returncode == status and "Traceback" not in err, err
    assert err.splitlines()[-1].endswith("interrupted" if signum == signal.SIGINT else "terminated (SIGTERM)")
    assert took < 5 and not [pid for pid in workers if alive(pid)]


LOST_INTERRUPT = """
import sys, time, weakref
from predictor.cmdline.exits import Terminated, end_process, exit_status, sigterm_raises

class Thing:
    pass

def run():
    with sigterm_raises():
        thing = Thing()
        lost = weakref.ref(thing, lambda _: (_ for _ in ()).throw({}()))  # raised where Python only prints it
        del thing
        end = time.monotonic() + 5  # the rest of the command's work
        while time.monotonic() < end:
            pass
        print("ran on")
        return 0

end_process(exit_status("cmd", run))
"""


@pytest.mark.parametrize("exception, status, line", [("Terminated", 143, "cmd: terminated (SIGTERM)"),
                                                     ("KeyboardInterrupt", -signal.SIGINT, "cmd: interrupted")])
def test_an_interrupt_raised_where_python_cannot_raise_it_still_stops_the_command(exception, status, line):
    """A signal's exception raised inside a weakref callback (as during an import) is only printed by Python:
    it is sent again, and the command stops with its status instead of running on to exit 0."""
    done = subprocess.run([sys.executable, "-c", LOST_INTERRUPT.format(exception)], capture_output=True, text=True,
                          env=dict(os.environ, PYTHONPATH=REPO), timeout=60)
    assert (done.returncode, done.stdout) == (status, "") and done.stderr.splitlines()[-1] == line, done.stderr


def _raised_in_an_extension(interrupt):
    """What an extension module being initialised does with a signal's exception (pybind11's
    ``ImportError: initialization failed``): its own error, caused by the interrupt."""
    try:
        raise interrupt
    except KeyboardInterrupt as err:
        raise ImportError("initialization failed") from err


def _raised_while_cleaning_up(interrupt):
    try:
        raise interrupt
    finally:
        raise OSError(5, "Input/output error")


@pytest.mark.parametrize("interrupt, status, line", [(Terminated(), 143, "cmd: terminated (SIGTERM)\n"),
                                                     (KeyboardInterrupt(), 130, "cmd: interrupted\n")],
                         ids=["SIGTERM", "Ctrl-C"])
@pytest.mark.parametrize("raised", [_raised_in_an_extension, _raised_while_cleaning_up])
def test_an_interrupt_turned_into_another_error_still_stops_the_command(capsys, interrupt, status, line, raised):
    """A signal that came while an extension module was being imported (scikit-learn's first forest imports
    scipy's) reaches the command as that module's ``ImportError``: still the interrupt's status and one line,
    not a bug's traceback; so too an error raised while the interrupt was unwinding."""
    assert exit_status("cmd", lambda: raised(interrupt)) == status
    assert capsys.readouterr().err == line


def test_an_error_without_an_interrupt_behind_it_is_still_a_bug(capsys):
    def run():
        try:
            raise ValueError("handled")
        except ValueError:
            raise ImportError("initialization failed")
    assert exit_status("cmd", run) == 1
    assert capsys.readouterr().err.splitlines()[-1] == "cmd: internal error (a bug): please report it with the " \
        "traceback above"


CAUGHT_CTRL_C = """
from predictor.cmdline.exits import end_process, exit_status

def run():
    print("output before it", flush=False)  # still written: flushed before the process ends
    {}
    return 0

end_process(exit_status("cmd", run))
"""


@pytest.mark.parametrize("raised", ["raise KeyboardInterrupt", "exec('raise KeyboardInterrupt')"],
                         ids=["plain", "through exec"])
def test_a_caught_ctrl_c_always_ends_the_process_by_sigint(tmp_path, raised):
    """After Ctrl-C the command ends by SIGINT, as Python ends a program whose Ctrl-C nothing caught, whether or not
    the interrupt passed through ``exec`` of a string (Python, run with ``-m``, ended the process by SIGINT in the
    second case only and exited 130 in the first)."""
    (tmp_path / "ctrl_c_command.py").write_text(CAUGHT_CTRL_C.format(raised))
    done = subprocess.run([sys.executable, "-m", "ctrl_c_command"], capture_output=True, text=True, cwd=str(tmp_path),
                          env=dict(os.environ, PYTHONPATH=REPO), timeout=60)
    assert (done.returncode, done.stdout, done.stderr) == (-signal.SIGINT, "output before it\n", "cmd: interrupted\n")


def test_other_statuses_end_through_sys_exit():
    """Any status but Ctrl-C's is the process's exit status, after Python's own clean-up (atexit runs)."""
    code = ("import atexit, sys; from predictor.cmdline.exits import end_process; "
            "atexit.register(lambda: print('clean-up ran')); end_process(143)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=dict(os.environ, PYTHONPATH=REPO), timeout=60)
    assert (done.returncode, done.stdout) == (143, "clean-up ran\n")


WITHOUT_TEARDOWN = """
import atexit, sys, threading, time
from predictor.cmdline.exits import end_process

class Held:
    def __del__(self):
        print("torn down")

held = Held()
atexit.register(lambda: print("clean-up ran"))
if {thread}:
    threading.Thread(target=lambda: (time.sleep(0.5), print("thread done"))).start()
sys.stdout.write("output\\n")  # a pipe: block-buffered, still in the buffer
end_process(3, teardown=False)
"""


@pytest.mark.parametrize("thread, lines", [(False, ["output", "clean-up ran"]),
                                           (True, ["output", "thread done", "clean-up ran", "torn down"])])
def test_without_teardown_the_status_atexit_and_the_output_stay(thread, lines):
    """``teardown=False`` (the replay): the status, the atexit functions and the buffered output are as with
    ``sys.exit``, and Python's teardown (an object's ``__del__`` here) is skipped; with a thread of the command
    still running, the process ends through ``sys.exit``, which waits for it."""
    env = {name: value for name, value in os.environ.items() if name != "PYTHONUNBUFFERED"}
    done = subprocess.run([sys.executable, "-c", WITHOUT_TEARDOWN.format(thread=thread)], capture_output=True,
                          text=True, env=dict(env, PYTHONPATH=REPO), timeout=60)
    assert (done.returncode, done.stdout.splitlines(), done.stderr) == (3, lines, "")
