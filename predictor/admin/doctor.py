"""``python -m predictor doctor``: the checks an admin runs before the hooks go live.

One line per check: ``ok``, ``warn`` or ``FAIL`` with what is wrong and the
command that fixes it (``skip`` when a check cannot run here). The database
checks connect exactly as the hooks do (same driver, same settings, same
budget); the PBS checks run the server's own Python without site-packages,
as pbs_server does, and read the hooks and server settings back with qmgr.
"""

import json
import os
import subprocess
import time
from typing import NamedTuple, Optional

from .. import __version__
from ..cmdline.files import migrations, packaged_dir
from ..durations import parse_duration
from ..errors import ConfigError, DatabaseError
from ..queries import RECENT_HISTORY
from ..server.config import read_hook_config
from ..server.store import HookHistory
from .qmgr import DEFAULT_PREFIX, alarm_s, hook_file, hook_names
from .secrets import readable_password

__all__ = ["Check", "run_checks", "format_check"]

PBS_CONF = "/etc/pbs.conf"
_RESTART_DEFAULTS = {"python_restart_max_hooks": 100, "python_restart_max_objects": 1000,
                     "python_restart_min_interval": 30}
"""pbs_server's defaults when the attributes are unset."""


class Check(NamedTuple):
    """One check's verdict: ``status`` is ok, warn, FAIL or skip."""

    status: str
    subject: str
    detail: str
    fix: Optional[str] = None


def format_check(check):
    """The check as one line."""
    line = "{:<4} {}: {}".format(check.status, check.subject, check.detail)
    return line + ("; fix: " + check.fix if check.fix else "")


def run_checks(config_path, jobobit_config_path=None, prefix=DEFAULT_PREFIX, with_pbs=True, pbs_conf=PBS_CONF):
    """Every check, in order (a generator, so each line shows as soon as it is known)."""
    configs = yield from _config_checks(config_path, jobobit_config_path)
    if not configs:
        return
    predicting, obit = configs
    if predicting.reader is not None:
        yield from _reader_checks(predicting)
    if obit is not None and obit.writer is not None:
        yield from _writer_checks(obit)
    if not with_pbs:
        return
    pbs = _pbs_exec(pbs_conf)
    if pbs is None:
        yield Check("skip", "PBS", "no {} here: run doctor on the PBS server host to check the hooks".format(pbs_conf))
        return
    import_ms = yield from _server_python_checks(pbs, predicting)
    yield from _hook_checks(pbs, prefix, config_path, jobobit_config_path, predicting, obit)
    yield from _restart_checks(pbs, import_ms)


# --- configs -----------------------------------------------------------------------------------

def _config_checks(config_path, jobobit_config_path):
    try:
        predicting = read_hook_config(config_path)
        obit = predicting if jobobit_config_path is None else read_hook_config(jobobit_config_path)
    except ConfigError as err:
        yield Check("FAIL", "config", str(err), "correct the setting it names")
        return None
    yield Check("ok", "config", "{} parses: mode {}, algorithm {} (window {}), budget {:g} s".format(
        config_path, predicting.mode, predicting.algorithm.name, predicting.algorithm.window, predicting.budget_s))
    if predicting.reader is None:
        yield Check("FAIL", "config", "{} has no reader_dsn, so the predicting hook cannot predict".format(
            config_path), "add reader_dsn (a role in softwalltime_reader)")
    if obit.writer is None:
        yield Check("warn", "config", "no writer_dsn: finished jobs are not recorded by the jobobit hook",
                    "add writer_dsn, or keep the history current with: python -m predictor ingest --follow")
    for path in [config_path] + ([jobobit_config_path] if jobobit_config_path else []):
        exposed = readable_password(path)
        if exposed:
            yield Check("warn", "config", exposed, "chmod 600 {}".format(path))
    return predicting, obit


# --- the database, as the hooks reach it ---------------------------------------------------------

_PRIVILEGES = ("SELECT current_user, to_regclass('completed_jobs') IS NOT NULL,"
               " to_regclass('completed_jobs_user_recent') IS NOT NULL")
