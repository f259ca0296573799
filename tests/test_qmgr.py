"""predictor.admin.qmgr and ``python -m predictor hooks qmgr``: the commands that install the hooks."""

import os
import re
import subprocess

import installdoc
import pytest
from hookenv import HOOK_FILE, write_config

from predictor.admin.cli import main
from predictor.admin.qmgr import alarm_s, disable_commands, hook_file, install_commands, uninstall_commands
from predictor.errors import ConfigError
from predictor.server.config import read_hook_config

DSN = "host=10.0.0.5 dbname=softwalltime user=pbs_hook"


@pytest.fixture
def config(tmp_path):
    return write_config(tmp_path, reader_dsn=DSN, writer_dsn=DSN + "_obit", budget_s=2)


def created(lines):
    return [m.group(1) for m in (re.match(r'qmgr -c "create hook (\w+)"', line) for line in lines) if m]


def test_install_creates_the_predicting_and_the_jobobit_hook(config):
    """One hook for queuejob, runjob and modifyjob, one for jobobit: create, events, order, alarm, imports, enable."""
    lines = install_commands(config)
    assert created(lines) == ["softwalltime", "softwalltime_jobobit"]
    assert [line for line in lines if re.search(r"hook softwalltime\b(?!_)", line)] == [
        'qmgr -c "create hook softwalltime"',
        'qmgr -c "set hook softwalltime event = \'queuejob,runjob,modifyjob\'"',
        'qmgr -c "set hook softwalltime order = 900"',
        'qmgr -c "set hook softwalltime alarm = 10"',
        'qmgr -c "import hook softwalltime application/x-python default {}"'.format(HOOK_FILE),
        'qmgr -c "import hook softwalltime application/x-config default {}"'.format(config),
        'qmgr -c "set hook softwalltime enabled = true"',
    ]


def test_the_hook_file_is_found_without_options():
    """The hook file ships with the package: no path option is needed."""
    assert hook_file() == HOOK_FILE


def test_alarm_stays_well_above_the_budget():
    """The hook alarm (which rejects) is at least 10 s and three budgets."""
    assert [alarm_s(budget) for budget in (0.5, 2, 4, 10)] == [10, 10, 12, 30]


def test_without_jobobit(tmp_path):
    """--no-jobobit leaves out the jobobit hook, and then no writer_dsn is needed."""
    config = write_config(tmp_path, reader_dsn=DSN)
    assert created(install_commands(config, with_jobobit=False)) == ["softwalltime"]


def test_jobobit_needs_a_writer(tmp_path):
    """Installing jobobit without writer_dsn is refused."""
    with pytest.raises(ConfigError, match="writer_dsn is needed by the jobobit hook"):
        install_commands(write_config(tmp_path, reader_dsn=DSN))


def test_predicting_hook_needs_a_reader(tmp_path):
    """The predicting hook's config must hold reader_dsn."""
    with pytest.raises(ConfigError, match="reader_dsn is needed by the predicting hook"):
        install_commands(write_config(tmp_path, writer_dsn=DSN))


def test_separate_jobobit_config_may_hold_writer_dsn_alone(tmp_path):
    """--jobobit-config keeps writer_dsn out of the predicting hook's config; writer_dsn alone is enough there."""
    readers = write_config(tmp_path, name="readers.json", reader_dsn=DSN)
    obit = write_config(tmp_path, name="obit.json", writer_dsn=DSN + "_obit")
    imports = [line for line in install_commands(readers, jobobit_config_path=obit) if "x-config" in line]
    assert [line.split()[-1] for line in imports] == [readers + '"', obit + '"']


def test_config_is_validated_first(tmp_path):
    """A bad config is refused before any command is printed."""
    with pytest.raises(ConfigError, match="budget_s"):
        install_commands(write_config(tmp_path, reader_dsn=DSN, budget_s=60))


@pytest.mark.parametrize("name", ["hook config.json", 'q"uote.json', "$HOME.json", "hook.cfg"])
def test_unsafe_or_wrong_config_names_are_refused(tmp_path, name):
    """Paths qmgr or the shell would split, and names PBS would not read as JSON, are refused."""
    path = write_config(tmp_path, name=name, reader_dsn=DSN, writer_dsn=DSN)
    with pytest.raises(ConfigError):
        install_commands(path)


@pytest.mark.parametrize("prefix", ["PBS_hooks", "1abc", "a-b", "", "x;y", "x y"])
def test_bad_prefixes_are_refused(prefix):
    """Hook names must be plain identifiers and not start with PBS (reserved)."""
    with pytest.raises(ConfigError):
        uninstall_commands(prefix)


def test_disable_and_uninstall():
    """Disable switches each hook off; uninstall deletes each hook."""
    assert disable_commands("swt", with_jobobit=False) == ['qmgr -c "set hook swt enabled = false"']
    assert uninstall_commands() == ['qmgr -c "delete hook softwalltime"', 'qmgr -c "delete hook softwalltime_jobobit"']


def test_cli_prints_the_block(config, capsys):
    """python -m predictor hooks qmgr --config FILE prints the install block."""
    assert main(["hooks", "qmgr", "--config", config, "--order", "5"]) == 0
    output = capsys.readouterr().out
    assert 'qmgr -c "set hook softwalltime_jobobit order = 5"' in output and output.count("create hook") == 2


