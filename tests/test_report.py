"""predictor.cmdline.tables: tables printed as text, JSON and CSV, and the runtime classes reports break down by."""

import io
import json

import numpy as np

from predictor.cmdline.tables import (
    Column,
    Report,
    Table,
    runtime_class_masks,
    write_csv,
    write_json,
    write_rows_csv,
    write_text,
)

COLUMNS = (Column("predictor", "predictor"), Column("jobs", "jobs", "count"), Column("under", "under", "share"),
           Column("mae_s", "mean |err|", "duration_s"), Column("acc", "acc", "ratio"))
REPORT = Report("Title", ("a note",), (
    Table("summary", "All jobs", COLUMNS, [("v1", 1234, 0.4751, 5287.8201, 0.5351594), ("none", 0, None, None,
                                                                                          float("nan"))]),
    Table("other", "Other", (Column("predictor", "predictor"), Column("extra", "extra", "count")), [("v2", 7)]),
))


def render(writer, report=REPORT):
    out = io.StringIO()
    writer(report, out)
    return out.getvalue()


def test_text_table_is_aligned_and_formatted():
    """Counts with separators, shares in %, durations HH:MM:SS, ratios 3 decimals, None and NaN as '-'."""
    lines = render(write_text).splitlines()
    assert lines[:2] == ["Title", "  a note"]
    header = "predictor   jobs  under  mean |err|    acc"
    assert lines[4:7] == [header, "-" * len(header), "v1         1,234  47.5%    01:28:08  0.535"]
    assert lines[7] == "none           0      -           -      -"


def test_json_has_rows_as_objects_with_rounded_floats():
    """Keys in column order, floats rounded to 6 digits, NaN as null."""
    document = json.loads(render(write_json))
    rows = document["tables"][0]["rows"]
    assert list(rows[0]) == ["predictor", "jobs", "under", "mae_s", "acc"]
    assert rows[0]["acc"] == 0.535159 and rows[1]["acc"] is None and document["notes"] == ["a note"]


def test_json_starts_with_the_reports_figures():
    """A report's figures come first in its JSON, floats rounded inside lists and dicts; text and CSV omit them."""
    report = REPORT._replace(figures=(("decisions", 3), ("items", [{"share": 1 / 3.0}, float("nan")])))
    document = json.loads(render(write_json, report))
    assert list(document)[:3] == ["decisions", "items", "title"]
    assert document["items"] == [{"share": 0.333333}, None]
    assert render(write_text, report) == render(write_text) and render(write_csv, report) == render(write_csv)


def test_csv_has_every_tables_columns():
    """One CSV: a table column, then the union of columns, empty where a table has none."""
    lines = render(write_csv).splitlines()
    assert lines[0] == "table,predictor,jobs,under,mae_s,acc,extra"
    assert lines[1] == "summary,v1,1234,0.4751,5287.8201,0.535159,"
    assert lines[3] == "other,v2,,,,,7"


def test_rows_csv_writes_none_empty():
    """A plain table: header, then rows with None left empty."""
    out = io.StringIO()
    write_rows_csv(["a", "b"], [[1, None], ["x,y", 2.5]], out)
    assert out.getvalue() == 'a,b\n1,\n"x,y",2.5\n'


def test_same_report_same_bytes():
    """Writers have no hidden state: a rendering after another report's is the same as before it."""
    other = Report("Other", (), (Table("other", "Other", (Column("extra", "extra", "share"),), [(0.5,)]),))
    for writer in (write_text, write_json, write_csv):
        first = render(writer)
        assert render(writer, other) != first and render(writer) == first


def test_runtime_class_boundaries():
    """<= 2 h includes 0 and 7200 s, 2-24 h includes 86400 s, > 24 h the rest (seed 003 Fig. 5)."""
    runtime = np.array([0, 7200, 7201, 86400, 86401])
    classes = {name: runtime[mask].tolist() for name, mask in runtime_class_masks(runtime)}
    assert classes == {"<=2h": [0, 7200], "2-24h": [7201, 86400], ">24h": [86401]}
