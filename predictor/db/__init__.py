"""PostgreSQL for the admin commands (psycopg2): sessions, the schema (db init) and pruning (db prune). Never
imported by what pbs_server loads."""
