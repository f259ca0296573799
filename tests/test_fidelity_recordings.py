"""The fidelity check on workloads recorded on a real OpenPBS 23.06 server (tests/data/fidelity/<config>/).

Goals: at least 98 % of decisions agree; mean and median waits within 5 % of the real ones; on lightly
loaded runs at least 95 % of jobs start within 2 s of their real start. ``REACHED`` holds what the model
reaches on each recording; where a goal is not met the figure reached is asserted instead, so that a
change that makes the model worse fails here (and one that makes it better can raise the figure).
A recording without an entry is held to the goals.
"""

import calendar
import json
import os
import re
import sys
import time

import pytest

from replay.cli import main

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "benchmarks"))

import fidelity_totals  # noqa: E402  (benchmarks/ is not a package)

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "fidelity")
RECORDINGS = sorted(name for name in os.listdir(DATA) if os.path.isdir(os.path.join(DATA, name))) \
    if os.path.isdir(DATA) else []

GOAL_DECISIONS = 0.98
GOAL_WAIT = 0.05
GOAL_WITHIN_2S_LIGHT = 0.95

REACHED = {
    # config: (decisions agreeing at least, starts within 2 s at least, |mean wait difference| at most,
    #          |median wait difference| at most)
    "strict-depth1-light": (39, 60, GOAL_WAIT, None),  # median wait real and simulated: 0 s
    "strict-depth1-heavy": (56, 70, GOAL_WAIT, GOAL_WAIT),  # 10:53:42: three ends in one cycle, as read
    # busy, yet every start within 2 s since a job is exiting from its E record's second (from the end of its
    # process, a same-second exiting job read otherwise moved every later start)
    "strict-depth3": (55, 70, GOAL_WAIT, GOAL_WAIT),
    "strict-depth3-direct": (56, 50, GOAL_WAIT, GOAL_WAIT),  # strict-depth3's jobs submitted as they come
    # jobs submitted as they come, each soft walltime set by the manager's qalter right after the qsub: the cycle
    # the submission asked for saw it or not, and the logs do not say which (see WITH_SERVER_LOG_REACHED)
    "vnodes-light-seed7-direct": (54, 47, GOAL_WAIT, 0.20),
    "vnodes-light-direct": (59, 60, 0.07, GOAL_WAIT),  # mean waits of 2.2 s and 2.1 s
    "vnodes-onehost-light-direct": (49, 58, GOAL_WAIT, 1.00),  # median waits of 1 s and 0 s
    "vnodes-onehost-light-queuejob": (51, 58, 0.07, GOAL_WAIT),  # mean waits of 3.1 s and 3.3 s
    "vnodes-light-queuejob": (55, 60, 0.08, GOAL_WAIT),  # every start within 2 s; mean waits of 2.1 s and 1.9 s
    # busy, submitted as they come: from the accounting log alone a job whose process ended in the second of a cycle
    # is read as exiting, which the server's log (its obit) shows it was not yet, at some cycle; given that log every
    # start of these is the server's
    "sortkey-queuejob": (51, 60, GOAL_WAIT, GOAL_WAIT),
    "queues-queuejob": (47, 60, GOAL_WAIT, GOAL_WAIT),
    "roundrobin-queuejob": (59, 33, 0.11, 0.19),
    "fairshare-seed5-queuejob": (56, 57, GOAL_WAIT, GOAL_WAIT),  # busy fairshare: 56 of 59 decisions
    "formula": (51, 70, GOAL_WAIT, GOAL_WAIT),
    "sortkey": (43, 31, 0.08, 0.13),  # busy: the whole run drifts
    "fairshare": (45, 39, 0.11, 0.14),  # busy: a report or an end a second off reorders entities
    "fairshare-egroup": (44, 28, GOAL_WAIT, 1.11),  # as fairshare, by group
    "fairshare-2": (50, 41, GOAL_WAIT, 0.32),  # the fairshare workload again, with mom_config and usage; busy, drifts
    "fairshare-egroup-2": (44, 31, 0.11, 0.11),  # the fairshare-egroup workload again, with mom_config and usage
    # the same configurations with workloads drawn from another seed (fidelity_workloads.py --seed 2)
    "strict-depth1-light-seed2": (40, 60, GOAL_WAIT, None),  # median wait real and simulated: 0 s
    "strict-depth3-seed2": (44, 70, GOAL_WAIT, GOAL_WAIT),
    "formula-seed2": (54, 32, 0.07, 0.08),  # waits right, yet starts drift by seconds after an early one
    "fairshare-seed2": (49, 37, GOAL_WAIT, 0.10),  # busy: a report or an end a second off reorders entities
    "fairshare-egroup-seed2": (42, 26, GOAL_WAIT, 0.29),
    "limits-seed2": (42, 18, GOAL_WAIT, 0.55),
    "vnodes-seed2": (42, 40, GOAL_WAIT, GOAL_WAIT),
    "queues-seed2": (45, 44, GOAL_WAIT, GOAL_WAIT),
    "limits": (45, 27, 0.09, 0.19),  # busy: the whole run drifts
    "vnodes": (50, 46, GOAL_WAIT, 0.12),  # the replay's own vnode choices differ, and later starts with them
    "queues": (45, 36, GOAL_WAIT, GOAL_WAIT),  # busy: the whole run drifts
    # a third seed (fidelity_workloads.py --seed 3), recorded to check the model on workloads it was not built on
    "strict-depth1-light-seed3": (50, 60, GOAL_WAIT, None),  # one job waited 1 s, in both; median 0 s
    "strict-depth1-heavy-seed3": (51, 70, GOAL_WAIT, GOAL_WAIT),
    "strict-depth3-seed3": (57, 52, GOAL_WAIT, 0.06),  # a start logged a second after its cycle began
    "formula-seed3": (62, 22, GOAL_WAIT, 0.17),
    "limits-seed3": (48, 60, GOAL_WAIT, GOAL_WAIT),
    "vnodes-seed3": (40, 50, GOAL_WAIT, GOAL_WAIT),  # median waits of 3.5 s and 3.5 s
    "queues-seed3": (46, 60, GOAL_WAIT, GOAL_WAIT),
    "eligibility-seed3": (73, 64, GOAL_WAIT, GOAL_WAIT),  # job arrays and dependencies
    "fairshare-seed3": (45, 54, GOAL_WAIT, GOAL_WAIT),  # busy: a report or an end a second off reorders entities
    "fairshare-egroup-seed3": (47, 60, GOAL_WAIT, GOAL_WAIT),
    # two more configurations (fidelity_workloads.py --seed 1)
    "roundrobin": (52, 17, GOAL_WAIT, 0.72),  # busy: the whole run drifts
    "resources": (52, 32, 0.06, 0.25),  # busy, the whole run drifts
    # the same two with another seed, eligibility with seed 1 and aging (eligible_time in the formula), recorded to
    # check the model on workloads it was not built on; eligibility and aging meet every goal
    "roundrobin-seed2": (52, 28, GOAL_WAIT, 0.26),  # busy: the whole run drifts
    "resources-seed2": (53, 60, GOAL_WAIT, GOAL_WAIT),
    # aging with a per-user max_run: PBS stops a job's eligible time while its user is at the limit (30 decisions
    # agreed while the model counted it from etime)
    "aging-limits": (54, 34, GOAL_WAIT, GOAL_WAIT),
    # recorded after the model of accrual was written: limits per group, per user's ncpus on the queue and for
    # everyone; busy, the whole run drifts
    "aging-groups": (58, 47, GOAL_WAIT, GOAL_WAIT),
    "aging-limits-seed2": (55, 49, GOAL_WAIT, GOAL_WAIT),  # recorded after the model of accrual was written
    "aging-groups-seed2": (56, 66, GOAL_WAIT, GOAL_WAIT),  # median waits of 7 s and 7 s
    # roundrobin and resources drawn with a third seed, aging and eligibility with a second, recorded after the rest
    "roundrobin-seed3": (55, 66, GOAL_WAIT, GOAL_WAIT),  # busy: the whole run drifts
    "resources-seed3": (50, 60, GOAL_WAIT, GOAL_WAIT),
    "eligibility-seed2": (56, 69, GOAL_WAIT, GOAL_WAIT),  # busy, drifts; aging-seed2 meets every goal
    # ten workloads recorded a second time, with the same jobs (test_the_server_against_itself compares the
    # server's two runs); busy, the whole runs drift
    "eligibility-seed3-again": (69, 71, GOAL_WAIT, GOAL_WAIT),
    "formula-seed2-again": (61, 70, GOAL_WAIT, GOAL_WAIT),
    "limits-again": (48, 60, GOAL_WAIT, GOAL_WAIT),
    "queues-again": (44, 53, 0.06, GOAL_WAIT),
    "resources-again": (54, 63, GOAL_WAIT, GOAL_WAIT),
    "roundrobin-again": (52, 63, GOAL_WAIT, GOAL_WAIT),
    "sortkey-again": (50, 18, GOAL_WAIT, 0.10),
    "strict-depth1-heavy-seed3-again": (53, 30, 0.1, GOAL_WAIT),
    "strict-depth3-again": (52, 70, GOAL_WAIT, GOAL_WAIT),
    "vnodes-again": (48, 60, GOAL_WAIT, GOAL_WAIT),
    # the same ten recorded a third time, and two more a second time, with nothing else running on the machine
    "eligibility-seed3-again2": (73, 57, GOAL_WAIT, GOAL_WAIT),
    "formula-seed2-again2": (57, 70, GOAL_WAIT, GOAL_WAIT),
    "limits-again2": (47, 38, 0.11, 0.29),
    "resources-again2": (52, 60, GOAL_WAIT, GOAL_WAIT),  # median waits of 1 s and 1 s
    "roundrobin-again2": (60, 28, 0.10, 0.71),
    "sortkey-again2": (51, 37, 0.09, GOAL_WAIT),
    "vnodes-again2": (47, 60, GOAL_WAIT, GOAL_WAIT),
    "strict-depth1-light-again": (43, 60, GOAL_WAIT, None),  # median wait real and simulated: 0 s
    # fairshare with jobs of 10 to 50 s (fidelity_workloads.py, fairshare-long, --seed 22, 2 and 3): the MoM's
    # polling a smaller share of each job's usage; the decisions left are where entities are close in usage per share
    "fairshare-long": (47, 23, 0.12, 0.12),
    "fairshare-long-seed2": (43, 28, 0.07, 0.15),
    "fairshare-long-seed3": (46, 36, 0.10, 0.06),
    # settings recorded after the model of them was written (fidelity_workloads.py, --seed 22, 2 and 3): a
    # backfill_depth of each queue's own (queue-depth), PBS's default sched_config without strict
    # ordering (no-strict), and fairshare without strict ordering on four vnodes (fairshare-vnodes); busy, the
    # whole runs drift
    "no-strict": (49, 49, GOAL_WAIT, GOAL_WAIT),
    "no-strict-seed2": (52, 60, GOAL_WAIT, GOAL_WAIT),
    "no-strict-seed3": (46, 60, GOAL_WAIT, GOAL_WAIT),  # median waits of 13 s and 13 s
    "no-strict-heavy": (57, 70, GOAL_WAIT, GOAL_WAIT),  # with strict ordering read in, 41 would agree
    "fairshare-vnodes": (46, 60, GOAL_WAIT, GOAL_WAIT),  # two orders of entities 3 and 4 % apart in usage per share
    "fairshare-vnodes-seed2": (50, 39, GOAL_WAIT, GOAL_WAIT),  # two orders between groups 4 and 6 % apart
    "formula-fairshare": (53, 60, GOAL_WAIT, GOAL_WAIT),  # job_sort_formula reading fairshare_factor
    # a job of fid_ben 0.08 above one of fid_ana in formula value
    "formula-fairshare-seed2": (53, 53, GOAL_WAIT, GOAL_WAIT),
    # fid_ana's usage replayed 12 % above the server's: four decisions order fid_cai's jobs first, PBS fid_ana's
    "formula-fairshare-seed3": (44, 55, GOAL_WAIT, GOAL_WAIT),
    "vnodes-light": (49, 60, GOAL_WAIT, None),  # mean waits of 2.1 s and 2.1 s; median 0 s
    "fairshare-light": (50, 60, GOAL_WAIT, None),  # median wait real and simulated: 0 s
    "fairshare-light-seed2": (51, 58, GOAL_WAIT, None),  # median wait real and simulated: 0 s
    "vnodes-light-seed2": (49, 60, GOAL_WAIT, GOAL_WAIT),  # median waits of 5 s and 5 s
    "vnodes-light-seed3": (52, 60, GOAL_WAIT, None),  # median wait real and simulated: 0 s
    "fairshare-light-seed3": (50, 51, GOAL_WAIT, None),  # median wait real and simulated: 0 s
    # a fourth seed (fidelity_workloads.py --seed=4) of twelve configurations without fairshare, recorded to check
    # the model on workloads it was not built on: every decision agrees on each; sortkey-seed4 and formula-seed4 meet
    # every goal; the others are busy and drift
    "limits-seed4": (49, 60, GOAL_WAIT, GOAL_WAIT),  # median waits of 9 s and 9 s
    "queues-seed4": (48, 60, GOAL_WAIT, GOAL_WAIT),
    "vnodes-seed4": (52, 60, GOAL_WAIT, GOAL_WAIT),  # median waits of 5 s and 5 s
    "roundrobin-seed4": (54, 24, GOAL_WAIT, 0.17),
    "resources-seed4": (53, 32, 0.08, 0.22),
    "eligibility-seed4": (72, 82, GOAL_WAIT, GOAL_WAIT),
    "queue-depth-seed4": (39, 60, GOAL_WAIT, GOAL_WAIT),
    # and four more with the fourth seed: formula-fairshare-seed4 meets every goal
    "fairshare-seed4": (51, 32, GOAL_WAIT, 0.07),  # busy: a report or an end a second off reorders entities
    "vnodes-light-seed4": (49, 60, GOAL_WAIT, GOAL_WAIT),  # median waits of 3 s and 3 s
    "strict-depth1-light-seed4": (47, 60, GOAL_WAIT, None),  # mean waits of 2.6 s and 2.6 s; median 0 s
    # a fifth seed (--seed=5) of fifteen configurations without fairshare, recorded after every change above, the
    # model unchanged since: every decision agrees on each; aging-groups-seed5 and sortkey-seed5 meet every goal,
    # vnodes-light-seed5 every goal that means something there; the others are busy and drift
    "strict-depth3-seed5": (55, 23, GOAL_WAIT, 0.07),  # median waits of 37.5 s and 40 s
    "formula-seed5": (51, 38, 0.07, 0.09),
    "vnodes-seed5": (44, 26, GOAL_WAIT, 0.14),
    "roundrobin-seed5": (54, 66, GOAL_WAIT, GOAL_WAIT),
    "resources-seed5": (44, 52, GOAL_WAIT, GOAL_WAIT),  # mean waits of 22.4 s and 22.5 s
    "queue-depth-seed5": (41, 60, GOAL_WAIT, GOAL_WAIT),  # median waits of 22.5 s and 22.5 s
    "eligibility-seed5": (56, 42, GOAL_WAIT, 0.10),
    "limits-seed5": (53, 60, GOAL_WAIT, GOAL_WAIT),  # median waits of 13.5 s and 13.5 s
    "queues-seed5": (48, 60, GOAL_WAIT, GOAL_WAIT),
    "aging-limits-seed5": (53, 43, GOAL_WAIT, GOAL_WAIT),
    "no-strict-heavy-seed5": (60, 70, GOAL_WAIT, GOAL_WAIT),
    "vnodes-light-seed5": (44, 60, GOAL_WAIT, None),  # median wait real and simulated: 0 s
    "strict-depth1-heavy-seed5": (57, 70, GOAL_WAIT, GOAL_WAIT),  # median waits of 9 s and 9 s
    # and fairshare with the fifth seed: 54 of 55 and 49 of 50 decisions agree (the others order two users
    # close in usage per share)
    "fairshare-seed5": (55, 70, GOAL_WAIT, GOAL_WAIT),
    "fairshare-light-seed5": (50, 60, GOAL_WAIT, None),  # median wait real and simulated: 0 s
    # jobs submitted as they come (no hold), soft walltimes set right after qsub, four jobs deleted while queued:
    # every decision agrees, and both waits are within 5 %
    "direct": (51, 58, GOAL_WAIT, GOAL_WAIT),
    # busy runs that met the wait goals while the ends of one second shared a cycle, and drift by as much the
    # other way since each end has its own (as on the server, where they reach the scheduler one by one)
    "aging-groups-seed4": (57, 66, GOAL_WAIT, GOAL_WAIT),  # median waits of 28 s and 28 s
    "no-strict-heavy-seed3": (62, 70, GOAL_WAIT, GOAL_WAIT),  # median waits of 25 s and 25 s
    "no-strict-heavy-seed4": (62, 70, GOAL_WAIT, GOAL_WAIT),  # median waits of 23.5 s and 23.5 s
    "queue-depth-seed2": (39, 60, GOAL_WAIT, GOAL_WAIT),  # median waits of 10.5 s and 10.5 s
    "queue-depth-seed3": (40, 60, GOAL_WAIT, GOAL_WAIT),  # median waits of 51 s and 51 s
    "strict-depth3-again2": (55, 70, GOAL_WAIT, GOAL_WAIT),  # median waits of 30 s and 30 s
    # a sixth seed (--seed=6) of eleven configurations, recorded after the replay gave each end its own cycle, with
    # the model unchanged since: every decision without fairshare agrees (468 of 468); queues-seed6 meets every
    # goal and strict-depth1-light-seed6 has all its starts within 2 s; the busy ones drift
    "fairshare-seed6": (41, 27, 0.07, 0.16),  # busy: a report or an end a second off reorders entities
    "fairshare-light-seed6": (45, 60, GOAL_WAIT, GOAL_WAIT),  # median waits of 2 s and 2 s
    "formula-seed6": (60, 70, GOAL_WAIT, GOAL_WAIT),
    "limits-seed6": (52, 27, 0.08, GOAL_WAIT),
    "sortkey-seed6": (49, 60, GOAL_WAIT, GOAL_WAIT),
    "strict-depth1-heavy-seed6": (65, 70, GOAL_WAIT, GOAL_WAIT),
    "strict-depth1-light-seed6": (46, 60, GOAL_WAIT, None),  # mean waits of 0.4 s and 0.4 s; median 0 s
    "strict-depth3-seed6": (53, 58, GOAL_WAIT, 0.07),
    "vnodes-seed6": (46, 60, GOAL_WAIT, GOAL_WAIT),
    "vnodes-light-seed6": (44, 60, GOAL_WAIT, None),  # mean waits of 2.5 s and 2.5 s; median 0 s
    # fairshare-long with the MoM polling as PBS ships it, recorded to check the model of when the MoM measures its
    # jobs (23 of 45 decisions agreed when usage was taken to lag by half of $max_check_poll); busy, the run drifts
    "fairshare-long-default-poll": (40, 23, 0.15, 0.35),
    # the same with the second seed, recorded after the model of the MoM's measurements was written (24 of 42 with the
    # mean lag): one decision orders fid_ana and fid_ben otherwise; 59 of 60 starts within 2 s
    "fairshare-long-default-poll-seed2": (41, 59, GOAL_WAIT, GOAL_WAIT),
    # the third seed, recorded later still (25 of 51 with the mean lag): six decisions order fid_ana and fid_ben,
    # siblings in the share tree, otherwise (fid_ana's usage replayed 4 % above the server's); busy, the run drifts
    "fairshare-long-default-poll-seed3": (45, 38, GOAL_WAIT, 0.08),
    # a seventh seed, recorded to check the model on workloads it was not built on (strict-depth3-seed7 and
    # fairshare-long-default-poll-seed7 meet every goal); the busy ones drift as their earlier seeds do
    "fairshare-seed7": (52, 32, GOAL_WAIT, 0.13),  # jobs of seconds: two decisions order two users otherwise
    "formula-seed7": (54, 70, GOAL_WAIT, GOAL_WAIT),
    "limits-seed7": (47, 60, GOAL_WAIT, GOAL_WAIT),
    "queues-seed7": (46, 48, GOAL_WAIT, GOAL_WAIT),
    "strict-depth1-light-seed7": (49, 60, GOAL_WAIT, None),  # median wait real and simulated: 0 s
    "vnodes-light-seed7": (47, 43, 0.22, GOAL_WAIT),
    # an eighth seed, recorded with the model of the seventh; limits-seed8's decision at 09:00:30 agrees on a reading
    # whose part of PBS's set comes first in the log (tests/test_fidelity_decisions.py); strict-depth1-heavy-seed8,
    # strict-depth3-seed8, sortkey-seed8, vnodes-seed8 and fairshare-light-seed8 meet every goal
    "limits-seed8": (46, 60, GOAL_WAIT, GOAL_WAIT),
    "fairshare-seed8": (47, 45, GOAL_WAIT, GOAL_WAIT),  # jobs of seconds: six decisions order two users otherwise
    "formula-seed8": (56, 49, GOAL_WAIT, 0.09),
    "queues-seed8": (47, 60, GOAL_WAIT, GOAL_WAIT),
    "strict-depth1-light-seed8": (47, 60, GOAL_WAIT, None),  # median wait real and simulated: 0 s
    "vnodes-light-seed8": (44, 60, GOAL_WAIT, None),  # median wait real and simulated: 0 s
    # a ninth seed of six of them, recorded with the model of the eighth: every decision agrees on each; formula-seed9
    # meets every goal; the busy ones drift as their earlier seeds do
    "limits-seed9": (48, 60, GOAL_WAIT, GOAL_WAIT),
    "strict-depth3-seed9": (57, 53, GOAL_WAIT, GOAL_WAIT),
    "vnodes-seed9": (49, 32, 0.06, GOAL_WAIT),
    "queues-seed9": (54, 60, GOAL_WAIT, GOAL_WAIT),
    "sortkey-seed9": (50, 60, GOAL_WAIT, GOAL_WAIT),
    # three configurations no earlier recording had, three seeds each: the four vnodes on one host, a formula over two
    # queues with run limits and vnodes at once, a custom ngpus resource; every decision agrees once two placement
    # rules the first of them showed were modelled (tests/test_pbs_placement.py); busy runs, the starts drift
    "vnodes-onehost": (41, 47, 0.06, GOAL_WAIT),
    "vnodes-onehost-seed2": (48, 60, GOAL_WAIT, GOAL_WAIT),
    "vnodes-onehost-seed3": (49, 60, GOAL_WAIT, GOAL_WAIT),
    "mixed": (51, 32, GOAL_WAIT, 0.07),
    "mixed-seed2": (51, 29, GOAL_WAIT, 0.38),
    "mixed-seed3": (50, 66, GOAL_WAIT, GOAL_WAIT),
    "gpus": (43, 60, GOAL_WAIT, GOAL_WAIT),
    "gpus-seed2": (45, 60, GOAL_WAIT, GOAL_WAIT),
    "gpus-seed3": (38, 47, 0.10, 0.25),
    # the four vnodes on one host, lightly loaded (vnodes-onehost-light-seed2 met every goal while the ends of one
    # second went in the order the jobs started) and with PBS's default sched_config
    "vnodes-onehost-light": (37, 60, GOAL_WAIT, None),  # median wait real and simulated: 0 s
    "vnodes-onehost-light-seed2": (41, 60, GOAL_WAIT, None),  # median wait real and simulated: 0 s
    "no-strict-onehost": (47, 49, GOAL_WAIT, GOAL_WAIT),
    # the four vnodes on one host with the jobs of vnodes: those scattering two chunks or more never run (one host),
    # and take no top job's place; the others are compared
    "vnodes-onehost-scatter": (26, 40, GOAL_WAIT, GOAL_WAIT),
    "vnodes-onehost-scatter-seed2": (30, 43, GOAL_WAIT, GOAL_WAIT),
    # backfill_depth 10 under a long queue: ten top jobs, each planned around the ones before it
    "strict-depth10": (45, 70, GOAL_WAIT, GOAL_WAIT),
    "strict-depth10-onehost": (47, 60, GOAL_WAIT, GOAL_WAIT),
    # node_sort_key ncpus HIGH unused on the four vnodes of one host: 39 and 43 of 45 agreed until the model ordered
    # a host's vnodes as PBS's host sets are (sorted when the cycle begins and after every end, simulated ones too,
    # not when a job runs; tests/test_pbs_calendar.py)
    "onehost-node-sort": (45, 60, GOAL_WAIT, GOAL_WAIT),
    "onehost-node-sort-seed2": (45, 60, GOAL_WAIT, GOAL_WAIT),
    # recorded with that rule in place: ncpus LOW unused agrees on every decision; the third seed on 44 of 45 once the
    # check tries every combination of five same-second ends (MAX_UNSURE); its decision at 13:08:58 is not explained
    "onehost-node-sort-low": (49, 60, GOAL_WAIT, GOAL_WAIT),
    "onehost-node-sort-seed3": (44, 48, GOAL_WAIT, GOAL_WAIT),
    # recorded after the replay took the ends of one second in the accounting log's order, with server.log and
    # sched.log beside each: every decision agrees; vnodes-seed10 meets every goal (26 of 60 starts within 2 s with the
    # ends in the order the jobs started), the light ones every goal that means something there
    "vnodes-light-seed9": (45, 60, GOAL_WAIT, None),  # median wait real and simulated: 0 s
    "vnodes-light-seed10": (46, 60, GOAL_WAIT, None),  # median wait real and simulated: 0 s
    "vnodes-light-seed11": (46, 60, GOAL_WAIT, None),  # median wait real and simulated: 0 s
    "vnodes-onehost-light-seed3": (48, 60, GOAL_WAIT, None),  # median wait real and simulated: 0 s
    "strict-depth1-heavy-seed10": (61, 70, GOAL_WAIT, GOAL_WAIT),  # median waits of 6.5 s and 6.5 s
    # light workloads short of the goal recorded again, with the server's log: from the accounting log alone the
    # replay drifts as on the first recordings (the server itself repeated its first run to 2 s for 33 to 60 of the 60
    # jobs, REPEATED); with the server's log it starts every job at its real start (test_with_the_servers_log_...)
    "vnodes-light-seed2-again": (49, 60, GOAL_WAIT, GOAL_WAIT),  # median waits of 5 s and 5 s
    "vnodes-light-seed7-again": (45, 34, 0.13, 0.75),  # median waits of 2 s and 0.5 s
    "vnodes-onehost-light-again": (40, 60, GOAL_WAIT, None),  # median waits of 0 s and 0 s
    "vnodes-light-again": (50, 60, GOAL_WAIT, None),  # median wait real and simulated: 0 s
    "vnodes-light-seed4-again": (49, 60, GOAL_WAIT, GOAL_WAIT),  # median waits of 2.5 s and 2.5 s
    "vnodes-light-seed6-again": (43, 60, GOAL_WAIT, None),  # median wait real and simulated: 0 s
    "fairshare-light-seed3-again": (49, 50, GOAL_WAIT, None),  # median wait real and simulated: 0 s
    "fairshare-light-seed6-again": (46, 57, GOAL_WAIT, GOAL_WAIT),  # median waits of 2 s and 2 s
    # busy workloads recorded a fourth time, with the server's log
    "strict-depth3-again3": (55, 70, GOAL_WAIT, GOAL_WAIT),
    "limits-again3": (47, 60, GOAL_WAIT, GOAL_WAIT),  # median waits of 8 s and 8 s
    "queues-again3": (44, 60, GOAL_WAIT, GOAL_WAIT),  # median waits of 12 s and 12 s
    "sortkey-again3": (48, 35, GOAL_WAIT, GOAL_WAIT),
    "formula-seed2-again3": (60, 70, GOAL_WAIT, GOAL_WAIT),
    "roundrobin-again3": (55, 66, GOAL_WAIT, GOAL_WAIT),
    # busy fairshare workloads recorded a second time, with the server's log (fairshare-seed5-again with the MoM's
    # measurements too): a report or an end a second off reorders entities, and the whole run drifts
    "fairshare-seed3-again": (53, 56, GOAL_WAIT, GOAL_WAIT),
    "fairshare-seed6-again": (55, 35, GOAL_WAIT, GOAL_WAIT),  # median waits of 21.5 s and 20.5 s
    "fairshare-seed8-again": (53, 26, 0.14, 1.13),  # median waits of 8 s and 17 s
    "fairshare-2-again": (57, 51, GOAL_WAIT, 0.3),
    "fairshare-seed5-again": (46, 41, GOAL_WAIT, 0.11),
    # fairshare workloads recorded again with log_events 2047, their server's log recording each MoM update: from
    # the accounting log alone, as the others (given that log, test_given_the_moms_updates_fairshare_decisions_agree)
    "fairshare-seed5-mom-updates": (44, 39, 0.11, 0.37),
    "fairshare-seed8-mom-updates": (42, 30, GOAL_WAIT, 0.12),
    "fairshare-2-mom-updates": (55, 29, 0.13, 0.4),
    "fairshare-seed6-mom-updates": (50, 27, GOAL_WAIT, 0.26),
    "fairshare-egroup-mom-updates": (39, 16, GOAL_WAIT, 0.25),
    "formula-fairshare-seed2-mom-updates": (50, 36, 0.08, GOAL_WAIT),
    "fairshare-vnodes-seed2-mom-updates": (52, 41, GOAL_WAIT, GOAL_WAIT),
    "fairshare-light-seed6-mom-updates": (46, 57, GOAL_WAIT, GOAL_WAIT),  # median waits of 1 s and 1 s
    "fairshare-long-default-poll-mom-updates": (40, 18, GOAL_WAIT, 0.15),
    "fairshare-seed3-mom-updates": (42, 40, GOAL_WAIT, 0.17),
    "fairshare-seed7-mom-updates": (48, 23, 0.12, GOAL_WAIT),
    # run limits as older sites set them and per project, and exact top-job estimates (opt_backfill_fuzzy off), each
    # with the server's log, given which the starts are the server's (WITH_SERVER_LOG_REACHED: all but five)
    "limits-legacy": (57, 32, GOAL_WAIT, 0.25),  # median waits of 22.5 s and 17 s
    "limits-legacy-seed2": (49, 34, GOAL_WAIT, GOAL_WAIT),  # median waits of 22.5 s and 23.5 s
    "limits-projects": (53, 48, GOAL_WAIT, GOAL_WAIT),  # median waits of 13.5 s and 14 s
    "limits-projects-seed2": (54, 66, GOAL_WAIT, GOAL_WAIT),  # median waits of 15 s and 15 s
    "fuzzy-off": (52, 70, GOAL_WAIT, GOAL_WAIT),
    "fuzzy-off-seed2": (50, 70, GOAL_WAIT, GOAL_WAIT),
    "limits-legacy-seed3": (55, 61, GOAL_WAIT, 0.10),  # median waits of 10 s and 9 s
    "limits-projects-seed3": (55, 39, GOAL_WAIT, GOAL_WAIT),
    "fuzzy-off-seed3": (50, 70, GOAL_WAIT, GOAL_WAIT),
    # busy runs that met the wait goals while a job was taken as exiting from the end of its process, and drift
    # as much the other way since it is exiting from its E record's second
    "aging-seed2-again": (55, 47, GOAL_WAIT, GOAL_WAIT),
    "limits-queuejob": (52, 23, GOAL_WAIT, 0.06),
    "queue-depth": (39, 60, GOAL_WAIT, GOAL_WAIT),
    "sortkey-seed3": (47, 55, GOAL_WAIT, GOAL_WAIT),
}
"""What the model reaches per recording (None: the figure means nothing there)."""


