"""Bad input for the fuzzing scenario: mutated accounting and SWF lines, each with what it must give.

Mutations start from real-looking lines (the OpenPBS records of
../shared/pbs-facts.md and the lines ``python -m replay convert`` writes for
the bundled HPC2N SWF trace) and from that trace's own lines. A
``random.Random(seed)`` drives them, so a failure replays exactly. Every
mutant gets a job id of its own first (unless the mutation is about the id),
so what the readers make of it can be checked line by line.

Expectations (``Mutant.expect``):

* ``REJECT``: every reader must report the line.
* ``REJECT_IF_END``: the line must be reported when it is an E record (the
  readers check the body of E records only; Q and S bodies are not used).
* ``SAME``: must read exactly as the line it was made from.
* ``IGNORED``: must be neither reported nor read as a job.
* ``ANY``: good or bad, it must only not crash anything.
"""

import random
from typing import NamedTuple

REJECT, REJECT_IF_END, SAME, IGNORED, ANY = "reject", "reject if E", "same", "ignored", "any"

OPENPBS_RECORDS = [
    "11/22/2026 10:35:16;Q;1.pbshost;user=pbsuser group=pbsuser project=_pbs_project_default jobname=STDIN "
    "queue=workq ctime=1795343716 qtime=1795343716 etime=1795343716 Resource_List.ncpus=1 Resource_List.nodect=1 "
    "Resource_List.place=pack Resource_List.select=1:ncpus=1 Resource_List.soft_walltime=00:05:00 "
    "Resource_List.walltime=00:10:00 ",
    "11/22/2026 10:35:16;S;1.pbshost;user=pbsuser group=pbsuser project=_pbs_project_default jobname=STDIN "
    "queue=workq ctime=1795343716 qtime=1795343716 etime=1795343716 start=1795343716 exec_host=pbshost/1 "
    "exec_vnode=(pbshost:ncpus=1) Resource_List.ncpus=1 Resource_List.nodect=1 Resource_List.place=pack "
    "Resource_List.select=1:ncpus=1 Resource_List.soft_walltime=00:05:00 Resource_List.walltime=00:10:00 "
    "resource_assigned.ncpus=1 ",
    "11/22/2026 10:35:23;E;1.pbshost;user=pbsuser group=pbsuser project=_pbs_project_default jobname=STDIN "
    "queue=workq ctime=1795343716 qtime=1795343716 etime=1795343716 start=1795343716 exec_host=pbshost/1 "
    "exec_vnode=(pbshost:ncpus=1) Resource_List.ncpus=1 Resource_List.nodect=1 Resource_List.place=pack "
    "Resource_List.select=1:ncpus=1 Resource_List.soft_walltime=00:05:00 Resource_List.walltime=00:10:00 "
    "session=8015 end=1795343723 Exit_status=0 resources_used.cpupercent=0 resources_used.cput=00:00:00 "
    "resources_used.mem=0kb resources_used.ncpus=1 resources_used.vmem=0kb resources_used.walltime=00:00:05 "
    "run_count=1",
    "04/10/2026 12:00:05;E;42.svr;user=alice group=users project=_pbs_project_default jobname=run1 queue=workq "
    "ctime=1775822400 qtime=1775822400 etime=1775822400 start=1775822405 exec_host=n1/0*4 "
    "exec_vnode=(n1:ncpus=4) Resource_List.ncpus=4 Resource_List.nodect=1 Resource_List.place=pack "
    "Resource_List.select=1:ncpus=4 Resource_List.soft_walltime=00:30:00 Resource_List.walltime=02:00:00 "
    "session=1234 end=1775826005 Exit_status=0 resources_used.cpupercent=398 resources_used.cput=03:59:00 "
    "resources_used.mem=1048576kb resources_used.ncpus=4 resources_used.vmem=2097152kb "
    "resources_used.walltime=01:00:00 run_count=1",
]
"""Q, S and E written by an OpenPBS 23.06 server, and the illustrative E record (pbs-facts.md)."""


class Mutant(NamedTuple):
    """One generated line, what it must give, and how it was made."""

    line: bytes
    expect: str
    how: str
    seed: str  # the (renamed) line it was made from


