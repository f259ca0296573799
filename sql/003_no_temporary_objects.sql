-- pbs-softwalltime schema version 3: no objects for roles that were not granted any.
-- PostgreSQL lets every role (PUBLIC) create temporary tables in any database and
-- create large objects, even in a read-only session. In this (dedicated) database
-- only softwalltime_writer needs a temporary table, to stage ingest batches; the
-- grant of version 2 keeps that. Nothing here uses large objects.

DO $$
BEGIN
    EXECUTE format('REVOKE TEMPORARY ON DATABASE %I FROM PUBLIC', current_database());
END
$$;

REVOKE EXECUTE ON FUNCTION lo_create(oid), lo_creat(integer), lo_from_bytea(oid, bytea) FROM PUBLIC;
