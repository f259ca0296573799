"""The hooks on a real OpenPBS server, installed as docs/install.md says, with the real PostgreSQL.

The module installs once, by running the guide's command blocks as written
(only its five settings are given test values): pip --target with the
system Python, database, configs, the qmgr lines that ``hooks qmgr`` prints,
and ``doctor``. Then, as the unprivileged job user: observe mode, qsub,
runjob, qalter, jobobit against the accounting log, arrays, deleted jobs,
hundreds of submissions across forced interpreter restarts, a package that
cannot be imported, and a database stopped and hung. Skips outside CI when no
PBS server is here (see tests/realpbs.py); fails in CI.
"""

import json
import os
import subprocess
import sys
import time
import uuid

import installdoc
import psycopg2
import pytest
from pgadmin import admin_execute, dsn_for, run_sql
from pgcluster import PrivateCluster
from realpbs import JOB_USER, Pbs, require_pbs

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SYSTEM_PATH = "/usr/sbin:/usr/bin:/sbin:/bin"
"""The guide's ``python3`` is the system Python, the one pbs_server embeds on Debian."""
HOOK, OBIT_HOOK = "softwalltime", "softwalltime_jobobit"
DOC_ROLES = ("pbs_hook_reader", "pbs_hook_writer")
SUBMISSIONS = 300


# --- the deployment, done by the guide --------------------------------------------------------

@pytest.fixture(scope="module")
def pbs():
    return Pbs(require_pbs())


@pytest.fixture(scope="module")
def deployment(pbs, tmp_path_factory):
    """The guide's sections 2-6, run as written; yields the settings used and doctor's output."""
    root = tmp_path_factory.mktemp("realpbs")
    settings = {"SRC": REPO, "TARGET": str(root / "python"), "CONF": str(root / "conf"),
                "DB_HOST": "/var/run/postgresql", "DB": "swt_e2e_{}_{}".format(os.getpid(), uuid.uuid4().hex[:6])}
    try:
        outside = installdoc.script(["debian", "database", "config"], **settings)
        done = subprocess.run(["bash", "-c", outside], env={"PATH": SYSTEM_PATH, "HOME": "/root"},
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True, timeout=900)
        assert done.returncode == 0, done.stdout[-3000:]
        pbs.shell(installdoc.script(["hooks"], **settings))
        doctor = pbs.shell(installdoc.script(["doctor"], **settings), check=False)
        pbs.qmgr("set server log_events = 2047")
        with pbs.job_history():
            yield settings, doctor
    finally:
        _undeploy(pbs, settings)


def _undeploy(pbs, settings):
    pbs.shell("qselect -u {} | xargs -r qdel -W force".format(JOB_USER), check=False)
    for hook in (HOOK, OBIT_HOOK):
        pbs.qmgr("delete hook " + hook, check=False)
    for attribute in ("python_restart_max_hooks", "python_restart_min_interval"):
        pbs.qmgr("unset server " + attribute, check=False)
    pbs.qmgr("set server log_events = 511", check=False)
    admin_execute("DROP DATABASE IF EXISTS {} WITH (FORCE)".format(settings["DB"]),
                  *("DROP ROLE IF EXISTS {}".format(role) for role in DOC_ROLES))


def config_path(deployment, name="hooks.json"):
    return os.path.join(deployment[0]["CONF"], name)


def import_config(pbs, hook, path):
    pbs.qmgr("import hook {} application/x-config default {}".format(hook, path))


def read_config(deployment):
    with open(config_path(deployment), encoding="utf-8") as config_file:
        return json.load(config_file)


def rewrite_config(pbs, deployment, **changes):
    """The predicting hook's config with ``changes``, imported again as the guide says."""
    path = config_path(deployment)
    settings = read_config(deployment)
    settings.update(changes)
    with open(path, "w", encoding="utf-8") as config_file:
        json.dump(settings, config_file)
    import_config(pbs, HOOK, path)


def owner_dsn(deployment):
    return dsn_for(deployment[0]["DB"])


def sql(deployment, statement, params=None):
    return run_sql(owner_dsn(deployment), statement, params)


def set_history(deployment, *jobs):
    """completed_jobs holds exactly ``jobs``: (runtime_s, walltime_s) of the job user, newest last."""
    sql(deployment, "TRUNCATE completed_jobs")
    for index, (runtime, walltime) in enumerate(jobs):
        sql(deployment, "INSERT INTO completed_jobs (job_id, user_name, runtime_s, walltime_s, end_time) "
                        "VALUES (%s, %s, %s, %s, %s)", ("h{}.history".format(index), JOB_USER, runtime, walltime,
                                                        1000 + index))