def test_cli_reports_a_bad_config_in_one_line(tmp_path, capsys):
    """A bad config is one error line and exit status 2."""
    config = write_config(tmp_path, reader_dsn="host=db.example.org")
    assert main(["hooks", "qmgr", "--config", config]) == 2
    assert capsys.readouterr().err.count("\n") == 1


@pytest.mark.parametrize("args, fragment", [
    (["--disable", "--order", "5"], "--order has no effect with --disable"),
    (["--uninstall", "--config", "x.json"], "--config has no effect with --uninstall"),
    (["--no-jobobit", "--jobobit-config", "x.json", "--config", "y.json"], "contradict"),
])
def test_cli_refuses_conflicting_options(args, fragment, capsys):
    """Options that contradict each other are refused in one line, exit status 2."""
    assert main(["hooks", "qmgr"] + args) == 2
    assert fragment in capsys.readouterr().err


@pytest.mark.parametrize("args, fragment", [
    (["--disable", "--uninstall"], "not allowed with"),
    (["--order", "0", "--config", "y.json"], "within 1..1000"),
])
def test_cli_refuses_bad_arguments_before_anything_else(args, fragment, capsys):
    """Mutually exclusive actions and an order outside 1..1000 stop at argument parsing, exit status 2."""
    assert main(["hooks", "qmgr"] + args) == 2 and fragment in capsys.readouterr().err


def documented_configs(tmp_path):
    """The config files docs/install.md's config block writes, written into ``tmp_path``."""
    subprocess.run(["bash", "-c", installdoc.script(["config"], CONF=str(tmp_path))], check=True)
    return str(tmp_path / "hooks.json"), str(tmp_path / "jobobit.json")


def install_md():
    with open(installdoc.INSTALL_MD, encoding="utf-8") as doc:
        return doc.read()


def test_documented_configs_are_valid(tmp_path):
    """The configs docs/install.md writes pass validation: a reader for one hook, a writer for the other."""
    hooks, jobobit = documented_configs(tmp_path)
    assert read_hook_config(hooks).reader is not None and read_hook_config(jobobit).writer is not None


def test_documented_qmgr_block_is_what_the_command_prints(tmp_path):
    """The qmgr block in docs/install.md is exactly what hooks qmgr prints for the documented configs."""
    hooks, jobobit = documented_configs(tmp_path)
    target = installdoc.settings()["TARGET"]
    printed = install_commands(hooks, jobobit_config_path=jobobit,
                               hook_path=target + "/predictor/hooks/softwalltime.py")
    documented = install_md().split("holds, for the configs above")[1].split("What they set")[0]
    documented = [line.strip() for line in documented.splitlines() if line.startswith("    ")]
    conf = installdoc.settings()["CONF"]
    assert documented == [line.replace(str(tmp_path), conf) for line in printed]


@pytest.mark.parametrize("flag, builder", [("--disable", disable_commands), ("--uninstall", uninstall_commands)])
def test_documented_disable_and_uninstall_blocks(flag, builder):
    """The disable and uninstall blocks in docs/install.md are what the command prints."""
    section = install_md().split("-m predictor hooks qmgr " + flag)[1].split("prints")[1]
    block = section.split("\n\n")[1]
    assert [line.strip() for line in block.splitlines()] == builder()


def config_with_password(tmp_path, mode, name="hooks.json", **settings):
    path = write_config(tmp_path, name=name, **dict(dict(reader_dsn=DSN + " password=change-me-1",
                                                         writer_dsn=DSN + "_obit"), **settings))
    os.chmod(path, mode)
    return path


@pytest.mark.parametrize("mode", [0o644, 0o640, 0o604])
def test_readable_config_with_a_password_is_refused(tmp_path, capsys, mode):
    """A config holding a password that group or others may read: one error line naming file, setting and mode."""
    config = config_with_password(tmp_path, mode)
    assert main(["hooks", "qmgr", "--config", config]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and config in err and "reader_dsn" in err and "{:04o}".format(mode) in err
    assert "chmod 600" in err and "change-me-1" not in err


def test_readable_config_with_a_password_is_installed_when_allowed(tmp_path, capsys):
    """--allow-readable installs it as it is."""
    config = config_with_password(tmp_path, 0o644)
    assert main(["hooks", "qmgr", "--config", config, "--allow-readable"]) == 0
    assert capsys.readouterr().out.count("create hook") == 2


@pytest.mark.parametrize("mode, passfile", [(0o600, False), (0o644, True)])
def test_private_config_or_no_password_is_installed(tmp_path, mode, passfile):
    """Mode 0600, or no password in the file (a passfile= instead): installed without a word."""
    settings = {}
    if passfile:
        pgpass = tmp_path / "pgpass"
        pgpass.write_text("*:*:*:pbs_hook:change-me-1\n")
        pgpass.chmod(0o600)
        settings = {"reader_dsn": DSN + " passfile={}".format(pgpass)}
    config = config_with_password(tmp_path, mode, **settings)
    assert created(install_commands(config)) == ["softwalltime", "softwalltime_jobobit"]


def test_separate_jobobit_config_with_a_readable_password_is_refused(tmp_path):
    """The writer's password in a readable jobobit config is refused too."""
    config = write_config(tmp_path, reader_dsn=DSN)
    obit = config_with_password(tmp_path, 0o644, name="jobobit.json", reader_dsn=None,
                                writer_dsn=DSN + "_obit password='x y'")
    with pytest.raises(ConfigError, match="writer_dsn"):
        install_commands(config, jobobit_config_path=obit)
