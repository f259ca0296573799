"""predictor.cmdline.files and the packaging: the schema and the hook file travel inside the installed package."""

import os
import subprocess
import sys
import zipfile

import pytest
from hookenv import HOOK_FILE

from predictor.admin.qmgr import hook_file
from predictor.cmdline import files
from predictor.db.schema import check_sql_dir, find_sql_dir
from predictor.errors import ConfigError

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_checkout_finds_its_own_files():
    """In a source checkout, sql/ and hooks/ beside the package are found."""
    assert find_sql_dir().endswith("/sql") and hook_file() == HOOK_FILE
    assert [version for version, _ in files.migrations(find_sql_dir())][:3] == [1, 2, 3]


def test_wheel_carries_schema_and_hook_file(tmp_path):
    """A built wheel holds predictor/sql/*.sql and predictor/hooks/softwalltime.py (no data_files outside)."""
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(tmp_path), REPO], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wheel = next(tmp_path.glob("*.whl"))
    names = zipfile.ZipFile(str(wheel)).namelist()
    assert "predictor/hooks/softwalltime.py" in names and "predictor/sql/001_completed_jobs.sql" in names
    assert not [name for name in names if ".data/" in name]


def test_target_install_needs_no_path_options(tmp_path):
    """Installed with pip --target, the package finds its schema and hook file inside itself."""
    target = tmp_path / "python"
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(target), REPO],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    probe = ("from predictor.db.schema import find_sql_dir; from predictor.admin.qmgr import hook_file; "
             "print(find_sql_dir()); print(hook_file())")
    done = subprocess.run([sys.executable, "-c", probe], cwd=str(tmp_path), env={"PYTHONPATH": str(target)},
                          stdout=subprocess.PIPE, universal_newlines=True, check=True)
    assert done.stdout.split() == [str(target / "predictor" / "sql"),
                                   str(target / "predictor" / "hooks" / "softwalltime.py")]


def _warnings(output):
    """The lines of pip's output that warn about the package (not about the machine's own pip settings)."""
    return [line for line in output.splitlines() if ("warn" in line.lower() or "deprecat" in line.lower())
            and "is ignored: it is neither a file nor a directory" not in line]


@pytest.mark.parametrize("editable", [True, False], ids=["editable", "regular"])
def test_documented_installs_warn_nothing(tmp_path, editable):
    """pip install -e . (the README's) and pip install . (the guide's) print no warning about the package,
    with today's pip (older ones hide the build backend's warnings)."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    pip = [str(venv / "bin" / "python"), "-m", "pip"]
    subprocess.run(pip + ["install", "-q", "--upgrade", "pip"], check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, timeout=600)
    command = pip + ["install", "--no-deps"] + (["-e"] if editable else [])
    done = subprocess.run(command + [REPO], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          universal_newlines=True, timeout=600)
    assert done.returncode == 0 and _warnings(done.stdout) == [], done.stdout[-3000:]
    probe = "from predictor.cmdline.files import packaged_dir; print(packaged_dir('sql'))"
    found = subprocess.run([str(venv / "bin" / "python"), "-c", probe], cwd=str(tmp_path), stdout=subprocess.PIPE,
                           universal_newlines=True, check=True)
    assert found.stdout.strip().endswith("sql")


@pytest.mark.parametrize("make", [lambda tmp: str(tmp / "nonexistent"), lambda tmp: str(tmp)])
def test_sql_dir_option_must_hold_schema_files(tmp_path, make):
    """--sql-dir naming a missing directory, or one without NNN_name.sql files, is refused."""
    with pytest.raises(ConfigError, match="--sql-dir"):
        check_sql_dir(make(tmp_path))


def test_db_init_with_a_missing_sql_dir_fails():
    """db init --sql-dir /nonexistent says so in one line, exit 2, before connecting."""
    result = subprocess.run([sys.executable, "-m", "predictor", "db", "init", "--dsn", "host=127.0.0.1 port=1",
                             "--sql-dir", "/nonexistent"], capture_output=True, text=True, timeout=60)
    assert result.returncode == 2 and "--sql-dir: /nonexistent: no such directory" in result.stderr