INVALID_UTF8 = [b"\xff", b"\xfe", b"\xc0\xaf", b"\xed\xa0\x80", b"\x80", b"\xf8\x88\x80\x80\x80", b"\xc3("]
BOUNDED_KEYS = ("start", "end", "ctime", "Exit_status", "Resource_List.ncpus")
"""Integer fields of an E record that are range-checked whenever the record is a run."""
NEVER_NEGATIVE = ("start", "end", "ctime", "Resource_List.ncpus")
DURATIONS = ("Resource_List.walltime", "Resource_List.soft_walltime", "resources_used.walltime")


# --- PBS accounting lines -------------------------------------------------------------

class _Record:
    """A seed record split into header parts and body tokens."""

    def __init__(self, line):
        timestamp, kind, job_id, body = line.split(";", 3)
        self.head = [timestamp, kind, job_id]
        self.tokens = [token for token in body.split(" ") if token]

    @property
    def kind(self):
        return self.head[1]

    def text(self, head=None, tokens=None, separator=" "):
        return ";".join(head or self.head) + ";" + separator.join(self.tokens if tokens is None else tokens)

    def keyed(self, keys):
        """Indexes of the tokens whose key is in ``keys``."""
        return [index for index, token in enumerate(self.tokens) if token.partition("=")[0] in keys]

    def replaced(self, index, value):
        tokens = list(self.tokens)
        tokens[index] = tokens[index].partition("=")[0] + "=" + value
        return tokens


def _if_end(record):
    return REJECT_IF_END if record.kind == "E" else ANY


def _truncate(rng, record):
    text = record.text()
    return text[:rng.randrange(len(text))], ANY


def _drop_field(rng, record):
    tokens = list(record.tokens)
    del tokens[rng.randrange(len(tokens))]
    return record.text(tokens=tokens), ANY


def _duplicate_key(rng, record):
    token = rng.choice(record.tokens)
    tokens = list(record.tokens)
    tokens.insert(rng.randrange(len(tokens) + 1), token.partition("=")[0] + "=" + rng.choice(["1", "x", ""]))
    return record.text(tokens=tokens), _if_end(record)


def _shuffle(rng, record):
    tokens = list(record.tokens)
    rng.shuffle(tokens)
    return record.text(tokens=tokens), SAME


def _huge_number(rng, record):
    index = rng.choice([i for i, token in enumerate(record.tokens) if token.partition("=")[2].isdigit()])
    key = record.tokens[index].partition("=")[0]
    tokens = record.replaced(index, "9" * rng.choice([12, 20, 40, 400]))
    return record.text(tokens=tokens), _if_end(record) if key in BOUNDED_KEYS else ANY


def _negative_number(rng, record):
    index = rng.choice([i for i, token in enumerate(record.tokens) if token.partition("=")[2].isdigit()])
    key, _, value = record.tokens[index].partition("=")
    tokens = record.replaced(index, "-1" + value)
    return record.text(tokens=tokens), _if_end(record) if key in NEVER_NEGATIVE else ANY


def _negative_duration(rng, record):
    indexes = record.keyed(DURATIONS)
    if not indexes:
        return _negative_number(rng, record)
    index = rng.choice(indexes)
    tokens = record.replaced(index, "-" + record.tokens[index].partition("=")[2])
    return record.text(tokens=tokens), _if_end(record)


def _end_before_start(rng, record):
    starts, ends = record.keyed(("start",)), record.keyed(("end",))
    if not starts or not ends:
        return _negative_duration(rng, record)
    start = int(record.tokens[starts[0]].partition("=")[2])
    tokens = record.replaced(ends[0], str(start - rng.randint(1, 10 ** 6)))
    return record.text(tokens=tokens), _if_end(record)


def _insert(rng, text, blob):
    data = text.encode("utf-8")
    at = rng.randrange(len(data) + 1)
    return data[:at] + blob + data[at:]


def _bad_utf8(rng, record):
    return _insert(rng, record.text(), rng.choice(INVALID_UTF8)), REJECT


def _nul_byte(rng, record):
    return _insert(rng, record.text(), b"\x00"), REJECT


_BAD_TIMESTAMPS = ["4/10/2026 12:00:05", "04/10/2026T12:00:05", "", "04/10/26 12:00:05", "04-10-2026 12:00:05",
                   "\u0664\u0660/10/2026 12:00:05"]


def _bad_timestamp(rng, record):
    return record.text(head=[rng.choice(_BAD_TIMESTAMPS)] + record.head[1:]), REJECT


