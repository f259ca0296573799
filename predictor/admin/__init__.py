"""The admin command line (python -m predictor): its commands, the deployment checks (doctor) and the qmgr
lines that install the hooks."""
