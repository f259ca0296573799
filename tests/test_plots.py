"""replay.accuracy.plots: PNG figures, the same bytes for the same data."""

import numpy as np

from replay.accuracy.accuracy import replay_accuracy
from replay.accuracy.plots import error_boxes, plot_accuracy, v_curve
from replay.predictors import PREDICTORS
from replay.traces.trace import Job

JOBS = [Job(str(index), "u{}".format(index % 3), index * 10, runtime, 4000, 1, index * 10, index * 10 + runtime)
        for index, runtime in enumerate([0, 60, 3000, 9000, 90000, 300, 20, 7200])]


def test_accuracy_figures_written(tmp_path):
    """A V curve and a box plot per instant, as PNG files."""
    predictions = replay_accuracy(JOBS, [PREDICTORS[name] for name in ("user", "v3")])
    paths = plot_accuracy(str(tmp_path / "plots"), "test", JOBS, predictions, 1)
    assert [path.rsplit("/", 1)[1] for path in paths] == [
        "v_curve_submit.png", "errors_by_runtime_class_submit.png", "v_curve_start.png",
        "errors_by_runtime_class_start.png"]
    assert all(open(path, "rb").read(8) == b"\x89PNG\r\n\x1a\n" for path in paths)


def test_same_data_same_png_bytes(tmp_path):
    """No date or version stamp: two drawings of the same data are byte-identical."""
    series = {"v1": np.array([-5000, 0, 30, 9000]), "v2": np.array([], dtype=np.int64)}
    v_curve(series, str(tmp_path / "a.png"), "t")
    v_curve(series, str(tmp_path / "b.png"), "t")
    assert (tmp_path / "a.png").read_bytes() == (tmp_path / "b.png").read_bytes()


def test_box_plot_with_an_empty_class(tmp_path):
    """A runtime class without jobs is drawn empty, not an error."""
    groups = {"<=2h": {"v1": np.array([1, -2, 3])}, ">24h": {"v1": np.array([], dtype=np.int64)}}
    error_boxes(groups, str(tmp_path / "box.png"), "t")
    assert (tmp_path / "box.png").stat().st_size > 0
