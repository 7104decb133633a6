"""``goldeval judge --db postgresql://…`` as a user runs it: the password is never stored, printed or written; the
database's identity is recorded and compared on resume; Ctrl-C cancels the query on the server and the run stops
(exit 130) and resumes, as on SQLite.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from .conftest import RO_PASSWORD

EX = Path(__file__).resolve().parents[2] / "examples" / "sql"
DB = "ctrlc"
SCRIPT = """
CREATE TABLE wards (ward_id int, name text, beds int);
INSERT INTO wards VALUES (1, 'Cardiology', 30), (2, 'Oncology', 24), (3, 'Surgery', 40);
CREATE TABLE ctl (slow bool);
INSERT INTO ctl VALUES (true);
"""
CASES = [
    {"id": "c1", "question": "How many beds does Oncology have?", "golden": {"kind": "value", "columns": ["beds"], "rows": [[24]]}},
    {"id": "c2", "question": "How many wards are there?", "golden": {"kind": "value", "columns": ["n"], "rows": [[3]]}},
    {"id": "c3", "question": "Which ward has the most beds?", "golden": {"kind": "value", "columns": ["name"], "rows": [["Surgery"]]}},
]
ATTEMPTS = [
    {"id": "c1", "final_query": "SELECT beds FROM wards WHERE name = 'Oncology'"},
    # sleeps 60 s while ctl.slow is true (a data change, which leaves the catalog and so the identity as it is)
    {"id": "c2", "final_query": "SELECT count(*) AS n FROM wards, (SELECT pg_sleep(CASE WHEN slow THEN 60 ELSE 0 END) FROM ctl) s"},
    {"id": "c3", "final_query": "SELECT name FROM wards ORDER BY beds DESC LIMIT 1"},
]


@pytest.fixture()
def setup(pg, tmp_path):
    pg.create_database(DB, SCRIPT)
    cases, attempts = tmp_path / "cases.jsonl", tmp_path / "attempts.jsonl"
    cases.write_text("".join(json.dumps(c) + "\n" for c in CASES))
    attempts.write_text("".join(json.dumps(a) + "\n" for a in ATTEMPTS))
    env = {**os.environ, "GOLDEVAL_HOME": str(tmp_path / "home")}
    env.pop("PGPASSWORD", None)
    return pg, cases, attempts, env, tmp_path


def goldeval(*args: str, env: dict, **kw) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "goldeval", *args], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, **kw)


def every_byte_under(folder: Path) -> bytes:
    return b"".join(p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file())


def test_the_password_in_the_url_is_used_but_never_stored_printed_or_written(setup):
    pg, cases, attempts, env, tmp = setup
    with pg.admin(DB) as c:
        c.execute("UPDATE ctl SET slow = false")
    url = pg.url(DB, role="ro")
    assert RO_PASSWORD in url
    out = tmp / "results.json"
    p = goldeval("judge", str(cases), str(attempts), "--db", url, "--out", str(out), env=env)
    stdout, stderr = p.communicate(timeout=120)
    assert p.returncode == 0, stderr
    results = json.loads(out.read_text())
    assert [c["verdict"] for c in results["per_example"]] == ["match", "match", "match"]
    assert results["inputs"]["db"] == pg.url(DB, role="ro", password=False)
    assert results["config"]["db"] == pg.url(DB, role="ro", password=False)
    ident = results["inputs"]["db_identity"]
    assert ident["database"] == DB and ident["server_version"].startswith("15.") and len(ident["catalog_sha256"]) == 64
    shown = subprocess.run([sys.executable, "-m", "goldeval", "runs", "show", "latest"], env=env, capture_output=True, text=True)
    assert shown.returncode == 0, shown.stderr
    store = every_byte_under(tmp / "home")
    assert b"catalog_sha256" in store  # the identity is recorded with the run
    for where, text in [("stdout", stdout), ("stderr", stderr), ("results", out.read_text()), ("runs show", shown.stdout + shown.stderr)]:
        assert RO_PASSWORD not in text, where
    assert RO_PASSWORD.encode() not in store


def _run_ids(home: Path) -> list[tuple[str, str]]:
    con = sqlite3.connect(home / "goldeval.db")
    try:
        return [tuple(r) for r in con.execute("SELECT id, status FROM runs ORDER BY created_at, id")]
    finally:
        con.close()


def _sleepers(pg) -> int:
    with pg.admin() as c:
        # (the sleep runs in the cursor's FETCH, so the statement text is not the query's; its wait event is)
        return c.execute("SELECT count(*) FROM pg_stat_activity WHERE application_name = 'goldeval' AND state = 'active' "
                         "AND wait_event = 'PgSleep'").fetchone()[0]


def test_ctrl_c_cancels_the_query_on_the_server_and_the_run_resumes_on_the_same_database_only(setup):
    pg, cases, attempts, env, tmp = setup
    env["PGPASSWORD"] = RO_PASSWORD  # the other way to give it
    cmd = ["judge", str(cases), str(attempts), "--db", pg.url(DB, role="ro", password=False), "--timeout", "120", "--arm", "slow"]
    p = goldeval(*cmd, env=env)
    deadline = time.monotonic() + 60
    while _sleepers(pg) == 0:
        assert p.poll() is None and time.monotonic() < deadline, p.communicate()
        time.sleep(0.1)
    p.send_signal(signal.SIGINT)
    _, stderr = p.communicate(timeout=60)
    assert p.returncode == 130, stderr
    assert "interrupted" in stderr
    # The query was cancelled on the server: without a cancel it would sleep on for a minute after the client left.
    deadline = time.monotonic() + 10
    while _sleepers(pg):
        assert time.monotonic() < deadline, "the server still runs the interrupted query"
        time.sleep(0.1)
    (run_id, status), = _run_ids(tmp / "home")
    assert status == "interrupted"

    with pg.admin(DB) as c:
        c.execute("UPDATE ctl SET slow = false")
        c.execute("ALTER TABLE wards ADD COLUMN note text")  # another catalog: another database identity
    r = subprocess.run([sys.executable, "-m", "goldeval", *cmd, "--resume", run_id], env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and "made from different" in r.stderr, r.stderr
    with pg.admin(DB) as c:
        c.execute("ALTER TABLE wards DROP COLUMN note")  # the same catalog again
    r = subprocess.run([sys.executable, "-m", "goldeval", *cmd], env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert f"run {run_id} resumed (1 case(s) reused" in r.stderr
    assert _run_ids(tmp / "home") == [(run_id, "finished")]
