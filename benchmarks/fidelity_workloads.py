"""The workloads recorded on a real OpenPBS to check the simulator's fidelity, one JSON file per configuration.

    python benchmarks/fidelity_workloads.py OUTDIR [--seed 22] [--only NAME ...]

Each workload is a scheduler configuration (``strict-depth1-light``,
``formula``, ``fairshare``, ``vnodes``, ``eligibility`` with job arrays and
dependencies, ``roundrobin`` with queues of equal priority and run limits,
``resources`` with mem, ``node_sort_key`` and a formula threshold, ``limits-legacy`` with
old-style limits (``max_user_run``, ``max_group_res``, ``max_running``) and one on mem,
``limits-projects`` with limits per project (``qsub -P``), ``aging`` with a formula that
reads ``eligible_time`` (``aging-limits``: and a run limit per user; ``aging-groups``: run
limits per group, per user's ncpus on the queue and for everyone), ``queue-depth`` with a
``backfill_depth`` of each queue's own, ``fuzzy-off`` with exact top-job estimates
(``opt_backfill_fuzzy``), ``no-strict`` with PBS's default ``sched_config``, ``direct`` with
jobs submitted as they come rather than held and released, some of them deleted, ``vnodes-onehost`` with the
four vnodes on one host, ``mixed`` with a formula over two queues, run limits and vnodes at once, ``gpus`` with a
custom ``ngpus`` resource on two of the vnodes, ...) and
60 to 70 jobs: four users in
three groups, ``sleep`` jobs of 2 to 15 seconds (10 to 50 in ``fairshare-long`` (``fairshare-long-default-poll``: with
the MoM's polling as PBS ships it), ``fairshare-vnodes`` and
``formula-fairshare``), walltimes above the runtimes,
soft walltimes on most jobs -- some under the runtime (so PBS extends them),
some over -- and release offsets that load the vnodes lightly (about half
busy) or heavily (more work offered than the vnodes hold, so a queue builds).
The same seed gives byte-identical files. ``benchmarks/pbs_record.py`` plays
a workload on a test server.
"""

import argparse
import json
import os
import random
import re
import sys
import zlib

USERS = {"fid_ana": "fid_red", "fid_ben": "fid_red", "fid_cai": "fid_blue", "fid_dan": "fid_green"}
USER_WEIGHTS = (("fid_ana", 4), ("fid_ben", 2), ("fid_cai", 3), ("fid_dan", 1))
STRICT = {"strict_ordering": "True ALL"}
FAST_MOM_POLL = {"$min_check_poll": "1", "$max_check_poll": "2"}
ONE_VNODE = [{"ncpus": 8}]
LIGHT, HEAVY = 0.4, 1.4
"""Offered load: work released per second over what the vnodes can run per second."""


def weighted(rng, pairs):
    """One value of ``[(value, weight), ...]``."""
    values, weights = zip(*pairs)
    return rng.choices(values, weights=weights)[0]


def shaped(rng, shapes):
    """``(select, place)`` drawn from ``shapes``, ``((select, place, weight), ...)``."""
    return weighted(rng, [((select, place), weight) for select, place, weight in shapes])


def shaped_chunk(shapes):
    """A chunk function (``make_jobs``' ``chunk``) drawing each job's ``(select, place)`` from ``shapes``."""
    def chunk(rng, _cpu_weights):
        return shaped(rng, shapes)
    return chunk


def single_chunk(rng, cpu_weights):
    """``(select, place)`` of a one-chunk job; ``cpu_weights`` is ``[(ncpus, weight), ...]``."""
    return "1:ncpus={}".format(weighted(rng, cpu_weights)), "pack"


SMALL_CPUS = ((1, 4), (2, 3), (3, 1))
MIXED_CPUS = ((1, 3), (2, 3), (3, 1), (4, 2), (6, 1), (8, 1))
WITHIN_LIMIT_CPUS = ((1, 3), (2, 3), (3, 1), (4, 2), (6, 1))
"""No job above the per-user ncpus limit of ``limits``: it could never run."""
VNODE_SHAPES = (("1:ncpus=1", "pack", 3), ("1:ncpus=2", "pack", 2), ("1:ncpus=4", "pack", 1),
                ("1:ncpus=6", "pack", 1), ("2:ncpus=2", "scatter", 2), ("2:ncpus=2+1:ncpus=1", "scatter", 2),
                ("2:ncpus=2+1:ncpus=1", "free", 1), ("3:ncpus=1", "scatter", 1), ("2:ncpus=1", "vscatter", 1),
                ("1:ncpus=1:mem=6gb", "pack", 1), ("2:ncpus=3", "pack", 1), ("1:ncpus=2", "excl", 1),
                ("2:ncpus=1", "scatter:excl", 1), ("4:ncpus=1", "free", 1))