def fidelity(config, tmp_path, server_log=False):
    """The fidelity figures of one recording, as the command writes them with --json (with its server.log if
    ``server_log``)."""
    out = tmp_path / "fidelity.json"
    folder = os.path.join(DATA, config)
    extra = ["--server-log", os.path.join(folder, "server.log")] if server_log else []
    status = main(["fidelity", os.path.join(folder, "accounting"), "--site", os.path.join(folder, "site"),
                   "--json", str(out), "--show", "0"] + extra)
    assert status == 0
    return json.loads(out.read_text())


def _within(value, bound):
    return bound is None or (value is not None and abs(value) <= bound)


@pytest.mark.parametrize("config", RECORDINGS)
def test_recording(config, tmp_path, capsys):
    """Decisions, starts within 2 s and waits on the recording reach at least what is recorded here."""
    figures = fidelity(config, tmp_path)
    capsys.readouterr()
    agreeing, within, mean_bound, median_bound = REACHED.get(config, (None, None, GOAL_WAIT, GOAL_WAIT))
    if agreeing is None:
        assert figures["decisions_agreeing"] >= GOAL_DECISIONS * figures["decisions"]
    else:
        assert figures["decisions_agreeing"] >= agreeing
    if within is not None:
        assert figures["starts_within_2s"] >= within
    for kind, bound in (("mean", mean_bound), ("median", median_bound)):
        real, sim = figures["wait_{}_real_s".format(kind)], figures["wait_{}_sim_s".format(kind)]
        assert sim == real or _within(figures["wait_{}_difference".format(kind)], bound)


