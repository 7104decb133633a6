-- A role that can read the database it is run in, and nothing else: what `goldeval judge --db postgresql://…`
-- should connect as. Run it as the database's owner or a superuser, in the database to judge against:
--     psql postgresql://postgres@127.0.0.1:5432/clinic -v ro_password='choose-one' -f examples/sql/readonly_role.sql
-- (An existing role: drop the CREATE ROLE line.) The judge guards every query itself as well (a parser, a READ ONLY
-- transaction always rolled back, a time limit); this role is what stops what a superuser's read-only
-- transaction would still allow (COPY … TO PROGRAM, server file functions, SET ROLE).
CREATE ROLE goldeval_ro LOGIN PASSWORD :'ro_password' NOSUPERUSER NOCREATEDB NOCREATEROLE NOINHERIT;
ALTER ROLE goldeval_ro SET default_transaction_read_only = on;
GRANT CONNECT ON DATABASE :"DBNAME" TO goldeval_ro;
GRANT USAGE ON SCHEMA public TO goldeval_ro;
GRANT SELECT ON ALL TABLES IN SCHEMA public TO goldeval_ro;
