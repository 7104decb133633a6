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
import shutil
import tempfile
from pathlib import Path

import pytest

from goldeval.answers import postgres as pgmod
from goldeval.answers.postgres import PostgresDatabase
from goldeval.answers.sql import QueryError

from .test_guard_parse import FUNCTION_NAMING_CASTS, REFUSED, forbidden_spellings, unicode_escaped

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
CREATE FUNCTION instr(text, text) RETURNS text LANGUAGE sql AS $$ SELECT 'the database''s own instr' $$;
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
    # current_setting is not on the allowlist (it reads server paths); allowed here to look at the session
    with connect(battery, who, timeout_s=5, allow_functions=["current_setting"]) as db:
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
    monkeypatch.setattr(pgmod, "check_query", lambda sql, **allowed: None)
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
    monkeypatch.setattr(pgmod, "check_query", lambda sql, **allowed: None)
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


# --- every spelling of every forbidden family, on the server ------------------------------------------------------

CANARY_TOKEN = "goldeval-canary-5f0c2a9e71d4"


@pytest.fixture(scope="module")
def spelled(battery):
    """The battery database plus: a canary file the server can read, the dblink extension when this server has it
    (Debian's postgresql-15 ships it), a bystander session whose pid the signal cases aim at, and the server's own
    postgresql.conf as the superuser reads it (its bytes must appear in no result)."""
    # under /tmp itself: the server runs as `postgres`, which must reach the file (pytest's tmp folders are 0700)
    folder = Path(tempfile.mkdtemp(prefix="goldeval-canary-", dir="/tmp"))
    os.chmod(folder, 0o755)
    canary = folder / "canary.txt"
    canary.write_text(f"{CANARY_TOKEN}\n")
    os.chmod(canary, 0o644)
    with battery.admin(DB) as c:
        try:
            c.execute("CREATE EXTENSION IF NOT EXISTS dblink")
            dblink = True
        except Exception:
            dblink = False
        try:
            readable = CANARY_TOKEN in c.execute("SELECT pg_read_file(%s)", [str(canary)]).fetchone()[0]
        except Exception:
            readable = False
        conf = c.execute("SELECT pg_read_file('postgresql.conf')").fetchone()[0]
    bystander = battery.admin(DB)
    try:
        yield {"pg": battery, "canary": canary, "canary_readable": readable, "dblink": dblink,
               "pid": bystander.info.backend_pid, "bystander": bystander,
               "conf_lines": [ln for ln in conf.splitlines() if len(ln.strip()) >= 30]}
    finally:
        bystander.close()
        shutil.rmtree(folder, ignore_errors=True)


def server_state(pg) -> dict:
    """What a forbidden call would change beyond the tables: settings, the configuration's load time, advisory
    locks, large objects, sessions."""
    with pg.admin(DB) as c:
        return {
            "settings": c.execute("SELECT string_agg(name || '=' || coalesce(setting, ''), ',' ORDER BY name) FROM pg_settings "
                                  "WHERE context NOT IN ('user', 'superuser') OR source NOT IN ('session', 'client')").fetchone(),
            "conf_load_time": c.execute("SELECT pg_conf_load_time()").fetchone(),
            "advisory_locks": c.execute("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'").fetchone(),
            "large_objects": c.execute("SELECT count(*) FROM pg_largeobject_metadata").fetchone(),
        }


@pytest.mark.parametrize("who", ROLES)
def test_every_spelling_of_every_forbidden_family_is_refused_on_the_server(spelled, who):
    """Each family (server files, large objects, settings, locks, signals, dblink when installed) in every spelling
    (U&"…" with \\XXXX, \\+XXXXXX and UESCAPE, quoted, pg_catalog-qualified, in FROM, comments before the
    parenthesis, sub-queries, CTEs, set-operation branches, field-selection notation) and every cast to a
    function-naming type is refused, as the read-only role and as the superuser; afterwards every table, the large
    objects, the settings, the configuration, the locks, the canary file and the other session are as they were."""
    pg = spelled["pg"]
    families = None if spelled["dblink"] else {"server files", "large objects", "settings", "locks", "signals"}
    cases = {k: sql.format(canary=spelled["canary"], pid=spelled["pid"]) for k, (_, sql) in forbidden_spellings(families).items()}
    cases.update(FUNCTION_NAMING_CASTS)
    before, state = fingerprint(pg), server_state(pg)
    canary = spelled["canary"].read_bytes()
    with connect(pg, who, timeout_s=5) as db:
        for case, sql in cases.items():
            with pytest.raises(QueryError, match="^refused: ") as err:
                db.execute(sql)
            assert CANARY_TOKEN not in str(err.value), case
        assert db.execute("SELECT count(*) FROM t").rows == [(50,)]  # the session is unharmed
    assert fingerprint(pg) == before
    assert server_state(pg) == state
    assert spelled["canary"].read_bytes() == canary
    assert spelled["bystander"].execute("SELECT 1").fetchone() == (1,)  # not terminated, not cancelled