vnode_chunk = shaped_chunk(VNODE_SHAPES)
"""``(select, place)`` of a job for four vnodes of 2, 4, 4 and 8 ncpus on four hosts."""


def select_parts(select):
    """``(count, [resource=value, ...])`` of each part of a select: ``2:ncpus=2+ncpus=1`` gives
    ``(2, ["ncpus=2"])`` and ``(1, ["ncpus=1"])``."""
    for chunk in select.split("+"):
        parts = chunk.split(":")
        if parts[0].isdigit():
            yield int(parts[0]), parts[1:]
        else:
            yield 1, parts


def total_chunks(select):
    """The chunks a select asks for in all: ``2:ncpus=2+1:ncpus=1`` is 3."""
    return sum(count for count, _ in select_parts(select))


def total_ncpus(select):
    """The ncpus a select asks for in all: ``2:ncpus=2+1:ncpus=1`` is 5."""
    return sum(count * sum(int(part.split("=")[1]) for part in parts if part.startswith("ncpus="))
               for count, parts in select_parts(select))


def job_times(rng, runtimes):
    """``(runtime, walltime, soft_walltime or None)``: soft under the runtime for some, over for others."""
    runtime = rng.randint(*runtimes)
    walltime = max(runtime + 5, int(runtime * rng.uniform(1.5, 4.0)))
    if rng.random() < 0.2:
        return runtime, walltime, None
    soft = int(round(runtime * rng.uniform(0.3, 1.8)))
    return runtime, walltime, min(max(soft, 1), walltime)


def make_jobs(rng, count, shape, cpu_weights, runtimes, load, capacity, queues=("workq",)):
    """``count`` jobs released at random offsets so that the offered load is ``load`` of ``capacity`` ncpus."""
    jobs, offset = [], 0.0
    for number in range(count):
        select, place = shape(rng, cpu_weights)
        runtime, walltime, soft = job_times(rng, runtimes)
        jobs.append({"name": "j{:03d}".format(number + 1), "user": weighted(rng, USER_WEIGHTS),
                     "queue": queues[rng.randrange(len(queues))], "select": select, "place": place,
                     "walltime": walltime, "soft_walltime": soft, "runtime": runtime, "offset": offset})
        mean_gap = total_ncpus(select) * runtime / (capacity * load)
        burst = rng.random() < 0.15  # some jobs arrive together, released by one qrls
        offset = round(offset if burst else offset + rng.expovariate(1 / mean_gap), 1)
    return jobs


def workload(name, description, jobs, **settings):
    """A workload: the configuration (vnodes, server, queues, sched_config, ...) and its jobs."""
    base = {"name": name, "description": description, "users": USERS, "vnodes": ONE_VNODE, "server": {},
            "queues": {}, "sched_config": STRICT, "resource_group": None, "mom_config": {}, "jobs": jobs}
    base.update(settings)
    return base


SHARE_TREE = [["fid_red", 10, "root", 50], ["fid_blue", 20, "root", 30], ["fid_green", 30, "root", 20],
              ["fid_ana", 11, "fid_red", 60], ["fid_ben", 12, "fid_red", 40], ["fid_cai", 21, "fid_blue", 100],
              ["fid_dan", 31, "fid_green", 100]]
FOUR_VNODES = [{"ncpus": 2, "mem": "4gb", "host": "pbshost-a"}, {"ncpus": 4, "mem": "8gb", "host": "pbshost-b"},
               {"ncpus": 4, "mem": "8gb", "host": "pbshost-c"}, {"ncpus": 8, "mem": "16gb", "host": "pbshost-d"}]


def strict_light(rng):
    return workload("strict-depth1-light", "strict ordering, backfill_depth 1, one 8-ncpu vnode, about half busy",
                    make_jobs(rng, 60, single_chunk, SMALL_CPUS, (2, 12), LIGHT, 8), server={"backfill_depth": 1})


def strict_heavy(rng):
    return workload("strict-depth1-heavy", "strict ordering, backfill_depth 1, one 8-ncpu vnode, a queue builds",
                    make_jobs(rng, 70, single_chunk, MIXED_CPUS, (2, 15), HEAVY, 8), server={"backfill_depth": 1})


def strict_depth3(rng):
    return workload("strict-depth3", "strict ordering, backfill_depth 3, one 8-ncpu vnode, a queue builds",
                    make_jobs(rng, 70, single_chunk, MIXED_CPUS, (2, 15), HEAVY, 8), server={"backfill_depth": 3})


def fuzzy_off(rng):
    return workload("fuzzy-off", "as strict-depth3, with opt_backfill_fuzzy off: the top jobs' estimated starts are "
                    "exact seconds, not rounded up to the next minute (low, PBS's default)",
                    make_jobs(rng, 70, single_chunk, MIXED_CPUS, (2, 15), HEAVY, 8), server={"backfill_depth": 3},
                    sched={"opt_backfill_fuzzy": "off"})


