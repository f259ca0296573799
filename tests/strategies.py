"""Hypothesis strategies shared by the tests."""

from hypothesis import strategies as st

from predictor.jobs import CompletedJob

# PostgreSQL text cannot hold NUL; surrogates are not valid UTF-8.
_TEXT = st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00")

hostile_names = st.one_of(
    st.sampled_from(["alice", "bob", "o'brien", 'say "hi"', "a;b", "back\\slash", "x'); DROP TABLE completed_jobs;--",
                     "Ωmega", "用户", "tab\there", "%s", "%(user)s"]),
    st.text(_TEXT, min_size=1, max_size=12),
)
"""User names that must be stored and matched verbatim."""

walltimes = st.one_of(st.none(), st.integers(0, 5), st.integers(1, 30 * 86400))
runtimes = st.integers(0, 40 * 86400)


@st.composite
def completed_jobs(draw, users=hostile_names, job_id=None):
    """One ``CompletedJob`` with arbitrary but legal values."""
    start = draw(st.integers(0, 2 * 10 ** 9))
    runtime = draw(runtimes)
    return CompletedJob(
        job_id=job_id if job_id is not None else draw(st.text(_TEXT, min_size=1, max_size=10)),
        user=draw(users),
        runtime_s=runtime,
        end_time=start + draw(st.integers(0, runtime + 100)),
        walltime_s=draw(walltimes),
        soft_walltime_s=draw(st.one_of(st.none(), st.integers(1, 86400))),
        ncpus=draw(st.one_of(st.none(), st.integers(0, 100000))),
        start_time=start,
    )


@st.composite
def histories(draw, max_jobs=40, users=None):
    """Completed jobs with unique ids and few distinct users, to collide end times."""
    user_pool = draw(st.lists(hostile_names, min_size=1, max_size=4, unique=True)) if users is None else users
    count = draw(st.integers(0, max_jobs))
    end_times = st.integers(0, 50)  # narrow on purpose: many ties on end_time
    jobs = []
    for index in range(count):
        job = draw(completed_jobs(users=st.sampled_from(user_pool), job_id="{}.{}".format(
            draw(st.integers(0, 10 ** 6)), index)))
        jobs.append(job._replace(end_time=draw(end_times), project=draw(st.sampled_from(PROJECTS))))
    return user_pool, jobs


PROJECTS = (None, "p1", "p2")
"""The projects ``histories`` draws from: few, so that project keys find similar jobs; None: no project."""


@st.composite
def replay_jobs(draw, max_jobs=30, users=("alice", "bob", "carol")):
    """Replay ``Job``s with recorded times on a narrow clock, so submits, starts and ends often tie."""
    from replay.traces.trace import Job

    count = draw(st.integers(0, max_jobs))
    jobs = []
    for index in range(count):
        submit = draw(st.integers(0, 60))
        start = submit + draw(st.integers(0, 20))
        runtime = draw(st.integers(0, 30))
        jobs.append(Job(
            job_id=str(index + 1), user=draw(st.sampled_from(users)), submit_time=submit, runtime_s=runtime,
            walltime_s=draw(st.one_of(st.none(), st.integers(1, 40))), ncpus=draw(st.integers(1, 8)),
            start_time=start, end_time=start + runtime,
            queue=draw(st.sampled_from([None, "workq", "long"])),
            soft_walltime_s=draw(st.one_of(st.none(), st.integers(1, 40))),
            exit_status=draw(st.sampled_from([None, 0, 1, 271])),
            group=draw(st.sampled_from([None, "g1", "g2"])),
        ))
    return sorted(jobs, key=lambda job: job.submit_time)


