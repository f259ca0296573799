"""Loading PBS accounting logs into completed_jobs, exactly once (python -m predictor ingest)."""
