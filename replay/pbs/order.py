"""The order PBS's scheduler considers queued jobs in (OpenPBS 23.06: ``cmp_sort``, ``sort_jobs`` and
``next_job``).

How PBS sorts, key after key, each deciding only when the earlier ones tie:

1. Express jobs first: with ``preemptive_sched`` (on by default), jobs of a queue whose priority is at
   least ``preempt_queue_prio`` (150) come before all others, higher queue priority first.
2. ``job_sort_formula``, highest value first (values as stored, in single precision), evaluated once
   at the start of the cycle and kept through its later sorts (``init_scheduling_cycle``).
3. Fairshare, when ``fair_share`` is on: the most deserving entity first (``fairshare.compare_path``).
   It applies *with* a formula too, as a tie-break after it.
4. Each ``job_sort_key`` in turn (a resource the job requested, or ``job_priority``,
   ``fair_share_perc``, ``preempt_priority``; 0 when the job has none). PBS warns that a formula and
   ``job_sort_key`` are incompatible, but still uses the keys to break the formula's ties (seen on a
   real 23.06.06 server).
5. Then the job's rank in its queue (the order the jobs entered it), i.e. submission order.

The queue's priority is *not* a sort key: with ``by_queue`` (the default) PBS walks the queues one
after another, highest priority first (queues of equal priority in the server's order), and sorts
within each; without it, all jobs form one list. With ``round_robin`` it takes one job from each queue
of the highest priority in turn, then moves to the next priority. With fairshare on, PBS sorts again
after every job it starts (and every top job it plans), since that job's usage changes who deserves
next; it then carries on with the first job in the new order it has not yet considered, never going
back to an earlier queue.

Not modelled: jobs a manager runs with ``qrun`` and jobs in reservations (PBS considers them first),
preempted jobs (first among their peers), a site's own ``preempt_prio`` levels (soft limits, fairshare
usage), prime and non-prime time settings, and a formula reading fairshare values while ``fair_share``
is off (PBS then reads the tree of ``resource_group`` without usage; this model gives 0).
"""

from .formula import compile_formula, job_value

__all__ = ["job_order", "sort_values", "resorted_after_each_run", "is_express", "Walk"]


def is_express(policy, job):
    """True if ``job`` is in an express queue (priority at least ``preempt_queue_prio``, preemption on)."""
    return policy.preemptive_sched and policy.queue(job.queue).priority >= policy.preempt_queue_prio


def resorted_after_each_run(policy):
    """True if PBS sorts the jobs again after each job it starts or plans as a top job: with fair_share."""
    return policy.fairshare is not None


def _preempt_key(policy, job):
    """Express jobs first, those of higher-priority queues earlier."""
    return (0, -policy.queue(job.queue).priority) if is_express(policy, job) else (1, 0)


def _sort_key_value(job, name, fairshare):
    """A ``job_sort_key`` value of ``job`` (``find_resresv_amount``): the requested amount, else a
    special name's value, else 0."""
    amount = {"walltime": job.walltime_s, "soft_walltime": job.soft_walltime_s}.get(name)
    amount = job.resource(name, None) if amount is None else amount
    if isinstance(amount, (int, float)):
        return amount
    if name in ("job_priority", "sort_priority"):
        return job.priority
    if name == "fair_share_perc" and fairshare is not None:
        return fairshare.factors(job)["fairshare_perc"]
    return 0


def sort_values(policy, jobs, now, fairshare=None, accrual=None):
    """Each job's ``job_sort_formula`` value by ``id(job)`` (None without a formula). PBS evaluates the formula
    once per cycle, after the fairshare usage is brought up to date (``init_scheduling_cycle``), and sorts by
    the stored value for the whole cycle: the sorts after each job started keep it, even when the formula
    reads fairshare terms that the job's charge changes. ``accrual``: the jobs' eligible time, if followed."""
    if not policy.job_sort_formula:
        return None
    formula = compile_formula(policy.job_sort_formula)
    return {id(job): job_value(policy, formula, job, now, fairshare, accrual) for job in jobs}


def _fixed_keys(policy, values, fairshare, jobs):
    """The parts of each job's sort key that stay the same through a cycle, by ``id(job)``: express first, the
    formula value, the ``job_sort_key`` values, the rank in the queue."""
    fixed = {}
    for job in jobs:
        keys = tuple(-_sort_key_value(job, k.name, fairshare) if k.high_first else
                     _sort_key_value(job, k.name, fairshare) for k in policy.job_sort_key)
        fixed[id(job)] = (_preempt_key(policy, job), -values[id(job)] if values is not None else -0.0, keys, job.index)
    return fixed