@st.composite
def small_traces(draw, max_jobs=12, max_cores=12):
    """``(cores, jobs)``: a small machine and a few ``replay.traces.trace.Job``s that fit on it.

    Times are tiny on purpose, so jobs collide: same submission instants, ends at
    submissions, zero runtimes, jobs outliving their walltime or soft walltime,
    jobs holding their cores longer or shorter than their runtime.
    """
    from replay.traces.trace import Job

    cores = draw(st.integers(1, max_cores))
    jobs = []
    for index in range(draw(st.integers(1, max_jobs))):
        jobs.append(Job(
            job_id="{}.sim".format(index),
            user=draw(st.sampled_from(["alice", "bob"])),
            submit_time=draw(st.integers(0, 400)),
            runtime_s=draw(st.one_of(st.just(0), st.integers(0, 400))),
            walltime_s=draw(st.one_of(st.none(), st.integers(1, 300))),
            ncpus=draw(st.integers(1, cores)),
            soft_walltime_s=draw(st.one_of(st.none(), st.integers(1, 300))),
            occupancy_s=draw(st.one_of(st.none(), st.integers(0, 400))),  # end - start of a PBS log
        ))
    return cores, jobs


@st.composite
def classified_traces(draw, max_cores=4):
    """``(cores, jobs)`` for the small/large classifier with a 60 s week: alice's jobs mostly run 5 s,
    bob's 60 s, and now and then one runs 100 s, so jobs predicted small run past the divider."""
    from replay.traces.trace import Job

    cores = draw(st.integers(1, max_cores))
    jobs = []
    for index in range(draw(st.integers(10, 40))):
        user = draw(st.sampled_from(["alice", "bob"]))
        usual = 5 if user == "alice" else 60
        jobs.append(Job("{}.sim".format(index), user, draw(st.integers(0, 300)),
                        draw(st.sampled_from([usual, usual, 100])), draw(st.sampled_from([None, 200])),
                        draw(st.integers(1, cores)), occupancy_s=draw(st.one_of(st.none(), st.integers(0, 150)))))
    return cores, jobs


