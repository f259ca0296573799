"""The performance-model tool experiment over several draws of its users, with its figure.

    python benchmarks/performance_model.py TRACES_DIR [--seeds 1,2,3,4,5] [--work DIR] [--plot FILE]

The study of a performance-model submission tool (workloads of Francesca,
Intrepid and Blue Horizon) gives a random 20 % of the users runtime
estimates of maximum error 0 to 100 % and reports how much their mean queue
time improves (its Figs. 4-6: 6-23 %, 6-15 %, 1-20 %), and the average error
of the generated estimates (its Table 3). This runs the same on KTH-SP2 and
the HPC2N subset, once per seed of the draw of the users (``seed=1`` is the row
of docs/science.md), prints both tables and, with ``--plot``, draws the
improvement against the maximum error. The simulations are
``benchmarks/reproduce.py``'s, kept in the same ``--work`` folder.
"""

import argparse
import os
import sys
from fractions import Fraction

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from reproduce import MODEL_ERRORS, TRACES, _run, adopters_change, model_spec  # noqa: E402

from replay.shared.performance_model import runtime_classes  # noqa: E402
from replay.traces.readers import read_trace  # noqa: E402

STUDIED = ("KTH-SP2", "HPC2N subset")


def simulated(path, seed, work):
    """The ``simulate`` report of ``path`` with the users and every maximum error's model of ``seed``."""
    specs = ",".join(("user",) + tuple(model_spec(error, seed=seed) for error in MODEL_ERRORS))
    return _run(("simulate", path, "--predictors", specs, "--workers", "1"), work)


def mean_errors(path):
    """Per maximum error above 0, the mean of (estimate - runtime) / runtime over the jobs that ran (Table 3)."""
    trace, _ = read_trace([path], "auto", 0)
    runtimes = [job.runtime_s for job in trace.jobs if job.runtime_s > 0]
    means = []
    for error in MODEL_ERRORS[1:]:
        estimates = runtime_classes(runtimes, Fraction(error))
        means.append(sum(estimates[runtime] / runtime - 1 for runtime in runtimes) / len(runtimes))
    return means


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("traces_dir")
    parser.add_argument("--seeds", default="1,2,3,4,5")
    parser.add_argument("--work", metavar="DIR", default="reproduce-work")
    parser.add_argument("--plot", metavar="FILE", help="draw the improvement against the maximum error (PNG)")
    args = parser.parse_args()
    os.makedirs(args.work, exist_ok=True)
    seeds = [int(seed) for seed in args.seeds.split(",")]
    errors = [int(100 * Fraction(error)) for error in MODEL_ERRORS]
    print("Improvement of the adopters' mean queue time (%), by maximum error " + " ".join(map(str, errors)))
    curves = {}
    for trace in STUDIED:
        path = os.path.join(args.traces_dir, TRACES[trace])
        for seed in seeds:
            report = simulated(path, seed, args.work)
            gains = [-100 * adopters_change(report, model_spec(error, seed=seed)) for error in MODEL_ERRORS]
            curves[trace, seed] = gains
            print("{:14} seed {}: {}".format(trace, seed, " ".join("{:5.1f}".format(gain) for gain in gains)))
    print("\nMean error of the estimates (%), by maximum error " + " ".join(map(str, errors[1:])))
    for trace in STUDIED:
        means = mean_errors(os.path.join(args.traces_dir, TRACES[trace]))
        print("{:14}: {}".format(trace, " ".join("{:5.2f}".format(100 * mean) for mean in means)))
    if args.plot:
        _plot(args.plot, errors, curves)


def _plot(path, errors, curves):
    from predictor.cmdline.figures import pyplot, save

    plt = pyplot()
    figure, axes = plt.subplots(figsize=(7, 4.5))
    colours = {"KTH-SP2": "tab:blue", "HPC2N subset": "tab:orange"}
    for (trace, seed), gains in curves.items():
        axes.plot(errors, gains, color=colours[trace], marker="o" if seed == 1 else None,
                  linewidth=2 if seed == 1 else 0.8, alpha=1 if seed == 1 else 0.5,
                  label="{} (seed=1)".format(trace) if seed == 1 else None)
    axes.axhspan(6, 23, color="grey", alpha=0.15, label="published: Francesca 6–23 %")
    axes.axhline(0, color="black", linewidth=0.5)
    axes.set_xlabel("maximum error of the performance model (%)")
    axes.set_ylabel("improvement of the adopters' mean queue time (%)")
    axes.set_title("20 % of the users submit with performance-model estimates\n(thin lines: other draws of the users)")
    axes.legend(fontsize=8)
    save(figure, path)


if __name__ == "__main__":
    main()
