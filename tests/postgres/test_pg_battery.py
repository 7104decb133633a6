"""The read-only battery on a real PostgreSQL 15 server, as the read-only role and as a superuser.

Every statement of the parser battery (``test_guard_parse.REFUSED``) is sent through :class:`PostgresDatabase`
as both roles; none may run, and afterwards every table's checksum, the sequence, the large objects, the roles
and the files a COPY or lo_export would have written are unchanged. The server's own guard (the READ ONLY
transaction, and the server-side cursor that accepts one query only) is shown separately, with the parser
switched off. Time and row limits: ``pg_sleep`` past ``--timeout`` is stopped, and a huge result stops after
``max_rows + 1`` rows (proved without timing: row ``max_rows + 2`` would divide by zero).
"""

from __future__ import annotations

import os

import pytest

from goldeval.answers import postgres as pgmod
from goldeval.answers.postgres import PostgresDatabase
from goldeval.answers.sql import QueryError

from .test_guard_parse import REFUSED

DB = "battery"
SCRIPT = """
CREATE TABLE t (id int PRIMARY KEY, v text);
INSERT INTO t SELECT g, 'row ' || g FROM generate_series(1, 50) g;
CREATE TABLE u (b int);
INSERT INTO u VALUES (1), (2);
CREATE SEQUENCE s;
CREATE MATERIALIZED VIEW mv AS SELECT count(*) AS n FROM t;
CREATE PROCEDURE p() LANGUAGE sql AS $$ DELETE FROM t $$;
CREATE FUNCTION sneaky() RETURNS int LANGUAGE sql AS $$ INSERT INTO u VALUES (9) RETURNING b $$;
"""
PWNED = ["/tmp/goldeval-pwned", "/tmp/goldeval-out", "/tmp/goldeval-lo"]


def fingerprint(pg) -> dict:
    """Every table's checksum (md5 of its rows in order), the sequence, large objects, roles and relations."""
    with pg.admin(DB) as c:
        tables = [r[0] for r in c.execute("SELECT relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
                                          "WHERE n.nspname = 'public' AND relkind IN ('r', 'm') ORDER BY 1")]
        out = {t: c.execute(f"SELECT count(*), md5(coalesce(string_agg(x::text, '|' ORDER BY x::text), '')) FROM {t} x").fetchone()
               for t in tables}
        out["_relations"] = c.execute("SELECT string_agg(relname, ',' ORDER BY relname) FROM pg_class c "
                                      "JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'public'").fetchone()
        out["_sequence"] = c.execute("SELECT last_value, is_called FROM s").fetchone()
        out["_large_objects"] = c.execute("SELECT count(*) FROM pg_largeobject_metadata").fetchone()
        out["_roles"] = c.execute("SELECT string_agg(rolname || ':' || rolsuper, ',' ORDER BY rolname) FROM pg_roles").fetchone()
        out["_files"] = [p for p in PWNED if os.path.exists(p)]
    return out


@pytest.fixture(scope="module")
def battery(pg):
    for p in PWNED:
        if os.path.exists(p):
            os.remove(p)
    pg.create_database(DB, SCRIPT)
    return pg


ROLES = ["read-only role", "superuser"]


def connect(pg, who: str, **kw) -> PostgresDatabase:
    if who == "read-only role":
        return PostgresDatabase(pg.url(DB, role="ro"), **kw)
    return PostgresDatabase(pg.url(DB, role="superuser"), allow_privileged=True, **kw)  # refused without the opt-in


@pytest.mark.parametrize("who", ROLES)
def test_the_whole_battery_changes_nothing(battery, who):
    before = fingerprint(battery)
    assert before["t"][0] == 50 and before["_files"] == []
    with connect(battery, who, timeout_s=5) as db:
        user = db.execute("SELECT current_user").rows[0][0]
        for name, sql in REFUSED.items():
            with pytest.raises(QueryError, match="^refused: ") as err:
                db.execute(sql)
            assert err.value is not None, name
        # the connection still works, as the same user, in a read-only transaction with the time limit set
        assert db.execute("SELECT current_user").rows == [(user,)]
        assert db.execute("SELECT current_setting('transaction_read_only')").rows == [("on",)]
        assert db.execute("SELECT current_setting('statement_timeout')").rows == [("5s",)]
        assert db.execute("SELECT count(*) FROM t").rows == [(50,)]
    assert fingerprint(battery) == before