@st.composite
def plan_boundary_traces(draw, max_jobs=12, max_cores=6):
    """``(cores, jobs)`` where soft-walltime plans run out at event instants and reach walltimes.

    Every instant and duration is a multiple of 10 s and soft walltimes are 20,
    30 or 40 s, so a plan S, 2S ... often ends at the very instant of a
    submission, an end or a timer tick; half the jobs with a soft walltime get a
    walltime 10 or 20 s past a multiple of it, so extending their plan reaches
    the walltime while they run. ``small_traces`` reach either in well under 1 % of examples.
    """
    from replay.traces.trace import Job

    def tens(low, high):
        return st.integers(low // 10, high // 10).map(lambda count: count * 10)

    cores = draw(st.integers(2, max_cores))
    jobs = []
    for index in range(draw(st.integers(2, max_jobs))):
        soft = draw(st.one_of(st.none(), st.sampled_from([20, 30, 40])))
        if soft and draw(st.booleans()):
            walltime = soft * draw(st.integers(1, 4)) + draw(st.sampled_from([10, 20]))
        else:
            walltime = draw(st.one_of(st.none(), tens(10, 250)))
        jobs.append(Job(job_id="{}.sim".format(index), user=draw(st.sampled_from(["alice", "bob"])),
                        submit_time=draw(tens(0, 200)), runtime_s=draw(tens(0, 200)), walltime_s=walltime,
                        ncpus=draw(st.integers(1, cores)), soft_walltime_s=soft))
    return cores, jobs


def scheduler_settings(**fixed):
    """Any ``replay.simulation.engine.SchedulerSettings``, with short scheduler_iteration timers.

    ``fixed``: strategies to use for some fields instead.
    """
    from replay.simulation.engine import SchedulerSettings
    from replay.simulation.extension import EXTENSIONS
    from replay.simulation.policies import POLICIES

    fields = dict(
        strict_ordering=st.booleans(),
        backfill_depth=st.integers(0, 3),
        policy=st.sampled_from(sorted(POLICIES)),
        extension=st.sampled_from(sorted(EXTENSIONS)),
        selective=st.booleans(),
        cycle_interval_s=st.sampled_from([0, 7, 60, 600]),
        default_walltime_s=st.one_of(st.none(), st.integers(1, 300)),
        starvation_threshold_s=st.one_of(st.none(), st.integers(1, 120)),
        runjob_after_queued_s=st.one_of(st.none(), st.integers(0, 60)),
    )
    fields.update(fixed)
    return st.builds(SchedulerSettings, **fields)


simulated_predictors = st.sampled_from(["user", "v1", "v2", "v3", "recorded", "clairvoyant"])
"""Names in ``replay.shared.predictors.PREDICTORS`` the simulation runs."""


def soft_walltime_settings():
    """Settings under which top jobs are reserved on running jobs' soft-walltime plans: strict ordering,
    backfill_depth >= 1, not --selective; timers on the 10 s grid of ``plan_boundary_traces``."""
    return scheduler_settings(strict_ordering=st.just(True), backfill_depth=st.integers(1, 3),
                              selective=st.just(False), cycle_interval_s=st.sampled_from([0, 10, 30, 600]))


soft_walltime_predictors = st.sampled_from(["recorded", "v1", "v2", "v3"])
"""The predictors whose soft walltimes a job can outlive (user's is the walltime, clairvoyant's the runtime)."""


def simulation_cases(max_jobs=30):
    """``((cores, jobs), settings, predictor name)``: any small trace, or one at the plan boundaries."""
    return st.one_of(st.tuples(small_traces(max_jobs=max_jobs), scheduler_settings(), simulated_predictors),
                     st.tuples(plan_boundary_traces(), soft_walltime_settings(), soft_walltime_predictors))


_NUMERIC_KEYS = ["start", "end", "ctime", "qtime", "etime", "Exit_status", "Resource_List.ncpus", "session",
                 "run_count", "resources_used.ncpus"]
_DURATION_KEYS = ["Resource_List.walltime", "Resource_List.soft_walltime", "resources_used.walltime"]
_NAME_KEYS = ["user", "group", "project", "account", "jobname", "queue"]
_SPEC_KEYS = ["Resource_List.select", "Resource_List.nodes", "exec_host", "exec_vnode"]


def _pbs_quoted(value):
    """A value as pbs_server writes it: quoted only when it holds an ASCII space."""
    if " " not in value:
        return value
    return "'{}'".format(value) if '"' in value else '"{}"'.format(value)


_numbers = st.one_of(st.integers(0, 2 * 10 ** 9), st.integers(-10 ** 40, 10 ** 40)).map(str)
_durations = st.one_of(
    st.tuples(st.integers(0, 10 ** 7), st.integers(0, 99), st.integers(0, 99)).map(
        lambda hms: "{:02d}:{:02d}:{:02d}".format(*hms)),
    st.integers(-10 ** 6, 10 ** 12).map(str), st.text(_TEXT, max_size=10))
_field_values = {
    "number": st.one_of(_numbers, st.text(_TEXT, max_size=6)),
    "duration": _durations,
    "name": st.one_of(hostile_names, st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\n\r"),
                                             max_size=12)),
    "spec": st.from_regex(r"[0-9]{0,3}(:[a-z]{1,5}=[0-9a-z]{0,4}){0,3}(\+[0-9]:ncpus=[0-9])?", fullmatch=True),
}


@st.composite
def _accounting_field(draw):
    kind = draw(st.sampled_from(sorted(_field_values)))
    key = draw(st.sampled_from({"number": _NUMERIC_KEYS, "duration": _DURATION_KEYS, "name": _NAME_KEYS,
                                "spec": _SPEC_KEYS}[kind]))
    return key, _pbs_quoted(draw(_field_values[kind]))


@st.composite
def accounting_lines(draw):
    """One accounting-log line as bytes: a record with arbitrary values, sometimes damaged."""
    timestamp = draw(st.one_of(st.just("04/10/2026 12:00:05"), st.text(_TEXT, max_size=20)))
    record_type = draw(st.sampled_from(["E", "E", "E", "Q", "S", "D", "R", "EE", "", "é"]))
    job_id = draw(st.one_of(st.from_regex(r"[0-9]{1,5}(\[[0-9]{0,3}\])?(\.[a-zé]{1,5})?", fullmatch=True),
                            st.text(_TEXT, max_size=8)))
    fields = draw(st.lists(_accounting_field(), max_size=14))
    if draw(st.booleans()):  # most E records worth the name have these
        fields = [("user", "alice"), ("start", "1000"), ("end", draw(st.sampled_from(["900", "2000"])))] + fields
    line = "{};{};{};{}".format(timestamp, record_type, job_id, " ".join("{}={}".format(*kv) for kv in fields))
    data = line.encode("utf-8")
    damage = draw(st.sampled_from(["none", "none", "none", "truncate", "bad byte", "nul"]))
    if damage == "truncate":
        data = data[:draw(st.integers(0, len(data)))]
    elif damage != "none":
        at = draw(st.integers(0, len(data)))
        data = data[:at] + (b"\xff" if damage == "bad byte" else b"\x00") + data[at:]
    return data.replace(b"\n", b" ")