def row(deployment, job_id):
    found = sql(deployment, "SELECT runtime_s, end_time, start_time, walltime_s, exit_status FROM completed_jobs "
                            "WHERE job_id = %s", (job_id,))
    return found[0] if found else None


def wait_row(deployment, job_id, timeout=30):
    deadline = time.monotonic() + timeout
    while row(deployment, job_id) is None:
        assert time.monotonic() < deadline, "jobobit did not record {}".format(job_id)
        time.sleep(0.3)
    return row(deployment, job_id)


def soft(pbs, job_id):
    return pbs.resources(job_id).get("soft_walltime")


@pytest.fixture(scope="module")
def enforcing(pbs, deployment):
    """The guide's section 7: observe mode switched to enforce by importing the config again."""
    rewrite_config(pbs, deployment, mode="enforce")
    return deployment


@pytest.fixture
def restarts_forced(pbs):
    """pbs_server restarts its hook interpreter before nearly every event (at most once a second)."""
    pbs.qmgr("set server python_restart_max_hooks = 1")
    pbs.qmgr("set server python_restart_min_interval = 1")
    yield
    pbs.qmgr("unset server python_restart_max_hooks")
    pbs.qmgr("unset server python_restart_min_interval")


# --- install and observe ------------------------------------------------------------------------

def test_documented_install_passes_doctor(deployment):
    """After the guide's commands, every doctor check is ok (warnings allowed) and it exits 0."""
    doctor = deployment[1]
    lines = doctor.stdout.splitlines()
    assert doctor.returncode == 0 and not [line for line in lines if line.startswith("FAIL")], doctor.stdout
    assert {line.split(":")[0].split(None, 1)[1] for line in lines} >= {
        "config", "reader_dsn", "schema", "writer_dsn", "server python", "hook softwalltime",
        "hook softwalltime_jobobit", "server"}


def test_observe_mode_sets_nothing_and_logs_the_prediction(pbs, deployment):
    """The guide starts in observe mode: no soft_walltime on the job, the would-be value in the log."""
    set_history(deployment, (600, 3600))
    pbs.mark()
    _, job_id = pbs.qsub("-h -l walltime=02:00:00 -- /bin/true")
    assert soft(pbs, job_id) is None
    assert any("observe mode, nothing set: would set soft_walltime none -> 00:35:00" in line
               for line in pbs.hook_lines()), pbs.hook_lines()


# --- predictions ----------------------------------------------------------------------------------

def test_qsub_sets_the_prediction(pbs, enforcing):
    """v3 from one past job (600 s of 3600 s): 7200 s / 6 + 900 s = 00:35:00."""
    set_history(enforcing, (600, 3600))
    _, job_id = pbs.qsub("-h -l walltime=02:00:00 -- /bin/true")
    assert soft(pbs, job_id) == "00:35:00"


@pytest.mark.parametrize("algorithm, parameters, walltime, expected", [
    # v3 from one past job (600 s of 3600 s) for 48 h: 28800 s, doubled above 24 h, + 900 s.
    ("v3-deployed", {}, "48:00:00", "16:15:00"),
    # Tang et al.: ratios 0.25 and 0.5 an hour ago; the 85th percentile (nearest rank) is 0.5 of 1 h.
    ("tang", {"min_history": 2}, "01:00:00", "00:30:00"),
])
def test_qsub_sets_each_predictors_prediction(pbs, enforcing, algorithm, parameters, walltime, expected):
    """The other predictors, chosen in the hook config, predict in the real server's hooks."""
    original = read_config(enforcing)
    sql(enforcing, "TRUNCATE completed_jobs")
    now = int(time.time())
    for index, runtime in enumerate((900, 1800)):
        # in PBS's default project, as the job submitted below: Tang et al.'s triple key compares projects too
        sql(enforcing, "INSERT INTO completed_jobs (job_id, user_name, runtime_s, walltime_s, end_time, project) "
                       "VALUES (%s, %s, %s, %s, %s, %s)", ("t{}.history".format(index), JOB_USER, runtime, 3600,
                                                           now - 3600 + index, "_pbs_project_default"))
    if algorithm == "v3-deployed":
        set_history(enforcing, (600, 3600))
    try:
        rewrite_config(pbs, enforcing, algorithm=algorithm, **parameters)
        _, job_id = pbs.qsub("-h -l walltime={} -- /bin/true".format(walltime))
        assert soft(pbs, job_id) == expected
    finally:
        with open(config_path(enforcing), "w", encoding="utf-8") as config_file:
            json.dump(original, config_file)
        import_config(pbs, HOOK, config_path(enforcing))


