"""The fidelity check: a model of the PBS scheduler against what a real server did, decision by decision
and over a whole run."""
