"""The PBS scheduler as a site configures it: jobs with their select and place, the site's policy (sort
formula, fairshare, run limits, queues), vnodes and placement, and one scheduling cycle callable on a given
state. Pure: nothing here reads files or the clock; ``replay.site`` reads a site's files into a
``policy.SchedulingPolicy`` and vnodes."""