LIGHT_REACHED = {
    "vnodes-light-seed7-direct": 47,  # a soft walltime set by qalter after the cycle of the job's qsub (see REACHED)
    # two bursts of jobs released in one second, ordered by fairshare between users whose replayed usage is near
    # nothing after a minute's decays: the replay runs them in another order than the server (every decision agrees)
    "fairshare-light-seed3": 51,
    "fairshare-light-seed3-again": 50,
    # the seventh seed: at 05:42:24 the server took one job's end, started a job on the vnodes it freed, then took
    # two more ends; the replay sees those two jobs, whose E records are of that second, as exiting already, plans
    # the top job earlier, and the job the server backfilled waits
    "vnodes-light-seed7": 43,
    "vnodes-light-seed7-again": 34,
}
"""Starts within 2 s reached on the lightly loaded recordings that fall short of the goal."""


@pytest.mark.parametrize("config", [name for name in RECORDINGS if "-light" in name])
def test_light_runs(config, tmp_path, capsys):
    """On lightly loaded recordings at least 95 % of jobs start within 2 s of their real start (or, where that
    is not met, what ``LIGHT_REACHED`` holds)."""
    figures = fidelity(config, tmp_path)
    capsys.readouterr()
    assert figures["starts_within_2s"] >= LIGHT_REACHED.get(config, GOAL_WITHIN_2S_LIGHT * figures["jobs"])


