"""The one output writer: no output replaces an input, a device, a descriptor or a link it should not follow.

Run in-process through each command line's ``main`` where the case allows it
(fast), in a subprocess where the case is about the process's own
descriptors (``/dev/stdout`` redirected into a file, ``/dev/stderr``).
"""

import os
import stat
import subprocess
import sys

import pytest

from predictor.cmdline.destinations import DEVICE, FILE, STREAM, InputFiles, destination
from predictor.cmdline.outputs import OutputFiles, OutputPaths, check_outputs, check_targets
from predictor.errors import OutputError, UsageError
from replay.cli import main as replay_main

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
E_LINE = ("04/10/2026 12:00:{sec:02d};E;{id}.svr;user=alice queue=workq ctime=1775822400 start={start} end={end} "
          "Exit_status=0 Resource_List.walltime=01:00:00 Resource_List.ncpus=1\n")
SWF = "; Version: 2.2\n; UnixStartTime: 1775822400\n" + "".join(
    "{} {} 0 {} 1 -1 -1 1 3600 -1 1 1 1 -1 1 -1 -1 -1\n".format(job, 100 * job, 600 + job) for job in range(1, 6))


@pytest.fixture
def logs(tmp_path):
    """An accounting directory with two daily files, and an SWF trace beside it."""
    folder = tmp_path / "accounting"
    folder.mkdir()
    for day, first in (("20260410", 1), ("20260411", 8)):
        (folder / day).write_text("".join(E_LINE.format(sec=job, id=job, start=1775822400 + 10 * job,
                                                        end=1775822400 + 10 * job + 600) for job in range(first,
                                                                                                          first + 7)))
    (tmp_path / "trace.swf").write_text(SWF)
    return tmp_path


def contents(folder):
    """Every file under ``folder`` with its bytes."""
    found = {}
    for root, _, names in os.walk(str(folder)):
        for name in names:
            path = os.path.join(root, name)
            with open(path, "rb") as stream:
                found[os.path.relpath(path, str(folder))] = stream.read()
    return found


def refused(capsys, argv, pattern):
    """``python -m replay ARGV`` exits 2 with one stderr line holding ``pattern``."""
    status = replay_main(argv)
    err = capsys.readouterr().err
    assert status == 2 and len(err.splitlines()) == 1 and pattern in err, (status, err)


@pytest.mark.parametrize("argv", [
    ["{d}/accounting", "--json", "{d}/accounting/20260410"],
    ["{d}/accounting", "--csv", "{d}/accounting/new.csv"],
    ["simulate", "{d}/accounting", "--jobs-csv", "{d}/accounting/20260411"],
    ["convert", "{d}/accounting", "{d}/accounting/20260410"],
    ["convert", "{d}/accounting", "{d}/accounting/sub/"],
    ["sweep", "{d}/accounting", "--plot", "{d}/accounting/plots"],
])
def test_output_inside_an_input_directory_refused(logs, capsys, argv):
    """An output that is, or lies inside, an input directory is refused before any work; the logs are untouched."""
    before = contents(logs)
    refused(capsys, [arg.format(d=logs) for arg in argv], "lies inside the input directory")
    assert contents(logs) == before


@pytest.mark.parametrize("argv, pattern", [
    (["sweep", "{d}/trace.swf", "--json", "{d}/trace.swf"], "--json {d}/trace.swf: the output would overwrite"),
    (["sweep", "{d}/trace.swf", "--json", "{d}/a", "--csv", "{d}/a"], "--json and --csv both name {d}/a"),
    (["sweep", "{d}/trace.swf", "--json", "-", "--csv", "-"], "--json and --csv: only one output can go to stdout"),
    (["sweep", "{d}/trace.swf", "--json", "/dev/stdout", "--csv", "-"], "only one output can go to stdout"),
    (["sweep", "{d}/trace.swf", "--pbs", "{d}/trace.swf"], "--pbs {d}/trace.swf: exists and is not a directory"),
    (["{d}/trace.swf", "--json", "{d}/link"], "--json {d}/link: the output would overwrite the input"),
    (["{d}/link", "--json", "{d}/trace.swf"], "--json {d}/trace.swf: the output would overwrite the input"),
    (["{d}/trace.swf", "--json", "{d}/hard"], "--json {d}/hard: the output would overwrite the input"),
    (["convert", "{d}/link", "{d}/trace.swf"], "OUT {d}/trace.swf: the output would overwrite the input"),
])
def test_output_over_an_input_or_another_output_refused(logs, capsys, argv, pattern):
    """sweep checks its outputs too; links and hard links to an input are the input."""
    os.symlink(str(logs / "trace.swf"), str(logs / "link"))
    os.link(str(logs / "trace.swf"), str(logs / "hard"))
    before = contents(logs)
    refused(capsys, [arg.format(d=logs) for arg in argv], pattern.format(d=logs))
    assert contents(logs) == before


