"""The sweep: many simulate runs over a grid of scenarios, in local processes or as a PBS job array."""