_TABLE_RIGHTS = ("SELECT has_table_privilege('completed_jobs', 'SELECT'),"
                 " has_table_privilege('completed_jobs', 'INSERT'),"
                 " has_table_privilege('completed_jobs', 'UPDATE'), has_table_privilege('completed_jobs', 'DELETE')")
_SCHEMA_VERSION = "SELECT coalesce(max(version), 0) FROM schema_version"
_RECORDER = "record_completed_jobs(completed_jobs[])"
_WRITER_RIGHTS = ("SELECT CASE WHEN to_regprocedure('{0}') IS NOT NULL THEN has_function_privilege('{0}', 'EXECUTE')"
                  " END, has_table_privilege('completed_jobs', 'UPDATE')".format(_RECORDER))
"""May the writer record jobs (NULL: the schema predates the recording function), and may it still update rows
directly (a grant beyond what recording needs)."""


def _connect(config, params, read_only, setting):
    store = HookHistory(params, timeout_s=config.budget_s, read_only=read_only)
    try:
        user, table, index = store.execute(_PRIVILEGES)[0]
    except DatabaseError as err:
        store.close()
        return None, Check("FAIL", setting, "cannot connect as the hooks would: {}".format(err),
                           "check the DSN, pg_hba.conf and that PostgreSQL listens there")
    if not (table and index):
        store.close()
        missing = "completed_jobs" if not table else "the index completed_jobs_user_recent"
        return None, Check("FAIL", setting, "connected as {}, but {} does not exist".format(user, missing),
                           "python -m predictor db init --dsn OWNER_DSN")
    return (store, user), None


def _role_checks(config, read_only, ask, verdict):
    """Connect as the reading (or writing) hook would, ``ask(store)`` the role's questions, then
    ``verdict(user, answers)``: the checks. A failed connection or question is one FAIL naming the grant."""
    setting, params, role = (("reader_dsn", config.reader, "softwalltime_reader") if read_only
                             else ("writer_dsn", config.writer, "softwalltime_writer"))
    opened, failure = _connect(config, params, read_only, setting)
    if failure is not None:
        return [failure]
    store, user = opened
    try:
        answers = ask(store)
    except DatabaseError as err:
        return [Check("FAIL", setting, "connected as {}, but: {}".format(user, err),
                      "GRANT {} TO {}".format(role, user))]
    finally:
        store.close()
    return verdict(user, answers)


def _reader_checks(config):
    return _role_checks(config, True, lambda store: _reader_answers(store, config),
                        lambda user, answers: [_reader_verdict(user, *answers[:3]), answers[3]])


def _reader_answers(store, config):
    """``(may select, may write, ms for one user's history, schema check)``."""
    select, insert, update, delete = store.execute(_TABLE_RIGHTS)[0]
    started = time.perf_counter()
    store.execute(RECENT_HISTORY, ("pbs-softwalltime doctor", config.algorithm.window))
    query_ms = (time.perf_counter() - started) * 1000
    return select, insert or update or delete, query_ms, _schema_version_check(store)


def _reader_verdict(user, select, writes, query_ms):
    if not select:
        return Check("FAIL", "reader_dsn", "{} cannot read completed_jobs".format(user),
                     "GRANT softwalltime_reader TO {}".format(user))
    if writes:
        return Check("FAIL", "reader_dsn", "{} can write to completed_jobs; the predicting hook needs reading only"
                     .format(user), "use a login role that is only in softwalltime_reader (docs/install.md)")
    return Check("ok", "reader_dsn", "connects as {}, reads completed_jobs ({:.1f} ms for one user's history), "
                 "cannot write to it".format(user, query_ms))


def _schema_version_check(store):
    shipped = max((version for version, _ in migrations(packaged_dir("sql") or "")), default=0)
    applied = store.execute(_SCHEMA_VERSION)[0][0]
    if applied < shipped:
        return Check("FAIL", "schema", "version {} in the database, this package ships {}".format(applied, shipped),
                     "python -m predictor db init --dsn OWNER_DSN")
    return Check("ok", "schema", "completed_jobs, its index and schema version {} are there".format(applied))