def test_job_without_walltime_gets_none_at_qsub(pbs, enforcing):
    """No walltime requested and no default: nothing to predict from."""
    _, job_id = pbs.qsub("-h -- /bin/true")
    assert soft(pbs, job_id) is None


def test_runjob_predicts_again_from_the_grown_history(pbs, enforcing):
    """Held at qsub with 00:35:00; a longer job ends meanwhile; at qrls runjob sets 01:15:00 (half of 2 h + 900 s)."""
    set_history(enforcing, (600, 3600))
    _, job_id = pbs.qsub("-h -l walltime=02:00:00 -- /bin/sleep 1")
    assert soft(pbs, job_id) == "00:35:00"
    set_history(enforcing, (600, 3600), (1800, 3600))
    pbs.as_user("qrls " + job_id)
    pbs.wait_state(job_id, ("R", "E", "F"))
    assert soft(pbs, job_id) == "01:15:00"


def test_qalter_below_the_soft_walltime_is_accepted(pbs, enforcing):
    """The user lowers the walltime below the soft walltime: accepted, soft_walltime lowered with it."""
    set_history(enforcing, (600, 3600))
    _, job_id = pbs.qsub("-h -l walltime=02:00:00 -- /bin/true")
    assert soft(pbs, job_id) == "00:35:00"
    pbs.as_user("qalter -l walltime=00:10:00 " + job_id)
    assert (pbs.resources(job_id)["walltime"], soft(pbs, job_id)) == ("00:10:00", "00:10:00")


# --- jobobit against the accounting log -------------------------------------------------------------

def assert_agrees_with_e_record(pbs, deployment, job_id):
    """The jobobit row has the E record's runtime and start; its end is the obit time, at most 1 s earlier."""
    record = pbs.wait_accounting("E", job_id)
    runtime, end, start, walltime, exit_status = wait_row(deployment, job_id)
    used = record.get("resources_used.walltime")
    expected_runtime = int(record["end"]) - int(record["start"]) if used is None else sum(
        int(part) * scale for part, scale in zip(used.split(":"), (3600, 60, 1)))
    assert (runtime, start) == (expected_runtime if used is not None else runtime, int(record["start"]))
    assert int(record["end"]) - 1 <= end <= int(record["end"])
    if used is None:  # no usage reported: each writer takes end - start, with its own end
        assert int(record["end"]) - int(record["start"]) - 1 <= runtime <= expected_runtime
    return record


def test_jobobit_records_the_accounting_runtime(pbs, enforcing):
    """A job that ran: the jobobit row matches the E record (runtime, start, exit status)."""
    pbs.mark()
    _, job_id = pbs.qsub("-l walltime=60 -- /bin/sleep 3")
    pbs.wait_state(job_id, ("F",))
    record = assert_agrees_with_e_record(pbs, enforcing, job_id)
    assert row(enforcing, job_id)[4] == int(record["Exit_status"]) == 0


