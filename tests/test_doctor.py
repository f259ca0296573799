"""predictor.admin.doctor: the preflight checks, against the real PostgreSQL (the PBS half runs in test_realpbs.py)."""

import os
import uuid

import pytest
from conftest import admin_execute, dsn_for
from hookenv import write_config

from predictor.admin.doctor import Check, _attributes, _hook_verdict, format_check, run_checks
from predictor.admin.qmgr import hook_file
from predictor.server.config import read_hook_config


def checks(config, jobobit_config=None, pbs_conf="/nonexistent/pbs.conf"):
    return list(run_checks(config, jobobit_config, with_pbs=True, pbs_conf=pbs_conf))


def by_subject(found):
    return {check.subject: check for check in found}


def test_least_privileged_roles_pass(database, tmp_path):
    """Reader and writer logins in their groups: config, reader, schema and writer are ok; PBS skipped here."""
    config = write_config(tmp_path, reader_dsn=database.reader_dsn, writer_dsn=database.writer_dsn)
    found = checks(config)
    assert [(check.status, check.subject) for check in found] == [
        ("ok", "config"), ("ok", "reader_dsn"), ("ok", "schema"), ("ok", "writer_dsn"), ("skip", "PBS")]


def test_reader_that_can_write_fails(database, tmp_path):
    """A reader_dsn with write rights (here the owner) is a failure with the fix named."""
    config = write_config(tmp_path, reader_dsn=database.dsn)
    reader = by_subject(checks(config))["reader_dsn"]
    assert reader.status == "FAIL" and "can write" in reader.detail and "softwalltime_reader" in reader.fix


def test_writer_without_rights_fails(database, tmp_path):
    """A jobobit config whose writer is only a reader cannot record jobs."""
    config = write_config(tmp_path, reader_dsn=database.reader_dsn, writer_dsn=database.reader_dsn)
    writer = by_subject(checks(config))["writer_dsn"]
    assert writer.status == "FAIL" and "GRANT softwalltime_writer" in writer.fix


def test_writer_that_can_update_directly_is_a_warning(database, tmp_path):
    """A writer_dsn that may update completed_jobs itself (the owner) could lock it: a warning naming the revoke."""
    config = write_config(tmp_path, reader_dsn=database.reader_dsn, writer_dsn=database.dsn)
    writer = by_subject(checks(config))["writer_dsn"]
    assert writer.status == "warn" and "REVOKE UPDATE" in writer.fix


@pytest.fixture
def empty_database():
    name = "swt_doctor_{}".format(uuid.uuid4().hex[:8])
    admin_execute("CREATE DATABASE " + name)
    yield name
    admin_execute("DROP DATABASE IF EXISTS {} WITH (FORCE)".format(name))


def test_missing_schema_fails_with_db_init(empty_database, tmp_path):
    """A database without the table says so and names db init."""
    config = write_config(tmp_path, reader_dsn=dsn_for(empty_database))
    reader = by_subject(checks(config))["reader_dsn"]
    assert reader.status == "FAIL" and "completed_jobs does not exist" in reader.detail and "db init" in reader.fix


def test_unreachable_database_fails(tmp_path):
    """No server: the reader check fails and says where to look."""
    config = write_config(tmp_path, reader_dsn="host=127.0.0.1 port=1 user=x")
    reader = by_subject(checks(config))["reader_dsn"]
    assert reader.status == "FAIL" and "cannot connect" in reader.detail


def test_bad_config_stops_after_one_line(tmp_path):
    """A config that does not parse is one FAIL line and nothing else."""
    config = write_config(tmp_path, reader_dsn="host=10.0.0.5", budget_s=99)
    found = checks(config)
    assert len(found) == 1 and found[0].status == "FAIL" and "budget_s" in found[0].detail


def test_no_writer_is_a_warning(database, tmp_path):
    """Without writer_dsn the jobobit hook cannot record: a warning that names the ingester."""
    config = write_config(tmp_path, reader_dsn=database.reader_dsn)
    warnings = [check for check in checks(config) if check.status == "warn"]
    assert len(warnings) == 1 and "ingest --follow" in warnings[0].fix


def test_one_line_per_check():
    """A check prints as one line, with its fix after it."""
    line = format_check(Check("FAIL", "reader_dsn", "cannot connect", "check pg_hba.conf"))
    assert line == "FAIL reader_dsn: cannot connect; fix: check pg_hba.conf" and "\n" not in line


LIST_HOOK = """Hook softwalltime
    type = site
    enabled = true
    event = queuejob,modifyjob,
\trunjob
    user = pbsadmin
    alarm = 10
    order = 900
"""


def test_qmgr_list_output_is_read_with_continuation_lines():
    """qmgr wraps long values onto tab-indented lines; they belong to the attribute above."""
    attributes = _attributes(LIST_HOOK)
    assert attributes["event"] == "queuejob,modifyjob,runjob" and attributes["alarm"] == "10"


def verdict(tmp_path, attributes_text=LIST_HOOK, imported_config=None, imported_file=None, budget_s=2):
    config = write_config(tmp_path, reader_dsn="host=10.0.0.5 user=x", budget_s=budget_s)
    with open(config) as text:
        same_config = text.read()
    with open(hook_file()) as text:
        same_file = text.read()
    return _hook_verdict("softwalltime", "queuejob,runjob,modifyjob", _attributes(attributes_text),
                         imported_config if imported_config is not None else same_config,
                         imported_file if imported_file is not None else same_file, config,
                         read_hook_config(config), "fix")


def test_hook_up_to_date_is_ok(tmp_path):
    """Enabled, the right events, alarm high enough, same config and hook file: ok."""
    assert verdict(tmp_path).status == "ok"


@pytest.mark.parametrize("change, problem", [
    (dict(attributes_text=LIST_HOOK.replace("enabled = true", "enabled = false")), "disabled"),
    (dict(attributes_text=LIST_HOOK.replace("\trunjob", "\tmovejob")), "events"),
    (dict(budget_s=5), "alarm 10 s is below 15 s"),
    (dict(imported_config='{"reader_dsn": "host=10.0.0.6 user=x"}'), "imported config differs"),
    (dict(imported_file="import pbs\n"), "not this version's"),
])
def test_each_hook_problem_is_named(tmp_path, change, problem):
    """Each way the installed hook can differ from what it should be is named."""
    found = verdict(tmp_path, **change)
    assert found.status == "FAIL" and problem in found.detail


def test_readable_config_with_a_password_is_a_warning(database, tmp_path):
    """A config that holds a password and is readable by everyone: a warning naming chmod 600."""
    config = write_config(tmp_path, reader_dsn=database.reader_dsn + " password=unused",
                          writer_dsn=database.writer_dsn)
    os.chmod(config, 0o644)
    warned = [check for check in checks(config) if check.status == "warn" and "password" in check.detail]
    assert len(warned) == 1 and warned[0].fix == "chmod 600 " + config and "0644" in warned[0].detail
    os.chmod(config, 0o600)
    assert not [check for check in checks(config) if "password" in check.detail]
