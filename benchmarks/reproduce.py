"""Every paper's headline figure beside ours: the table of docs/science.md, regenerated.

    python benchmarks/reproduce.py TRACES_DIR [--write docs/science.md] [--work DIR]

TRACES_DIR holds the Parallel Workloads Archive traces the table is measured
on (KTH-SP2-1996-2.2.swf, HPC2N-2002-subset.swf, CEA-Curie-2011-sample.swf; a
missing one is left out). Each row runs the documented command (``python -m
replay ...`` with ``--json``) and reads the same metric the paper reports; the
paper's figure, on its own trace, stands beside it. ``--work DIR`` keeps each
command's JSON there, so a second run only runs what is missing. Not a test:
it takes several minutes (the small-first runs retrain a random forest every
simulated week).
"""

import argparse
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
    Claim("Zrigui et al.", "classification accuracy / precision / recall of small (learned from the log)",
          "KTH-SP2 86 / 79 / 90 %; HPC2N 90 / 87 / 89 %", ALL, (_ZRIGUI + ("small-first",),), _zrigui_quality),
    Claim("Rubio et al., Correcting Job Walltime in a Resource-Constrained Environment",
          "mean bounded slowdown (τ 10 s), users' walltimes → best of prediction (v1: mean of the last two) "
          "or correction-only (ten-minutes) with simple or power correction",
          "−97.5 % to −99.9 % (COARE 29,447 → 30; Curie 958 → 19; MetaCentrum2 806 → 6; HPC2N Seth 637 → 16)",
          ALL, (_RUBIO + ("pbs",), _RUBIO + ("simple",), _RUBIO + ("power",)), _rubio),
)


def _run(arguments, work):
    """The JSON report of ``python -m replay ARGUMENTS``, from ``work`` when it was run before."""
    name = "_".join(os.path.basename(argument) for argument in arguments).replace(":", "-").replace(",", "+")
    path = os.path.join(work, name + ".json")
    if not os.path.exists(path):
        subprocess.run([sys.executable, "-m", "replay"] + list(arguments) + ["--json", path], check=True,
                       stdout=subprocess.DEVNULL)
    with open(path, encoding="utf-8") as stream:
        report = json.load(stream)
    report["extension"] = arguments[-1]
    return report


def table(traces_dir, work):
    """The markdown table: paper, metric, its figure, ours on each trace, the commands."""
    lines = ["| paper | metric | published | trace | ours | command |", "|---|---|---|---|---|---|"]
    for claim in CLAIMS:
        for trace in claim.traces:
            path = os.path.join(traces_dir, TRACES[trace])
            if not os.path.exists(path):
                continue
            runs = [tuple(part.format(trace=path) for part in run) for run in claim.runs]
            ours = claim.ours([_run(run, work) for run in runs])
            commands = "<br>".join("`python -m replay {}`".format(" ".join(run)).replace(path, TRACES[trace])
                                   for run in runs)
            lines.append("| {} | {} | {} | {} | {} | {} |".format(claim.paper, claim.metric, claim.published, trace,
                                                                  ours, commands))
    return "\n".join(lines) + "\n"


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
    args = parser.parse_args()
    os.makedirs(args.work, exist_ok=True)
    text = table(args.traces_dir, args.work)
    if args.write:
        _write(args.write, text)
    sys.stdout.write(text)


if __name__ == "__main__":
    main()
