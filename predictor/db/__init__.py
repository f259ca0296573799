"""PostgreSQL for the admin commands (psycopg2): sessions, the schema (db init) and pruning (db prune). Never
imported by what pbs_server loads."""

CONNECT_TIMEOUT_S = 10
"""Seconds to connect (and log in) unless the command or the DSN says otherwise: a server that accepts the
connection and never answers is reported then, not after a statement's budget."""