WITH_SERVER_LOG = [name for name in RECORDINGS if os.path.exists(os.path.join(DATA, name, "server.log"))]
"""Recordings that kept the server's own log (pbs_record.py keeps it since the replay can read it)."""


WITH_SERVER_LOG_REACHED = {
    # (starts within 2 s at least, |mean wait difference| at most, |median wait difference| at most)
    # fairshare: at 17:09:14 fid_red's job and fid_blue's are ordered otherwise (usage per tree share 9.6 % apart as
    # replayed; when the MoM's measurements reached the server no log says), and four later starts move
    "fairshare-light-seed6-again": (56, GOAL_WAIT, GOAL_WAIT),
    # at 17:17:58 a job started by the cycle of one end was still unconfirmed by its MoM when the next end's cycle
    # planned the top job (its start taken as a second later, the top job's estimate crossed into the next
    # opt_backfill_fuzzy window); at 17:17:44 another such job was already confirmed; neither S record came before the
    # E record of the next end, so the logs do not say which (WithinSecond.confirmed), and the replay takes both as
    # unconfirmed
    "limits-again3": (32, 0.06, 0.25),
    # jobs submitted without a hold, their soft walltime set by the manager's qalter right after: whether the
    # cycle the submission asked for saw it no log says (vnodes-light-seed7-direct at 01:06:50: PBS left job 74
    # waiting, most likely planned on its walltime; the replay, with the soft walltime it started with, backfilled it)
    "vnodes-light-seed7-direct": (47, GOAL_WAIT, GOAL_WAIT),
    "vnodes-light-direct": (60, 0.07, GOAL_WAIT),  # mean waits of 2.2 s: 0.13 s apart
    "vnodes-onehost-light-direct": (58, GOAL_WAIT, 1.0),  # median waits of 1 s and 0 s
    "vnodes-onehost-light-queuejob": (58, 0.07, GOAL_WAIT),  # mean waits of 3.1 s and 3.3 s
    "strict-depth3-direct": (50, GOAL_WAIT, GOAL_WAIT),  # busy: 50 of 70, both waits within 0.2 %
    # busy fairshare runs: the whole run's own fairshare usage orders two users otherwise at some cycle (a
    # measurement seen a second earlier or later), and later starts move with it
    "fairshare-seed3-again": (57, GOAL_WAIT, GOAL_WAIT),
    "fairshare-seed6-again": (40, GOAL_WAIT, 0.31),
    "fairshare-seed8-again": (26, 0.12, 3.63),  # median waits of 8 s and 37 s
    "fairshare-2-again": (45, GOAL_WAIT, 0.31),
    "fairshare-seed5-again": (41, GOAL_WAIT, 0.11),
    # with the MoMs' updates of their server's log: a job at its real start is charged what they carried
    "fairshare-seed5-mom-updates": (44, 0.12, 0.33),
    "fairshare-2-mom-updates": (39, GOAL_WAIT, GOAL_WAIT),
    "fairshare-vnodes-seed2-mom-updates": (41, GOAL_WAIT, GOAL_WAIT),
    "fairshare-long-default-poll-mom-updates": (56, GOAL_WAIT, GOAL_WAIT),  # jobs of 10 to 50 s, busy
    "fairshare-seed7-mom-updates": (51, GOAL_WAIT, 0.10),
    # at 07:37:49 the scheduler ran 923 (its log), the server's "Job Run" line and the S record say :50: the replay
    # starts it at :49, it ends a second early, and later starts move (8 of the 4,338 jobs of the recordings that
    # kept both logs were run in the second after their cycle)
    "limits-legacy-seed3": (61, GOAL_WAIT, 0.10),  # median waits of 10 s and 9 s
}
"""Figures reached, given the server's log, where not every start is the server's."""


