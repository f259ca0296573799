"""Online small/large job classification (Zrigui, de Camargo, Legrand & Trystram, "Improving the
Performance of Batch Schedulers Using Online Job Runtime Classification", JPDC 2022).

Used by the simulation's ``small-first`` orders and by the accuracy replay's
classification table. Modules: ``features`` (what a job is described by),
``forest`` (the learner), ``classifier`` (weekly divider and retraining),
``quality`` (precision and recall over a log). See docs/predictors.md.
"""

from .classifier import WEEK_S, Classification, Completion, SizeClassifier, divider_s
from .features import FEATURE_NAMES, Submission, requested_cores
from .quality import LoggedJob, Quality, classify_log, quality_of, true_classes

__all__ = ["WEEK_S", "Classification", "Completion", "SizeClassifier", "divider_s", "FEATURE_NAMES", "Submission",
           "requested_cores", "LoggedJob", "Quality", "classify_log", "quality_of", "true_classes"]
