"""A scheduler's policy: the queue a job's queue name stands for (replay/pbs/policy.py)."""

from hypothesis import given
from hypothesis import strategies as st

from replay.pbs.policy import QueuePolicy, SchedulingPolicy

NAMES = st.sampled_from(["workq", "express", "long", "debug"])
QUEUES = st.lists(st.builds(QueuePolicy, NAMES, st.integers(-1024, 1024), st.one_of(st.none(), st.integers(0, 5)),
                            st.booleans()), max_size=5)


def test_a_listed_queue_is_the_sites():
    express = QueuePolicy("express", priority=200, backfill_depth=2)
    policy = SchedulingPolicy(queues=(QueuePolicy("workq"), express))
    assert policy.queue("express") is express


def test_a_queue_the_site_did_not_list_has_pbss_defaults():
    policy = SchedulingPolicy(queues=(QueuePolicy("workq", priority=10),))
    assert policy.queue("long") == QueuePolicy("long")
    assert policy.queue("long") is policy.queue("long")  # asked again, the same
    assert policy.queue("workq").priority == 10  # asking for another name left the listed ones alone


@given(QUEUES, NAMES)
def test_the_first_queue_of_a_name_counts(queues, name):
    listed = [queue for queue in queues if queue.name == name]
    expected = listed[0] if listed else QueuePolicy(name)
    assert SchedulingPolicy(queues=tuple(queues)).queue(name) == expected
    assert SchedulingPolicy(queues=list(queues)).queue(name) == expected  # a list, not kept between calls