@pytest.mark.parametrize("config", WITH_SERVER_LOG)
def test_with_the_servers_log_every_start_is_the_servers(config, tmp_path, capsys):
    """Given the server's log, the whole-run replay takes each second's releases and ends in the server's order,
    each job exiting from its obit, and starts every job within 2 s of its real start, both waits within 5 %:
    every target, on the busy runs too (or, where the replay orders two jobs otherwise than the server at some cycle,
    busy fairshare runs among them, what ``WITH_SERVER_LOG_REACHED`` holds)."""
    figures = fidelity(config, tmp_path, server_log=True)
    capsys.readouterr()
    within, mean_bound, median_bound = WITH_SERVER_LOG_REACHED.get(config, (figures["jobs"], GOAL_WAIT, GOAL_WAIT))
    assert figures["starts_within_2s"] >= within > 0
    for kind, bound in (("mean", mean_bound), ("median", median_bound)):
        real, sim = figures["wait_{}_real_s".format(kind)], figures["wait_{}_sim_s".format(kind)]
        assert sim == real or abs(figures["wait_{}_difference".format(kind)]) <= bound


def _records_mom_updates(config):
    with open(os.path.join(DATA, config, "server.log"), encoding="utf-8") as log:
        return any("Received the same SID as before" in line for line in log)


WITH_SCHED_LOG = [name for name in WITH_SERVER_LOG if os.path.exists(os.path.join(DATA, name, "sched.log"))]
"""Recordings that kept the scheduler's own log too."""

WITH_MOM_UPDATES = [name for name in WITH_SERVER_LOG if _records_mom_updates(name)]
"""Recordings whose server's log records each update of a job's resources_used from its MoM (``log_events``
2047)."""


WITH_MOM_UPDATES_REACHED = {
    # at 22:20:10 and 22:20:14 PBS put fid_blue first, the replayed usage per tree share fid_red, 3 % lower: a few
    # updates carried a measurement older than the second 2 s before they arrived (qstat, read every second while it
    # ran, showed them; taking its instants instead, all 55 decisions of the S records' grouping agree)
    "fairshare-seed6-mom-updates": 55,
    # at 22:05:17 PBS's top job in two cycles was fid_ana's 11 (8 cpus), so neither 33 nor 45 (fid_ana's too, 2
    # cpus, ending after and before its reservation) backfilled in the first and 45 did in the second; the replayed
    # usage put fid_dan's 64 first, whose reservation left room for 33
    "fairshare-seed5-mom-updates": 54,
}
"""Fairshare decisions agreeing, given the MoMs' updates, where that is under 98 %."""


@pytest.mark.parametrize("config", WITH_MOM_UPDATES)
def test_given_the_moms_updates_fairshare_decisions_agree(config, tmp_path, capsys):
    """Given a server's log that records the MoMs' updates, fairshare usage is charged at the server's own cycles
    with what each update carried (``replay.fidelity.server_usage``), the decisions are its cycles, and at least
    98 % of them agree, on the busy fairshare runs too (or what ``WITH_MOM_UPDATES_REACHED`` holds); from the
    accounting log alone, never a larger share does."""
    figures = fidelity(config, tmp_path, server_log=True)
    assert "fairshare usage charged at the server's" in capsys.readouterr().out
    assert figures["decisions_agreeing"] >= WITH_MOM_UPDATES_REACHED.get(config,
                                                                        GOAL_DECISIONS * figures["decisions"])
    alone = fidelity(config, tmp_path)
    assert alone["decisions_agreeing"] * figures["decisions"] <= figures["decisions_agreeing"] * alone["decisions"]


