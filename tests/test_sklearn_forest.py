"""replay.classification.sklearn_forest: scikit-learn's random forest, seeded, walked in flat arrays."""

import numpy as np
import pytest
from sklearn.ensemble import RandomForestClassifier

from replay.classification.sklearn_forest import ConstantForest, SklearnForest, fit_sklearn_forest, seed_of


def training_set(seed, rows=400):
    """Rows like the classifier's: whole numbers, a few -1 lags, shares in [0, 1]; labels from a noisy rule."""
    rng = np.random.default_rng(seed)
    walltime = rng.choice([600, 3600, 7200, 86400], rows)
    cores = rng.choice([1, 2, 16, 64], rows)
    lags = rng.choice([-1, 0, 1], (rows, 3))
    share = rng.integers(0, 7, rows) / rng.integers(7, 10, rows)
    features = np.column_stack([walltime, cores, lags, share]).astype(np.float64)
    labels = ((walltime <= 3600) ^ (rng.random(rows) < 0.15)).astype(np.int64)
    return features, labels


@pytest.mark.parametrize("seed", [1, 2])
def test_flat_forest_predicts_as_scikit_learn(seed):
    """Walked in flat arrays, the fitted forest gives scikit-learn's own predict for every row, fresh rows too."""
    features, labels = training_set(seed)
    fitted = RandomForestClassifier(random_state=seed).fit(features, labels)
    flat = SklearnForest(fitted.estimators_)
    fresh, _ = training_set(seed + 100)
    for rows in (features, fresh):
        assert [flat.predict(row) for row in rows] == (fitted.predict(rows) == 1).tolist()


def test_same_seed_same_forest():
    """A seeded forest is deterministic: the same rows and seed give the same predictions; the seed matters."""
    features, labels = training_set(3)
    fresh, _ = training_set(4)
    first, again = (fit_sklearn_forest(features, labels, seed_of(0, 5)) for _ in range(2))
    assert [first.predict(row) for row in fresh] == [again.predict(row) for row in fresh]
    assert seed_of(0, 5) == seed_of(0, 5) != seed_of(0, 6)


def test_one_class_gives_a_constant_forest():
    """Labels of one class only: the forest always answers it."""
    forest = fit_sklearn_forest(np.zeros((3, 2)), [1, 1, 1], 0)
    assert isinstance(forest, ConstantForest) and forest.predict([5, 5]) is True
