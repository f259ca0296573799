"""predictor.qmgr and ``python -m predictor hooks qmgr``: the commands that install the hooks."""

import json
import os
import re

import pytest

from predictor.cli import main
from predictor.errors import ConfigError
from predictor.hookconfig import parse_hook_config
from predictor.qmgr import HOOK_EVENTS, alarm_s, disable_commands, install_commands, uninstall_commands

from hookenv import HOOKS_DIR, write_config

DSN = "host=10.0.0.5 dbname=softwalltime user=pbs_hook"


@pytest.fixture
def config(tmp_path):
    return write_config(tmp_path, reader_dsn=DSN, writer_dsn=DSN + "_obit", budget_s=2)


def test_install_creates_one_hook_per_event(config):
    """Each event gets create, event, order, alarm, both imports and enable, in that order."""
    lines = install_commands(config, HOOKS_DIR)
    hooks = [m.group(1) for m in (re.match(r'qmgr -c "create hook (\w+)"', line) for line in lines) if m]
    assert hooks == ["softwalltime_" + event for event in HOOK_EVENTS]
    queuejob = [line for line in lines if "softwalltime_queuejob" in line]
    assert queuejob == [
        'qmgr -c "create hook softwalltime_queuejob"',
        'qmgr -c "set hook softwalltime_queuejob event = queuejob"',
        'qmgr -c "set hook softwalltime_queuejob order = 900"',
        'qmgr -c "set hook softwalltime_queuejob alarm = 10"',
        'qmgr -c "import hook softwalltime_queuejob application/x-python default {}/queuejob.py"'.format(HOOKS_DIR),
        'qmgr -c "import hook softwalltime_queuejob application/x-config default {}"'.format(config),
        'qmgr -c "set hook softwalltime_queuejob enabled = true"',
    ]


def test_alarm_stays_well_above_the_budget():
    """The hook alarm (which rejects) is at least 10 s and three budgets."""
    assert [alarm_s(budget) for budget in (0.5, 2, 4, 10)] == [10, 10, 12, 30]


def test_without_jobobit(tmp_path):
    """--no-jobobit leaves out the jobobit hook, and then no writer_dsn is needed."""
    config = write_config(tmp_path, reader_dsn=DSN)
    assert not any("softwalltime_jobobit" in line for line in install_commands(config, HOOKS_DIR, with_jobobit=False))


def test_jobobit_needs_a_writer(tmp_path):
    """Installing jobobit without writer_dsn is refused."""
    with pytest.raises(ConfigError, match="writer_dsn"):
        install_commands(write_config(tmp_path, reader_dsn=DSN), HOOKS_DIR)


def test_separate_jobobit_config(tmp_path):
    """--jobobit-config keeps writer_dsn out of the predicting hooks' config."""
    readers = write_config(tmp_path, name="readers.json", reader_dsn=DSN)
    obit = write_config(tmp_path, name="obit.json", reader_dsn=DSN, writer_dsn=DSN + "_obit")
    imports = [line for line in install_commands(readers, HOOKS_DIR, jobobit_config_path=obit) if "x-config" in line]
    assert [line.endswith('obit.json"') for line in imports] == [False, False, False, True]


def test_config_is_validated_first(tmp_path):
    """A bad config is refused before any command is printed."""
    with pytest.raises(ConfigError, match="budget_s"):
        install_commands(write_config(tmp_path, reader_dsn=DSN, budget_s=60), HOOKS_DIR)


@pytest.mark.parametrize("name", ["hook config.json", 'q"uote.json', "$HOME.json", "hook.cfg"])
def test_unsafe_or_wrong_config_names_are_refused(tmp_path, name):
    """Paths qmgr or the shell would split, and names PBS would not read as JSON, are refused."""
    path = write_config(tmp_path, name=name, reader_dsn=DSN, writer_dsn=DSN)
    with pytest.raises(ConfigError):
        install_commands(path, HOOKS_DIR)


@pytest.mark.parametrize("prefix", ["PBS_hooks", "1abc", "a-b", ""])
def test_bad_prefixes_are_refused(prefix):
    """Hook names must be plain identifiers and not start with PBS (reserved)."""
    with pytest.raises(ConfigError):
        uninstall_commands(prefix)


def test_disable_and_uninstall():
    """Disable switches each hook off; uninstall deletes each hook."""
    assert disable_commands("swt", with_jobobit=False) == [
        'qmgr -c "set hook swt_{} enabled = false"'.format(event) for event in HOOK_EVENTS[:3]]
    assert uninstall_commands()[-1] == 'qmgr -c "delete hook softwalltime_jobobit"'


def test_cli_prints_the_block(config, capsys):
    """python -m predictor hooks qmgr --config FILE prints the install block."""
    assert main(["hooks", "qmgr", "--config", config, "--hooks-dir", HOOKS_DIR, "--order", "5"]) == 0
    output = capsys.readouterr().out
    assert 'qmgr -c "set hook softwalltime_jobobit order = 5"' in output and output.count("create hook") == 4


def test_cli_reports_a_bad_config_in_one_line(tmp_path, capsys):
    """A bad config is one error line and exit status 2."""
    config = write_config(tmp_path, reader_dsn="host=db.example.org")
    assert main(["hooks", "qmgr", "--config", config]) == 2
    assert capsys.readouterr().err.count("\n") == 1


def test_cli_refuses_a_hooks_dir_without_the_hook_files(config, tmp_path, capsys):
    """--hooks-dir must hold the four hook files."""
    assert main(["hooks", "qmgr", "--config", config, "--hooks-dir", str(tmp_path)]) == 2
    assert "missing queuejob.py" in capsys.readouterr().err


INSTALL_MD = os.path.join(os.path.dirname(HOOKS_DIR), "docs", "install.md")


def install_md():
    with open(INSTALL_MD, encoding="utf-8") as doc:
        return doc.read()


def test_documented_config_is_valid():
    """The example config in docs/install.md passes validation."""
    example = re.search(r"```json\n(.*?)```", install_md(), re.S).group(1)
    assert parse_hook_config(json.loads(example), "docs").skip_queues == frozenset(["debug"])


def test_documented_qmgr_block_is_what_the_command_prints(tmp_path):
    """The qmgr block in docs/install.md is exactly what hooks qmgr prints for the example config."""
    text = install_md()
    example = json.loads(re.search(r"```json\n(.*?)```", text, re.S).group(1))
    config = write_config(tmp_path, name="hooks.json", **example)
    printed = install_commands(config, "/path/to/pbs-softwalltime/hooks")
    documented = text.split("which prints, for the config above")[1].split("Run them as root")[0]
    documented = [line.strip() for line in documented.splitlines() if line.startswith("    ")]
    assert documented == [line.replace(config, "/etc/pbs-softwalltime/hooks.json") for line in printed]


@pytest.mark.parametrize("flag, builder", [("--disable", disable_commands), ("--uninstall", uninstall_commands)])
def test_documented_disable_and_uninstall_blocks(flag, builder):
    """The disable and uninstall blocks in docs/install.md are what the command prints."""
    section = install_md().split("python -m predictor hooks qmgr " + flag)[1].split("prints")[1]
    block = section.split("\n\n")[1]
    assert [line.strip() for line in block.splitlines()] == builder()
