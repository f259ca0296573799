"""scikit-learn's random forest, as Zrigui et al. train it: the classifier's default learner.

The paper names the learner (Breiman's random forest, §4.2) and no parameter
of it, so the forest is scikit-learn's ``RandomForestClassifier`` with its
defaults (100 fully grown trees, bootstrap samples, sqrt of the features at
each split, Gini impurity), seeded: the same rows and seed give the same
forest. It classifies by scikit-learn's rule: the class of highest mean
probability over the trees (an exact tie is "large", the first class).

One prediction per submitted job is too small a task for scikit-learn's own
``predict`` (its per-call overhead is milliseconds); the fitted trees are
copied once into flat arrays (``SklearnForest``) and walked for every tree at
once with numpy, comparing the features as scikit-learn does: in float32,
against its thresholds. A test checks the two agree.
"""

import numpy as np

__all__ = ["SklearnForest", "ConstantForest", "fit_sklearn_forest", "seed_of"]


def seed_of(seed, week):
    """The ``random_state`` of week ``week``'s forest: a 31-bit integer drawn from ``(seed, week)``."""
    return int(np.random.SeedSequence([seed, week]).generate_state(1)[0] >> 1)


class SklearnForest:
    """The fitted trees of a ``RandomForestClassifier`` in flat arrays; ``predict(row)`` as scikit-learn's."""

    def __init__(self, estimators):
        trees = [estimator.tree_ for estimator in estimators]
        offsets = np.cumsum([0] + [tree.node_count for tree in trees])
        self.roots = offsets[:-1]
        self.feature = np.concatenate([np.maximum(tree.feature, 0) for tree in trees])
        self.threshold = np.concatenate([tree.threshold for tree in trees])
        children = [(tree.children_left, tree.children_right) for tree in trees]
        self.leaf = np.concatenate([left < 0 for left, _ in children])
        self.left = np.concatenate([np.where(left < 0, 0, left) + offset
                                    for (left, _), offset in zip(children, offsets)])
        self.right = np.concatenate([np.where(right < 0, 0, right) + offset
                                     for (_, right), offset in zip(children, offsets)])
        values = np.concatenate([tree.value[:, 0, :] for tree in trees])  # per node: class weights (large, small)
        totals = values.sum(axis=1)
        self.large_share, self.small_share = values[:, 0] / totals, values[:, 1] / totals
        self.depth = max(tree.max_depth for tree in trees)

    def predict(self, row):
        """Whether the trees' mean probability of "small" exceeds that of "large" for ``row``."""
        values = np.asarray(row, dtype=np.float32).astype(np.float64)
        nodes = self.roots
        for _ in range(self.depth):
            go_left = values[self.feature[nodes]] <= self.threshold[nodes]
            nodes = np.where(self.leaf[nodes], nodes, np.where(go_left, self.left[nodes], self.right[nodes]))
        small_total = large_total = 0.0
        for large, small in zip(self.large_share[nodes].tolist(), self.small_share[nodes].tolist()):
            large_total += large  # summed tree by tree, as scikit-learn sums the trees' probabilities
            small_total += small
        return small_total > large_total


def fit_sklearn_forest(rows, labels, random_state):
    """The ``RandomForestClassifier`` (defaults, ``random_state``) fitted on ``rows`` and ``labels`` (1 small),
    as a ``SklearnForest``; when the labels hold one class only, a ``ConstantForest`` of it (what scikit-learn's
    forest would always answer)."""
    from sklearn.ensemble import RandomForestClassifier  # imported when a forest is first trained: it is slow to load

    labels = np.asarray(labels, dtype=np.int64)
    if labels.min() == labels.max():
        return ConstantForest(bool(labels[0]))
    forest = RandomForestClassifier(random_state=random_state)
    forest.fit(np.asarray(rows, dtype=np.float64), labels)
    return SklearnForest(forest.estimators_)


class ConstantForest:
    """A forest trained on one class: it always predicts that class."""

    def __init__(self, small):
        self.small = small

    def predict(self, row):
        """The one class learned."""
        return self.small
