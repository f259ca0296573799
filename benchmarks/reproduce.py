"""Every paper's headline figure beside ours: the table of docs/science.md, regenerated.

    python benchmarks/reproduce.py TRACES_DIR [--write docs/science.md] [--work DIR] [--only TEXT]

TRACES_DIR holds the Parallel Workloads Archive traces the table is measured
on (KTH-SP2-1996-2.2.swf, HPC2N-2002-subset.swf, CEA-Curie-2011-sample.swf; a
missing one is left out). Each row runs the documented command (``python -m
replay ...`` with ``--json``) and reads the same metric the paper reports; the
paper's figure, on its own trace, stands beside it. ``--work DIR`` keeps each
command's JSON there, so a second run only runs what is missing; ``--only
TEXT`` runs only the claims whose metric contains TEXT, and with ``--write``
keeps the file's other rows as they are. Not a test:
it takes several minutes (the small-first runs retrain a random forest every
simulated week).
"""

import argparse
import hashlib
import json
import os
import subprocess
import sys
from typing import Callable, NamedTuple, Tuple

TRACES = {"KTH-SP2": "KTH-SP2-1996-2.2.swf", "HPC2N subset": "HPC2N-2002-subset.swf",
          "CEA-Curie sample": "CEA-Curie-2011-sample.swf"}

BEGIN, END = "<!-- reproduce:begin -->", "<!-- reproduce:end -->"


class Claim(NamedTuple):
    """A paper's headline figure, and how ours is measured: ``runs`` are argument lists of ``python -m replay``
    (``{trace}`` is the trace's path), ``ours(reports)`` turns their JSON reports into the figure shown."""

    paper: str
    metric: str
    published: str
    traces: Tuple[str, ...]
    runs: Tuple[Tuple[str, ...], ...]
    ours: Callable


def _row(report, table, **match):
    rows = next(t["rows"] for t in report["tables"] if t["key"] == table)
    return next(row for row in rows if all(row.get(key) == value for key, value in match.items()))


def _percent(value):
    return "{:.1f} %".format(100 * value)


def _signed(value, digits=0):
    """``value`` with its sign, a true minus sign for negatives."""
    return "{:+.{}f}".format(value, digits).replace("-", "−")


def _change(before, after):
    return "{:.2f} → {:.2f} ({} %)".format(before, after, _signed(100 * (after - before) / before))


def _tang(reports):
    row = _row(reports[0], "summary", predictor="tang", at="submit")
    return "UE {}, BE {}".format(_percent(row["tang_ue"]), _percent(row["tang_be"]))


def _tang_accuracy(reports):
    user, tang = (_row(reports[0], "summary", predictor=name, at="submit") for name in ("user", "tang"))
    return "mean {} %, median {} %".format(_signed(100 * (tang["accuracy_mean"] / user["accuracy_mean"] - 1)),
                                           _signed(100 * (tang["accuracy_median"] / user["accuracy_median"] - 1)))


def _tang_bound(reports):
    plain, bounded = (_row(reports[0], "summary", predictor=name, at="submit")
                      for name in ("tang", "tang:min_ratio_pct=50"))
    under, under_bounded = (row["tang_ue"] + row["tang_be"] for row in (plain, bounded))
    return "UE + BE {} → {} ({} %)".format(_percent(under), _percent(under_bounded),
                                           _signed(100 * (under_bounded - under) / under))


def _zrigui_bsld(reports):
    return _change(*(_row(report, "summary", predictor="user")["bsld_mean"] for report in reports))


def _zrigui_quality(reports):
    row = _row(reports[0], "classification")
    return "{} / {} / {}".format(*(_percent(row[key]) for key in ("accuracy", "precision", "recall")))


MODEL_ERRORS = ("0", "0.1", "0.2", "0.3", "0.4", "0.5", "0.6", "0.7", "0.8", "0.9", "1")
"""The performance-model study's maximum errors, 0 to 100 %."""
MODEL_SEED = 1


def model_spec(error, adoption="0.2", seed=MODEL_SEED):
    """The ``model`` predictor of one maximum error, for a random 20 % of the users."""
    return "model:error={}:adoption={}:seed={}".format(error, adoption, seed)


def adopters_change(report, spec):
    """The change of the mean wait of ``spec``'s adopters under ``spec`` against nobody using the tool."""
    return _row(report, "by_tool_use", model=spec, predictor=spec, group="adopters")["wait_mean_change"]


def improvements(changes):
    """Mean-wait changes as the study states them: "improved 6–23 %", or signed where some are longer."""
    gains = [-100 * change for change in changes]
    if min(gains) >= 0:
        return "improved {:.0f}–{:.0f} %".format(min(gains), max(gains))
    return "{} to {} % (negative: longer waits)".format(_signed(min(gains)), _signed(max(gains)))


