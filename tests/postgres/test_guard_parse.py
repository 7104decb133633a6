"""The parser guard and the URL handling of ``--db postgresql://…`` (no server needed).

Every statement below is one the issue lists as refused before execution (goldeval issue 13, "Refused before
execution, by parsing"), or a known way around such a rule (data-modifying CTE, SELECT INTO, a second statement
hidden after a backslash that PostgreSQL does not treat as an escape, a schema-qualified or quoted function name).
"""

from __future__ import annotations

import pytest

from goldeval.answers.postgres import check_query, parse_url
from goldeval.answers.sql import QueryError
from goldeval.errors import InputError

REFUSED = {
    # more than one statement
    "two statements": "SELECT 1; DROP TABLE t",
    "backslash is not an escape": "SELECT 'a\\'; DROP TABLE t; --'",
    # transaction control
    "begin": "BEGIN",
    "commit": "COMMIT",
    "rollback": "ROLLBACK",
    "set transaction": "SET TRANSACTION READ WRITE",
    "default read only off": "SET default_transaction_read_only = off",
    "statement timeout off": "SET statement_timeout = 0",
    "reset all": "RESET ALL",
    "set_config": "SELECT set_config('statement_timeout', '0', false)",
    # writes, DDL, COPY
    "insert": "INSERT INTO t VALUES (1)",
    "update": "UPDATE t SET v = 'x'",
    "delete": "DELETE FROM t",
    "delete in a CTE": "WITH d AS (DELETE FROM t RETURNING *) SELECT * FROM d",
    "insert in a CTE": "WITH d AS (INSERT INTO t VALUES (1) RETURNING *) SELECT * FROM d",
    "select into": "SELECT * INTO t2 FROM t",
    "for update": "SELECT * FROM t FOR UPDATE",
    "nextval": "SELECT nextval('s')",
    "create": "CREATE TABLE x (a int)",
    "create temp as": "CREATE TEMP TABLE x AS SELECT 1",
    "drop": "DROP TABLE t",
    "alter": "ALTER TABLE t ADD COLUMN z int",
    "truncate": "TRUNCATE t",
    "grant": "GRANT ALL ON t TO PUBLIC",
    "copy to program": "COPY t TO PROGRAM 'touch /tmp/goldeval-pwned'",
    "copy query to program": "COPY (SELECT 1) TO PROGRAM 'id'",
    "copy to file": "COPY t TO '/tmp/goldeval-out'",
    "copy from program": "COPY t FROM PROGRAM 'echo 1'",
    # roles
    "set role": "SET ROLE postgres",
    "set session authorization": "SET SESSION AUTHORIZATION postgres",
    "reset role": "RESET ROLE",
    # other servers, large objects, server files
    "dblink": "SELECT * FROM dblink('dbname=postgres', 'DELETE FROM t') AS x(a int)",
    "dblink_exec": "SELECT dblink_exec('dbname=postgres', 'DROP TABLE t')",
    "lo_import": "SELECT lo_import('/etc/passwd')",
    "lo_export": "SELECT lo_export(16384, '/tmp/goldeval-lo')",
    "lo_from_bytea": "SELECT lo_from_bytea(0, 'x')",
    "pg_read_file": "SELECT pg_read_file('/etc/passwd')",
    "qualified pg_read_file": "SELECT pg_catalog.pg_read_file('/etc/passwd')",
    "quoted pg_read_file": "SELECT \"pg_read_file\"('/etc/passwd')",
    "pg_read_binary_file": "SELECT pg_read_binary_file('/etc/passwd')",
    "pg_ls_dir": "SELECT * FROM pg_ls_dir('/')",
    "pg_stat_file": "SELECT pg_stat_file('/etc/passwd')",
    # the server's own state, and SQL given as text
    "terminate backend": "SELECT pg_terminate_backend(pg_backend_pid())",
    "reload conf": "SELECT pg_reload_conf()",
    "advisory lock": "SELECT pg_advisory_lock(1)",
    "query_to_xml": "SELECT query_to_xml('DELETE FROM t RETURNING *', true, true, '')",
    "notify fn": "SELECT pg_notify('c', 'x')",
    # statements that are not queries
    "do": "DO $$ BEGIN DELETE FROM t; END $$",
    "call": "CALL p()",
    "prepare": "PREPARE p AS DELETE FROM t",
    "execute": "EXECUTE p",
    "explain analyze": "EXPLAIN ANALYZE DELETE FROM t",
    "listen": "LISTEN c",
    "notify": "NOTIFY c",
    "vacuum": "VACUUM t",
    "lock": "LOCK TABLE t",
    "show": "SHOW ALL",
    "declare": "DECLARE c CURSOR FOR SELECT 1",
    "checkpoint": "CHECKPOINT",
    "discard": "DISCARD ALL",
    "does not parse": "SELECT FROM WHERE (",
}

ALLOWED = [
    "SELECT 1",
    "SELECT pg_sleep(0.1)",  # the time limit stops it
    "WITH x AS (SELECT 1 AS a) SELECT a FROM x",
    "SELECT a FROM t UNION SELECT b FROM u",
    "SELECT x FROM generate_series(1, 10) AS x",
    "VALUES (1), (2)",
    "SELECT 'DELETE FROM t; COPY t TO PROGRAM ''id'''",  # a string that spells a statement is a string
    "SELECT 1 -- DROP TABLE t",
    "SELECT 1;",
]


@pytest.mark.parametrize("sql", list(REFUSED.values()), ids=list(REFUSED))
def test_refused_by_the_parser(sql):
    with pytest.raises(QueryError, match="^refused: "):
        check_query(sql)


@pytest.mark.parametrize("sql", ALLOWED)
def test_plain_queries_pass_the_parser(sql):
    check_query(sql)  # raises QueryError when refused


def test_refusals_name_what_was_found():
    with pytest.raises(QueryError, match=r"function pg_read_file\(\)"):
        check_query("SELECT pg_catalog.pg_read_file('/etc/passwd')")
    with pytest.raises(QueryError, match="only one statement may run, got 2"):
        check_query("SELECT 1; DROP TABLE t")
    with pytest.raises(QueryError, match=r"SELECT … INTO"):
        check_query("SELECT * INTO t2 FROM t")
    with pytest.raises(QueryError, match="SET \\(a command\\)|SET"):
        check_query("SET ROLE postgres")


@pytest.mark.parametrize("url, redacted, password", [
    ("postgresql://alice:s3cr%40t@db.example:5433/sales", "postgresql://alice@db.example:5433/sales", "s3cr@t"),
    ("postgresql://alice@db.example/sales?password=hunter2&sslmode=require", "postgresql://alice@db.example/sales?sslmode=require", "hunter2"),
    ("postgres://bob@127.0.0.1:5432/x", "postgres://bob@127.0.0.1:5432/x", None),
])
def test_the_password_is_split_out_of_the_url(url, redacted, password):
    t = parse_url(url)
    assert t.url == redacted
    assert t.password == password
    if password:
        assert password not in repr(t)


def test_a_url_libpq_cannot_read_is_refused_without_its_password():
    with pytest.raises(InputError, match="not a valid PostgreSQL URL") as err:
        parse_url("postgresql://alice:topsecret@host/db?nosuchoption=1")
    assert "topsecret" not in str(err.value)