def formula(rng):
    return workload("formula", "job_sort_formula ncpus * 100 + walltime, strict ordering, a queue builds",
                    make_jobs(rng, 70, single_chunk, MIXED_CPUS, (2, 15), HEAVY, 8),
                    server={"job_sort_formula": "ncpus * 100 + walltime"})


def sortkey(rng):
    return workload("sortkey", "job_sort_key ncpus HIGH then walltime LOW, no formula, strict ordering",
                    make_jobs(rng, 60, single_chunk, MIXED_CPUS, (2, 12), HEAVY, 8),
                    sched_config=dict(STRICT, job_sort_key=['"ncpus HIGH" ALL', '"walltime LOW" ALL']))


def no_strict_heavy(rng):
    return workload("no-strict-heavy", "PBS's default sched_config (strict_ordering off), one 8-ncpu vnode, a queue "
                    "builds: any job that fits runs, so narrow jobs pass wide ones",
                    make_jobs(rng, 70, single_chunk, MIXED_CPUS, (2, 15), HEAVY, 8), sched_config={})


def fairshare_settings(entity, decay_time):
    """sched_config of the fairshare workloads: strict ordering, ``ncpus*walltime`` halved every ``decay_time``."""
    return dict(STRICT, fair_share="True ALL", fairshare_usage_res="ncpus*walltime", fairshare_entity=entity,
                fairshare_decay_time=decay_time, fairshare_decay_factor="0.5", unknown_shares="10")


def fairshare(rng):
    settings = fairshare_settings("euser", "00:01:00")
    return workload("fairshare", "fairshare over three groups (ncpus*walltime, decay 0.5 every minute), strict",
                    make_jobs(rng, 70, single_chunk, MIXED_CPUS, (2, 12), HEAVY, 8), sched_config=settings,
                    resource_group=SHARE_TREE, mom_config=FAST_MOM_POLL)


def fairshare_light(rng):
    settings = fairshare_settings("euser", "00:01:00")
    return workload("fairshare-light", "as fairshare (three groups, ncpus*walltime, decay 0.5 every minute, strict), "
                    "about half busy", make_jobs(rng, 60, single_chunk, MIXED_CPUS, (2, 12), LIGHT, 8),
                    sched_config=settings, resource_group=SHARE_TREE, mom_config=FAST_MOM_POLL)


def fairshare_long(rng):
    settings = fairshare_settings("euser", "00:05:00")
    return workload("fairshare-long", "fairshare as in fairshare, with jobs of 10 to 50 s and decay 0.5 every five "
                    "minutes: the MoM's polling a smaller share of each job's usage",
                    make_jobs(rng, 60, single_chunk, MIXED_CPUS, (10, 50), HEAVY, 8), sched_config=settings,
                    resource_group=SHARE_TREE, mom_config=FAST_MOM_POLL)


def fairshare_long_default_poll(rng):
    return dict(fairshare_long(rng), name="fairshare-long-default-poll", mom_config={},
                description="as fairshare-long (jobs of 10 to 50 s, decay 0.5 every five minutes), with the MoM "
                            "polling its jobs as PBS ships it (10 to 120 s), as a site's MoM does")


def fairshare_vnodes(rng):
    settings = dict(fairshare_settings("euser", "00:05:00"), strict_ordering="false ALL")
    return workload("fairshare-vnodes", "fairshare as in fairshare-long (jobs of 10 to 50 s, decay 0.5 every five "
                    "minutes) without strict ordering, as PBS's default sched_config has it, on four vnodes (2, 4, "
                    "4, 8 ncpus) with multi-chunk jobs",
                    make_jobs(rng, 60, vnode_chunk, None, (10, 50), HEAVY, 18), vnodes=FOUR_VNODES,
                    sched_config=settings, resource_group=SHARE_TREE, mom_config=FAST_MOM_POLL)


FAIRSHARE_FORMULA = "fairshare_factor * 100 + ncpus"
"""An entity's ``fairshare_factor`` (2 to the power of minus its usage over its share) weighs more than a job's size."""


def formula_fairshare(rng):
    return workload("formula-fairshare", "job_sort_formula " + FAIRSHARE_FORMULA + " with fairshare as in "
                    "fairshare-long (jobs of 10 to 50 s, decay 0.5 every five minutes), strict ordering, four vnodes "
                    "(2, 4, 4, 8 ncpus) with multi-chunk jobs",
                    make_jobs(rng, 60, vnode_chunk, None, (10, 50), HEAVY, 18), vnodes=FOUR_VNODES,
                    server={"job_sort_formula": FAIRSHARE_FORMULA},
                    sched_config=fairshare_settings("euser", "00:05:00"), resource_group=SHARE_TREE,
                    mom_config=FAST_MOM_POLL)