WITH_SERVER_LOG_DECISIONS_REACHED = {
    # busy fairshare runs whose server logged no MoM update: the usage charged from the accounting log alone orders
    # two users otherwise at a few cycles (when each measurement reached the server no other log says)
    "fairshare-seed5-again": 52,
    "fairshare-seed8-again": 56,
    "fairshare-seed3-again": 60,
    "fairshare-seed5-queuejob": 57,
}
"""Decisions agreeing, given the server's log without the MoMs' updates, where that is under 98 %."""


def _given_server_log(config):
    """``(accounting, site, server_log, checks)`` of a recording that kept the server's log: its decisions checked
    given that log."""
    from predictor.cmdline.rejects import RejectPrinter
    from replay.fidelity.decisions import check_decisions
    from replay.fidelity.machine import site_model
    from replay.fidelity.records import read_records
    from replay.fidelity.server_log import read_server_log
    folder = os.path.join(DATA, config)
    accounting = read_records([os.path.join(folder, "accounting")], RejectPrinter(10))
    site = site_model(os.path.join(folder, "site"), accounting)
    server_log = read_server_log([os.path.join(folder, "server.log")], RejectPrinter(10))
    return accounting, site, server_log, check_decisions(accounting, site, server_log=server_log)


@pytest.mark.parametrize("config", [name for name in WITH_SERVER_LOG if name not in WITH_MOM_UPDATES])
def test_given_the_servers_log_its_cycles_agree(config):
    """Given the server's log, each of its scheduler cycles is a decision (the starts whose "Job Run" lines come
    between two "Scheduler sent command" lines), a job an earlier cycle of the same second ran is planned from a
    second later first, and at least 98 % of the decisions agree (or what ``WITH_SERVER_LOG_DECISIONS_REACHED``
    holds): every one, on each recording without fairshare."""
    from replay.fidelity.decisions import server_cycles, summarise
    accounting, site, server_log, checks = _given_server_log(config)
    cycle_of = server_cycles(server_log)
    assert all(cycle_of(start.name) is not None for start in accounting.starts)
    summary = summarise(checks)
    if site.policy.fairshare is None:
        assert summary.agreeing == summary.decisions
    assert summary.agreeing >= WITH_SERVER_LOG_DECISIONS_REACHED.get(config, GOAL_DECISIONS * summary.decisions)


def _scheduler_cycles(path):
    """The jobs each cycle of a scheduler's own log ran, cycles that ran none left out."""
    from predictor.cmdline.rejects import RejectPrinter
    from replay.fidelity.sched_log import read_sched_log
    return [cycle.run for cycle in read_sched_log([path], RejectPrinter(10)) if cycle.run]


SPLIT_CYCLES = {
    # the scheduler ran a cycle's jobs, but the server handled the requests to run the last of them after the cycle's
    # end, once a release (here) or a submission (below) had made it send the next command: its log puts them in
    # the next cycle (at 23:10:48: 635, 620 and 626, the last two in the next), alone or with that cycle's own
    "fairshare-seed3-mom-updates": 1,
    "strict-depth3-direct": 1,
    "vnodes-onehost-light-direct": 1,
    "vnodes-light-seed2-queuejob": 1,
    "vnodes-onehost-light-queuejob": 1,
    "vnodes-light-seed7-queuejob": 2,  # the late job in one server cycle with the next cycle's own: both count
    # at 04:36:42 the request for 300 came after a submission's command; at 04:38:39 the two cycles the two ends asked
    # for each ran one job, both requests logged after the second command
    "formula-queuejob": 3,
    "limits-projects-seed3": 1,
    "fuzzy-off-seed3": 1,
}
"""Cycles of the scheduler's own log whose jobs the server's log does not group as one of its cycles alone, where
there are any."""


@pytest.mark.parametrize("config", WITH_SCHED_LOG)
def test_the_servers_cycles_are_the_schedulers(config):
    """The cycles the decisions check reads from the server's log (``server_cycles``) are those of the scheduler's
    own log: the jobs each of its cycles ran are the jobs of one of the server's, which holds no other (or, where
    the server handled a cycle's last requests to run jobs after the next command, what ``SPLIT_CYCLES`` holds)."""
    from collections import Counter

    from replay.fidelity.decisions import server_cycles
    from replay.fidelity.server_log import read_server_log
    folder = os.path.join(DATA, config)
    cycle_of = server_cycles(read_server_log([os.path.join(folder, "server.log")], lambda *rejected: None))
    cycles = [{cycle_of(job) for job in jobs} for jobs in _scheduler_cycles(os.path.join(folder, "sched.log"))]
    shared = Counter(cycle for jobs in cycles for cycle in jobs)
    assert sum(1 for jobs in cycles if len(jobs) > 1 or None in jobs or shared[next(iter(jobs))] > 1) == \
        SPLIT_CYCLES.get(config, 0)


ORDERS_DIFFERING = {
    # busy fairshare runs: where the replayed usage of two users is near, the model ranks them otherwise than PBS
    # in a few cycles (the jobs that run are the same); given the MoMs' updates, in one cycle or none
    "fairshare-seed8-again": 10,
    "fairshare-seed3-again": 6,
    "fairshare-seed5-again": 5,
    "fairshare-2-again": 4,
    "fairshare-light-seed6-again": 3,
    # one of them at 17:06:19: PBS considered 779 then 778, released that second, and ran 779; the model, which put
    # 778 first, agrees only on the reading without 778
    "fairshare-light-seed3-again": 3,
    "fairshare-light-seed3-queuejob": 1,
    "fairshare-light-seed6-mom-updates": 1,
    "fairshare-seed6-mom-updates": 1,  # the cycle at 22:20:12, fid_cai first (see WITH_MOM_UPDATES_REACHED)
    "fairshare-vnodes-mom-updates": 1,
    "fairshare-vnodes-seed2-mom-updates": 1,
    "fairshare-seed5-queuejob": 3,
}
"""Decisions given the server's log, agreeing, whose cycle considered the jobs in another order than the
scheduler's log shows, where there are any."""


@pytest.mark.parametrize("config", WITH_SCHED_LOG)
def test_cycles_consider_the_jobs_in_the_schedulers_order(config):
    """Where a decision given the server's log agrees, the cycle the model answered considered the jobs in the
    order of the scheduler's own log ("Considering job to run"), those that could not run too: the job sort
    itself, on every recording without fairshare; jobs the model considered and the scheduler did not are only
    ones eligible that very second (``replay.fidelity.sched_log``). Nearly every decision is compared."""
    from predictor.cmdline.rejects import RejectPrinter
    from replay.fidelity.sched_log import check_orders, read_sched_log
    _, site, _, checks = _given_server_log(config)
    orders = check_orders(checks, read_sched_log([os.path.join(DATA, config, "sched.log")], RejectPrinter(10)))
    assert len(orders) >= sum(check.agrees for check in checks) - 2 - SPLIT_CYCLES.get(config, 0)
    assert sum(not order.in_order for order in orders) <= ORDERS_DIFFERING.get(config, 0)
    if site.policy.fairshare is None:
        assert all(order.in_order for order in orders)


USAGE_RECORDINGS = [name for name in RECORDINGS
                    if (json.load(open(os.path.join(DATA, name, "recording.json"))).get("fairshare_usage_file")
                        or {}).get("usage")]
"""Recordings whose server's fairshare usage file, read when the recording ended, holds some usage."""


USAGE_REACHED = {
    # decayed by half every minute: what is left at the end comes from the last few jobs, and the replay ends under
    # the server's for fid_ana (13.3 against 20.9) and over it for fid_ben
    "fairshare-seed3": 0.26,
    "fairshare-light-seed3": 0.21,  # as fairshare-seed3, lightly loaded: little usage left at the end
}
"""How far the replayed usage ends from the server's file where that is more than 20 %."""


@pytest.mark.parametrize("config", USAGE_RECORDINGS)
def test_replayed_usage_ends_as_the_servers(config):
    """The fairshare usage replayed through the whole accounting log ends within 20 % of the server's own usage file
    (summed over its entities): jobs are charged what their MoM measured, as the scheduler saw it, while PBS saw
    them running."""
    from predictor.cmdline.rejects import RejectPrinter
    from replay.fidelity.machine import site_model
    from replay.fidelity.records import read_records
    folder = os.path.join(DATA, config)
    accounting = read_records([os.path.join(folder, "accounting")], RejectPrinter(10))
    usage = fidelity_totals.usage_errors(folder, accounting, site_model(os.path.join(folder, "site"), accounting))
    error = sum(abs(replayed - real) for replayed, real in usage.values())
    assert error <= USAGE_REACHED.get(config, 0.20) * sum(real for _, real in usage.values()), usage


