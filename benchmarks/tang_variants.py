"""Tang et al.'s UE and BE on a trace under readings the paper leaves open: what moves the figures.

    python benchmarks/tang_variants.py TRACE.swf

An independent, plain-Python recomputation of the triple key at the 85th
percentile at submission (a month's window counted back from the submission,
at least 10 eligible jobs, R capped at 1, estimates int(walltime × A) in
[1, walltime], the first 1 % of the jobs left out), first as the replay's
``tang`` reads the paper, then with one reading changed at a time: the
percentile interpolated linearly between ranks (numpy's default) instead of
the nearest rank, a 31-day window, no project in the key, at least 9 jobs.
Its first line must agree with ``python -m replay TRACE --at submit
--predictors tang``. docs/predictors.md quotes the KTH-SP2 figures.
"""

import bisect
import math
import sys

import numpy as np

from replay.traces.readers import read_trace

HALF_HOUR_S = 1800
DAY_S = 86400


def estimates(jobs, interpolate=False, days=30, min_history=10, project=True, percentile=85):
    """Each job's adjusted walltime (None: no walltime), by job id."""
    keys = {}
    for job in jobs:
        keys.setdefault((job.user, job.group if project else None, job.walltime_s), []).append(job)
    adjusted = {}
    for similar in keys.values():
        done = sorted(similar, key=lambda job: (job.end_time, job.job_id))
        ends = [job.end_time for job in done]
        for job in similar:
            if not job.walltime_s:
                adjusted[job.job_id] = None
                continue
            newest = bisect.bisect_left(ends, job.submit_time)  # ended strictly before the submission
            oldest = bisect.bisect_left(ends, job.submit_time - days * DAY_S)
            ratios = sorted(min(past.runtime_s / past.walltime_s, 1.0) for past in done[oldest:newest])
            if len(ratios) < min_history:
                adjusted[job.job_id] = job.walltime_s
                continue
            ratio = (float(np.percentile(ratios, percentile)) if interpolate
                     else ratios[math.ceil(percentile / 100 * len(ratios)) - 1])
            adjusted[job.job_id] = max(1, min(job.walltime_s, int(job.walltime_s * ratio)))
    return adjusted


def categories(jobs, adjusted, warmup=0.01):
    """``(UE, BE, NA)`` shares over the jobs measured (after the warm-up) that have a walltime."""
    measured = [job for job in jobs[int(len(jobs) * warmup):] if adjusted[job.job_id] is not None]
    under, beyond, unadjusted = 0, 0, 0
    for job in measured:
        estimate = adjusted[job.job_id]
        if estimate == job.walltime_s:
            unadjusted += 1
        elif estimate < job.runtime_s:
            if job.runtime_s - estimate <= HALF_HOUR_S:
                under += 1
            else:
                beyond += 1
    return tuple(count / len(measured) for count in (under, beyond, unadjusted))


VARIANTS = (
    ("as the replay's tang (nearest rank)", {}),
    ("percentile interpolated (numpy linear)", {"interpolate": True}),
    ("interpolated, 31-day window", {"interpolate": True, "days": 31}),
    ("interpolated, key without the project", {"interpolate": True, "project": False}),
    ("nearest rank, at least 9 eligible jobs", {"min_history": 9}),
)


def main():
    trace, _ = read_trace(sys.argv[1:2], "auto", 0)
    jobs = sorted(trace.jobs, key=lambda job: job.submit_time)
    for name, options in VARIANTS:
        under, beyond, unadjusted = categories(jobs, estimates(jobs, **options))
        print("{:42} UE {:5.2f} %  BE {:5.2f} %  NA {:5.1f} %".format(name, 100 * under, 100 * beyond,
                                                                      100 * unadjusted))


if __name__ == "__main__":
    main()