def _writer_checks(config):
    return _role_checks(config, False, lambda store: store.execute(_WRITER_RIGHTS)[0], _writer_verdict)


def _writer_verdict(user, rights):
    may_record, may_update = rights
    if may_record is None:
        return [Check("FAIL", "writer_dsn", "the database has no {}: its schema is older than this package"
                      .format(_RECORDER), "python -m predictor db init --dsn OWNER_DSN")]
    if not may_record:
        return [Check("FAIL", "writer_dsn", "{} cannot record completed jobs".format(user),
                      "GRANT softwalltime_writer TO {}".format(user))]
    if may_update:
        return [Check("warn", "writer_dsn", "{} may update completed_jobs directly (and so lock it); recording "
                      "needs only softwalltime_writer".format(user),
                      "REVOKE UPDATE ON completed_jobs FROM {}".format(user))]
    return [Check("ok", "writer_dsn", "connects as {}, may record completed jobs and nothing more".format(user))]


# --- PBS -------------------------------------------------------------------------------------------

def _pbs_exec(pbs_conf):
    try:
        with open(pbs_conf, encoding="utf-8") as conf:
            lines = conf.read().splitlines()
    except OSError:
        return None
    settings = dict(line.split("=", 1) for line in lines if "=" in line and not line.startswith("#"))
    return settings.get("PBS_EXEC", "/opt/pbs").strip()


_IMPORT_PROBE = """
import json, sys, time
started = time.perf_counter()
if {path!r} is not None:
    sys.path.append({path!r})
import predictor, predictor.server.runtime
with open({hook!r}, encoding="utf-8") as hook_file:
    compile(hook_file.read(), {hook!r}, "exec")
elapsed_ms = (time.perf_counter() - started) * 1000
def in_stdlib(path):
    return path.startswith(sys.base_prefix + "/") and "-packages/" not in path
extensions = sorted(name for name, module in list(sys.modules.items())
                    if str(getattr(module, "__file__", "") or "").endswith((".so", ".pyd"))
                    and not in_stdlib(str(module.__file__)))
print(json.dumps({{"version": predictor.__version__, "file": predictor.__file__, "python": sys.version.split()[0],
                  "import_ms": elapsed_ms, "extensions": extensions}}))
"""


