"""predictor.accounting.records: the accounting-log parser."""

import pytest
from fuzzlines import OPENPBS_RECORDS
from hypothesis import example, given
from hypothesis import strategies as st

from predictor.accounting.records import array_subjob, completed_job, is_array_parent, parse_fields, parse_record
from predictor.errors import AccountingError

# Written by an OpenPBS 23.06 server (../shared/pbs-facts.md).
REAL_E = next(record for record in OPENPBS_RECORDS if ";E;1.pbshost;" in record)


def end_record(job_id="42.svr", **fields):
    """An E line with sensible defaults, fields overridable (None drops one)."""
    values = {"user": "alice", "queue": "workq", "ctime": "100", "start": "200", "end": "3800",
              "Exit_status": "0", "Resource_List.walltime": "02:00:00", "Resource_List.ncpus": "4"}
    values.update(fields)
    body = " ".join("{}={}".format(key, value) for key, value in values.items() if value is not None)
    return "04/10/2026 12:00:05;E;{};{}".format(job_id, body)


def job_of(line):
    record = parse_record(line)
    return completed_job(record, parse_fields(record.body))


def test_real_openpbs_record():
    """The E record of a real OpenPBS server becomes the expected job."""
    job = job_of(REAL_E)
    assert job.job_id == "1.pbshost" and job.user == "pbsuser" and job.queue == "workq"
    assert (job.walltime_s, job.soft_walltime_s, job.runtime_s, job.ncpus) == (600, 300, 5, 1)
    assert (job.submit_time, job.start_time, job.end_time, job.exit_status) == (1795343716, 1795343716, 1795343723, 0)
    assert job.project == "_pbs_project_default" and job.group == "pbsuser"


def test_record_header_split():
    """The header gives timestamp, record type and job id; the body stays raw."""
    record = parse_record("04/10/2026 12:00:05;Q;7.svr;queue=workq\n")
    assert record == ("04/10/2026 12:00:05", "Q", "7.svr", "queue=workq")


def test_double_and_single_quoted_values():
    """Spaces need double quotes; a double quote inside needs single quotes."""
    fields = parse_fields('jobname="my job" account=\'say "hi"\' queue=workq')
    assert fields == {"jobname": "my job", "account": 'say "hi"', "queue": "workq"}


def test_unquoted_value_with_quote_inside():
    """A value without spaces is written raw, even with a quote inside."""
    assert parse_fields("jobname=it's user=o'brien") == {"jobname": "it's", "user": "o'brien"}


@pytest.mark.parametrize("raw", ['"x', "'x", '"a"b', "'it's'x"])
def test_unquoted_value_starting_with_quote(raw):
    """A value without spaces is written raw even when it starts with a quote."""
    assert parse_fields("jobname={} queue=workq".format(raw)) == {"jobname": raw, "queue": "workq"}


def test_value_with_equals_sign():
    """Only the first '=' separates key from value."""
    assert parse_fields("Resource_List.select=1:ncpus=4") == {"Resource_List.select": "1:ncpus=4"}


@pytest.mark.parametrize("spec, ncpus", [
    ("2:ncpus=4:mem=1gb+1:ncpus=8", 16), ("ncpus=3", 3), ("1:mem=1gb", 1), ("3:mem=1gb", 3),
])
def test_ncpus_from_select(spec, ncpus):
    """Without Resource_List.ncpus, the select spec is summed (chunks default to 1 cpu)."""
    assert job_of(end_record(**{"Resource_List.ncpus": None, "Resource_List.select": spec})).ncpus == ncpus


@pytest.mark.parametrize("spec, ncpus", [("4:ppn=8", 32), ("n1:ppn=2+n2:ppn=4", 6), ("2", 2)])
def test_ncpus_from_torque_nodes(spec, ncpus):
    """Torque's nodes=N:ppn=P is read too."""
    assert job_of(end_record(**{"Resource_List.ncpus": None, "Resource_List.nodes": spec})).ncpus == ncpus


def test_subjob_is_a_job():
    """A job-array subjob 123[4].svr is a completed job under its own id."""
    assert job_of(end_record("123[4].svr")).job_id == "123[4].svr"


def test_array_parent_is_not_a_run():
    """The parent's E record (123[].svr) summarizes its subjobs: not a run."""
    assert job_of(end_record("123[].svr")) is None


def test_end_without_start_is_not_a_run():
    """An E record without start: the job never ran."""
    assert job_of(end_record(start=None)) is None