GROUP_SHARES = [["fid_red", 10, "root", 50], ["fid_blue", 20, "root", 30], ["fid_green", 30, "root", 20]]


def fairshare_egroup(rng):
    settings = fairshare_settings("egroup", "00:01:00")
    return workload("fairshare-egroup", "fairshare between three groups (egroup, ncpus*walltime, decay 0.5 every "
                    "minute), strict", make_jobs(rng, 60, single_chunk, MIXED_CPUS, (2, 12), HEAVY, 8),
                    sched_config=settings, resource_group=GROUP_SHARES, mom_config=FAST_MOM_POLL)


def limits(rng):
    return workload("limits", "max_run 2 and max_run_res.ncpus 6 per user (server), strict ordering",
                    make_jobs(rng, 60, single_chunk, WITHIN_LIMIT_CPUS, (2, 12), HEAVY, 8),
                    server={"max_run": "[u:PBS_GENERIC=2]", "max_run_res.ncpus": "[u:PBS_GENERIC=6]"})


def vnodes(rng):
    return workload("vnodes", "four vnodes (2, 4, 4, 8 ncpus) on four hosts, multi-chunk jobs, scatter/pack/free/excl",
                    make_jobs(rng, 60, vnode_chunk, None, (2, 12), HEAVY, 18), vnodes=FOUR_VNODES)


ONE_HOST_VNODES = [{"ncpus": 2, "mem": "4gb"}, {"ncpus": 4, "mem": "8gb"}, {"ncpus": 4, "mem": "8gb"},
                   {"ncpus": 8, "mem": "16gb"}]
"""Four vnodes of one MoM with no host of their own, as PBS's guide to vnodes sets them up: one host."""
ONE_HOST_SHAPES = (("1:ncpus=1", "pack", 3), ("1:ncpus=2", "pack", 2), ("1:ncpus=4", "pack", 1),
                   ("1:ncpus=6", "pack", 1), ("1:ncpus=10", "pack", 1), ("2:ncpus=2", "vscatter", 2),
                   ("2:ncpus=2+1:ncpus=1", "free", 1), ("3:ncpus=1", "vscatter", 1), ("1:ncpus=1:mem=6gb", "pack", 1),
                   ("2:ncpus=3", "pack", 1), ("1:ncpus=2", "excl", 1), ("2:ncpus=1", "vscatter:excl", 1),
                   ("4:ncpus=1", "free", 1), ("1:ncpus=2", "scatter", 1))
"""Chunks for ONE_HOST_VNODES: ``pack`` may span the host's vnodes (a chunk of 6 or 10 ncpus), ``scatter``
only has one chunk (one host), ``vscatter`` one chunk per vnode."""


one_host_chunk = shaped_chunk(ONE_HOST_SHAPES)
"""``(select, place)`` of a job for ONE_HOST_VNODES."""


def vnodes_onehost(rng):
    return workload("vnodes-onehost", "four vnodes (2, 4, 4, 8 ncpus) of one MoM on one host, chunks spread over "
                    "the host's vnodes (pack), vscatter, free and excl, strict ordering",
                    make_jobs(rng, 60, one_host_chunk, None, (2, 12), HEAVY, 18), vnodes=ONE_HOST_VNODES)


GPU_VNODES = [{"ncpus": 2, "mem": "4gb", "host": "pbshost-a"},
              {"ncpus": 4, "mem": "8gb", "ngpus": 2, "host": "pbshost-b"},
              {"ncpus": 4, "mem": "8gb", "host": "pbshost-c"},
              {"ncpus": 8, "mem": "16gb", "ngpus": 4, "host": "pbshost-d"}]
GPU_SHAPES = (("1:ncpus=1", "pack", 3), ("1:ncpus=2", "pack", 2), ("1:ncpus=4", "pack", 1), ("2:ncpus=2", "scatter", 1),
              ("1:ncpus=1:ngpus=1", "pack", 3), ("1:ncpus=2:ngpus=2", "pack", 2), ("2:ncpus=1:ngpus=1", "scatter", 1),
              ("1:ncpus=4:ngpus=4", "pack", 1), ("1:ncpus=2:ngpus=1+1:ncpus=2", "free", 1))
"""Chunks for GPU_VNODES: CPU-only jobs anywhere (also on the GPU hosts' ncpus), GPU jobs only on the two GPU
hosts, one of them only on the host of 4 GPUs."""
GPU_RESOURCES = '"ncpus, mem, arch, host, vnode, aoe, eoe, ngpus"'


gpu_chunk = shaped_chunk(GPU_SHAPES)
"""``(select, place)`` of a job for GPU_VNODES."""