def _server_python_checks(pbs_exec, config):
    python = os.path.join(pbs_exec, "bin", "pbs_python")
    script = _IMPORT_PROBE.format(path=config.package_path, hook=hook_file())
    try:
        done = subprocess.run([python, "-S", "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              universal_newlines=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as err:
        yield Check("FAIL", "server python", "cannot run {}: {}".format(python, err), "check PBS_EXEC in /etc/pbs.conf")
        return None
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        yield Check("FAIL", "server python", "PBS's Python cannot import the package with package_path {!r}: {}"
                    .format(config.package_path, last),
                    "pip install --target DIR this package with that Python, and set package_path to DIR")
        return None
    found = json.loads(done.stdout)
    yield from _import_verdict(found, config)
    return found["import_ms"]


def _import_verdict(found, config):
    if found["extensions"]:
        yield Check("FAIL", "server python", "the hook side loads C extensions from outside the standard library "
                    "({}); they fail after an interpreter restart".format(", ".join(found["extensions"])),
                    "install only this package and its pure-Python dependencies in package_path")
    elif found["version"] != __version__:
        yield Check("warn", "server python", "the hooks import version {} from {}, this command is {}".format(
            found["version"], found["file"], __version__), "install the same version in package_path")
    else:
        yield Check("ok", "server python", "Python {} (no site-packages) imports the package from {} in {:.0f} ms, "
                    "no C extension outside the standard library".format(
                        found["python"], config.package_path or "its own path", found["import_ms"]))


def _qmgr(pbs_exec, command):
    done = subprocess.run([os.path.join(pbs_exec, "bin", "qmgr"), "-c", command], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, universal_newlines=True, timeout=30)
    if done.returncode != 0:
        raise ConfigError((done.stderr.strip() or done.stdout.strip() or "qmgr failed").splitlines()[-1])
    return done.stdout


def _attributes(text):
    """``{name: value}`` of qmgr ``list`` output (continuation lines joined)."""
    found, last = {}, None
    for line in text.splitlines():
        if " = " in line:
            last, _, value = line.strip().partition(" = ")
            found[last] = value.strip()
        elif last is not None and line.startswith("\t"):
            found[last] += line.strip()
    return found


def _hook_checks(pbs_exec, prefix, config_path, jobobit_config_path, predicting, obit):
    configs = [(config_path, predicting), (jobobit_config_path or config_path, obit)]
    for (name, events), (path, config) in zip(hook_names(prefix, obit.writer is not None), configs):
        fix = "run the lines of: python -m predictor hooks qmgr --config {}".format(config_path)
        try:
            attributes = _attributes(_qmgr(pbs_exec, "list hook {}".format(name)))
            imported_config = _qmgr(pbs_exec, "export hook {} application/x-config default".format(name))
            imported_file = _qmgr(pbs_exec, "export hook {} application/x-python default".format(name))
        except (ConfigError, OSError, subprocess.TimeoutExpired) as err:
            yield Check("FAIL", "hook " + name, "not installed ({})".format(err), fix)
            continue
        yield _hook_verdict(name, events, attributes, imported_config, imported_file, path, config, fix)


def _hook_verdict(name, events, attributes, imported_config, imported_file, config_path, config, fix):
    wanted_alarm = alarm_s(config.budget_s)
    problems = []
    if attributes.get("enabled") != "true":
        problems.append("disabled")
    if set(attributes.get("event", "").split(",")) != set(events.split(",")):
        problems.append("events {} instead of {}".format(attributes.get("event"), events))
    if int(attributes.get("alarm", "30")) < wanted_alarm:
        problems.append("alarm {} s is below {} s (3 x budget_s)".format(attributes.get("alarm"), wanted_alarm))
    if _json_or_none(imported_config) != _json_or_none(_read(config_path)):
        problems.append("the imported config differs from {}".format(config_path))
    if imported_file.strip() != _read(hook_file()).strip():
        problems.append("the imported hook file is not this version's")
    if problems:
        return Check("FAIL", "hook " + name, "; ".join(problems), fix)
    return Check("ok", "hook " + name, "enabled for {}, alarm {} s, order {}, config and hook file up to date".format(
        events, attributes.get("alarm"), attributes.get("order")))


def _read(path):
    with open(path, encoding="utf-8") as text_file:
        return text_file.read()


def _json_or_none(text):
    try:
        return json.loads(text)
    except ValueError:
        return None


def _restart_checks(pbs_exec, import_ms):
    try:
        settings = _attributes(_qmgr(pbs_exec, "list server"))
    except (ConfigError, OSError, subprocess.TimeoutExpired) as err:
        yield Check("FAIL", "server", "qmgr cannot list the server: {}".format(err), "run doctor as root on the server")
        return
    values = {name: parse_duration(str(settings.get(name, default))) for name, default in _RESTART_DEFAULTS.items()}
    text = ", ".join("{} {}".format(name, value) for name, value in values.items())
    cost = "" if import_ms is None else " (each restart costs the next event about {:.0f} ms)".format(import_ms)
    if values["python_restart_max_hooks"] < 10 and values["python_restart_min_interval"] < 10:
        yield Check("warn", "server", "{}: the hook interpreter restarts almost every event{}; the hooks survive "
                    "it but pay the import each time".format(text, cost),
                    "qmgr -c \"unset server python_restart_max_hooks\"")
    else:
        yield Check("ok", "server", "{}: interpreter restarts are harmless to these hooks{}".format(text, cost))