def test_sweep_grid_file_is_an_input(logs, capsys):
    """The grid file a sweep reads is one of its inputs."""
    (logs / "grid.txt").write_text("traces: {}\n".format(logs / "trace.swf"))
    refused(capsys, ["sweep", "--grid", str(logs / "grid.txt"), "--csv", str(logs / "grid.txt")],
            "overwrite the input")


def test_replaced_file_keeps_its_permissions(logs, capsys):
    """A regular file is replaced whole and keeps its mode: a report shared 0640 stays 0640."""
    out = logs / "m.json"
    out.write_text("old")
    os.chmod(str(out), 0o640)
    assert replay_main([str(logs / "trace.swf"), "--json", str(out)]) == 0
    assert stat.S_IMODE(os.stat(str(out)).st_mode) == 0o640 and out.read_text().startswith("{")


def test_new_file_gets_the_umask_permissions(logs, capsys):
    """A new output is created as ``open`` would: 0666 less the umask, not a temporary file's 0600."""
    old = os.umask(0o022)
    try:
        assert replay_main([str(logs / "trace.swf"), "--csv", str(logs / "m.csv")]) == 0
    finally:
        os.umask(old)
    assert stat.S_IMODE(os.stat(str(logs / "m.csv")).st_mode) == 0o644


def test_link_in_a_shared_sticky_directory_refused(tmp_path, capsys):
    """As root, a link another user left in /tmp-like directory is not followed (fs.protected_symlinks' rule)."""
    if os.geteuid() != 0:
        pytest.skip("needs root to give the link to another user")
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(str(shared), 0o1777)
    victim = tmp_path / "victim"
    victim.write_text("precious\n")
    os.symlink(str(victim), str(shared / "report.json"))
    os.lchown(str(shared / "report.json"), 65534, 65534)
    with pytest.raises(UsageError, match="a symbolic link another user owns in a shared directory"):
        destination("--json", str(shared / "report.json"))
    assert victim.read_text() == "precious\n"


def test_own_link_is_followed_and_stays_a_link(tmp_path):
    """A link of one's own: the file it points to is replaced, the link stays."""
    (tmp_path / "real.json").write_text("old")
    os.symlink("real.json", str(tmp_path / "link.json"))
    target = destination("--json", str(tmp_path / "link.json"))
    with OutputFiles() as files, files.open(target) as stream:
        stream.write("new")
    assert os.path.islink(str(tmp_path / "link.json")) and (tmp_path / "real.json").read_text() == "new"


def test_device_written_in_place_and_full_disk_is_one_error(tmp_path):
    """/dev/null stays a device; /dev/full gives one OutputError naming the option and path."""
    assert destination("--csv", "/dev/null").kind == DEVICE
    with pytest.raises(OutputError, match=r"^--json /dev/full: cannot write: No space left on device$"):
        with OutputFiles() as files, files.open(destination("--json", "/dev/full")) as stream:
            stream.write("x" * 100000)
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)


def test_fifo_written_in_place(tmp_path):
    """A named pipe gets the bytes and stays a pipe."""
    fifo = str(tmp_path / "pipe")
    os.mkfifo(fifo)
    reader = subprocess.Popen(["cat", fifo], stdout=subprocess.PIPE)
    target = destination("--json", fifo)
    with OutputFiles() as files, files.open(target) as stream:
        stream.write("through the pipe\n")
    assert reader.communicate(timeout=30)[0] == b"through the pipe\n"
    assert target.kind == DEVICE and stat.S_ISFIFO(os.stat(fifo).st_mode)