def test_jobs_under_the_formula_threshold_never_start():
    """In ``resources`` the jobs whose ``job_sort_formula`` value is at or below ``job_sort_formula_threshold``
    never ran on the real server (the harness deleted them once the others had ended). The accounting log
    gives no eligible time to a job that never started, so the check leaves them out; made eligible at their
    real release (``recording.json``), they wait through many decisions, and the model still agrees with
    every one, starting none of them. Without the threshold the model would start them."""
    from predictor.cmdline.rejects import RejectPrinter
    from replay.fidelity.decisions import check_decisions
    from replay.fidelity.machine import site_model
    from replay.fidelity.records import read_records
    folder = os.path.join(DATA, "resources")
    with open(os.path.join(folder, "recording.json")) as recording:
        summary = json.load(recording)
    never = {summary["job_ids"][job["name"]]: int(summary["released_at"][job["name"]])
             for job in summary["workload"]["jobs"] if job.get("never_runs")}
    accounting = read_records([os.path.join(folder, "accounting")], RejectPrinter(10))
    accounting = accounting._replace(jobs=tuple(
        record._replace(job=record.job._replace(eligible_time=never[record.job.name]))
        if record.job.name in never else record for record in accounting.jobs))
    site = site_model(os.path.join(folder, "site"), accounting)
    assert len(never) == 3 and site.policy.job_sort_formula_threshold == 120
    checks = check_decisions(accounting, site)
    waiting = [check for check in checks if set(never) & {job.name for job in check.state.queued}]
    assert len(waiting) >= 30 and all(check.agrees for check in checks)
    assert not set(never) & {name for check in checks for name in check.model_started}
    without = site._replace(policy=site.policy._replace(job_sort_formula_threshold=None))
    assert sum(check.agrees for check in check_decisions(accounting, without)) < len(checks) - 10


ACCRUAL_RECORDINGS = [name for name in RECORDINGS if os.path.exists(os.path.join(DATA, name, "accrual.log"))]
"""Recordings whose server logged every change of a job's accrue type (``log_events`` 2047)."""

_ACCRUE = re.compile(r"^(\d\d/\d\d/\d{4} \d\d:\d\d:\d\d);[0-9a-fA-F]{4};[^;]*;Job;([^;]+);Accrue type has changed to "
                     r"(\w+), previous accrue type was \w+ for \d+ secs, total eligible_time=(\d+):(\d\d):(\d\d)")


def _server_eligible_time(path):
    """Job id -> ``(epoch, accruing eligible time, total eligible_time)`` at each change the server logged."""
    changes = {}
    with open(path, encoding="utf-8") as log:
        for line in log:
            found = _ACCRUE.match(line)
            if found:
                when = calendar.timegm(time.strptime(found.group(1), "%m/%d/%Y %H:%M:%S"))
                total = int(found.group(4)) * 3600 + int(found.group(5)) * 60 + int(found.group(6))
                changes.setdefault(found.group(2), []).append((when, found.group(3) == "eligible_time", total))
    return changes


def _read_at(changes, now):
    """The eligible time the scheduler read at ``now`` (the server adds the time since a change to eligible)."""
    before = [change for change in changes if change[0] < now]
    if not before:
        return None
    when, accruing, total = before[-1]
    return total + (now - when if accruing else 0)


@pytest.mark.parametrize("config", ACCRUAL_RECORDINGS)
def test_eligible_time_follows_the_servers(config):
    """At every decision, each queued job's eligible time in the model (``replay.pbs.accrual``, rebuilt by the
    check) is within a second of what the real server held, for at least 90 % of the (decision, job) pairs
    (a switch a second or two apart stays in a job's sum: 98 % and 94 % on the two recordings); counted from
    each job's etime it is so for fewer than a fifth."""
    from predictor.cmdline.rejects import RejectPrinter
    from replay.fidelity.decisions import check_decisions
    from replay.fidelity.machine import site_model
    from replay.fidelity.records import read_records
    folder = os.path.join(DATA, config)
    server = _server_eligible_time(os.path.join(folder, "accrual.log"))
    accounting = read_records([os.path.join(folder, "accounting")], RejectPrinter(10))
    pairs = [(check.state, job) for check in check_decisions(accounting, site_model(os.path.join(folder, "site"),
                                                                                    accounting))
             for job in check.state.queued if _read_at(server.get(job.name, ()), check.state.now) is not None]
    assert len(pairs) > 300

    def agreeing(value):
        return sum(abs(value(state, job) - _read_at(server[job.name], state.now)) <= 1 for state, job in pairs)
    assert agreeing(lambda state, job: state.accrual.eligible_s(job, state.now)) >= 0.9 * len(pairs)
    assert agreeing(lambda state, job: state.now - job.eligible_time) < 0.2 * len(pairs)