def gpus(rng):
    return workload("gpus", "a custom ngpus resource (type long, flag nh) on two of four vnodes (2, 4, 4, 8 ncpus; "
                    "2 and 4 GPUs), in the scheduler's resources line, max_run_res.ngpus 4 per user (server), jobs "
                    "of CPUs only and of GPUs, strict ordering, backfill_depth 2",
                    make_jobs(rng, 60, gpu_chunk, None, (2, 12), HEAVY, 18), vnodes=GPU_VNODES,
                    resources={"ngpus": "type=long, flag=nh"},
                    server={"backfill_depth": 2, "max_run_res.ngpus": "[u:PBS_GENERIC=4]"},
                    sched_config=dict(STRICT, resources=GPU_RESOURCES))


def vnodes_onehost_scatter(rng):
    jobs = make_jobs(rng, 60, vnode_chunk, None, (2, 12), HEAVY, 18)
    for job in jobs:
        if "scatter" in job["place"].split(":") and total_chunks(job["select"]) > 1:
            job["never_runs"] = True  # one host: a second chunk has no host of its own
    return workload("vnodes-onehost-scatter", "the jobs of vnodes (multi-chunk, scatter, pack, free, excl) on the "
                    "four vnodes of one host: a job scattering two chunks or more never runs there (one host), "
                    "yet PBS does not count it as one that can never run (it counts vnodes); strict ordering",
                    jobs, vnodes=ONE_HOST_VNODES)


def strict_depth10(rng):
    return workload("strict-depth10", "strict ordering, backfill_depth 10 (many top jobs, each planned around the "
                    "ones before it), one 8-ncpu vnode, a long queue builds",
                    make_jobs(rng, 70, single_chunk, MIXED_CPUS, (2, 15), 1.8, 8), server={"backfill_depth": 10})


def strict_depth10_onehost(rng):
    return workload("strict-depth10-onehost", "strict ordering, backfill_depth 10, the four vnodes of one host with "
                    "chunks spread over them, a long queue builds",
                    make_jobs(rng, 60, one_host_chunk, None, (2, 12), 1.8, 18), vnodes=ONE_HOST_VNODES,
                    server={"backfill_depth": 10})


def onehost_node_sort(rng):
    return workload("onehost-node-sort", "the four vnodes of one host searched by node_sort_key ncpus HIGH unused "
                    "(the emptiest first, sorted again after every start), chunks spread over them, strict ordering",
                    make_jobs(rng, 60, one_host_chunk, None, (2, 12), HEAVY, 18), vnodes=ONE_HOST_VNODES,
                    sched_config=dict(STRICT, node_sort_key='"ncpus HIGH unused" ALL'))


def onehost_node_sort_low(rng):
    return workload("onehost-node-sort-low", "the four vnodes of one host searched by node_sort_key ncpus LOW unused "
                    "(the fullest that fits first), chunks with mem and spread over the vnodes, strict ordering",
                    make_jobs(rng, 60, one_host_chunk, None, (2, 12), HEAVY, 18), vnodes=ONE_HOST_VNODES,
                    sched_config=dict(STRICT, node_sort_key='"ncpus LOW unused" ALL'))


def vnodes_onehost_light(rng):
    return workload("vnodes-onehost-light", "as vnodes-onehost (four vnodes of 2, 4, 4 and 8 ncpus on one host), "
                    "about half busy",
                    make_jobs(rng, 60, one_host_chunk, None, (2, 12), LIGHT, 18), vnodes=ONE_HOST_VNODES)


def no_strict_onehost(rng):
    return workload("no-strict-onehost", "PBS's default sched_config (no strict ordering: every job that fits runs, "
                    "in order) on the four vnodes of one host, max_run 2 per user (server)",
                    make_jobs(rng, 60, one_host_chunk, None, (2, 12), HEAVY, 18), vnodes=ONE_HOST_VNODES,
                    server={"max_run": "[u:PBS_GENERIC=2]"}, sched_config={})


MIXED_FORMULA = "queue_priority * 10 + ncpus * 100 + walltime / 10"
"""The queue's priority weighs in the formula, with by_queue off: one order over both queues."""


def mixed(rng):
    return workload("mixed", "job_sort_formula " + MIXED_FORMULA + " over two queues (priority 20 and 5) without "
                    "by_queue, max_run 3 per user and max_run_res.ncpus 8 per group (server), max_run 4 on the "
                    "queue of priority 20, four vnodes (2, 4, 4, 8 ncpus) on four hosts with multi-chunk jobs, "
                    "strict ordering, backfill_depth 2",
                    make_jobs(rng, 66, vnode_chunk, None, (2, 12), HEAVY, 18, ("fid_high", "fid_low")),
                    vnodes=FOUR_VNODES,
                    server={"job_sort_formula": MIXED_FORMULA, "backfill_depth": 2,
                            "max_run": "[u:PBS_GENERIC=3]", "max_run_res.ncpus": "[g:PBS_GENERIC=8]"},
                    queues={"fid_high": {"priority": 20, "max_run": "[o:PBS_ALL=4]"}, "fid_low": {"priority": 5}},
                    sched_config=dict(STRICT, by_queue="False ALL"))


