"""The accuracy replay: every predictor's soft walltimes against the runtimes that followed, with no scheduler."""