def _model(reports):
    changes = [adopters_change(reports[0], model_spec(error)) for error in MODEL_ERRORS]
    baseline = _row(reports[0], "by_tool_use", model=model_spec("0"), predictor="user", group="adopters")
    return "{} (error 0 %: {:.0f} %, 100 %: {:.0f} %), {} users' {:,} jobs, {} mean wait without the tool".format(
        improvements(changes), -100 * changes[0], -100 * changes[-1], baseline["users"], baseline["jobs"],
        _duration(baseline["wait_mean_s"]))


def _adaboost(reports):
    baseline = _row(reports[0], "summary", predictor="user")["bsld_mean"]
    return "{:.1f} → {}".format(baseline, "; ".join(
        "{:.1f} with {} ({} %)".format(after, report["extension"], _signed(100 * (after - baseline) / baseline, 1))
        for report in reports[1:] for after in [_row(report, "summary", predictor="adaboost")["bsld_mean"]]))


def _duration(seconds):
    seconds = int(round(seconds))
    return "{}:{:02d}:{:02d}".format(seconds // 3600, seconds // 60 % 60, seconds % 60)


def _rubio(reports):
    baseline = _row(reports[0], "summary", predictor="user")["bsld_mean"]
    best = min((_row(report, "summary", predictor=name)["bsld_mean"], name, report["extension"])
               for report in reports[1:] for name in ("v1", "ten-minutes"))  # with their corrections only
    return "{:.1f} → {:.1f} ({} %, {} with {})".format(baseline, best[0],
                                                       _signed(100 * (best[0] - baseline) / baseline, 1), best[1],
                                                       best[2])


_TANG_RUN = ("{trace}", "--at", "submit", "--predictors", "user,tang,tang:min_ratio_pct=50")
_ZRIGUI = ("simulate", "{trace}", "--predictors", "user", "--bsld-tau", "60", "--workers", "1", "--policy")
_RUBIO = ("simulate", "{trace}", "--predictors", "user,v1,ten-minutes", "--workers", "1", "--extension")
"""Rubio et al.'s runs: the first (``pbs``) gives the baseline, the users' walltimes; the others their corrections."""
_ADABOOST = ("simulate", "{trace}", "--predictors", "user,adaboost", "--workers", "1", "--extension")
_MODEL_RUN = ("simulate", "{trace}", "--predictors", ",".join(("user",) + tuple(map(model_spec, MODEL_ERRORS))),
              "--workers", "1")
ALL = tuple(TRACES)

CLAIMS = (
    Claim("Tang et al., Job Scheduling with Adjusted Runtime Estimates on Production Supercomputers",
          "UE (≤ 30 min under) and BE (> 30 min under), triple key, 85th percentile, at submission",
          "UE 9–17 %, BE 1.2–2.2 % at the 80th–90th percentiles (Intrepid)", ALL, (_TANG_RUN,), _tang),
    Claim("Tang et al.", "eq. 3 accuracy gain over the users' walltimes, triple key, 85th percentile",
          "mean > +20 %, median +42 % (Intrepid)", ALL, (_TANG_RUN,), _tang_accuracy),
    Claim("Tang et al.", "lower bound A ≥ 0.5 (§4.2.3): change in UE + BE, 85th percentile",
          "−17 % to −35 % (Intrepid)", ALL, (_TANG_RUN,), _tang_bound),
    Claim("Zrigui et al., Improving the Performance of Batch Schedulers Using Online Job Runtime Classification",
          "mean bounded slowdown (τ 60 s), fifo → small-first (FCFS base, with the safeguard)",
          "−50 % on KTH-SP2; −33 % to −79 % over seven traces", ALL,
          (_ZRIGUI + ("fifo",), _ZRIGUI + ("small-first",)), _zrigui_bsld),
    Claim("Zrigui et al.", "mean bounded slowdown (τ 60 s), sjf → small-first-sjf (SPF base, with the safeguard)",
          "SPF −3 % to −32 % over seven traces", ("KTH-SP2", "HPC2N subset"),
          (_ZRIGUI + ("sjf",), _ZRIGUI + ("small-first-sjf",)), _zrigui_bsld),
    Claim("Zrigui et al.", "mean bounded slowdown (τ 60 s), saf → small-first-saf (SAF base, with the safeguard)",
          "SAF −10 % to −51 % over seven traces", ("KTH-SP2", "HPC2N subset"),
          (_ZRIGUI + ("saf",), _ZRIGUI + ("small-first-saf",)), _zrigui_bsld),
    Claim("Zrigui et al.", "mean bounded slowdown (τ 60 s), wfp → small-first-wfp (WFP base, with the safeguard)",
          "not given for WFP", ("KTH-SP2", "HPC2N subset"),
          (_ZRIGUI + ("wfp",), _ZRIGUI + ("small-first-wfp",)), _zrigui_bsld),
    Claim("Zrigui et al.", "classification accuracy / precision / recall of small (learned from the log)",
          "KTH-SP2 86 / 79 / 90 %; HPC2N 90 / 87 / 89 %", ALL, (_ZRIGUI + ("small-first",),), _zrigui_quality),
    Claim("Rubio et al., Correcting Job Walltime in a Resource-Constrained Environment",
          "mean bounded slowdown (τ 10 s), users' walltimes → best of prediction (v1: mean of the last two) "
          "or correction-only (ten-minutes) with simple or power correction",
          "−97.5 % to −99.9 % (COARE 29,447 → 30; Curie 958 → 19; MetaCentrum2 806 → 6; HPC2N Seth 637 → 16)",
          ALL, (_RUBIO + ("pbs",), _RUBIO + ("simple",), _RUBIO + ("power",)), _rubio),
    Claim("Rubio et al.", "mean bounded slowdown (τ 10 s), users' walltimes → regression (AdaBoost on user, "
          "walltime and processors of the jobs completed before) with simple or power correction",
          "COARE 29,447 → 259; Gaia 1,182 → 412; MetaCentrum2 806 → 739; Curie 958 → 567; HPC2N Seth 637 → 2 "
          "(the same with either correction)", ALL,
          (_ADABOOST + ("pbs",), _ADABOOST + ("simple",), _ADABOOST + ("power",)), _adaboost),
    Claim("the performance-model submission tool study (Francesca, Intrepid, Blue Horizon workloads)",
          "improvement of the mean queue time of a random 20 % of the users who submit with performance-model "
          "estimates (maximum error 0–100 %), against theirs when nobody does",
          "6–23 % (Francesca, 24 users); 6–15 % (Intrepid); 1–20 % (Blue Horizon)", ("KTH-SP2", "HPC2N subset"),
          (_MODEL_RUN,), _model),
)


def _run(arguments, work):
    """The JSON report of ``python -m replay ARGUMENTS``, from ``work`` when it was run before."""
    name = "_".join(os.path.basename(argument) for argument in arguments).replace(":", "-").replace(",", "+")
    if len(name) > 200:  # a file name has at most 255 bytes: a long predictor list is shortened by its digest
        name = name[:150] + "-" + hashlib.sha256(name.encode()).hexdigest()[:16]
    path = os.path.join(work, name + ".json")
    if not os.path.exists(path):
        subprocess.run([sys.executable, "-m", "replay"] + list(arguments) + ["--json", path], check=True,
                       stdout=subprocess.DEVNULL)
    with open(path, encoding="utf-8") as stream:
        report = json.load(stream)
    report["extension"] = arguments[-1]
    return report


def _cells(claim, trace):
    """The first four cells of ``claim``'s row on ``trace``: what identifies the row in the table."""
    return "| {} | {} | {} | {} |".format(claim.paper, claim.metric, claim.published, trace)


def table(traces_dir, work, only=None, kept=()):
    """The markdown table: paper, metric, its figure, ours on each trace, the commands.

    ``only``: run just the claims whose metric contains it; the others' rows are taken from ``kept`` (the
    lines of the table as it was), where they are.
    """
    lines = ["| paper | metric | published | trace | ours | command |", "|---|---|---|---|---|---|"]
    for claim in CLAIMS:
        for trace in claim.traces:
            path = os.path.join(traces_dir, TRACES[trace])
            if only is not None and only not in claim.metric:
                lines += [line for line in kept if line.startswith(_cells(claim, trace) + " ")]
                continue
            if not os.path.exists(path):
                continue
            runs = [tuple(part.format(trace=path) for part in run) for run in claim.runs]
            ours = claim.ours([_run(run, work) for run in runs])
            commands = "<br>".join("`python -m replay {}`".format(" ".join(run)).replace(path, TRACES[trace])
                                   for run in runs)
            lines.append("{} {} | {} |".format(_cells(claim, trace), ours, commands))
    return "\n".join(lines) + "\n"


def _table_lines(path):
    """The lines of the table between the markers of ``path``."""
    with open(path, encoding="utf-8") as stream:
        document = stream.read()
    return document.partition(BEGIN)[2].partition(END)[0].splitlines()


def _write(path, text):
    with open(path, encoding="utf-8") as stream:
        document = stream.read()
    head, _, rest = document.partition(BEGIN)
    _, _, tail = rest.partition(END)
    with open(path, "w", encoding="utf-8") as stream:
        stream.write(head + BEGIN + "\n" + text + END + tail)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("traces_dir")
    parser.add_argument("--write", metavar="FILE", help="replace the table between the markers in FILE")
    parser.add_argument("--work", metavar="DIR", default="reproduce-work", help="where the JSON reports are kept")
    parser.add_argument("--only", metavar="TEXT", help="run only the claims whose metric contains TEXT")
    args = parser.parse_args()
    os.makedirs(args.work, exist_ok=True)
    kept = _table_lines(args.write) if args.write and args.only is not None else ()
    text = table(args.traces_dir, args.work, args.only, kept)
    if args.write:
        _write(args.write, text)
    sys.stdout.write(text)


if __name__ == "__main__":
    main()