def vnodes_light(rng):
    return workload("vnodes-light", "as vnodes (four vnodes of 2, 4, 4 and 8 ncpus, multi-chunk jobs), about half busy",
                    make_jobs(rng, 60, vnode_chunk, None, (2, 12), LIGHT, 18), vnodes=FOUR_VNODES)


def queues(rng):
    return workload("queues", "two queues of priority 100 and 50, by_queue, strict ordering",
                    make_jobs(rng, 60, single_chunk, MIXED_CPUS, (2, 12), HEAVY, 8, ("fid_high", "fid_low")),
                    queues={"fid_high": {"priority": 100}, "fid_low": {"priority": 50}},
                    sched_config=dict(STRICT, by_queue="True ALL"))


def queue_depth(rng):
    return workload("queue-depth", "two queues by_queue, fid_high (priority 100) with its own backfill_depth 2 and "
                    "fid_low (priority 50) with backfill_depth 0, four vnodes (2, 4, 4, 8 ncpus) with multi-chunk "
                    "jobs, strict ordering: top jobs counted per queue, a job of fid_low that does not run stops "
                    "its queue",
                    make_jobs(rng, 60, vnode_chunk, None, (2, 12), HEAVY, 18, ("fid_high", "fid_low")),
                    vnodes=FOUR_VNODES,
                    queues={"fid_high": {"priority": 100, "backfill_depth": 2},
                            "fid_low": {"priority": 50, "backfill_depth": 0}},
                    sched_config=dict(STRICT, by_queue="True ALL"))


def no_strict(rng):
    return workload("no-strict", "PBS's default sched_config (strict_ordering off: no top jobs, every job that "
                    "fits runs, in order), four vnodes (2, 4, 4, 8 ncpus) with multi-chunk jobs, max_run 2 per user "
                    "and max_run_res.ncpus 10 per group (server)",
                    make_jobs(rng, 60, vnode_chunk, None, (2, 12), HEAVY, 18), vnodes=FOUR_VNODES,
                    server={"max_run": "[u:PBS_GENERIC=2]", "max_run_res.ncpus": "[g:PBS_GENERIC=10]"},
                    sched_config={})


def eligibility(rng):
    jobs = make_jobs(rng, 60, single_chunk, MIXED_CPUS, (2, 12), HEAVY, 8)
    for number, job in enumerate(jobs):
        draw = rng.random()
        if draw < 0.15 and total_ncpus(job["select"]) <= 4:
            job["array"] = "1-{}".format(rng.randint(2, 4))
        elif draw < 0.35 and number >= 3:
            earlier = [other["name"] for other in jobs[max(0, number - 8):number] if "array" not in other]
            if earlier:
                job["depend"] = "{}:{}".format(rng.choice(("afterok", "afterany")), rng.choice(earlier))
    return workload("eligibility", "job arrays (qsub -J) and jobs that wait for an earlier one (-W depend=afterok "
                    "or afterany) besides held jobs, strict ordering, backfill_depth 1", jobs,
                    server={"backfill_depth": 1})


def direct(rng):
    jobs = make_jobs(rng, 60, single_chunk, MIXED_CPUS, (2, 12), HEAVY, 8)
    for job in rng.sample(jobs[5:], 4):
        job["delete_after"] = rng.choice((1, 4))  # queued or running by then, as the load has it
    for job in rng.sample([job for job in jobs if total_ncpus(job["select"]) <= 2 and "delete_after" not in job], 2):
        job["array"] = "1-{}".format(rng.randint(2, 3))
    return workload("direct", "jobs submitted as they come (no hold, no release; the manager sets soft walltimes "
                    "right after qsub, while the scheduler may already run them), some deleted 1 or 4 s after, "
                    "strict ordering, backfill_depth 2, one 8-ncpu vnode, a queue builds", jobs,
                    server={"backfill_depth": 2}, submission="direct")


ROUND_ROBIN_QUEUES = ("fid_qa", "fid_qb", "fid_qc")


def roundrobin(rng):
    return workload("roundrobin", "three queues of equal priority taken in turn (round_robin, by_queue), max_run 3 "
                    "per group and 2 for fid_ana (server), 1 per user in fid_qa, max_run_res.ncpus 6 on fid_qc, "
                    "strict ordering",
                    make_jobs(rng, 66, single_chunk, WITHIN_LIMIT_CPUS, (2, 12), HEAVY, 8, ROUND_ROBIN_QUEUES),
                    server={"max_run": "[g:PBS_GENERIC=3],[u:fid_ana=2]"},
                    queues={"fid_qa": {"priority": 50, "max_run": "[u:PBS_GENERIC=1]"}, "fid_qb": {"priority": 50},
                            "fid_qc": {"priority": 50, "max_run_res.ncpus": "[o:PBS_ALL=6]"}},
                    sched_config=dict(STRICT, by_queue="True ALL", round_robin="True ALL"))


