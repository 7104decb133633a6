"""A PostgreSQL server that goes away mid-run loses nothing: the run stops (exit 3) and stays in the store as
interrupted with every case judged so far; once the server is back the same command resumes it and ends with the
verdicts of an uninterrupted run. A lost connection is never a case's unscored reason.

These tests stop and restart a server of their own (``pgserver.PostgresServer``), not the session's ``pg``.

Source: goldeval issue 25, item 4.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from . import pgserver

DB = "lost"
RO, RO_PW = "lost_ro", "lost-ro-pw-9c1"
BEDS = {k: 10 + 3 * k for k in range(1, 21)}
SLOW = "c08"  # its query sleeps, so that the server can be stopped while it runs
WRONG = {"c03", "c12"}  # answer another ward: no_match
BROKEN = "c05"  # a syntax error: unscored, its own failure


def _cases_and_attempts() -> tuple[list[dict], list[dict]]:
    cases, attempts = [], []
    for k, beds in BEDS.items():
        cid = f"c{k:02d}"
        cases.append({"id": cid, "question": f"How many beds does ward {k} have?",
                      "golden": {"kind": "value", "columns": ["beds"], "rows": [[beds]]}})
        ward = k + 1 if cid in WRONG else k
        sql = f"SELECT beds FROM wards WHERE ward_id = {ward}"
        if cid == SLOW:
            sql = f"SELECT beds FROM wards, (SELECT pg_sleep(3)) s WHERE ward_id = {k}"
        if cid == BROKEN:
            sql = f"SELEC beds FROM wards WHERE ward_id = {k}"
        attempts.append({"id": cid, "final_query": sql})
    return cases, attempts


@pytest.fixture(scope="module")
def server():
    pytest.importorskip("psycopg", reason="psycopg is not installed (pip install -e '.[test]' installs it)")
    why = pgserver.missing_reason()
    if why:
        pytest.skip(why)
    import psycopg

    srv = pgserver.PostgresServer().start()
    try:
        with psycopg.connect(srv.url(), autocommit=True) as c:
            c.execute(f"CREATE DATABASE {DB}")
            c.execute(f"CREATE ROLE {RO} LOGIN PASSWORD '{RO_PW}'")
        with psycopg.connect(srv.url(DB), autocommit=True) as c:
            c.execute("CREATE TABLE wards (ward_id int, name text, beds int)")
            c.execute("INSERT INTO wards SELECT k, 'ward ' || k, 10 + 3 * k FROM generate_series(1, 21) k")
            c.execute(f"GRANT USAGE ON SCHEMA public TO {RO}; GRANT SELECT ON wards TO {RO}")
        yield srv
    finally:
        srv.stop()


@pytest.fixture()
def running(server):
    """The server, running at the start and again at the end of the test (a test that stops it restarts it)."""
    yield server
    if not _accepts(server):
        server.restart()


def _accepts(srv: pgserver.PostgresServer) -> bool:
    import psycopg

    try:
        psycopg.connect(srv.url(), connect_timeout=2).close()
        return True
    except psycopg.OperationalError:
        return False


def _sleeping(srv: pgserver.PostgresServer) -> int:
    import psycopg

    with psycopg.connect(srv.url(), autocommit=True) as c:
        return c.execute("SELECT count(*) FROM pg_stat_activity WHERE application_name = 'goldeval' "
                         "AND wait_event = 'PgSleep'").fetchone()[0]


def _store(home: Path, sql: str) -> list[tuple]:
    con = sqlite3.connect(home / "goldeval.db")
    try:
        return [tuple(r) for r in con.execute(sql)]
    finally:
        con.close()


def _verdicts(results: dict) -> dict[str, tuple]:
    return {c["id"]: (c["status"], c.get("verdict")) for c in results["per_example"]}


def test_server_stopped_mid_run_leaves_it_interrupted_and_the_same_command_resumes_it(running, tmp_path):
    srv = running
    cases, attempts = _cases_and_attempts()
    cf, af = tmp_path / "cases.jsonl", tmp_path / "attempts.jsonl"
    cf.write_text("".join(json.dumps(c) + "\n" for c in cases))
    af.write_text("".join(json.dumps(a) + "\n" for a in attempts))
    env = {**os.environ, "GOLDEVAL_HOME": str(tmp_path / "home"), "PGPASSWORD": RO_PW}
    cmd = [sys.executable, "-m", "goldeval", "judge", str(cf), str(af), "--db", srv.url(DB, user=RO, password=None),
           "--timeout", "60"]

    base = subprocess.run([*cmd, "--no-store", "--out", str(tmp_path / "base.json")], env=env, capture_output=True,
                          text=True, timeout=120)
    assert base.returncode == 0, base.stderr
    expected = _verdicts(json.loads((tmp_path / "base.json").read_text()))
    assert expected[BROKEN][0] == "unscored" and {expected[c] for c in WRONG} == {("scored", "no_match")}
    assert expected[SLOW] == ("scored", "match") and len(expected) == 20

    p = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while _sleeping(srv) == 0:  # the run is at the slow case: seven cases judged before it
        assert p.poll() is None and time.monotonic() < deadline, p.communicate()
        time.sleep(0.05)
    srv.stop(keep=True)
    _, stderr = p.communicate(timeout=120)
    assert p.returncode == 3, stderr
    assert "the PostgreSQL server went away" in stderr and "run the same command again" in stderr.lower(), stderr
    assert "Traceback" not in stderr and "internal error" not in stderr
    (run_id, status), = _store(tmp_path / "home", "SELECT id, status FROM runs")
    assert status == "interrupted"
    kept = _store(tmp_path / "home", "SELECT case_id, status FROM cases ORDER BY case_id")
    assert [c for c, _ in kept] == [f"c{k:02d}" for k in range(1, 8)]  # every case judged before the stop
    assert dict(kept) == {c: expected[c][0] for c in dict(kept)}  # recorded as judged, none unscored by the stop

    srv.restart()
    r = subprocess.run([*cmd, "--out", str(tmp_path / "resumed.json")], env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert f"run {run_id} resumed (7 case(s) reused" in r.stderr
    assert _verdicts(json.loads((tmp_path / "resumed.json").read_text())) == expected
    assert _store(tmp_path / "home", "SELECT id, status FROM runs") == [(run_id, "finished")]


def test_a_connection_lost_between_queries_is_made_again_and_a_server_still_down_is_database_lost(running):
    from goldeval.answers.postgres import PostgresDatabase
    from goldeval.answers.sql import DatabaseLostError, QueryError

    srv = running
    with PostgresDatabase(srv.url(DB, user=RO, password=RO_PW)) as db:
        assert db.execute("SELECT count(*) FROM wards").rows == [(21,)]
        ident = db.identity()  # as a run starts: the catalog it judges on
        with pytest.raises(QueryError, match="division by zero"):  # a query's own failure stays a QueryError
            db.execute("SELECT 1 / (count(*) - 21) FROM wards")
        srv.stop(keep=True)
        with pytest.raises(DatabaseLostError, match="server went away .*cannot be made again") as err:
            db.execute("SELECT count(*) FROM wards")
        assert not isinstance(err.value, QueryError) and RO_PW not in str(err.value)
        srv.restart()
        # the server is back: the lost connection is made again before the next query, which runs as ever
        assert db.execute("SELECT count(*) FROM wards").rows == [(21,)]
        srv.stop(keep=True, mode="fast")  # the server closes idle connections: found at the next BEGIN
        srv.restart()
        assert db.execute("SELECT count(*) FROM wards").rows == [(21,)]
        # back with another catalog: the cases after would be judged on another database than those before
        srv.stop(keep=True)
        srv.restart()
        import psycopg

        with psycopg.connect(srv.url(DB), autocommit=True) as c:
            c.execute("ALTER TABLE wards ADD COLUMN note text")
        try:
            for _ in range(2):  # and again at the next query: none runs on the changed database
                with pytest.raises(DatabaseLostError, match="came back with other tables or columns"):
                    db.execute("SELECT count(*) FROM wards")
        finally:
            with psycopg.connect(srv.url(DB), autocommit=True) as c:
                c.execute("ALTER TABLE wards DROP COLUMN note")
        assert db.execute("SELECT count(*) FROM wards").rows == [(21,)]  # the same catalog again
        assert db.identity() == ident


def test_a_store_on_a_server_that_went_away_raises_store_errors(running):
    # break-fix (hG, 2026-12-05): a PostgreSQL run store whose server went away mid-run raised psycopg's own
    # OperationalError from set_status (what marks a run interrupted), finish_run and untag: the ROLLBACK after the
    # failed statement failed too and its error escaped, and finish_run's and untag's reads were not turned into a
    # StoreError. `goldeval` then said "internal error: OperationalError ... please report it". Expected (the
    # store's contract, goldeval.runs.store): a StoreError naming the store, for every write and read.
    import psycopg

    from goldeval.errors import StoreError
    from goldeval.runs.pgstore import PostgresRunStore
    from goldeval.runs.store import RunMeta

    srv = running
    with psycopg.connect(srv.url(), autocommit=True) as c:
        c.execute("DROP DATABASE IF EXISTS gone")
        c.execute("CREATE DATABASE gone")
    st = PostgresRunStore(srv.url("gone"))
    meta = RunMeta(run_key="k", scorer_name="labels", scorer_version="1", dataset_hash="d" * 64)
    run_id = st.create_run(meta)
    st.write_case_block(run_id, 0, 1, b'{"id":"a","status":"scored"}', b'"a"')
    srv.stop(keep=True)
    streamed = {"aggregate": {"n": 1}, "per_example": {"$streamed": True, "n": 1, "ids_sha256": "0" * 64}}
    calls = {
        "set_status": lambda: st.set_status(run_id, "interrupted"),
        "finish_run (streamed)": lambda: st.finish_run(run_id, streamed, per_example_in_cases=True),
        "finish_run (list)": lambda: st.finish_run(run_id, {"per_example": [{"id": "a"}]}, per_example_in_cases=True),
        "untag": lambda: st.untag("baseline"),
        "tag": lambda: st.tag(run_id, "baseline"),
        "claim": lambda: st.claim(run_id),
        "delete_run": lambda: st.delete_run(run_id),
        "write_case_block": lambda: st.write_case_block(run_id, 1, 1, b'{"id":"b","status":"scored"}', b'"b"'),
        "add_review": lambda: st.add_review(run_id, "a", verdict="match", reviewer="r", reviewed_at="2026-12-05"),
        "keep_input": lambda: st.keep_input(run_id, "labels", "0" * 64, "l.jsonl", [(1, b"x")]),
    }
    raised = {}
    for what, call in calls.items():
        try:
            call()
            raised[what] = None
        except BaseException as exc:  # (what each raised, compared below)
            raised[what] = type(exc)
    assert raised == {what: StoreError for what in calls}