def test_without_the_guard_a_unicode_escaped_name_reads_a_server_file(spelled, monkeypatch):
    """Why the decoding matters: with the parser guard off, the server decodes U&"pg\\005fread\\005ffile" and a
    superuser's read-only transaction returns the file's bytes (sqlglot, the guard before, read it as U & "…")."""
    if not spelled["canary_readable"]:
        pytest.skip("the server cannot read this machine's files (it runs elsewhere)")
    monkeypatch.setattr(pgmod, "check_query", lambda sql, **allowed: None)
    with connect(spelled["pg"], "superuser") as db:
        rows = db.execute(f"SELECT {unicode_escaped('pg_read_file')}('{spelled['canary']}')").rows
    assert CANARY_TOKEN in rows[0][0]


@pytest.mark.parametrize("who", ROLES)
def test_the_session_reads_as_the_guard_parses(spelled, who):
    """standard_conforming_strings on (as libpg_query assumes) and pg_catalog first on the search path, even when
    the role's own search_path puts another schema first."""
    pg = spelled["pg"]
    with pg.admin(DB) as c:
        c.execute("ALTER ROLE goldeval_ro SET search_path = public, pg_catalog")
        c.execute("ALTER ROLE goldeval_ro SET standard_conforming_strings = off")
    try:
        with connect(pg, who, allow_functions=["current_setting"]) as db:
            assert db.execute("SELECT current_setting('standard_conforming_strings')").rows == [("on",)]
            assert db.execute("SELECT (current_schemas(true))[1]").rows == [("pg_catalog",)]
            # a backslash is not an escape: the guard and the server see one string, not a string and a DROP
            assert db.execute("SELECT 'a\\' AS s").rows == [("a\\",)]
    finally:
        with pg.admin(DB) as c:
            c.execute("ALTER ROLE goldeval_ro RESET search_path")
            c.execute("ALTER ROLE goldeval_ro RESET standard_conforming_strings")


@pytest.mark.parametrize("who", ROLES)
def test_ordinary_read_only_queries_still_run(spelled, who):
    """The allowlist keeps the ordinary families: aggregates, window, date, string, JSON, arrays, CASE, CTEs, set
    operations (the guard-only HEALTHY queries, run here on real tables)."""
    pg = spelled["pg"]
    with connect(pg, who) as db:
        rows = db.execute(
            "WITH w AS (SELECT id, v, id % 3 AS g FROM t) "
            "SELECT g, count(*), sum(id), round(avg(id)::numeric, 2), string_agg(v, ',' ORDER BY id), "
            "max(length(upper(v))), json_build_object('g', g)::text, (array_agg(id ORDER BY id))[1], "
            "date_trunc('month', DATE '2024-03-15')::date, extract(year FROM DATE '2024-03-15'), "
            "rank() OVER (ORDER BY g), CASE WHEN g = 0 THEN 'zero' ELSE 'other' END, coalesce(NULL, g) "
            "FROM w GROUP BY g UNION ALL SELECT NULL, 0, 0, 0, '', 0, '{}', 0, NULL, 0, 0, '', 0 ORDER BY 1 NULLS LAST").rows
        assert [r[1] for r in rows] == [16, 17, 17, 0]
        assert rows[0][4].startswith("row 3,row 6")
        assert db.execute("SELECT i FROM generate_series(1, 3) AS g(i)").rows == [(1,), (2,), (3,)]
        assert db.execute("SELECT count(*) FROM t TABLESAMPLE bernoulli (100)").rows == [(50,)]


def test_an_allowed_function_of_the_database_runs_and_the_server_still_stops_its_write(spelled):
    """--allow-function sneaky lets the guard pass the database's own function; the READ ONLY transaction is still
    the second guard, so its INSERT fails and u is unchanged."""
    pg = spelled["pg"]
    before = fingerprint(pg)
    with connect(pg, "read-only role", allow_functions=["sneaky"]) as db:
        with pytest.raises(QueryError, match="read-only transaction|permission denied"):
            db.execute("SELECT sneaky()")
    with connect(pg, "read-only role") as db:
        with pytest.raises(QueryError, match=r"^refused: the function sneaky\(\) is not on goldeval's list"):
            db.execute("SELECT sneaky()")
    assert fingerprint(pg) == before


