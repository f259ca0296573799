"""A random forest of classification trees (Breiman, "Random Forests", 2001), numpy only.

What Zrigui et al. train each week to tell small jobs from large ones. Each
tree is grown on a bootstrap sample of the rows; at each node it considers a
random subset of the features (``sqrt(features)``, the usual choice for
classification) and takes the split with the lowest Gini impurity; the forest
predicts the majority vote of its trees (a tie is "large", the class whose
mistake costs less).

Two departures from the textbook forest keep a weekly retraining on the whole
history fast in numpy, and are the usual ones of histogram-based forests:

* candidate thresholds are at most ``MAX_THRESHOLDS`` values per feature,
  taken at quantiles of the training rows (a feature with fewer distinct values
  keeps them all);
* all the trees grow together, one depth level at a time: a level is a handful
  of array operations over every row of every tree, so the cost is a few numpy
  calls per level rather than per node.

Trees stop at ``max_depth``, at pure nodes, and where no split leaves
``min_leaf`` rows on each side. Randomness comes only from the
``numpy.random.Generator`` seeded by the caller: the same rows and seed give
the same forest.
"""

from typing import NamedTuple

import numpy as np

__all__ = ["MAX_THRESHOLDS", "ForestSettings", "Forest", "grow_forest"]

MAX_THRESHOLDS = 31
"""Candidate split values per feature (quantiles of the training rows)."""


class ForestSettings(NamedTuple):
    """How big the forest is; ``max_rows``: bootstrap rows per tree (fewer when the history is shorter)."""

    trees: int = 21
    max_depth: int = 12
    min_leaf: int = 2
    max_rows: int = 3000


class Forest(NamedTuple):
    """Every tree's nodes in flat arrays; node ``t`` is the root of tree ``t``.

    A node with ``left`` -1 is a leaf voting ``small``; otherwise rows with
    ``value[feature] <= threshold`` go to ``left``, the others to ``right``.
    """

    trees: int
    feature: list
    threshold: list
    left: list
    right: list
    small: list

    def predict(self, row):
        """Whether the majority of the trees vote small for ``row`` (a sequence of feature values)."""
        feature, threshold, left, right, small = self.feature, self.threshold, self.left, self.right, self.small
        votes = 0
        for node in range(self.trees):
            while left[node] >= 0:
                node = left[node] if row[feature[node]] <= threshold[node] else right[node]
            votes += small[node]
        return 2 * votes > self.trees