# Written by an OpenPBS 23.06 server for `qdel -W force` of a job that had not started.
FORCE_DELETED_BEFORE_START = (
    "11/23/2026 11:38:20;E;11.pbshost;user=pbsuser group=pbsuser project=_pbs_project_default jobname=STDIN "
    "queue=workq ctime=1795433900 qtime=1795433900 etime=1795433900 start=0 exec_host=pbshost/0 "
    "exec_vnode=(pbshost:ncpus=1) Resource_List.ncpus=1 Resource_List.nodect=1 Resource_List.place=pack "
    "Resource_List.select=1:ncpus=1 Resource_List.walltime=00:01:00 session=0 end=1795433900 Exit_status=265 "
    "run_count=1")


def test_end_with_start_zero_is_not_a_run():
    """start=0 (a job force-deleted before it started) is not a run of 1.8e9 s."""
    assert job_of(FORCE_DELETED_BEFORE_START) is None


def test_killed_at_walltime_keeps_true_runtime():
    """Exit_status -29 with runtime past the walltime is kept as logged."""
    job = job_of(end_record(Exit_status="-29", **{"resources_used.walltime": "02:00:07"}))
    assert (job.exit_status, job.runtime_s, job.walltime_s) == (-29, 7207, 7200)


def test_runtime_falls_back_to_end_minus_start():
    """Without resources_used.walltime the runtime is end - start."""
    assert job_of(end_record()).runtime_s == 3600


def test_submit_falls_back_to_qtime():
    """Without ctime, qtime is the submission time."""
    assert job_of(end_record(ctime=None, qtime="150")).submit_time == 150


def test_project_falls_back_to_account():
    """Torque logs have account= instead of project=."""
    assert job_of(end_record(account="proj1")).project == "proj1"


@pytest.mark.parametrize("line, field", [
    (end_record(end="12x"), "end"),
    (end_record(end="100"), "end"),
    (end_record(user=None), "user"),
    (end_record(end=None), "end"),
    (end_record(**{"Resource_List.walltime": "2h"}), "Resource_List.walltime"),
    (end_record(**{"Resource_List.walltime": "99999999:00:00"}), "Resource_List.walltime"),
    (end_record(**{"Resource_List.ncpus": "-1"}), "Resource_List.ncpus"),
    (end_record(start="1" * 30), "start"),
    (end_record(start="1" * 5000), "start"),
    (end_record(**{"Resource_List.ncpus": "9" * 5000}), "Resource_List.ncpus"),
    (end_record(**{"Resource_List.ncpus": None, "Resource_List.select": "1:ncpus=" + "9" * 5000}),
     "Resource_List.select"),
    (end_record(**{"Resource_List.ncpus": None, "exec_host": "n1/0*" + "9" * 5000}), "exec_host"),
    (end_record() + " user=bob", "user"),
    (end_record(**{"Resource_List.ncpus": None, "Resource_List.select": "1:ncpus=x"}), "Resource_List.select"),
    ("4/10/2026 12:00:05;E;1.svr;user=a", "timestamp"),
    ("04/10/2026 12:00:05;EE;1.svr;user=a", "record type"),
    ("04/10/2026 12:00:05;E;;user=a", "job id"),
    ("04/10/2026 12:00:05;E;1 svr;user=a", "job id"),
])
def test_errors_name_the_field(line, field):
    """Each malformed value is an AccountingError naming its field."""
    with pytest.raises(AccountingError) as info:
        job_of(line)
    assert info.value.field == field and field in str(info.value)


@pytest.mark.parametrize("line", ["garbage", "", "a;b", "04/10/2026 12:00:05;E;1.svr;user=a\x00b"])
def test_unparseable_lines(line):
    """Lines that are not records at all are AccountingErrors."""
    with pytest.raises(AccountingError):
        job_of(line)


def test_token_without_equals():
    """A body token without '=' is refused."""
    with pytest.raises(AccountingError, match="key=value"):
        parse_fields("user=alice stray")


_KEYS = st.text(st.sampled_from("abcXYZ_."), min_size=1, max_size=8)
_VALUES = st.text(st.characters(blacklist_categories=("Cs", "Cc", "Zs", "Zl", "Zp")), max_size=12)


def pbs_quote(value):
    """Quote a value the way pbs_server writes it."""
    if " " not in value and value[:1] not in ("'", '"'):
        return value
    return "'{}'".format(value) if '"' in value else '"{}"'.format(value)