@pytest.mark.parametrize("who", ROLES)
def test_a_judging_run_keeps_no_byte_of_a_server_file(spelled, who, tmp_path):
    """goldeval judge as a user runs it: the spelled file reads are unscored cases whose reason names the function,
    an ordinary case is judged, the allowed function is recorded in the run's configuration, and neither the
    results nor the run store hold a byte of the canary file or of the server's postgresql.conf."""
    import json
    import subprocess
    import sys

    pg = spelled["pg"]
    reads = {
        "u&": f"SELECT {unicode_escaped('pg_read_file')}('{spelled['canary']}') AS v",
        "uescape": f"SELECT {unicode_escaped('pg_read_file', escape='!')}('postgresql.conf') AS v",
        "from": f"SELECT * FROM {unicode_escaped('pg_read_file', long=True)}('{spelled['canary']}') AS f(v)",
        "field": f"SELECT ('{spelled['canary']}').pg_read_file AS v",
        "binary": f"SELECT encode(pg_catalog.{unicode_escaped('pg_read_binary_file')}('postgresql.conf'), 'escape') AS v",
        "lo": f"SELECT {unicode_escaped('lo_import')}('{spelled['canary']}') AS v",
    }
    cases = [{"id": k, "question": "What does the file say?", "golden": {"kind": "value", "columns": ["v"], "rows": [["x"]]}}
             for k in reads]
    cases.append({"id": "ok", "question": "How many rows?", "golden": {"kind": "value", "columns": ["n"], "rows": [[50]]}})
    attempts = [{"id": k, "final_query": q} for k, q in reads.items()] + [{"id": "ok", "final_query": "SELECT count(*) AS n FROM t"}]
    (tmp_path / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases))
    (tmp_path / "attempts.jsonl").write_text("".join(json.dumps(a) + "\n" for a in attempts))
    env = {**os.environ, "GOLDEVAL_HOME": str(tmp_path / "home")}
    out = tmp_path / "results.json"
    url = pg.url(DB, role="ro" if who == "read-only role" else "superuser")
    before = fingerprint(pg)
    p = subprocess.run([sys.executable, "-m", "goldeval", "judge", str(tmp_path / "cases.jsonl"), str(tmp_path / "attempts.jsonl"),
                        "--db", url, "--out", str(out), "--allow-function", "pg_read_file", "--allow-function", "abs",
                        *(["--allow-privileged-role"] if who == "superuser" else [])],
                       env=env, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    results = json.loads(out.read_text())
    verdicts = {c["id"]: c for c in results["per_example"]}
    assert verdicts["ok"]["verdict"] == "match"
    for k in reads:
        assert verdicts[k]["status"] == "unscored", k
        assert "the final query failed: refused: " in verdicts[k]["reason"], k
        assert "even with --allow-function" in verdicts[k]["reason"], k  # allowing pg_read_file did not allow it
    assert results["config"]["allow_functions"] == ["abs", "pg_read_file"]
    written = out.read_bytes() + b"".join(f.read_bytes() for f in sorted((tmp_path / "home").rglob("*")) if f.is_file())
    written += (p.stdout + p.stderr).encode()
    assert CANARY_TOKEN.encode() not in written
    assert [ln for ln in spelled["conf_lines"] if ln.encode() in written] == []
    assert fingerprint(pg) == before


def test_a_listed_name_this_server_lacks_is_the_databases_own_and_refused(spelled):
    """instr() is on the list (SQLite, DuckDB) but not in PostgreSQL's pg_catalog: unqualified, the server would
    run the database's public.instr. The guard asks the server which names are its own."""
    pg = spelled["pg"]
    with connect(pg, "read-only role") as db:
        with pytest.raises(QueryError, match=r"^refused: the function instr\(\) is not a built-in of this server"):
            db.execute("SELECT instr('a', 'a')")
        assert db.execute("SELECT strpos('ab', 'b')").rows == [(2,)]
    with connect(pg, "read-only role", allow_functions=["instr"]) as db:
        assert db.execute("SELECT instr('a', 'a')").rows == [("the database's own instr",)]
