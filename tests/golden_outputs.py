"""The commands whose outputs tests/test_golden_outputs.py pins, and the digests of what they write.

``python tests/golden_outputs.py`` writes tests/data/golden/outputs.json from the tree it runs in:
run it only on a tree whose outputs are the reference.
"""

import hashlib
import json
import os
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DIGESTS = os.path.join(REPO, "tests", "data", "golden", "outputs.json")
DATA = os.environ.get("SWT_TRACE_DATA", os.path.join(os.path.dirname(REPO), "shared", "data"))
TRACES = {
    "hpc2n-accounting": os.path.join(REPO, "traces", "hpc2n-2002-accounting"),
    "hpc2n-swf": os.path.join(REPO, "traces", "HPC2N-2002-subset.swf"),
    "kth-sp2": os.path.join(DATA, "KTH-SP2-1996-2.2.swf"),
}
"""The traces: the bundled ones, and KTH-SP2 from ``$SWT_TRACE_DATA`` (the Parallel Workloads Archive file)."""
COMMANDS = {
    "accuracy": ["{trace}", "--json", "{out}/metrics.json", "--csv", "{out}/metrics.csv",
                 "--jobs-csv", "{out}/jobs.csv"],
    "simulate": ["simulate", "{trace}", "--predictors", "user,v3", "--workers", "1", "--json", "{out}/metrics.json",
                 "--csv", "{out}/metrics.csv"],
}


def sha256(path):
    """The hex SHA-256 of a file, or of a directory's files (names and contents, in name order)."""
    digest = hashlib.sha256()
    paths = [path] if os.path.isfile(path) else [os.path.join(path, name) for name in sorted(os.listdir(path))]
    for each in paths:
        digest.update(os.path.basename(each).encode() + b"\0")
        with open(each, "rb") as stream:
            digest.update(stream.read())
    return digest.hexdigest()


def outputs(trace, command):
    """``{file name: sha256}`` of what ``python -m replay COMMAND`` writes for ``trace``, its standard output too."""
    with tempfile.TemporaryDirectory() as out:
        argv = [part.format(trace=trace, out=out) for part in COMMANDS[command]]
        shown = subprocess.run([sys.executable, "-m", "replay"] + argv, cwd=REPO, check=True, stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL).stdout
        written = {name: sha256(os.path.join(out, name)) for name in sorted(os.listdir(out))}
        return dict(written, stdout=hashlib.sha256(shown).hexdigest())


def main():
    """Write the digests of every command on every trace present."""
    cases = {}
    for name, trace in TRACES.items():
        if not os.path.exists(trace):
            raise SystemExit("{}: missing ({} is needed to write every digest)".format(trace, name))
        cases[name] = {"input_sha256": sha256(trace),
                       "outputs": {command: outputs(trace, command) for command in COMMANDS}}
    with open(DIGESTS, "w") as out:
        json.dump(cases, out, indent=1, sort_keys=True)
        out.write("\n")


if __name__ == "__main__":
    main()