def _thresholds(column):
    """Candidate split values of one feature: its distinct values, or quantiles of them when many."""
    values = np.unique(column)
    if values.size <= MAX_THRESHOLDS:
        return values
    ordered = np.sort(column)
    return np.unique(ordered[np.arange(1, MAX_THRESHOLDS + 1) * len(ordered) // (MAX_THRESHOLDS + 1)])


def _binned(rows):
    """``(bins, thresholds)``: per row and feature, how many candidate thresholds lie below the value.

    ``value <= thresholds[f][k]`` exactly when ``bins[row, f] <= k``.
    """
    thresholds = [_thresholds(rows[:, feature]) for feature in range(rows.shape[1])]
    bins = np.empty(rows.shape, dtype=np.uint8)
    for feature, values in enumerate(thresholds):
        bins[:, feature] = np.searchsorted(values, rows[:, feature], side="left")
    return bins, thresholds


class _Growth:
    """The forest being grown: its node arrays (lists), extended one level at a time."""

    def __init__(self, trees):
        self.feature, self.threshold = [-1] * trees, [0.0] * trees
        self.left, self.right, self.small = [-1] * trees, [-1] * trees, [0] * trees

    def vote(self, nodes, small, sizes):
        """Each node's majority class (a tie is large); only the leaves' votes are ever read."""
        for node, votes, size in zip(nodes.tolist(), small.tolist(), sizes.tolist()):
            self.small[node] = int(2 * votes > size)

    def split(self, nodes, useful, feature, cut, thresholds, rows):
        """Split the ``useful`` nodes at ``feature <= thresholds[feature][cut]``.

        ``rows``: the level's ``_Rows`` (``local``: each row's node, numbered as ``nodes``). Returns the
        children and the ``_Rows`` of the split nodes, moved to their child.
        """
        count = int(np.count_nonzero(useful))
        children = len(self.left) + 2 * np.arange(count)
        for values, fill in ((self.feature, -1), (self.threshold, 0.0), (self.left, -1), (self.right, -1),
                             (self.small, 0)):
            values.extend([fill] * (2 * count))
        for node, child, column, bin_ in zip(nodes[useful].tolist(), children.tolist(), feature[useful].tolist(),
                                             cut[useful].tolist()):
            self.feature[node], self.threshold[node] = column, float(thresholds[column][bin_])
            self.left[node], self.right[node] = child, child + 1
        rows = rows.only(useful[rows.local])
        local = rows.local
        child_number = (np.cumsum(useful) - 1)[local]  # the split node's rank among the split ones
        rows = rows._replace(node=children[child_number] + (rows.bins[np.arange(len(local)), feature[local]]
                                                             > cut[local]))
        return np.stack([children, children + 1], axis=1).ravel(), rows.only(np.argsort(rows.node, kind="stable"))

    def forest(self, trees):
        return Forest(trees, self.feature, self.threshold, self.left, self.right, self.small)


class _Rows(NamedTuple):
    """The sampled rows still in play: their bins, labels, node, and node numbered within the level."""

    bins: np.ndarray
    labels: np.ndarray
    node: np.ndarray
    local: np.ndarray

    def only(self, which):
        """The rows ``which`` (a mask or indexes) selects."""
        return _Rows(self.bins[which], self.labels[which], self.node[which], self.local[which])


_CELLS_PER_BATCH = 1 << 21
"""Histogram cells (node x feature x bin x class) counted at once: bounds memory on deep levels."""


def _best_splits(bins, labels, local, count, features_of_node, min_leaf, bin_count):
    """``(feature slot, bin, gain)`` of each of ``count`` nodes' best split among its chosen features.

    ``local``: each row's node, numbered 0 .. count - 1.
    """
    chosen = features_of_node.shape[1]
    row_bins = np.take_along_axis(bins, features_of_node[local], axis=1)
    offsets = np.arange(chosen) * (bin_count * 2)
    keys = (local * (chosen * bin_count * 2))[:, None] + offsets + row_bins * 2 + labels[:, None]
    counts = np.bincount(keys.ravel(), minlength=count * chosen * bin_count * 2).reshape(count, chosen, bin_count, 2)
    left = np.cumsum(counts, axis=2)
    left_small, left_large = left[..., 1].astype(np.float64), left[..., 0].astype(np.float64)
    small, large = left_small[:, :1, -1:], left_large[:, :1, -1:]
    right_small, right_large = small - left_small, large - left_large
    left_n, right_n = left_small + left_large, right_small + right_large
    with np.errstate(invalid="ignore", divide="ignore"):
        # Minimising the children's summed Gini impurity is maximising this.
        purity = ((left_small * left_small + left_large * left_large) / left_n
                  + (right_small * right_small + right_large * right_large) / right_n)
    purity[(left_n < min_leaf) | (right_n < min_leaf)] = -np.inf
    flat = purity.reshape(count, -1)
    best = np.argmax(flat, axis=1)
    small, large = small.ravel(), large.ravel()
    parent = (small * small + large * large) / (small + large)
    return best // bin_count, best % bin_count, flat[np.arange(count), best] - parent


def _level_splits(rows, count, features_of_node, min_leaf, bin_count):
    """``_best_splits`` over the level's nodes in batches (rows are sorted by node)."""
    step = max(1, _CELLS_PER_BATCH // (features_of_node.shape[1] * bin_count * 2))
    bounds = np.searchsorted(rows.local, np.arange(0, count + step, step)).tolist()
    parts = []
    for first, begin, end in zip(range(0, count, step), bounds, bounds[1:]):
        last = min(first + step, count)
        parts.append(_best_splits(rows.bins[begin:end], rows.labels[begin:end], rows.local[begin:end] - first,
                                  last - first, features_of_node[first:last], min_leaf, bin_count))
    return tuple(np.concatenate(values) for values in zip(*parts))


_NO_GAIN = 1e-9
"""A split must lower the impurity by more than this (rounding)."""


def _drawn_features(rows, count, chosen, rng):
    """Per node, ``chosen`` features drawn at random among those not constant in it (constant ones only
    when too few vary), as scikit-learn draws: a constant feature cannot split a node and does not count."""
    starts = np.searchsorted(rows.local, np.arange(count))
    varies = np.minimum.reduceat(rows.bins, starts, axis=0) != np.maximum.reduceat(rows.bins, starts, axis=0)
    priority = rng.random((count, rows.bins.shape[1])) + ~varies
    return np.argsort(priority, axis=1)[:, :chosen]


def grow_forest(rows, labels, rng, settings=ForestSettings()):
    """A ``Forest`` trained on ``rows`` (2-D array, a row per job) with ``labels`` (1 small, 0 large)."""
    rows, labels = np.asarray(rows, dtype=np.float64), np.asarray(labels, dtype=np.int64)
    bins, thresholds = _binned(rows)
    bin_count = max(values.size for values in thresholds) + 1
    chosen = max(1, int(round(np.sqrt(rows.shape[1]))))
    sample = min(len(rows), settings.max_rows)
    sampled = rng.integers(0, len(rows), size=(settings.trees, sample)).ravel()  # bootstrap rows, tree by tree
    in_play = _Rows(bins[sampled], labels[sampled], np.repeat(np.arange(settings.trees), sample), None)
    growth, nodes = _Growth(settings.trees), np.arange(settings.trees)
    for depth in range(settings.max_depth + 1):
        local = np.searchsorted(nodes, in_play.node)
        small = np.bincount(local, weights=in_play.labels, minlength=len(nodes))
        sizes = np.bincount(local, minlength=len(nodes))
        growth.vote(nodes, small, sizes)
        splittable = (small > 0) & (small < sizes) & (sizes >= 2 * settings.min_leaf)
        if depth == settings.max_depth or not splittable.any():
            break
        nodes, in_play = nodes[splittable], in_play._replace(local=local).only(splittable[local])
        in_play = in_play._replace(local=np.searchsorted(nodes, in_play.node))
        features_of_node = _drawn_features(in_play, len(nodes), chosen, rng)
        slot, cut, gain = _level_splits(in_play, len(nodes), features_of_node, settings.min_leaf, bin_count)
        feature = features_of_node[np.arange(len(nodes)), slot]
        nodes, in_play = growth.split(nodes, gain > _NO_GAIN, feature, cut, thresholds, in_play)
    return growth.forest(settings.trees)
