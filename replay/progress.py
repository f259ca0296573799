"""A progress bar on a terminal; silent when the stream is a file or a pipe (``predictor.progress``)."""

from predictor.progress import ProgressBar

__all__ = ["ProgressBar"]
