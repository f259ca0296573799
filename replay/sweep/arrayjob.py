"""A sweep as a PBS job array: the directory it lives in, the script, the per-cell results.

PBS is the distributed engine; this module only writes what it runs and reads
what the subjobs left. A sweep directory holds:

* ``manifest.json``: the grid's cells in order, the shared settings and the
  working directory relative trace paths are taken from;
* ``sweep.pbs``: the job script, ``#PBS -J 1-N``, subjob i running cell i
  (``python -m replay sweep cell DIR $PBS_ARRAY_INDEX``); a one-cell grid is a
  plain job, since PBS refuses a one-subjob array;
* ``site/``: with ``--site``, a copy of the site's folder's files as they were when the sweep was written, which
  every subjob reads (the admin's own folder need not be visible from the compute nodes, nor stay unchanged);
* ``results/cell-NNNNN.json``: one per cell that ran (``cells.cell_result``),
  written whole or not at all (a temporary file renamed);
* ``logs/``: the subjobs' PBS output (``-j oe``).
"""

import json
import os
import shlex
import shutil

from predictor.cmdline.destinations import destination
from predictor.cmdline.outputs import OutputFiles

from ..shared.errors import ReplayError
from .cells import SweepSettings
from .grid import Cell
from .table import missing, outcome_of

__all__ = ["MANIFEST", "SCRIPT", "write_sweep", "read_manifest", "write_result", "outcomes"]

MANIFEST = "manifest.json"
SCRIPT = "sweep.pbs"
_RESULTS, _LOGS, _SITE = "results", "logs", "site"
_KIND = "pbs-softwalltime sweep"
_VERSION = 1


def _result_path(directory, index):
    return os.path.join(directory, _RESULTS, "cell-{:05d}.json".format(index))


def _new_directory(directory):
    if os.path.exists(directory) and (not os.path.isdir(directory) or os.listdir(directory)):
        raise ReplayError("{}: exists and is not an empty directory; give a new one for the sweep".format(directory))
    if any(character.isspace() for character in directory):
        raise ReplayError("{}: a #PBS directive cannot hold a path with white space".format(directory))
    try:
        for folder in (_RESULTS, _LOGS):
            os.makedirs(os.path.join(directory, folder), exist_ok=True)
    except OSError as err:
        raise ReplayError("{}: cannot create: {}".format(directory, err.strerror or err)) from err


def _script(directory, count, python, pythonpath, walltime_s, queue):
    lines = ["#!/bin/bash", "#PBS -N swt-sweep"]
    lines += ["#PBS -J 1-{}".format(count)] if count > 1 else []
    lines += ["#PBS -l select=1:ncpus=1",
              "#PBS -l walltime={:02d}:{:02d}:{:02d}".format(walltime_s // 3600, walltime_s // 60 % 60,
                                                            walltime_s % 60),
              "#PBS -j oe", "#PBS -o {}/".format(os.path.join(directory, _LOGS))]
    lines += ["#PBS -q {}".format(queue)] if queue else []
    lines += ["# One cell of the sweep in {} per subjob (see {}).".format(directory, MANIFEST),
              "# Merge the results with: python -m replay sweep collect {}".format(shlex.quote(directory)),
              "# From the sweep's directory: python -m puts its working directory first on its path, and a"
              " subjob starts in the user's home.",
              "cd {} || exit 1".format(shlex.quote(directory)),
              "export PYTHONPATH={}".format(shlex.quote(pythonpath)),
              'exec {} -m replay sweep cell {} "${{PBS_ARRAY_INDEX:-1}}"'.format(shlex.quote(python),
                                                                                 shlex.quote(directory))]
    return "\n".join(lines) + "\n"


def _write(path, text):
    """Write ``text`` whole or not at all, through the command lines' one writer: a reader never sees half a
    file."""
    with OutputFiles() as files, files.open(destination("sweep file", path)) as stream:
        stream.write(text)


def _copy_site(folder, directory):
    """Every file at the top of the site's folder copied into ``directory/site``: whatever the site reader takes
    from there, now or in a later version."""
    target = os.path.join(directory, _SITE)
    try:
        os.makedirs(target, exist_ok=True)
        for name in sorted(os.listdir(folder)):
            if os.path.isfile(os.path.join(folder, name)):
                shutil.copyfile(os.path.join(folder, name), os.path.join(target, name))
    except OSError as err:
        raise ReplayError("{}: cannot copy the site into {}: {}".format(folder, target, err.strerror or err)) \
            from err


def _manifest_settings(settings, directory):
    """The settings as the manifest holds them: the site (copied) as ``site``, in the sweep's directory; no
    site key without one."""
    written = settings._asdict()
    if settings.site is None:
        del written["site"]
    else:
        _copy_site(settings.site, directory)
        written["site"] = _SITE
    return written


def write_sweep(directory, cells, settings, python, pythonpath, walltime_s, queue=None):
    """Create the sweep directory: manifest, job script, results/ and logs/ (and site/ with a site); the
    script's path."""
    directory = os.path.abspath(directory)
    _new_directory(directory)
    manifest = {"kind": _KIND, "version": _VERSION, "workdir": os.getcwd(),
                "settings": _manifest_settings(settings, directory), "cells": [cell._asdict() for cell in cells]}
    _write(os.path.join(directory, MANIFEST), json.dumps(manifest, indent=1) + "\n")
    script = os.path.join(directory, SCRIPT)
    _write(script, _script(directory, len(cells), python, pythonpath, walltime_s, queue))
    return script


def read_manifest(directory):
    """``(cells, settings, workdir)`` of the sweep in ``directory``."""
    path = os.path.join(directory, MANIFEST)
    try:
        with open(path, encoding="utf-8") as stream:
            manifest = json.load(stream)
    except OSError as err:
        raise ReplayError("{}: no sweep here ({}: {})".format(directory, MANIFEST, err.strerror or err)) from err
    except ValueError as err:
        raise ReplayError("{}: not valid JSON: {}".format(path, err)) from err
    if not isinstance(manifest, dict) or manifest.get("kind") != _KIND or manifest.get("version") != _VERSION:
        raise ReplayError("{}: not a version {} sweep manifest".format(path, _VERSION))
    try:
        cells = [Cell(**cell) for cell in manifest["cells"]]
        settings = SweepSettings(**manifest["settings"])
        workdir = manifest["workdir"]
    except (KeyError, TypeError) as err:
        raise ReplayError("{}: malformed manifest: {}".format(path, err)) from err
    if settings.site is not None:  # the copy in the sweep's directory, wherever that is mounted now
        settings = settings._replace(site=os.path.join(directory, settings.site))
    return cells, settings, workdir


def write_result(directory, index, text):
    _write(_result_path(directory, index), text)


def outcomes(directory, cells):
    """Every cell's Outcome from its result file; a cell without one is missing."""
    found = []
    for index, cell in enumerate(cells, 1):
        path = _result_path(directory, index)
        try:
            with open(path, encoding="utf-8") as stream:
                text = stream.read()
        except FileNotFoundError:
            found.append(missing(index, cell, "no {} (not run yet, still running, or killed: see {}/)".format(
                os.path.relpath(path, directory), _LOGS)))
            continue
        except OSError as err:
            raise ReplayError("{}: cannot read: {}".format(path, err.strerror or err)) from err
        found.append(outcome_of(index, cell, text))
    return found