RESOURCE_SHAPES = (("1:ncpus=1:mem=1gb", "pack", 3), ("1:ncpus=2:mem=6gb", "pack", 2),
                   ("1:ncpus=1:mem=10gb", "pack", 1), ("2:ncpus=1:mem=3gb", "pack", 2),
                   ("2:ncpus=2:mem=3gb", "scatter", 2), ("1:ncpus=2", "pack", 2),
                   ("1:ncpus=4:mem=2gb+2:ncpus=1:mem=3gb", "free", 1), ("3:ncpus=1:mem=5gb", "scatter", 1),
                   ("2:ncpus=2:mem=4gb", "pack", 1), ("1:ncpus=3:mem=12gb", "pack", 1),
                   ("4:ncpus=1:mem=2gb", "free", 1), ("1:ncpus=6:mem=4gb", "pack", 1), ("2:ncpus=1", "pack", 1))
"""Chunks with mem on FOUR_VNODES (2 ncpus and 4gb, 4 and 8gb twice, 8 and 16gb): some fit only the larger
vnodes by their mem, some must share one host (pack)."""
RESOURCES_FORMULA = "ncpus * 100 + mem / 1048576 + walltime"
RESOURCES_THRESHOLD = 120
"""Jobs of one ncpu whose gb of mem and walltime add up to 20 or less never run (formula values at or
below the threshold)."""


resource_chunk = shaped_chunk(RESOURCE_SHAPES)
"""``(select, place)`` of a job with mem in its chunks, for FOUR_VNODES."""


def total_amount(select, resource):
    """The whole numbers of ``resource`` a select asks for in all (gb for mem): ``2:mem=3gb+1:mem=1gb`` is 7."""
    return sum(count * sum(int(re.sub(r"\D", "", part.split("=")[1])) for part in parts
                           if part.startswith(resource + "="))
               for count, parts in select_parts(select))


def resources_value(job):
    """The value of RESOURCES_FORMULA for a job (mem counted in gb, as mem / 1048576 of its kb)."""
    return total_ncpus(job["select"]) * 100 + total_amount(job["select"], "mem") + job["walltime"]


def resources(rng):
    jobs = make_jobs(rng, 66, resource_chunk, None, (2, 12), HEAVY, 18)
    for job in jobs:
        if resources_value(job) <= RESOURCES_THRESHOLD:
            job["never_runs"] = True
    return workload("resources", "four vnodes of 2, 4, 4 and 8 ncpus and 4, 8, 8 and 16gb of mem, chunks with mem, "
                    "pack, scatter and free, node_sort_key ncpus LOW unused, job_sort_formula " + RESOURCES_FORMULA +
                    " with job_sort_formula_threshold {} (the jobs at or below it never run), strict ordering".format(
                        RESOURCES_THRESHOLD), jobs, vnodes=FOUR_VNODES,
                    server={"job_sort_formula": RESOURCES_FORMULA},
                    sched={"job_sort_formula_threshold": RESOURCES_THRESHOLD},
                    sched_config=dict(STRICT, node_sort_key='"ncpus LOW unused" ALL'))


AGING_FORMULA = "eligible_time + 10 * ncpus"
"""Each second a job waits eligible counts as a tenth of an ncpu: with jobs of seconds and a queue of a minute or
two, a job of one ncpu overtakes one of eight that became eligible about 70 s after it (with ``ncpus * 100`` alone
the larger job would always go first)."""


def aging(rng):
    return workload("aging", "eligible_time_enable on, job_sort_formula " + AGING_FORMULA + " (jobs age in the "
                    "queue), strict ordering, a queue builds",
                    make_jobs(rng, 66, single_chunk, MIXED_CPUS, (2, 15), HEAVY, 8),
                    server={"eligible_time_enable": True, "job_sort_formula": AGING_FORMULA})


def aging_limits(rng):
    return workload("aging-limits", "as aging, with max_run 2 per user (server): PBS stops a job's eligible time "
                    "while its user is at the limit",
                    make_jobs(rng, 66, single_chunk, MIXED_CPUS, (2, 15), HEAVY, 8),
                    server={"eligible_time_enable": True, "job_sort_formula": AGING_FORMULA,
                            "max_run": "[u:PBS_GENERIC=2]"})