@pytest.mark.parametrize("who", ROLES)
def test_the_server_refuses_writes_even_without_the_parser(battery, who, monkeypatch):
    """The second guard: with the parser off, the READ ONLY transaction (and the one-query cursor) still refuse."""
    before = fingerprint(battery)
    monkeypatch.setattr(pgmod, "check_query", lambda sql: None)
    with connect(battery, who) as db:
        # a function that writes is invisible to any parser: the READ ONLY transaction stops it
        for sql in ["SELECT sneaky()", "SELECT nextval('s')", "SELECT * FROM t FOR UPDATE"]:
            with pytest.raises(QueryError, match=r"refused: the server refused the query \((cannot execute .* in a read-only transaction|permission denied)"):
                db.execute(sql)
        # lo_creat runs even in a READ ONLY transaction; the rollback that always follows undoes it (checked below)
        assert db.execute("SELECT lo_creat(-1) > 0").rows == [(True,)]
        # the cursor takes one query: neither a second statement nor a non-query reaches the server as one
        for sql in ["SELECT 1; DELETE FROM t", "DELETE FROM t", "WITH d AS (DELETE FROM t RETURNING *) SELECT count(*) FROM d", "COPY t TO PROGRAM 'touch /tmp/goldeval-pwned'",
                    "SET ROLE postgres"]:
            with pytest.raises(QueryError):
                db.execute(sql)
    assert fingerprint(battery) == before


def test_as_superuser_the_parser_is_the_only_guard_for_file_functions(battery, monkeypatch):
    """Why the parser matters: a superuser's read-only transaction would run pg_read_file."""
    monkeypatch.setattr(pgmod, "check_query", lambda sql: None)
    with connect(battery, "superuser") as db:
        assert db.execute("SELECT length(pg_read_file('PG_VERSION')) > 0").rows == [(True,)]
    with connect(battery, "read-only role") as db, pytest.raises(QueryError, match="permission denied"):
        db.execute("SELECT pg_read_file('PG_VERSION')")


@pytest.mark.parametrize("who", ROLES)
def test_pg_sleep_past_the_limit_is_stopped(battery, who):
    with connect(battery, who, timeout_s=0.3) as db:
        with pytest.raises(QueryError, match=r"ran past the 0.3 s time limit"):
            db.execute("SELECT pg_sleep(30)")
        assert db.execute("SELECT 1").rows == [(1,)]  # the connection is usable again


@pytest.mark.parametrize("who", ROLES)
def test_a_huge_result_is_cut_after_max_rows_plus_one(battery, who):
    with connect(battery, who, timeout_s=30, max_rows=1000) as db:
        # Row 1002 would fail with division by zero: the row-limit error shows that it was never computed. (The
        # series is made row by row in a select list; a set-returning function in FROM is built whole by the
        # server first, which only the time limit bounds.)
        with pytest.raises(QueryError, match="more than 1000 rows"):
            db.execute("SELECT CASE WHEN g > 1001 THEN 1 / (g - g) ELSE g END FROM (SELECT generate_series(1, 100000000) AS g) AS s")
        assert len(db.execute("SELECT g FROM generate_series(1, 1000) AS g").rows) == 1000  # exactly the limit passes
        with pytest.raises(QueryError, match="division by zero"):  # and the guard above is not vacuous
            db.execute("SELECT CASE WHEN g > 2 THEN 1 / (g - g) ELSE g END FROM generate_series(1, 10) AS g")


def test_schema_and_identity_come_from_the_catalog(battery):
    with connect(battery, "read-only role") as db:
        schema = db.schema()
        ident = db.identity()
    assert schema["t"] == ["id", "v"] and schema["public.t"] == ["id", "v"] and schema["mv"] == ["n"]
    assert ident["database"] == DB and ident["server_version"].startswith("15.")
    assert ident["url"].endswith(f"/{DB}") and battery.server.password not in str(ident)
    with connect(battery, "superuser") as db:
        assert db.identity()["catalog_sha256"] == ident["catalog_sha256"]  # the same database seen by both roles
    with battery.admin(DB) as c:
        c.execute("ALTER TABLE u ADD COLUMN c text")
    try:
        with connect(battery, "read-only role") as db:
            assert db.identity()["catalog_sha256"] != ident["catalog_sha256"]  # a schema change is a new identity
    finally:
        with battery.admin(DB) as c:
            c.execute("ALTER TABLE u DROP COLUMN c")


def test_a_wrong_password_is_a_clear_error_that_does_not_echo_it(battery):
    from goldeval.errors import InputError

    url = battery.url(DB, role="ro", password=False).replace("goldeval_ro@", "goldeval_ro:wrong-pw-123@")
    with pytest.raises(InputError, match=r"cannot connect .*password authentication failed") as err:
        PostgresDatabase(url)
    assert "wrong-pw-123" not in str(err.value)
    assert "postgresql://goldeval_ro@127.0.0.1" in str(err.value)


def test_the_password_may_come_from_pgpassword(battery, monkeypatch):
    from .conftest import RO_PASSWORD

    monkeypatch.setenv("PGPASSWORD", RO_PASSWORD)
    with PostgresDatabase(battery.url(DB, role="ro", password=False)) as db:
        assert db.execute("SELECT current_user").rows == [("goldeval_ro",)]
