"""Which files the paths given to ``ingest`` name, and which of them are not accounting logs at all.

A directory means its ``YYYYMMDD[.gz]`` files in name order (``logfile.directory_logs``, the rule the
replay follows too); a file that opens like an SWF trace is not an accounting log; ``lock_keys`` names
the directories one ingester at a time may load from.
"""

import os
import re

from ..accounting.logfile import READ_ERRORS, LogFile, directory_logs

__all__ = ["expand_paths", "looks_like_swf", "nothing_to_load", "empty_directories", "ignored_files", "lock_keys"]


def expand_paths(paths):
    """``(files, missing)``: files as given, directories as their ``YYYYMMDD[.gz]`` files sorted by name
    (``logfile.directory_logs``, the rule the replay follows too)."""
    files, missing = [], []
    for path in paths:
        if os.path.isdir(path):
            files.extend(directory_logs(path)[0])
        elif os.path.isfile(path):
            files.append(path)
        else:
            missing.append(path)
    return files, missing


_SWF_JOB_LINE = re.compile(rb"\s*(-?[0-9.]+\s+){17}-?[0-9.]+\s*")
_SWF_HEADER_LINE = re.compile(rb"\s*;\s*(Version|Computer|Installation|Acknowledge|Information|Conversion|MaxJobs|"
                              rb"MaxRecords|Preemption|UnixStartTime|TimeZone|TimeZoneString|StartTime|EndTime|"
                              rb"MaxNodes|MaxProcs|MaxRuntime|MaxMemory|AllowOveruse|MaxQueues|Queues?|"
                              rb"MaxPartitions|Partitions?|Note)\s*:")
_RECORD_START = re.compile(rb"\s*[0-9]{2}/[0-9]{2}/[0-9]{4} ")
_SNIFF_BYTES = 4096


def _head_lines(log):
    """The non-blank whole lines among the file's first bytes."""
    try:
        head = log.read_at(0, _SNIFF_BYTES)
    except READ_ERRORS:
        return []  # reading it for real reports the error
    return [line for line in head.split(b"\n")[:-1] if line.strip()]


def looks_like_swf(log):
    """Does the file open like a Standard Workload Format trace, with no accounting record among its first lines?

    SWF lines are ``; Key: value`` header comments and jobs of 18 numbers; an
    accounting record starts with its date, so damaged lines do not make a log SWF.
    """
    lines = _head_lines(log)
    if any(_RECORD_START.match(line) for line in lines):
        return False
    return any(_SWF_HEADER_LINE.match(line) or _SWF_JOB_LINE.fullmatch(line) for line in lines)


def nothing_to_load(paths):
    """Why ``paths`` hold no accounting file at all (naming the first culprit), or None if one is there."""
    files, missing = expand_paths(paths)
    if any(not looks_like_swf(LogFile(path)) for path in files):
        return None
    if files:
        return "{}: an SWF trace, not a PBS accounting log (python -m replay convert turns it into " \
               "accounting logs)".format(files[0])
    if missing:
        return "{}: no such file or directory".format(missing[0])
    return "{}: no accounting file in this directory".format(empty_directories(paths)[0])


def empty_directories(paths):
    """The directories among ``paths`` that hold no file to read."""
    return [path for path in paths if os.path.isdir(path) and not expand_paths([path])[0]]


def lock_keys(paths):
    """The directories ``paths`` load from (a file's: the one it is in), resolved: one ingester at a time each."""
    keys = set()
    for path in paths:
        real = os.path.realpath(path)
        keys.add(real if os.path.isdir(real) or not os.path.exists(real) else os.path.dirname(real))
    return sorted(keys)


def ignored_files(paths):
    """``(directory, count)`` for the directories among ``paths`` holding files that are not accounting files."""
    counts = [(path, directory_logs(path)[1]) for path in paths if os.path.isdir(path)]
    return [(path, count) for path, count in counts if count]