def run_replay(argv, **streams):
    env = dict(os.environ, PYTHONPATH=REPO)
    return subprocess.run([sys.executable, "-m", "replay"] + argv, env=env, timeout=120, **streams)


def test_dev_stdout_into_a_file_is_standard_output(logs):
    """``--json /dev/stdout > file``: the JSON goes down the shell's redirection; the file is not replaced."""
    out = logs / "out.txt"
    with open(str(out), "w") as stream:
        inode = os.fstat(stream.fileno()).st_ino
        result = run_replay([str(logs / "trace.swf"), "--json", "/dev/stdout"], stdout=stream,
                            stderr=subprocess.PIPE)
    assert result.returncode == 0, result.stderr
    assert os.stat(str(out)).st_ino == inode and out.read_text().startswith("{")


def test_dev_stderr_into_a_log_is_appended_to(logs):
    """``--csv /dev/stderr 2>>log``: the log keeps what it had, the CSV follows it."""
    log = logs / "log"
    log.write_text("earlier line\n")
    with open(str(log), "a") as stream:
        result = run_replay([str(logs / "trace.swf"), "--csv", "/dev/stderr"], stdout=subprocess.PIPE,
                            stderr=stream)
    assert result.returncode == 0
    text = log.read_text()
    assert text.startswith("earlier line\n") and "predictor" in text


def test_the_shells_stdout_file_named_again_is_stdout(logs):
    """``--json out.txt > out.txt``: out.txt is standard output, written once, not replaced under the shell."""
    out = logs / "out.txt"
    with open(str(out), "w") as stream:
        result = run_replay([str(logs / "trace.swf"), "--json", str(out)], stdout=stream, stderr=subprocess.PIPE)
    assert result.returncode == 0 and out.read_text().startswith("{")


def test_descriptor_paths_are_streams():
    """/dev/stdout and /dev/fd/1 are descriptor 1; '-' too: two of them are one path."""
    assert destination("--json", "/dev/stdout")[2:5] == (STREAM, None, 1)
    assert destination("--json", "/dev/fd/1").descriptor == 1
    with pytest.raises(UsageError, match="only one output can go to stdout"):
        check_outputs(OutputPaths(json="-", csv="/dev/fd/1"))


def test_plot_directory_never_replaces_a_link_or_an_input(tmp_path):
    """Into an existing directory: a name there that is a link, or an input, stops the whole commit."""
    plots = tmp_path / "plots"
    plots.mkdir()
    (plots / "input.png").write_text("an input")
    os.symlink("/etc/passwd", str(plots / "v.png"))
    target = check_targets([("--plot", str(plots), True)])[0]
    for name in ("v.png", "input.png"):
        with pytest.raises(UsageError, match="--plot {}: {}".format(plots, name)):
            with OutputFiles(InputFiles([str(plots / "input.png")])) as files:
                folder = files.directory(target)
                with open(os.path.join(folder, name), "w") as stream:
                    stream.write("figure")
                with open(os.path.join(folder, "a.png"), "w") as stream:
                    stream.write("figure")
        assert sorted(os.listdir(str(plots))) == ["input.png", "v.png"]
    assert (plots / "input.png").read_text() == "an input" and os.path.islink(str(plots / "v.png"))


def test_failed_directory_leaves_no_folder_it_made(tmp_path):
    """A new --plot a/b/c whose write fails leaves neither c nor the a/b it created."""
    target = destination("--plot", str(tmp_path / "a" / "b" / "c"), directory=True)
    with pytest.raises(RuntimeError):
        with OutputFiles() as files:
            files.directory(target)
            raise RuntimeError("the figures failed")
    assert os.listdir(str(tmp_path)) == []


def test_regular_file_kind_and_missing_directory():
    """A new file is a FILE; one in a missing directory is refused naming it."""
    assert destination("--json", "out.json").kind == FILE
    with pytest.raises(UsageError, match="--csv /nonexistent/m.csv: directory /nonexistent does not exist"):
        destination("--csv", "/nonexistent/m.csv")