def _sort_key(policy, fairshare, jobs, fixed):
    """The key ``cmp_sort`` orders ``jobs`` by, for ``sorted``: ``fixed`` (``_fixed_keys``) with the fairshare
    order of the job's entity as it is now."""
    deserving = fairshare is not None and policy.fairshare is not None
    shares = fairshare.deserving_keys(jobs) if deserving else None

    def key(job):
        preempt, value, keys, index = fixed[id(job)]
        if shares is not None:
            share = shares[id(job)]
        else:
            share = fairshare.deserving_key(job) if deserving else 0
        return (preempt, value, share, keys, index)
    return key


def _queue_names(policy, jobs):
    """The queues holding ``jobs``, highest priority first, equal priorities in the server's order."""
    names = [queue.name for queue in policy.queues]
    for job in sorted(jobs, key=lambda j: j.index):
        if job.queue not in names:
            names.append(job.queue)
    held = {job.queue for job in jobs}
    return sorted((name for name in names if name in held), key=lambda name: -policy.queue(name).priority)


def job_order(policy, jobs, now, fairshare=None, values=None, fixed=None):
    """The queued ``jobs`` as PBS's scheduler sorts them at ``now``: one list when neither by_queue nor
    round_robin is set, else one list per queue (non-empty, highest priority first). With by_queue and
    without fairshare, express jobs of all queues come first as one list, sorted together. The jobs'
    entities are added to ``fairshare`` (a ``fairshare.Fairshare``), as PBS adds every job's entity.
    ``values``: the cycle's formula values (``sort_values``; default: evaluated now); ``fixed``: the keys'
    unchanging parts (``_fixed_keys``; default: made now)."""
    if fairshare is not None:
        fairshare.add_entities(jobs)
    if fixed is None:
        values = sort_values(policy, jobs, now, fairshare) if values is None else values
        fixed = _fixed_keys(policy, values, fairshare, jobs)
    ordered = sorted(jobs, key=_sort_key(policy, fairshare, jobs, fixed))
    if not (policy.by_queue or policy.round_robin):
        return [ordered] if ordered else []
    lists = []
    if policy.by_queue and not policy.round_robin and policy.fairshare is None:
        express = [job for job in ordered if is_express(policy, job)]
        ordered = [job for job in ordered if not is_express(policy, job)]
        lists += [express] if express else []
    for name in _queue_names(policy, ordered):
        lists.append([job for job in ordered if job.queue == name])
    return lists


class Walk:
    """``next_job`` within one cycle: which job PBS considers next, given those it already considered.

    Call ``next_job()`` until it returns None; after a job starts or becomes a top job, call
    ``resort(fairshare)`` with the fairshare as it now is (charged for that job): PBS sorts again when
    ``resorted_after_each_run``, and carries on with the first job it has not yet considered.
    """

    def __init__(self, policy, jobs, now, fairshare=None, accrual=None):
        self.policy, self.jobs, self.now = policy, tuple(jobs), now
        self.considered = set()
        self._level, self._queue = 0, 0
        if fairshare is not None:
            fairshare.add_entities(self.jobs)
        # kept for the cycle, as PBS keeps them
        self.values = sort_values(policy, self.jobs, now, fairshare, accrual)
        self._fixed = _fixed_keys(policy, self.values, fairshare, self.jobs)
        self._sort(fairshare)

    def _sort(self, fairshare):
        """Sort as ``sort_jobs`` does; round robin groups the queues by priority."""
        self.lists = job_order(self.policy, self.jobs, self.now, fairshare, fixed=self._fixed)
        self._flat, self._position = [job for jobs in self.lists for job in jobs], 0
        levels = {}
        for jobs in self.lists:
            levels.setdefault(self.policy.queue(jobs[0].queue).priority, []).append(jobs)
        self.levels = [levels[priority] for priority in sorted(levels, reverse=True)]

    def resort(self, fairshare=None):
        """Sort again if PBS would after a job started or became a top job."""
        if resorted_after_each_run(self.policy):
            self._sort(fairshare)

    def _first_unconsidered(self, jobs):
        """The first of ``jobs`` not yet considered, or None."""
        for job in jobs:
            if job.name not in self.considered:
                return job
        return None

    def _next_in_order(self):
        """The first job of the sorted lists not yet considered, or None. Jobs are never unconsidered, so
        the search resumes where the last one stopped (from the top after a new sort)."""
        while self._position < len(self._flat):
            job = self._flat[self._position]
            if job.name not in self.considered:
                return job
            self._position += 1
        return None

    def _next_round_robin(self):
        """One job from each queue of the current priority in turn, then the next priority."""
        while self._level < len(self.levels):
            queues = self.levels[self._level]
            for _ in range(len(queues)):
                job = self._first_unconsidered(queues[self._queue])
                self._queue = (self._queue + 1) % len(queues)
                if job is not None:
                    return job
            self._level, self._queue = self._level + 1, 0
        return None

    def next_job(self):
        """The next job PBS considers (marked considered), or None when every job was."""
        if self.policy.round_robin:
            job = self._next_round_robin()
        else:
            job = self._next_in_order()
        if job is not None:
            self.considered.add(job.name)
        return job