def accounting_logs(max_lines=40):
    """A list of accounting-log lines (bytes, without their newline)."""
    return st.lists(accounting_lines(), min_size=5, max_size=max_lines)


_JOBOBIT_NAMES = st.sampled_from(["alice", "bob", "o'brien", "Ωmega", "用户", "my project", 'say "hi"'])


@st.composite
def finished_pbs_jobs(draw):
    """A finished PBS job as ``(attributes, Resource_List, resources_used)``, jobobit's types (ints, durations).

    What an E record and the jobobit hook both show, each attribute or
    resource sometimes unset; ``obittime`` never before ``stime``.
    """
    stime = draw(st.integers(0, 2 * 10 ** 9))
    attributes = {"id": draw(st.from_regex(r"[0-9]{1,6}(\[[0-9]{1,3}\])?\.svr", fullmatch=True)),
                  "euser": draw(_JOBOBIT_NAMES), "stime": stime, "obittime": stime + draw(st.integers(0, 10 ** 6))}
    optional = {"egroup": _JOBOBIT_NAMES, "project": _JOBOBIT_NAMES, "Account_Name": _JOBOBIT_NAMES,
                "ctime": st.integers(0, stime), "qtime": st.integers(0, stime), "Exit_status": st.integers(-29, 300),
                "exec_host": st.sampled_from(["n1/0*4", "n1/0*2+n2/0*2", "n1/0"]),
                "exec_vnode": st.sampled_from(["(n1:ncpus=4)", "(n1:ncpus=2)+(n2:ncpus=2)", "(n1:mem=1gb)"])}
    requested = {"ncpus": st.integers(0, 4096), "select": st.sampled_from(["1:ncpus=4", "2:ncpus=8+1:ncpus=2"]),
                 "walltime": st.integers(0, 30 * 86400), "soft_walltime": st.integers(1, 86400)}
    used = {"walltime": st.integers(0, 10 ** 6), "ncpus": st.integers(0, 4096)}
    chosen = [{name: draw(values) for name, values in sorted(choices.items()) if draw(st.booleans())}
              for choices in (optional, requested, used)]
    attributes.update(chosen[0])
    return attributes, chosen[1], chosen[2]


_swf_numbers = st.one_of(st.integers(-1, 10 ** 6), st.integers(-10 ** 11, 10 ** 11)).map(str)
_swf_odd_fields = st.one_of(st.integers(-10 ** 20, 10 ** 20).map(str), st.sampled_from([
    "007", "-0", "1.5", "-", "--1", "1-2", ".", "1e3", "+5", "x", "{0,1}", "NULL", "batch", "nodes=1:ppn=4",
    "0000000000000000001", "100000000001", "-100000000000", "٣"]))
_swf_blanks = st.sampled_from([" ", "  ", "\t", " \t", "\r", "\x0b", "\x0c", "\x1c", "\xa0"])


@st.composite
def _swf_job_line(draw):
    odd = draw(st.booleans())  # else every field a plain number: the lines the fast path takes
    fields = draw(st.lists(st.one_of(_swf_numbers, _swf_odd_fields) if odd else _swf_numbers,
                           min_size=18, max_size=18))
    fields += draw(st.sampled_from([[], [], [], ["q1"], ["{0,1}", "batch"], ["7"]]) if odd else st.just([]))
    if odd and draw(st.integers(0, 4)) == 0:
        fields = fields[:draw(st.integers(0, len(fields)))]
    spaces = st.sampled_from([" ", " ", "   ", "\t"] + ([" \r", "\x0b"] if odd else []))
    separators = draw(st.lists(spaces, min_size=len(fields), max_size=len(fields)))
    line = "".join(separator + field for separator, field in zip(separators, fields))
    return line if draw(st.booleans()) else line.lstrip()


