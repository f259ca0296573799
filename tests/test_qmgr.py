"""predictor.qmgr and ``python -m predictor hooks qmgr``: the commands that install the hooks."""

import re

import pytest

from predictor.cli import main
from predictor.errors import ConfigError
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