def test_jobobit_and_ingester_agree_on_every_ending(pbs, enforcing, tmp_path):
    """Failed, killed at walltime, deleted while running: jobobit agrees with the E record; the ingester then
    writes the E record's values over the hook's, so with both running the table matches the log."""
    pbs.mark()
    jobs = [pbs.qsub("-l walltime=60 -- /bin/sh -c 'sleep 2; exit 3'")[1],
            pbs.qsub("-l walltime=00:00:03 -- /bin/sleep 60")[1],
            pbs.qsub("-l walltime=60 -- /bin/sleep 60")[1]]
    pbs.wait_state(jobs[2], ("R",))
    time.sleep(2)
    pbs.run("qdel", jobs[2])
    for job_id in jobs:
        pbs.wait_state(job_id, ("F",), timeout=180)
        assert_agrees_with_e_record(pbs, enforcing, job_id)
    log = tmp_path / "accounting"
    log.write_text("\n".join(line for line in pbs._since_mark("server_priv/accounting")) + "\n")
    ingest = subprocess.run([sys.executable, "-m", "predictor", "ingest", "--dsn", owner_dsn(enforcing), str(log)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, timeout=120)
    assert ingest.returncode in (0, 1), ingest.stderr
    for job_id in jobs:
        record = pbs.accounting("E", job_id)[-1]
        assert row(enforcing, job_id)[1:3] == (int(record["end"]), int(record["start"]))
    exits = [row(enforcing, job_id)[4] for job_id in jobs]
    assert exits[0] == 3 and exits[1] == -29 and exits[2] >= 256


def test_report_measures_the_soft_walltimes_the_hooks_set(pbs, enforcing):
    """Jobs predicted at qsub and recorded by jobobit: ``predictor report`` (reader role) measures them."""
    set_history(enforcing, (600, 3600))
    job_ids = [pbs.qsub("-l walltime=01:00:00 -- /bin/sleep 2")[1] for _ in range(2)]
    for job_id in job_ids:
        pbs.wait_state(job_id, ("F",))
        wait_row(enforcing, job_id)
    sql(enforcing, "DELETE FROM completed_jobs WHERE job_id LIKE 'h%%.history'")
    recorded = sql(enforcing, "SELECT soft_walltime_s, runtime_s FROM completed_jobs WHERE job_id = ANY(%s)",
                   (job_ids,))
    assert len(recorded) == 2 and all(soft_s == 1500 for soft_s, _ in recorded), recorded  # v3: 600/3600 x 1 h + 900 s
    reader_dsn = read_config(enforcing)["reader_dsn"]
    # Whole UTC days, yesterday and today: by default the period ends at this second, in which a job may end.
    yesterday, today = (time.strftime("%Y-%m-%d", time.gmtime(time.time() - back)) for back in (86400, 0))
    done = subprocess.run([sys.executable, "-m", "predictor", "report", "--dsn", reader_dsn, "--user", JOB_USER,
                           "--since", yesterday, "--until", today, "--json", "-"], cwd=REPO,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, timeout=120)
    assert done.returncode == 0, done.stderr
    tables = json.loads(done.stdout)["tables"]
    everything = next(row for row in tables[0]["rows"] if row["runtime_class"] == "all")
    assert (everything["jobs"], everything["measured"], everything["without_soft_walltime"]) == (2, 2, 0)
    soft_rows = [row for row in tables[1]["rows"]
                 if row["runtime_class"] == "all" and row["estimate"] == "soft walltime"]
    # Two `sleep 2` jobs need not run the same whole seconds (2 s and 3 s): the error is their mean.
    mean_abs_error_s = sum(1500 - runtime_s for _, runtime_s in recorded) / 2
    assert [(row["overestimated_share"], row["mean_abs_error_s"]) for row in soft_rows] == [(1.0, mean_abs_error_s)]


def test_array_subjobs_are_recorded_not_the_parent(pbs, enforcing):
    """qsub -J 1-3: three subjob rows, none for 123[]."""
    _, parent = pbs.qsub("-J 1-3 -l walltime=60 -- /bin/sleep 1")
    pbs.wait_state(parent, ("F",), timeout=180)
    stem = parent.replace("[]", "[{}]")
    for index in (1, 2, 3):
        wait_row(enforcing, stem.format(index))
    assert row(enforcing, parent) is None


@pytest.mark.parametrize("how", ["qdel", "qdel -W force"])
def test_deleted_queued_job_is_not_recorded(pbs, enforcing, how):
    """A job deleted before it ran leaves no row (even with the start=0 E record of a forced delete)."""
    pbs.mark()
    _, job_id = pbs.qsub("-h -l walltime=60 -- /bin/true")
    pbs.as_user("{} {}".format(how, job_id))
    pbs.wait_state(job_id, ("F",))
    time.sleep(1)
    assert row(enforcing, job_id) is None


# --- interpreter restarts -----------------------------------------------------------------------------

def test_hundreds_of_submissions_across_interpreter_restarts(pbs, enforcing, restarts_forced, record_property):
    """300 qsubs while pbs_server restarts its hook interpreter again and again: every job gets the prediction."""
    set_history(enforcing, (600, 3600))
    pbs.mark()
    started = time.monotonic()
    done = pbs.as_user("for i in $(seq {}); do qsub -h -o /dev/null -e /dev/null -l walltime=02:00:00 -- /bin/true; "
                       "sleep 0.05; done".format(SUBMISSIONS), timeout=1800)
    elapsed = time.monotonic() - started
    job_ids = done.stdout.split()
    assert len(job_ids) == SUBMISSIONS
    softs = [job["Resource_List"].get("soft_walltime") for job in pbs.jobs(job_ids).values()]
    restarts = pbs.restarts()
    record_property("restarts", restarts)
    record_property("qsub_mean_ms", round(elapsed / SUBMISSIONS * 1000 - 50, 1))
    pbs.run("qdel", *job_ids)
    assert restarts >= 3, "the interpreter restarted only {} times".format(restarts)
    assert softs.count("00:35:00") == SUBMISSIONS, {value: softs.count(value) for value in set(softs)}


def test_unimportable_package_accepts_jobs_and_qalter(pbs, enforcing, restarts_forced):
    """package_path wrong after a restart: qsub accepted with one line; a qalter below soft_walltime still passes."""
    set_history(enforcing, (600, 3600))
    _, earlier = pbs.qsub("-h -l walltime=02:00:00 -- /bin/true")
    assert soft(pbs, earlier) == "00:35:00"
    good = read_config(enforcing)["package_path"]
    try:
        rewrite_config(pbs, enforcing, package_path="/nonexistent/pbs-softwalltime")
        time.sleep(1.2)  # let the restart interval pass: the next event runs in a new interpreter
        pbs.mark()
        code, job_id = pbs.qsub("-h -l walltime=02:00:00 -- /bin/true")
        assert code == 0 and soft(pbs, job_id) is None
        time.sleep(1.2)
        altered = pbs.as_user("qalter -l walltime=00:10:00 " + earlier, check=False)
        assert altered.returncode == 0, altered.stderr
        assert soft(pbs, earlier) == "00:10:00"
        assert any("cannot load the predictor package" in line for line in pbs.hook_lines()), pbs.hook_lines()
    finally:
        rewrite_config(pbs, enforcing, package_path=good)


# --- the database stopped and hung ------------------------------------------------------------------

@pytest.fixture
def private_database(pbs, enforcing):
    """A throwaway PostgreSQL cluster reached over a socket in its own directory, and the config pointed at it."""
    cluster = PrivateCluster()
    original = read_config(enforcing)
    try:
        cluster.start()
        cluster.setup_schema()
        admin = psycopg2.connect(cluster.dsn())
        with admin, admin.cursor() as cursor:
            cursor.execute("INSERT INTO completed_jobs (job_id, user_name, runtime_s, walltime_s, end_time) "
                           "VALUES ('h.private', %s, 600, 3600, 1)", (JOB_USER,))
        admin.close()
        socket_dsn = "host={} port={} dbname=postgres user=swt_reader".format(cluster.root, cluster.port)
        rewrite_config(pbs, enforcing, reader_dsn=socket_dsn, budget_s=1, pause_after_timeout_s=30)
        yield cluster
    finally:
        cluster.destroy()
        rewrite_config(pbs, enforcing, reader_dsn=original["reader_dsn"], budget_s=original["budget_s"],
                       pause_after_timeout_s=original.get("pause_after_timeout_s", 30))


def timed_qsub(pbs):
    started = time.monotonic()
    code, job_id = pbs.qsub("-h -l walltime=02:00:00 -- /bin/true", check=False)
    return code, job_id, time.monotonic() - started


def test_database_stopped_every_qsub_accepted(pbs, private_database, record_property):
    """The database stops: each qsub is accepted without a soft walltime, with one line naming the database."""
    code, job_id, _ = timed_qsub(pbs)
    assert code == 0 and soft(pbs, job_id) == "00:35:00"
    private_database.stop()
    pbs.mark()
    results = [timed_qsub(pbs) for _ in range(3)]
    record_property("worst_qsub_s", round(max(result[2] for result in results), 3))
    assert all(code == 0 and soft(pbs, job_id) is None for code, job_id, _ in results)
    lines = pbs.hook_lines()
    assert len(lines) == 3 and all("job accepted, soft_walltime unchanged (none): database:" in line
                                   for line in lines), lines


def test_database_hung_qsub_accepted_then_paused(pbs, private_database, record_property):
    """The database freezes: the first qsub waits out the budget and is accepted; the next ones skip the database."""
    code, job_id, _ = timed_qsub(pbs)
    assert code == 0 and soft(pbs, job_id) == "00:35:00"
    private_database.freeze()
    pbs.mark()
    try:
        results = [timed_qsub(pbs) for _ in range(3)]
    finally:
        private_database.thaw()
    record_property("qsub_s", [round(result[2], 3) for result in results])
    assert all(code == 0 and soft(pbs, job_id) is None for code, job_id, _ in results)
    lines = pbs.hook_lines()
    assert len(lines) == 3 and "within the time budget" in lines[0], lines
    assert all("database skipped for" in line for line in lines[1:]), lines
