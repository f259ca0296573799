"""The history v3 reads, kept as jobs end: per owner, one row of highest runtime/walltime in the window.

Chlumsky & Klusacek's v3 (and v3 as their production hook runs it) read a user's
last ``window`` completed jobs only through the one with the highest
runtime/walltime (``predictor.algorithms.AlgorithmSpec.reads_max_ratio_row``):
given that row alone, they give the same soft walltime as given the whole window,
whichever row of equal ratio it is. So the simulation keeps, for each owner, the
window's rows and one such row, updated as each job ends: a comparison, unless
the row that leaves the window was that one (then the window, at most ``window``
rows, is read again). A prediction then reads one row instead of the window.
"""

from bisect import insort

__all__ = ["MaxRatioWindows"]


class MaxRatioWindows:
    """Per owner, the newest ``window`` ``HistoryRow``s and a one-row history holding one of highest
    runtime/walltime among them (no row when none has a walltime)."""

    def __init__(self, window):
        if window < 1:
            raise ValueError("window must be >= 1, not {}".format(window))
        self.window = window
        self._rows = {}  # owner -> rows, oldest first (ordered as HistoryRows are: end time, then job id)
        self._views = {}  # owner -> (a row of highest ratio,), or ()

    def add_row(self, owner, row):
        """Record one completed job of ``owner``; the simulation adds each job once, when it ends. Whether what
        v3 reads of the owner changed: a row of another ratio (False: the same ratio, if not the same row)."""
        rows = self._rows.get(owner)
        if rows is None:
            rows = self._rows[owner] = []
            self._views[owner] = ()
        view = self._views[owner]
        if not rows or row > rows[-1]:
            rows.append(row)
        else:
            insort(rows, row)
        if len(rows) > self.window:
            left = rows.pop(0)
            if left is row:
                return False  # older than the whole window: nothing changes
            if view and left is view[0]:
                highest = self._views[owner] = _highest(rows)
                return not highest or not _same_ratio(view[0], highest[0])
        walltime = row.walltime_s  # _has_ratio and _higher, written out: this runs at every end
        if walltime and walltime > 0 and (not view or
                                          row.runtime_s * view[0].walltime_s > view[0].runtime_s * walltime):
            self._views[owner] = (row,)
            return True
        return False

    def view(self, owner):
        """What v3 reads of ``owner``'s history: one row of highest runtime/walltime in the window, or none."""
        return self._views.get(owner, ())


def _has_ratio(row):
    """Whether ``row`` gives a ratio (v3 skips rows without a positive walltime)."""
    return bool(row.walltime_s) and row.walltime_s > 0


def _higher(row, best):
    """Whether ``row``'s runtime/walltime is above ``best``'s, compared exactly (cross-multiplied)."""
    return row.runtime_s * best.walltime_s > best.runtime_s * row.walltime_s


def _same_ratio(row, other):
    """Whether the two rows' runtime/walltime are equal, compared exactly."""
    return row.runtime_s * other.walltime_s == other.runtime_s * row.walltime_s


def _highest(rows):
    """A one-row tuple holding a row of highest ratio among ``rows``, or ()."""
    best = None
    for row in rows:
        if _has_ratio(row) and (best is None or _higher(row, best)):
            best = row
    return () if best is None else (best,)