def _bad_record_type(rng, record):
    return record.text(head=[record.head[0], rng.choice(["EE", "", "1", "E E", ";"]), record.head[2]]), REJECT


_ODD_IDS = [
    ("", REJECT), ("1 2.svr", REJECT), (" 1.svr", REJECT), ("1.svr\t", REJECT),
    ("123[].svr", IGNORED), ("123[7].svr", ANY), ("123", ANY), ("42.s\u00e9rveur", ANY), ("x" * 5000, ANY),
    ("'); DROP TABLE completed_jobs;--", ANY), ("1.svr.extra.parts", ANY), ("[", ANY), ("\\N", ANY),
]


def _odd_job_id(rng, record):
    job_id, expect = rng.choice(_ODD_IDS)
    if expect == IGNORED and record.kind != "E":
        expect = ANY
    return record.text(head=record.head[:2] + [job_id]), expect


def _missing_separators(rng, record):
    text = record.text()
    return (text.replace(";", "", 1) if rng.random() < 0.5 else text.replace(";", " ")), REJECT


def _unbalanced_quote(rng, record):
    # A quote opened around a value with a space and never closed: pbs_server never
    # writes that (a value without spaces, even one starting with a quote, is raw).
    index = rng.randrange(len(record.tokens))
    tokens = record.replaced(index, rng.choice(['"', "'"]) + record.tokens[index].partition("=")[2] + " unclosed")
    return record.text(tokens=tokens), _if_end(record)


def _empty_user(rng, record):
    indexes = record.keyed(("user",))
    if not indexes:
        return _duplicate_key(rng, record)
    return record.text(tokens=record.replaced(indexes[0], "")), _if_end(record)


def _crlf(rng, record):
    return record.text() + "\r", SAME


def _odd_spaces_in_names(rng, record):
    """Characters PBS does not quote (tabs, non-ASCII spaces) inside a job name, which is not stored."""
    indexes = record.keyed(("jobname",))
    if not indexes:
        return _crlf(rng, record)
    name = rng.choice(["a\tb", "a\u00a0b", "\u3000x", "x\u2028y", "a\x1fb", "\u00e9t\u00e9"])
    return record.text(tokens=record.replaced(indexes[0], name)), SAME


def _extra_spaces(rng, record):
    return record.text(separator=rng.choice(["  ", "   "])) + rng.choice(["", " ", "  "]), SAME


def _long_value(rng, record):
    indexes = record.keyed(("jobname",))
    if not indexes:
        return _crlf(rng, record)
    return record.text(tokens=record.replaced(indexes[0], "j" * rng.choice([300, 3000, 30000]))), SAME


def _random_bytes(rng, record):
    blob = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 200))).replace(b"\n", b"")
    return blob, ANY


def _blank(rng, record):
    return rng.choice(["", " ", "   ", "\t"]), IGNORED


PBS_MUTATIONS = {
    "truncated": _truncate, "field dropped": _drop_field, "key given twice": _duplicate_key,
    "fields reordered": _shuffle, "huge number": _huge_number, "negative number": _negative_number,
    "negative duration": _negative_duration, "end before start": _end_before_start, "non-UTF-8 bytes": _bad_utf8,
    "NUL byte": _nul_byte, "bad timestamp": _bad_timestamp, "bad record type": _bad_record_type,
    "odd job id": _odd_job_id, "missing ';' separators": _missing_separators, "unbalanced quote": _unbalanced_quote,
    "empty user": _empty_user, "CRLF line end": _crlf, "tab/NBSP/U+3000 in a name": _odd_spaces_in_names,
    "extra spaces": _extra_spaces, "long value": _long_value, "random bytes": _random_bytes, "blank": _blank,
}
"""Mutation name -> ``mutate(rng, record) -> (text or bytes, expectation)``."""


def _renamed(record, number):
    """The seed with a job id of its own, so each mutant's job can be told apart."""
    renamed = _Record(record.text())
    renamed.head[2] = "{}.fuzz".format(number)
    return renamed


def pbs_mutants(seed_lines, count, seed):
    """``count`` mutants of ``seed_lines`` (str), mutations drawn uniformly."""
    rng = random.Random(seed)
    records = [_Record(line) for line in seed_lines]
    names = sorted(PBS_MUTATIONS)
    mutants = []
    for number in range(count):
        record = _renamed(rng.choice(records), number)
        how = rng.choice(names)
        line, expect = PBS_MUTATIONS[how](rng, record)
        data = line if isinstance(line, bytes) else line.encode("utf-8")
        mutants.append(Mutant(data, expect, how, record.text()))
    return mutants


