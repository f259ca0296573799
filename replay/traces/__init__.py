"""Traces: the job model, the PBS accounting-log and SWF readers, and the converter between the two."""