def aging_groups(rng):
    return workload("aging-groups", "as aging, with max_run 3 per group and 6 for everyone (server) and "
                    "max_run_res.ncpus 6 per user (queue), jobs of up to 6 ncpus: a job accrues ineligible time over "
                    "the group's or the user's limit, eligible time over the limit for everyone; log_events 2047 "
                    "logs each change",
                    make_jobs(rng, 66, single_chunk, MIXED_CPUS[:-1], (2, 15), HEAVY, 8),
                    server={"eligible_time_enable": True, "job_sort_formula": AGING_FORMULA,
                            "max_run": "[g:PBS_GENERIC=3],[o:PBS_ALL=6]", "log_events": 2047},
                    queues={"workq": {"max_run_res.ncpus": "[u:PBS_GENERIC=6]"}})


PROJECTS = ("fid_atlas", "fid_comet", "fid_delta")
"""The projects (``qsub -P``) of ``limits-projects``' jobs."""
LEGACY_SHAPES = (("1:ncpus=1:mem=1gb", "pack", 3), ("1:ncpus=1:mem=4gb", "pack", 2), ("1:ncpus=2:mem=2gb", "pack", 3),
                 ("1:ncpus=2:mem=6gb", "pack", 1), ("1:ncpus=3:mem=3gb", "pack", 1), ("1:ncpus=4:mem=2gb", "pack", 1),
                 ("1:ncpus=4:mem=8gb", "pack", 1), ("1:ncpus=1", "pack", 1))
"""One-chunk jobs of up to 4 ncpus (under a group's 5, and within fid_atlas's 4) and 8gb (a user's limit on the queue)
on ONE_VNODE_MEM."""
ONE_VNODE_MEM = [{"ncpus": 8, "mem": "16gb"}]


legacy_chunk = shaped_chunk(LEGACY_SHAPES)
"""``(select, place)`` of a job with mem for ONE_VNODE_MEM."""


def limits_legacy(rng):
    return workload("limits-legacy", "run limits as older sites set them: max_user_run 2 and max_group_res.ncpus 5 "
                    "(server), max_running 6 and max_user_res.mem 8gb (queue); one vnode of 8 ncpus and 16gb, jobs "
                    "with mem, strict ordering",
                    make_jobs(rng, 66, legacy_chunk, None, (2, 12), HEAVY, 8), vnodes=ONE_VNODE_MEM,
                    server={"max_user_run": 2, "max_group_res.ncpus": 5},
                    queues={"workq": {"max_running": 6, "max_user_res.mem": "8gb"}})


def limits_projects(rng):
    jobs = make_jobs(rng, 66, legacy_chunk, None, (2, 12), HEAVY, 8)
    for job in jobs:
        job["project"] = PROJECTS[rng.randrange(len(PROJECTS))]
    return workload("limits-projects", "run limits per project: max_run 2 for each project and max_run_res.ncpus 4 "
                    "for fid_atlas (server), max_run_res.mem 8gb per user (queue); one vnode of 8 ncpus and 16gb, "
                    "jobs with mem in three projects (qsub -P), strict ordering (PBS refuses old-style limits beside "
                    "these)", jobs, vnodes=ONE_VNODE_MEM,
                    server={"max_run": "[p:PBS_GENERIC=2]", "max_run_res.ncpus": "[p:fid_atlas=4]"},
                    queues={"workq": {"max_run_res.mem": "[u:PBS_GENERIC=8gb]"}})


CONFIGURATIONS = {builder(random.Random(0))["name"]: builder for builder in (
    strict_light, strict_heavy, strict_depth3, formula, sortkey, fairshare, fairshare_egroup, fairshare_long,
    fairshare_long_default_poll, limits,
    vnodes, queues, eligibility, roundrobin, resources, aging, aging_limits, aging_groups, queue_depth, no_strict,
    no_strict_heavy, fairshare_vnodes, formula_fairshare, vnodes_light, fairshare_light, direct, vnodes_onehost, mixed,
    gpus, vnodes_onehost_light, no_strict_onehost, vnodes_onehost_scatter, strict_depth10, strict_depth10_onehost,
    onehost_node_sort, onehost_node_sort_low, limits_legacy, limits_projects, fuzzy_off)}


def generate(name, seed):
    """The workload of configuration ``name`` for ``seed`` (a dict)."""
    return CONFIGURATIONS[name](random.Random(seed * 1000003 + zlib.crc32(name.encode())))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("outdir", help="folder for the workload files")
    parser.add_argument("--seed", type=int, default=22)
    parser.add_argument("--only", nargs="+", choices=sorted(CONFIGURATIONS), help="only these configurations")
    arguments = parser.parse_args(argv)
    os.makedirs(arguments.outdir, exist_ok=True)
    for name in arguments.only or sorted(CONFIGURATIONS):
        path = os.path.join(arguments.outdir, name + ".json")
        with open(path, "w", encoding="utf-8") as target:
            json.dump(generate(name, arguments.seed), target, indent=1, sort_keys=True)
            target.write("\n")
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
