"""Print the figures the reliability scenarios recorded as Markdown table rows (for docs/reliability.md).

    SWT_FIGURES=/tmp/figures.jsonl python -m pytest -m slow tests/test_reliability_*.py
    python benchmarks/reliability_table.py /tmp/figures.jsonl

One row per recorded scenario run, in the order they ran: the scenario, its
figures as ``name value`` pairs, and the test that reproduces it.
"""

import json
import sys

_SKIPPED = ("scenario", "test", "error_examples")


def row(entry):
    figures = ", ".join("{} {}".format(name.replace("_", " "), entry[name]) for name in sorted(entry)
                        if name not in _SKIPPED)
    return "| {} | {} | `{}` |".format(entry["scenario"], figures, entry["test"])


def main(path):
    with open(path, encoding="utf-8") as lines:
        for line in lines:
            if line.strip():
                print(row(json.loads(line)))


if __name__ == "__main__":
    main(sys.argv[1])
