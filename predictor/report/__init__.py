"""``python -m predictor report``: how accurate were the soft walltimes the hooks set?

Reads completed_jobs (a role in softwalltime_reader is enough) over a period
of job end times, and compares each job's soft walltime, and its user's own
walltime, with the runtime that followed: shares under- and over-estimated,
errors, accuracy, by runtime class and per user. The figures follow Chlumsky
& Klusacek, "Improving Accuracy of Walltime Estimates in PBS Professional
using Soft Walltimes" (Fig. 4-6). Jobs without a soft walltime (before the
hooks) are counted apart.

Layers, top down: ``command`` (the CLI's entry) -> ``summary`` (tables),
``plots`` (PNGs) -> ``measure`` (the database) -> ``queries`` (SQL),
``selection`` (the period). Every aggregate is computed in PostgreSQL.
"""