# --- SWF lines ----------------------------------------------------------------------------

SWF_USED = (0, 1, 2, 3, 4, 7, 8, 10, 11, 12, 14)
"""Fields the replay reads (job number, submit, wait, run, processors, ..., queue)."""


def _swf_fields_op(rng, fields):
    """A field dropped: too few. One added after the 18th is a trailing extra field, read past; one added
    before it shifts the others and may read as another job (the job number is left in place)."""
    op = rng.choice(["drop", "add"])
    fields = list(fields)
    if op == "drop":
        del fields[rng.randrange(len(fields))]
        return " ".join(fields), REJECT
    at = rng.randrange(1, len(fields) + 1)
    fields.insert(at, str(rng.randrange(100)))
    return " ".join(fields), SAME if at == len(fields) - 1 else ANY


def _swf_not_integer(rng, fields):
    fields = list(fields)
    fields[rng.choice(SWF_USED)] = rng.choice(["1.5", "abc", "1e3", "0x10", "--1", "+"])
    return " ".join(fields), REJECT


def _swf_unused_not_integer(rng, fields):
    fields = list(fields)
    fields[rng.choice([5, 6, 9, 13, 15, 16, 17])] = rng.choice(["1.5", "552.21", "-1.0"])
    return " ".join(fields), SAME


def _swf_huge(rng, fields):
    fields = list(fields)
    fields[rng.choice(SWF_USED[1:])] = rng.choice(["", "-"]) + "9" * rng.choice([12, 20, 40])
    return " ".join(fields), REJECT


def _swf_never_ran(rng, fields):
    fields = list(fields)
    fields[rng.choice([1, 2, 3])] = rng.choice(["-1", "-5"])
    return " ".join(fields), IGNORED


def _swf_truncate(rng, fields):
    text = " ".join(fields)
    return text[:rng.randrange(len(text))], ANY


def _swf_spacing(rng, fields):
    return rng.choice(["\t", "  ", " \t "]).join(fields) + rng.choice(["", " ", "\r"]), SAME


def _swf_bad_utf8(rng, fields):
    return _insert(rng, " ".join(fields), rng.choice(INVALID_UTF8)), REJECT


def _swf_bad_header(rng, fields):
    return "; {}: {}".format(rng.choice(["MaxProcs", "MaxNodes", "UnixStartTime"]),
                             rng.choice(["abc", "1.5", "", "12 procs"])), REJECT


def _swf_other_header(rng, fields):
    return rng.choice(["; Note: anything at all", ";", "; Queue: 7 \u00e9t\u00e9", "; UnixStartTime: -5"]), IGNORED


def _swf_blank(rng, fields):
    return rng.choice(["", "  ", "\t"]), IGNORED


def _swf_random(rng, fields):
    return bytes(rng.randrange(256) for _ in range(rng.randrange(1, 120))).replace(b"\n", b""), ANY


SWF_MUTATIONS = {
    "field dropped or added": _swf_fields_op, "used field not an integer": _swf_not_integer,
    "decimal in an unused field": _swf_unused_not_integer, "huge number": _swf_huge,
    "never ran (-1, negative)": _swf_never_ran, "truncated": _swf_truncate, "tabs and spaces": _swf_spacing,
    "non-UTF-8 bytes": _swf_bad_utf8, "bad header value": _swf_bad_header, "other header line": _swf_other_header,
    "blank": _swf_blank, "random bytes": _swf_random,
}


def swf_mutants(job_lines, count, seed):
    """``count`` mutants of SWF job lines (str); each gets the job number of its position + 1."""
    rng = random.Random(seed)
    rows = [line.split() for line in job_lines]
    names = sorted(SWF_MUTATIONS)
    mutants = []
    for number in range(1, count + 1):
        fields = [str(number)] + rng.choice(rows)[1:]
        how = rng.choice(names)
        line, expect = SWF_MUTATIONS[how](rng, fields)
        data = line if isinstance(line, bytes) else line.encode("utf-8")
        mutants.append(Mutant(data, expect, how, " ".join(fields)))
    return mutants