@given(st.dictionaries(_KEYS, st.one_of(_VALUES, _VALUES.map(lambda v: v + " x " + v)), max_size=8))
def test_fields_round_trip_pbs_quoting(fields):
    """Whatever PBS writes (with its quoting rules) parses back to the same fields."""
    fields = {k: v for k, v in fields.items() if not ('"' in v and "'" in v and " " in v)}
    body = " ".join("{}={}".format(key, pbs_quote(value)) for key, value in fields.items())
    assert parse_fields(body) == fields


_RAW_VALUES = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters=" \x00\n\r"), min_size=1,
                      max_size=12).filter(lambda value: value[:1] not in ("'", '"'))


@given(st.dictionaries(_KEYS, _RAW_VALUES, max_size=8))
@example({"project": "Projet\u00a0X", "jobname": "run\u3000one\ttwo", "queue": "q\x1fx\u2028y"})
def test_only_ascii_spaces_separate_fields(fields):
    """PBS writes values without an ASCII space raw: tabs, NBSP or ideographic spaces in them stay in them."""
    assert parse_fields(" ".join("{}={}".format(key, value) for key, value in fields.items())) == fields


@given(st.text(max_size=300))
def test_arbitrary_text_only_raises_accounting_error(text):
    """No input makes the parser fail with anything but AccountingError."""
    try:
        record = parse_record(text)
        completed_job(record, parse_fields(record.body))
    except AccountingError:
        pass


@given(st.integers(0, 596000), st.integers(0, 59), st.integers(0, 59))
def test_hms_fast_path_agrees_with_general_parser(hours, minutes, seconds):
    """The HH:MM:SS fast path reads durations as parse_duration does, in every spelling."""
    for text in ("{}:{:02d}:{:02d}".format(hours, minutes, seconds), "{}:{}:{}".format(hours, minutes, seconds)):
        job = job_of(end_record(**{"Resource_List.walltime": text}))
        assert job.walltime_s == hours * 3600 + minutes * 60 + seconds


@pytest.mark.parametrize("job_id, subjob, parent", [
    ("123[4].svr", ("123[].svr", 4), False), ("123[0]", ("123[]", 0), False), ("123[].svr", None, True),
    ("3073070.[hostname_1]", None, False), ("3073070.[]", None, False), ("123.svr", None, False),
])
def test_array_ids(job_id, subjob, parent):
    """Only a job number followed by [index] (or []) is a subjob (a parent); other brackets are part of the id."""
    assert (array_subjob(job_id), is_array_parent(job_id)) == (subjob, parent)


@pytest.mark.parametrize("fields, ncpus", [
    ({"exec_vnode": "(n1:ncpus=4:mem=1gb)+(n2:ncpus=4)"}, 8),
    ({"exec_vnode": "(n1:ncpus=2+n2:ncpus=2)", "exec_host": "n1/0*2+n2/0*2"}, 4),
    ({"exec_host": "n1/0*4+n2/0*8"}, 12),
    ({"exec_host": "n1/0+n2/3"}, 2),
    ({"exec_host": "n1/0+n1/1+n1/2+n2/0"}, 4),
    ({"exec_host": "n1/0-3+n2/0,2,5-7"}, 9),
    ({"exec_vnode": "(n1:ncpus=2+n2:mem=1gb)"}, 2),
    ({"exec_host": "n1"}, 1),
    ({"exec_host": "n1/0*2", "resources_used.ncpus": "2"}, 2),
])
def test_ncpus_from_what_the_job_was_given(fields, ncpus):
    """No ncpus, select or nodes request: the cores come from exec_vnode, else exec_host (PBS and Torque forms)."""
    assert job_of(end_record(**dict({"Resource_List.ncpus": None}, **fields))).ncpus == ncpus


def test_torque_nodes_times_ppn_over_a_smaller_ncpus():
    """Torque nodes=2:ppn=8 with ncpus=1 held 16 cores."""
    assert job_of(end_record(**{"Resource_List.ncpus": "1", "Resource_List.nodes": "2:ppn=8"})).ncpus == 16


@pytest.mark.parametrize("field, value", [
    ("exec_host", "n1/x"), ("exec_host", "n1/3-1"), ("exec_vnode", "(n1:ncpus=x)")])
def test_bad_exec_host_or_vnode_named(field, value):
    """When the cores must come from exec_host or exec_vnode, a malformed one names the field."""
    with pytest.raises(AccountingError, match=field):
        job_of(end_record(**{"Resource_List.ncpus": None, field: value}))