REPEATED = {
    # (first, second): (jobs, starts within 2 s, mean wait of the first and of the second, median wait of each)
    ("fairshare", "fairshare-2"): (70, 37, 30.49, 28.41, 11.0, 9.5),
    ("fairshare-egroup", "fairshare-egroup-2"): (60, 16, 42.87, 43.15, 14.0, 19.0),
    ("eligibility-seed3", "eligibility-seed3-again"): (81, 27, 52.11, 50.99, 31.0, 34.0),
    ("formula-seed2", "formula-seed2-again"): (70, 9, 103.69, 96.33, 111.0, 107.0),
    ("limits", "limits-again"): (60, 25, 20.18, 19.68, 11.0, 7.0),
    ("queues", "queues-again"): (60, 35, 32.65, 32.47, 15.0, 13.5),
    ("resources", "resources-again"): (63, 27, 15.32, 14.32, 4.0, 3.0),
    ("roundrobin", "roundrobin-again"): (66, 29, 27.71, 29.76, 7.0, 14.0),
    ("sortkey", "sortkey-again"): (60, 14, 41.07, 45.7, 31.5, 32.5),
    ("strict-depth1-heavy-seed3", "strict-depth1-heavy-seed3-again"): (70, 19, 61.16, 57.16, 47.5, 47.5),
    ("strict-depth3", "strict-depth3-again"): (70, 33, 45.53, 51.63, 16.5, 29.0),
    ("vnodes", "vnodes-again"): (60, 37, 12.12, 13.65, 4.5, 5.0),
    # the third recordings (nothing else running on the machine) against the first and the second
    ("eligibility-seed3", "eligibility-seed3-again2"): (81, 50, 52.11, 52.22, 31.0, 30.0),
    ("eligibility-seed3-again", "eligibility-seed3-again2"): (81, 27, 50.99, 52.22, 34.0, 30.0),
    ("formula-seed2", "formula-seed2-again2"): (70, 31, 103.69, 101.93, 111.0, 113.5),
    ("formula-seed2-again", "formula-seed2-again2"): (70, 32, 96.33, 101.93, 107.0, 113.5),
    ("limits", "limits-again2"): (60, 27, 20.18, 17.92, 11.0, 7.0),
    ("limits-again", "limits-again2"): (60, 38, 19.68, 17.92, 7.0, 7.0),
    ("queues", "queues-again2"): (60, 50, 32.65, 31.97, 15.0, 14.0),
    ("queues-again", "queues-again2"): (60, 43, 32.47, 31.97, 13.5, 14.0),
    ("resources", "resources-again2"): (63, 32, 15.32, 15.35, 4.0, 1.0),
    ("resources-again", "resources-again2"): (63, 38, 14.32, 15.35, 3.0, 1.0),
    ("roundrobin", "roundrobin-again2"): (66, 20, 27.71, 27.17, 7.0, 12.0),
    ("roundrobin-again", "roundrobin-again2"): (66, 29, 29.76, 27.17, 14.0, 12.0),
    ("sortkey", "sortkey-again2"): (60, 19, 41.07, 39.72, 31.5, 30.0),
    ("sortkey-again", "sortkey-again2"): (60, 24, 45.7, 39.72, 32.5, 30.0),
    ("strict-depth1-heavy-seed3", "strict-depth1-heavy-seed3-again2"): (70, 53, 61.16, 60.29, 47.5, 47.0),
    ("strict-depth1-heavy-seed3-again", "strict-depth1-heavy-seed3-again2"): (70, 20, 57.16, 60.29, 47.5, 47.0),
    ("strict-depth3", "strict-depth3-again2"): (70, 30, 45.53, 50.99, 16.5, 30.0),
    ("strict-depth3-again", "strict-depth3-again2"): (70, 45, 51.63, 50.99, 29.0, 30.0),
    ("vnodes", "vnodes-again2"): (60, 38, 12.12, 11.98, 4.5, 5.5),
    ("vnodes-again", "vnodes-again2"): (60, 32, 13.65, 11.98, 5.0, 5.5),
    ("strict-depth1-light", "strict-depth1-light-again"): (60, 60, 0.88, 0.87, 0.0, 0.0),
    ("aging-seed2", "aging-seed2-again"): (66, 17, 82.95, 78.71, 91.0, 83.0),
    # light workloads the replay falls short on, recorded again with the server's log
    ("vnodes-light-seed2", "vnodes-light-seed2-again"): (60, 60, 8.78, 8.78, 5.0, 5.0),
    ("vnodes-light-seed7", "vnodes-light-seed7-again"): (60, 33, 6.32, 7.47, 2.0, 2.0),
    ("vnodes-onehost-light", "vnodes-onehost-light-again"): (60, 42, 3.43, 2.98, 0.0, 0.0),
    ("vnodes-light", "vnodes-light-again"): (60, 58, 2.08, 2.4, 0.0, 0.0),
    ("vnodes-light-seed4", "vnodes-light-seed4-again"): (60, 60, 6.13, 6.08, 3.0, 2.5),
    ("vnodes-light-seed6", "vnodes-light-seed6-again"): (60, 52, 2.48, 1.67, 0.0, 0.0),
    ("fairshare-light-seed3", "fairshare-light-seed3-again"): (60, 60, 3.67, 3.68, 0.0, 0.0),
    ("fairshare-light-seed6", "fairshare-light-seed6-again"): (60, 53, 6.33, 6.93, 2.0, 2.0),
    # busy fairshare workloads recorded a second time, with the server's log
    ("fairshare-seed3", "fairshare-seed3-again"): (70, 16, 46.1, 43.8, 23.5, 18.0),
    ("fairshare-seed6", "fairshare-seed6-again"): (70, 40, 41.71, 41.54, 22.0, 21.5),
    ("fairshare-seed8", "fairshare-seed8-again"): (70, 28, 57.11, 49.04, 26.0, 8.0),
    ("fairshare-2", "fairshare-2-again"): (70, 34, 28.41, 29.47, 9.5, 10.0),
    ("fairshare-seed5", "fairshare-seed5-again"): (70, 34, 48.26, 50.81, 8.0, 9.5),
    # busy workloads recorded a fourth time, with the server's log, against their first recording
    ("strict-depth3", "strict-depth3-again3"): (70, 31, 45.53, 52.01, 16.5, 32.0),
    ("limits", "limits-again3"): (60, 27, 20.18, 16.72, 11.0, 8.0),
    ("queues", "queues-again3"): (60, 25, 32.65, 30.15, 15.0, 12.0),
    ("sortkey", "sortkey-again3"): (60, 18, 41.07, 37.28, 31.5, 24.0),
    ("formula-seed2", "formula-seed2-again3"): (70, 3, 103.69, 103.56, 111.0, 112.5),
    ("roundrobin", "roundrobin-again3"): (66, 30, 27.71, 28.94, 7.0, 10.0),
    ("vnodes", "vnodes-again3"): (60, 39, 12.12, 12.08, 4.5, 6.0),
}
"""Workloads recorded twice on the same server, and how far the second run was from the first (docs/fidelity.md,
"The server against itself")."""


@pytest.mark.parametrize("first, second", sorted(REPEATED))
def test_the_server_against_itself(first, second):
    """A workload recorded again, measured against its first recording as the model is against a log, gives the
    figures docs/fidelity.md shows; both recordings have every job."""
    from predictor.cmdline.rejects import RejectPrinter
    from replay.fidelity.measure import repeat_outcomes
    from replay.fidelity.records import read_records
    one, other = (read_records([os.path.join(DATA, name, "accounting")], RejectPrinter(10)) for name in (first, second))
    out = repeat_outcomes(one, other)
    jobs, within, mean_first, mean_second, median_first, median_second = REPEATED[(first, second)]
    assert (out.jobs, out.starts_within_2s, out.not_started_sim) == (jobs, within, 0)
    assert (round(out.wait_mean_real_s, 2), round(out.wait_mean_sim_s, 2)) == (mean_first, mean_second)
    assert (out.wait_median_real_s, out.wait_median_sim_s) == (median_first, median_second)


POOLED_MEAN_REACHED = {
    # configuration: |mean wait difference| at most, over all its recordings' jobs together
    "fairshare-long": 0.06,  # 131.9 s real, 125.0 s simulated, jobs of 10 to 50 s on 3 recordings
}
"""Configurations whose recordings, taken together, miss the goal on the mean wait, and what they reach."""


def test_each_configurations_recordings_together_keep_the_mean_wait():
    """Over all the recordings of a configuration (``fidelity_totals.configuration_of``), the mean of every replayed
    job's wait is within 5 % of the real one, unless ``POOLED_MEAN_REACHED`` says otherwise: the replay's waits drift
    from one busy run's, both ways (the server's own do, "The server against itself"); over every job of every
    recording, within 1 % (no bias: 38.2 s real, 38.0 s simulated)."""
    recordings = [fidelity_totals.recording_waits(os.path.join(DATA, name)) for name in RECORDINGS]
    configurations = fidelity_totals.pooled(recordings)
    (everything,) = fidelity_totals.pooled([("all", within_2s, waits) for _, within_2s, waits in recordings])
    assert abs(everything.wait_mean_sim_s - everything.wait_mean_real_s) <= 0.01 * everything.wait_mean_real_s
    assert len(configurations) == 40
    missed = [(item.configuration, round(item.wait_mean_real_s, 1), round(item.wait_mean_sim_s, 1))
              for item in configurations
              if abs(item.wait_mean_sim_s - item.wait_mean_real_s) >
              POOLED_MEAN_REACHED.get(item.configuration, GOAL_WAIT) * item.wait_mean_real_s]
    assert missed == []
    within_goal = [item.configuration for item in configurations
                   if fidelity_totals.within(item.wait_mean_sim_s, item.wait_mean_real_s)]
    assert sorted(set(item.configuration for item in configurations) - set(within_goal)) == sorted(POOLED_MEAN_REACHED)
    repeated = {fidelity_totals.configuration_of(os.path.join(DATA, first)) for first, _ in REPEATED}
    of_repeated = [item for item in configurations if item.configuration in repeated]
    both = [item for item in of_repeated if item.configuration in within_goal
            and fidelity_totals.within(item.wait_median_sim_s, item.wait_median_real_s)]
    assert (len(of_repeated), sum(1 for item in of_repeated if item.configuration in within_goal), len(both)) == (
        17, 17, 11)  # docs/fidelity.md: the model on the configurations the server was recorded again on


def test_the_server_against_itself_each_configuration_together():
    """The figures docs/fidelity.md gives for the server against itself, each configuration's repeated recordings
    together: every pair of ``REPEATED``, the second recording's waits against the first's."""
    from predictor.cmdline.rejects import RejectPrinter
    from replay.fidelity.measure import replayed_jobs
    from replay.fidelity.records import read_records

    def waits(name):
        _, compared, _ = replayed_jobs(read_records([os.path.join(DATA, name, "accounting")], RejectPrinter(10)))
        return [start - eligible for _, eligible, start in compared]

    together = {}
    for first, second in REPEATED:
        real, again = waits(first), waits(second)
        assert len(real) == len(again)
        pairs = together.setdefault(fidelity_totals.configuration_of(os.path.join(DATA, first)), [])
        pairs += zip(real, again)
    configurations = fidelity_totals.pooled([(name, 0, pairs) for name, pairs in together.items()])
    means = [item for item in configurations if fidelity_totals.within(item.wait_mean_sim_s, item.wait_mean_real_s)]
    both = [item for item in means if fidelity_totals.within(item.wait_median_sim_s, item.wait_median_real_s)]
    assert (len(configurations), len(means), len(both)) == (17, 12, 4)
