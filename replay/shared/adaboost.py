"""Rubio et al.'s regression predictor: scikit-learn's AdaBoost over the jobs completed so far.

Jessi Christa Rubio, Aira Villapando, Christian Matira and Jeffrey Aborot,
*Correcting Job Walltime in a Resource-Constrained Environment* (§4.3,
Algorithm 1): AdaBoost with decision-tree regressors, the prediction being the
weighted median of the trees' (AdaBoost.R2, which is scikit-learn's
``AdaBoostRegressor``), learned from "historical data" with the features
"user, job runtime, and requested CPU and memory resources", the target being
the runtime. The paper gives no parameter of the learner: scikit-learn's
defaults (50 trees of depth 3, linear loss, learning rate 1), seeded.

Our reading of "job runtime" as a feature: the job's *requested* runtime, its
walltime. The job's own runtime is the target and is unknown when it is
predicted; §4.3 builds the model on "CPU resource and walltime requests of
each job" and adds features "other than CPU and WTR" (walltime request), so
the features are the user, the walltime and the requested processors. The
requested memory is left out: the traces the replay reads do not give it
(KTH-SP2 and the CEA-Curie sample record none, the HPC2N subset 3 jobs of
3,171; PBS logs are read without it) (docs/predictors.md).

What it learns from: every job (all users) that completed before the instant
of the prediction, and nothing else. The paper does not say how often the
model is trained; ours refits it at a prediction when ``refit_s`` or more has
passed since the last fit and jobs have completed since (0: at every
prediction after a completion).
"""

import numpy as np

from predictor.algorithms import clamp

__all__ = ["AdaBoostModel", "AdaBoostLearner", "features"]

NO_VALUE = -1
"""A feature the job does not have (no walltime, a user the run's jobs do not include)."""


def features(job, user_code):
    """The paper's features of ``job`` that the traces hold: user, requested runtime (walltime) and requested
    processors."""
    cores = job.ncpus if job.requested_ncpus is None else job.requested_ncpus
    return (user_code, NO_VALUE if job.walltime_s is None else job.walltime_s, cores)


class AdaBoostModel:
    """``adaboost:seed=N:refit_hours=H``: makes one ``AdaBoostLearner`` per run, for the run's jobs."""

    def __init__(self, seed=0, refit_s=86400):
        self.seed, self.refit_s = seed, refit_s

    def __call__(self, jobs):
        return AdaBoostLearner(jobs, self.seed, self.refit_s)


class AdaBoostLearner:
    """What one run's predictions learn from: ``observe`` each completion, ``estimate`` at each prediction."""

    def __init__(self, jobs, seed, refit_s):
        # Users are numbered in the order of their names: the same codes whatever order the jobs come in.
        self.user_codes = {user: code for code, user in enumerate(sorted({job.user for job in jobs}))}
        self.seed, self.refit_s = seed, refit_s
        self.rows, self.runtimes = [], []
        self.model, self.fitted_rows, self.fitted_at = None, 0, None
        self.known = {}  # features -> the fitted model's estimate, until the next fit

    def observe(self, job, end_time, runtime_s):
        """``job`` completed at ``end_time`` after running ``runtime_s``: a training row from now on."""
        self.rows.append(features(job, self.user_codes.get(job.user, NO_VALUE)))
        self.runtimes.append(runtime_s)

    def estimate(self, job, now):
        """The soft walltime of ``job`` predicted at ``now``: the model's runtime, in [1, walltime]; the walltime
        itself before any job has completed; None without a walltime."""
        walltime = job.walltime_s if job.walltime_s and job.walltime_s >= 1 else None
        if walltime is None:
            return None
        if self._due(now):
            self._fit(now)
        if self.model is None:
            return walltime
        row = features(job, self.user_codes.get(job.user, NO_VALUE))
        runtime = self.known.get(row)
        if runtime is None:
            runtime = self.known[row] = float(self.model.predict(np.array([row], dtype=np.float64))[0])
        return clamp(int(runtime), walltime)

    def _due(self, now):
        if len(self.rows) == self.fitted_rows:
            return False
        return self.model is None or now - self.fitted_at >= self.refit_s

    def _fit(self, now):
        from sklearn.ensemble import AdaBoostRegressor  # loaded when first trained: it is slow to import

        self.model = AdaBoostRegressor(random_state=self.seed).fit(
            np.array(self.rows, dtype=np.float64), np.array(self.runtimes, dtype=np.float64))
        self.fitted_rows, self.fitted_at, self.known = len(self.rows), now, {}
