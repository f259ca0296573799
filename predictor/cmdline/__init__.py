"""The kit both command lines share (``python -m predictor``, ``python -m replay``): the argument parser and
its types, the printer of rejected lines, progress bars, report tables and figures, the output files, and
how a command ends (its exit status)."""
