"""What a plotting function drew: the saved matplotlib figures, read back as data.

``saved_figures`` is a fixture: every ``Figure.savefig`` still writes its file,
and the figure is kept by file name, so a test can check the plotted points and
boxes rather than only that a file appeared.
"""

import os
import struct

import numpy as np
import pytest


@pytest.fixture
def saved_figures(monkeypatch):
    """``{file name: Figure}`` of every figure saved during the test (closed figures keep their axes)."""
    from matplotlib.figure import Figure

    saved, real_savefig = {}, Figure.savefig

    def savefig(figure, path, *args, **kwargs):
        real_savefig(figure, path, *args, **kwargs)
        saved[os.path.basename(str(path))] = figure

    monkeypatch.setattr(Figure, "savefig", savefig)
    return saved


def curves(axes):
    """``{label: (x, y)}`` of the labelled lines (legend-only lines with no points are left out)."""
    return {line.get_label(): (np.asarray(line.get_xdata()), np.asarray(line.get_ydata()))
            for line in axes.get_lines() if not line.get_label().startswith("_") and len(line.get_xdata())}


def legend_labels(axes):
    """The labels the legend shows, in order."""
    return [text.get_text() for text in axes.get_legend().get_texts()]


def boxes(axes):
    """``(centre, q1, median, q3)`` per box drawn with ``patch_artist``, in drawing order; NaN for an empty one."""
    found = []
    for patch in axes.patches:
        vertices = patch.get_path().vertices
        left, right = vertices[:, 0].min(), vertices[:, 0].max()
        medians = [line.get_ydata()[0] for line in axes.get_lines()
                   if list(line.get_xdata()) == [left, right] and line.get_ydata()[0] == line.get_ydata()[1]]
        low, high = (np.nan, np.nan) if np.isnan(vertices[:, 1]).all() else (vertices[:, 1].min(), vertices[:, 1].max())
        found.append(((left + right) / 2, low, medians[0] if medians else np.nan, high))
    return found


def png_size(path):
    """``(width, height)`` in pixels from a PNG file's IHDR chunk; AssertionError if it is not a PNG."""
    with open(str(path), "rb") as png:
        head = png.read(24)
    assert head[:8] == b"\x89PNG\r\n\x1a\n" and head[12:16] == b"IHDR", head
    return struct.unpack(">II", head[16:24])
