"""The scheduling simulation: the same jobs on a simulated PBS scheduler, once per predictor."""
