"""replay.accuracy.plots: the PNG figures draw the errors they are given, the same bytes for the same data."""

import numpy as np
import pytest
from figures import boxes, curves, legend_labels, png_size, saved_figures  # noqa: F401 (saved_figures: fixture)

from replay.accuracy.plots import error_boxes, plot_accuracy, v_curve
from replay.accuracy.predictions import replay_accuracy
from replay.shared.predictors import PREDICTORS
from replay.traces.trace import Job

RUNTIMES = [0, 60, 3000, 9000, 90000, 300, 20, 7200]
JOBS = [Job(str(index), "u{}".format(index % 3), index * 10, runtime, 4000, 1, index * 10, index * 10 + runtime)
        for index, runtime in enumerate(RUNTIMES)]
HOUR = 3600.0


def test_accuracy_figures_written(tmp_path):
    """A V curve and a box plot per instant, as PNGs at 100 dpi: 8 x 5 in, and 4 + 0.5 in per box x 5 in."""
    predictions = replay_accuracy(JOBS, [PREDICTORS[name] for name in ("user", "v3")])
    paths = plot_accuracy(str(tmp_path / "plots"), "test", JOBS, predictions, 1)
    assert [path.rsplit("/", 1)[1] for path in paths] == [
        "v_curve_submit.png", "errors_by_runtime_class_submit.png", "v_curve_start.png",
        "errors_by_runtime_class_start.png"]
    assert [png_size(path) for path in paths] == [(800, 500), (700, 500)] * 2  # 3 classes x 2 predictors


def test_v_curve_draws_each_predictors_sorted_absolute_errors(tmp_path, saved_figures):
    """user predicts the walltime 4000 s: its curve is |4000 - runtime| in hours, sorted by signed error,
    over 0-100 % of the jobs after the first (the warm-up)."""
    predictions = replay_accuracy(JOBS, [PREDICTORS[name] for name in ("user", "v3")])
    plot_accuracy(str(tmp_path), "test", JOBS, predictions, 1)
    axes = saved_figures["v_curve_submit.png"].axes[0]
    drawn = curves(axes)
    assert sorted(drawn) == ["user", "v3"] and axes.get_title() == "test: sorted errors, prediction at submit"
    errors = sorted(4000 - runtime for runtime in RUNTIMES[1:])  # -86000 (the 25 h job) first
    rank, hours = drawn["user"]
    assert rank.tolist() == pytest.approx(np.linspace(0, 100, 7).tolist())
    assert hours.tolist() == pytest.approx([abs(error) / HOUR for error in errors])
    assert len(drawn["v3"][1]) == 7


def test_v_curve_draws_a_zero_error_at_one_second(tmp_path, saved_figures):
    """|error| 0 cannot sit on a log axis: it is drawn at 1 s."""
    v_curve({"exact": np.array([0, 0, 3600])}, str(tmp_path / "v.png"), "t")
    assert curves(saved_figures["v.png"].axes[0])["exact"][1].tolist() == pytest.approx([1 / HOUR, 1 / HOUR, 1.0])


def test_box_plots_group_errors_by_runtime_class(tmp_path, saved_figures):
    """One box per class and predictor; the tick labels count the class's jobs; user's <=2h median is
    the median of 4000 - runtime over its five jobs, in hours."""
    predictions = replay_accuracy(JOBS, [PREDICTORS[name] for name in ("user", "v3")])
    plot_accuracy(str(tmp_path), "test", JOBS, predictions, 1)
    axes = saved_figures["errors_by_runtime_class_submit.png"].axes[0]
    assert [label.get_text() for label in axes.get_xticklabels()] == [
        "<=2h (5 jobs)", "2-24h (1 jobs)", ">24h (1 jobs)"]
    assert legend_labels(axes) == ["user", "v3"]
    user_short = [4000 - runtime for runtime in RUNTIMES[1:] if runtime <= 7200]
    centre, _, median, _ = boxes(axes)[0]  # user's boxes come first, left of each class's centre
    assert centre < 0 and median == pytest.approx(np.median(user_short) / HOUR)
    assert [box[2] for box in boxes(axes)[:3]] == pytest.approx(
        [np.median(user_short) / HOUR, (4000 - 9000) / HOUR, (4000 - 90000) / HOUR])


def test_same_data_same_png_bytes(tmp_path):
    """No date or version stamp: two drawings of the same data are byte-identical, other data differ."""
    series = {"v1": np.array([-5000, 0, 30, 9000]), "v2": np.array([], dtype=np.int64)}
    v_curve(series, str(tmp_path / "a.png"), "t")
    v_curve(series, str(tmp_path / "b.png"), "t")
    v_curve({"v1": np.array([-5000, 0, 30, 90000])}, str(tmp_path / "c.png"), "t")
    drawn = (tmp_path / "a.png").read_bytes()
    assert drawn == (tmp_path / "b.png").read_bytes() != (tmp_path / "c.png").read_bytes()
    assert b"Software" not in drawn and b"atplotlib" not in drawn and b"tIME" not in drawn


def test_box_plot_with_an_empty_class(tmp_path, saved_figures):
    """A runtime class without jobs is drawn empty, not an error; the other class's box is its errors'."""
    groups = {"<=2h": {"v1": np.array([1, -2, 3])}, ">24h": {"v1": np.array([], dtype=np.int64)}}
    error_boxes(groups, str(tmp_path / "box.png"), "t")
    axes = saved_figures["box.png"].axes[0]
    assert [label.get_text() for label in axes.get_xticklabels()] == ["<=2h (3 jobs)", ">24h (0 jobs)"]
    (centre, q1, median, q3), empty = boxes(axes)
    assert (centre, q1, median, q3) == pytest.approx((0, -0.5 / HOUR, 1 / HOUR, 2 / HOUR))
    assert np.isnan(empty[1:]).all()
    assert png_size(tmp_path / "box.png")[1] == 500


def tick_labels(axes):
    return [label.get_text() for label in axes.get_yticklabels()]


def test_symlog_waits_are_labelled_as_durations(tmp_path, saved_figures):
    """simulate's wait plot on its symlog scale: 0, 30 min, 1 h, 2 h ... where matplotlib left only '0' and
    '10^0', so no wait could be read."""
    from predictor.cmdline.figures import duration_ticks
    from replay.simulation.plots import class_boxes
    waits = {"<=2h": {"v1": np.array([0.0, 0.2, 1.5, 3.0]), "v3": np.array([0.0, 0.1, 0.9, 5.0])}}
    class_boxes(waits, str(tmp_path / "w.png"), "t", "wait", lambda axes: duration_ticks(axes, symlog=True))
    labels = tick_labels(saved_figures["w.png"].axes[0])
    assert labels[:5] == ["0", "30 min", "1 h", "2 h", "6 h"][:len(labels)] and len(labels) >= 4


def test_slowdowns_are_labelled_with_plain_numbers(tmp_path, saved_figures):
    """Bounded slowdowns on a symlog scale: 1, 2, 5, 10..., not powers of ten alone."""
    from replay.simulation.plots import class_boxes
    class_boxes({"<=2h": {"v1": np.array([1.0, 3.0, 40.0])}}, str(tmp_path / "b.png"), "t", "bsld")
    labels = tick_labels(saved_figures["b.png"].axes[0])
    assert labels[:4] == ["1", "2", "5", "10"]
