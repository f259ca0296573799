"""The random forest behind the small/large classifier: what it learns, and that it is reproducible."""

import numpy as np

from replay.classification.forest import MAX_THRESHOLDS, ForestSettings, grow_forest


def separable(rows=200, features=6, column=2, seed=1):
    """Random rows whose label is ``row[column] <= 0.3``."""
    values = np.random.default_rng(seed).random((rows, features))
    return values, (values[:, column] <= 0.3).astype(int)


def test_learns_a_threshold_on_one_feature():
    """Labels decided by one feature: new rows on either side of it are classified right."""
    rows, labels = separable()
    forest = grow_forest(rows, labels, np.random.default_rng(0))
    assert forest.predict([0.5, 0.5, 0.1, 0.5, 0.5, 0.5]) and not forest.predict([0.5, 0.5, 0.9, 0.5, 0.5, 0.5])


def test_a_node_whose_drawn_features_are_constant_tries_the_others():
    """Only one of 16 features varies: most nodes draw 4 constant ones, and still split on the varying one."""
    rows = np.zeros((40, 16))
    rows[:, 11] = np.arange(40)
    labels = (rows[:, 11] < 20).astype(int)
    forest = grow_forest(rows, labels, np.random.default_rng(0), ForestSettings(trees=11))
    assert [forest.predict(row) for row in rows[[0, 10, 30, 39]].tolist()] == [True, True, False, False]


def test_one_class_only_predicts_it():
    """With every label the same, every tree is one leaf voting that class."""
    rows, _ = separable()
    small = grow_forest(rows, np.ones(len(rows), int), np.random.default_rng(0))
    large = grow_forest(rows, np.zeros(len(rows), int), np.random.default_rng(0))
    assert small.predict(rows[0]) and not large.predict(rows[0])
    assert small.left[:small.trees] == [-1] * small.trees


def test_same_rows_and_seed_same_forest():
    """Reproducible: the forest depends only on the rows, the labels and the seed."""
    rows, labels = separable()
    labels[::7] ^= 1  # some noise, so that the trees differ from one another
    first, again = (grow_forest(rows, labels, np.random.default_rng(5)) for _ in range(2))
    assert first == again
    assert grow_forest(rows, labels, np.random.default_rng(6)) != first


def test_splits_respect_the_depth_and_leaf_size():
    """No path is deeper than max_depth; a split leaves at least min_leaf rows on each side (checked on the
    training rows of one tree grown on all rows)."""
    rows, labels = separable(rows=300)
    labels[::5] ^= 1
    forest = grow_forest(rows, labels, np.random.default_rng(0), ForestSettings(trees=3, max_depth=4, min_leaf=5))

    def depth(node):
        return 0 if forest.left[node] < 0 else 1 + max(depth(forest.left[node]), depth(forest.right[node]))
    assert max(depth(root) for root in range(forest.trees)) <= 4


def test_many_distinct_values_are_cut_at_most_at_max_thresholds_points():
    """A feature with more distinct values than MAX_THRESHOLDS is only split at some of them."""
    rows, labels = separable(rows=2000, features=1, column=0)
    forest = grow_forest(rows, labels, np.random.default_rng(0), ForestSettings(trees=5))
    thresholds = {value for node, value in enumerate(forest.threshold) if forest.left[node] >= 0}
    assert len(thresholds) <= MAX_THRESHOLDS
    assert forest.predict([0.2]) and not forest.predict([0.4])