_swf_headers = st.one_of(
    st.sampled_from(["; Version: 2.2", ";", "; Note: x", "; Queue: 1 batch", "; MaxProcs: x", "  ; MaxNodes: 2"]),
    st.builds("; {}: {}".format, st.sampled_from(["MaxProcs", "MaxNodes", "UnixStartTime"]),
              st.one_of(st.sampled_from([1, 2, 4, 8, 16]), st.integers(-2, 200))),
)


@st.composite
def swf_texts(draw, max_lines=30):
    """SWF file contents (bytes) mixing plain job lines with every oddity the reader must name alike."""
    lines = draw(st.lists(st.one_of(_swf_job_line(), _swf_job_line(), _swf_job_line(), _swf_headers, _swf_blanks,
                                    st.just("")),
                          max_size=max_lines))
    text = "".join(line + draw(st.sampled_from(["\n", "\n", "\n", "\r\n", "\x0c\n"])) for line in lines)
    data = text.encode("utf-8")
    if data and draw(st.booleans()):
        data = data[:-1]  # no newline after the last line
    if data and draw(st.integers(0, 9)) == 0:
        at = draw(st.integers(0, len(data)))
        data = data[:at] + draw(st.sampled_from([b"\xff", b"\x00", b"\xc3"])) + data[at:]
    return data


@st.composite
def dated_replay_jobs(draw, max_jobs=25, users=("alice", "bob", "carol")):
    """Replay ``Job``s on a coarse clock (a tick of 1 s to 8 h), so times tie and tang's day windows bite.

    Job ids are numbers as text in any order ("10" sorts before "9"), sometimes
    repeated; walltimes may be missing or 0, runtimes 0 or past the walltime;
    a few projects (PBS's, or an SWF group standing in for one, or none).
    """
    from replay.traces.trace import Job

    tick = draw(st.sampled_from([1, 600, 3600, 28800]))
    count = draw(st.integers(0, max_jobs))
    if draw(st.booleans()):
        job_ids = draw(st.lists(st.integers(1, 5), min_size=count, max_size=count))
    else:
        job_ids = draw(st.lists(st.integers(1, 30), min_size=count, max_size=count, unique=True))
    jobs = []
    for job_id in job_ids:
        submit = draw(st.integers(0, 20)) * tick
        start = submit + draw(st.integers(0, 5)) * tick
        walltime = draw(st.one_of(st.none(), st.just(0), st.integers(1, 12).map(lambda ticks: ticks * tick)))
        runtime = draw(st.integers(0, 10)) * tick + draw(st.sampled_from([0, 0, 0, 1, 59]))
        project, group = draw(st.sampled_from([(None, None), ("p1", None), ("p2", "g1"), (None, "g1"), (None, "g2")]))
        jobs.append(Job(job_id=str(job_id), user=draw(st.sampled_from(users)), submit_time=submit, runtime_s=runtime,
                        walltime_s=walltime, ncpus=1, start_time=start, end_time=start + runtime, project=project,
                        group=group))
    return sorted(jobs, key=lambda job: job.submit_time)


@st.composite
def algorithm_parameters(draw):
    """``(name, parameters)`` for ``make_algorithm``: any registry algorithm, tiny windows included (tang reads
    every job in its time window: no row window)."""
    from predictor.algorithms import ALGORITHMS, TANG_KEYS

    name = draw(st.sampled_from(sorted(ALGORITHMS)))
    parameters = {} if name == "tang" else {"window": draw(st.one_of(st.none(), st.integers(1, 20)))}
    if name != "v1":
        parameters["reserve_s"] = draw(st.one_of(st.none(), st.sampled_from([0, 1, 900, 7200])))
    if name == "tang":
        parameters.update(percentile=draw(st.one_of(st.none(), st.integers(1, 100))),
                          window_days=draw(st.one_of(st.none(), st.integers(1, 5))),
                          min_history=draw(st.integers(0, 6)), key=draw(st.sampled_from(TANG_KEYS)),
                          min_ratio_pct=draw(st.one_of(st.none(), st.sampled_from([0, 33, 50, 100]))))
    return name, {parameter: value for parameter, value in parameters.items() if value is not None}
