"""The run store on a PostgreSQL server (``--store postgresql://…``), as CI machines use it: many processes record
into one store at once, a run killed on one "machine" (a process with its own folder) resumes on another, and
``compare``, ``report``, tags and the gates read from the server as from a SQLite file.
"""

from __future__ import annotations

import json
import os
import random
import re
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from goldeval.report.build import report_model_from_store
from goldeval.runs.migrations import MIGRATIONS, POSTGRES_MIGRATIONS
from goldeval.runs.backends import open_store
from goldeval.runs.store import RunStore

from .conftest import RO_PASSWORD


def goldeval(*args: str, env: dict, cwd: Path | None = None, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "goldeval", *args], env=env, cwd=cwd, capture_output=True, text=True,
                          timeout=kw.pop("timeout", 300), **kw)


def fresh_store(pg, name: str) -> str:
    """A new empty database *name*; its superuser URL, password included (as a CI secret would give it)."""
    pg.create_database(name)
    return pg.url(name)


def labels_file(path: Path, n: int, *, wrong_every: int = 0, pad: int = 0) -> Path:
    """*n* label rows; gold 'yes' on even rows; the prediction is wrong on every *wrong_every*-th row (0: never)."""
    with path.open("w") as f:
        for i in range(n):
            gold = "yes" if i % 2 == 0 else "no"
            pred = gold if not wrong_every or i % wrong_every else ("no" if gold == "yes" else "yes")
            f.write(json.dumps({"id": f"case-{i:06d}" + "x" * pad, "gold": gold, "pred": pred}) + "\n")
    return path


@pytest.fixture()
def env(tmp_path):
    e = {**os.environ, "GOLDEVAL_HOME": str(tmp_path / "home")}
    e.pop("PGPASSWORD", None)
    e.pop("GOLDEVAL_STORE", None)
    return e


def test_the_postgres_schema_is_the_sqlite_schema(pg, tmp_path):
    # Same migration names, in order, and the same columns in the same order in every table.
    assert list(POSTGRES_MIGRATIONS) == [m.__name__ for m in MIGRATIONS]
    url = fresh_store(pg, "schema")
    with open_store(url) as st:
        assert st.migrations_applied == [m.__name__ for m in MIGRATIONS]
        pg_cols = {t: [r[0] for r in st.db.execute(
            "SELECT column_name FROM information_schema.columns WHERE table_schema = 'public' AND table_name = ? "
            "ORDER BY ordinal_position", (t,))] for t in ("runs", "cases", "reviews", "tags", "run_inputs", "_migrations")}
    with open_store(url) as again:
        assert again.migrations_applied == []  # recorded once
    RunStore(tmp_path / "s.db").close()
    lite = sqlite3.connect(tmp_path / "s.db")
    lite_cols = {t: [r[1] for r in lite.execute(f"PRAGMA table_info({t})")] for t in pg_cols}
    assert pg_cols == lite_cols


def test_eight_processes_record_runs_into_one_store_at_once(pg, tmp_path, env):
    url = fresh_store(pg, "eight")
    password = pg.server.password
    sizes = [300, 301, 302, 303, 304, 305, 306]
    files = [labels_file(tmp_path / f"p{i}.jsonl", n, wrong_every=i + 2) for i, n in enumerate(sizes)]
    # one input past LARGE_INPUT_BYTES (8 MB): that run is committed by the writer process, on its own connection
    files.append(labels_file(tmp_path / "big.jsonl", 60_000, wrong_every=9, pad=100))
    sizes.append(60_000)
    assert files[-1].stat().st_size > 8_000_000
    procs = [subprocess.Popen([sys.executable, "-m", "goldeval", "labels", str(f), "--positive", "yes", "--arm", f"arm{i}",
                               "--store", url, "--out", str(tmp_path / f"r{i}.json")],
                              env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for i, f in enumerate(files)]
    outs = [p.communicate(timeout=600) for p in procs]
    for p, (out, err) in zip(procs, outs):
        assert p.returncode == 0, err
        assert password not in out + err
    results = [json.loads((tmp_path / f"r{i}.json").read_text()) for i in range(8)]
    ids = [r["run"]["id"] for r in results]
    assert len(set(ids)) == 8
    assert all(r["run"]["store"] == pg.url("eight", password=None) for r in results)  # named without the password
    with pg.admin("eight") as c:
        per_run = dict(c.execute("SELECT run_id, count(*) FROM cases GROUP BY run_id").fetchall())
        distinct = dict(c.execute("SELECT run_id, count(DISTINCT case_id) FROM cases GROUP BY run_id").fetchall())
        statuses = dict(c.execute("SELECT id, status FROM runs").fetchall())
        stored = c.execute("SELECT string_agg(inputs || config || coalesce(results, ''), '') FROM runs").fetchone()[0]
    assert per_run == {run_id: n for run_id, n in zip(ids, sizes)}  # no case lost
    assert distinct == per_run  # none doubled
    assert statuses == dict.fromkeys(ids, "finished")
    assert password not in stored
    listed = goldeval("runs", "list", "--store", url, "--limit", "0", "--json", env=env)
    assert listed.returncode == 0, listed.stderr
    rows = json.loads(listed.stdout)
    assert sorted(r["id"] for r in rows) == sorted(ids)  # every run listed
    assert {r["id"]: r["n_recorded"] for r in rows} == dict(zip(ids, sizes))
    # each run's recorded cases are exactly its rows: p0 gets every 2nd row wrong, so 150 of 300 cases are wrong
    with open_store(url) as st:
        wrong = sum(1 for c in st.cases(ids[0]) if c["gold"] != c["pred"])
    assert wrong == 150


JUDGE_DB = "wards"
JUDGE_SCRIPT = """
CREATE TABLE wards (ward_id int, name text, beds int);
INSERT INTO wards VALUES (1, 'Cardiology', 30), (2, 'Oncology', 24), (3, 'Surgery', 40);
CREATE TABLE ctl (slow bool);
INSERT INTO ctl VALUES (true);
"""
#: 250 quick cases (the recorder commits them in batches of 200 as they come), then one that sleeps 60 s on the
#: server while ctl.slow is true (the "machine" is killed during it), then one more.
N_QUICK = 250
CASES = [{"id": f"q{i:03d}", "question": "How many beds does Oncology have?",
          "golden": {"kind": "value", "columns": ["beds"], "rows": [[24]]}} for i in range(N_QUICK)] + [
    {"id": "slow", "question": "How many wards are there?", "golden": {"kind": "value", "columns": ["n"], "rows": [[3]]}},
    {"id": "last", "question": "Which ward has the most beds?", "golden": {"kind": "value", "columns": ["name"], "rows": [["Surgery"]]}},
]
ATTEMPTS = [{"id": f"q{i:03d}", "final_query": "SELECT beds FROM wards WHERE name = 'Oncology'"} for i in range(N_QUICK)] + [
    {"id": "slow", "final_query": "SELECT count(*) AS n FROM wards, (SELECT pg_sleep(CASE WHEN slow THEN 60 ELSE 0 END) FROM ctl) s"},
    {"id": "last", "final_query": "SELECT name FROM wards ORDER BY beds DESC LIMIT 1"},
]


def sleepers(pg) -> int:
    with pg.admin() as c:
        return c.execute("SELECT count(*) FROM pg_stat_activity WHERE application_name = 'goldeval' AND state = 'active' "
                         "AND wait_event = 'PgSleep'").fetchone()[0]


def machine(tmp_path: Path, name: str, env: dict) -> tuple[Path, dict]:
    """A folder of its own holding copies of the inputs (another checkout on another runner), and its env."""
    home = tmp_path / name
    home.mkdir()
    (home / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in CASES))
    (home / "attempts.jsonl").write_text("".join(json.dumps(a) + "\n" for a in ATTEMPTS))
    return home, {**env, "GOLDEVAL_HOME": str(home / ".goldeval"), "PGPASSWORD": RO_PASSWORD}


def test_a_run_killed_on_one_machine_resumes_on_another(pg, tmp_path, env):
    pg.create_database(JUDGE_DB, JUDGE_SCRIPT)
    url = fresh_store(pg, "resume")
    db = pg.url(JUDGE_DB, role="ro", password=False)
    one, env_one = machine(tmp_path, "one", env)
    cmd = ["judge", "cases.jsonl", "attempts.jsonl", "--db", db, "--timeout", "120", "--store", url]
    a = subprocess.Popen([sys.executable, "-m", "goldeval", *cmd], cwd=one, env=env_one, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        while not sleepers(pg):  # the quick cases scored, the slow one sleeping on the server
            assert a.poll() is None and time.monotonic() < deadline, a.communicate()
            time.sleep(0.1)
        # What is committed while the slow case sleeps: the batches handed over so far (every 200 cases, or 0.5 s
        # after the last hand-over: on a slow machine a batch can go by time before the 200th case). The cases
        # queued after the last hand-over wait for the next record, which the slow case holds back, so the count
        # settles once the writer committed what it was handed: read it until two reads 0.5 s apart agree.
        counts: list[tuple[str, int]] = []
        while len(counts) < 2 or counts[-1] != counts[-2]:
            assert time.monotonic() < deadline, counts
            with pg.admin("resume") as c:
                counts.extend(c.execute("SELECT run_id, count(*) FROM cases GROUP BY run_id").fetchall() or [("", 0)])
            time.sleep(0.5)
        run_id, n = counts[-1]
        assert 1 <= n <= N_QUICK  # at least one batch is committed, and nothing of the slow case
        with open_store(url) as st:
            # alive on "machine one": listed as running, and no other process may take it
            assert st.get_run(run_id, with_results=False)["status"] == "running"
            assert st.claim(run_id) == "running"
        a.send_signal(signal.SIGKILL)  # the runner dies: nothing is committed or marked on the way out
        a.communicate(timeout=30)
    finally:
        if a.poll() is None:
            a.kill()
    with pg.admin(JUDGE_DB) as c:  # the killed client's query still sleeps on the server: end it
        c.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s AND pid <> pg_backend_pid()", (JUDGE_DB,))
        c.execute("UPDATE ctl SET slow = false")
    deadline = time.monotonic() + 30
    while True:  # the server ends the dead session and releases the run's lock
        with open_store(url) as st:
            status = st.get_run(run_id, with_results=False)["status"]
        if status == "interrupted":
            break
        assert time.monotonic() < deadline, status
        time.sleep(0.2)

    two, env_two = machine(tmp_path, "two", env)
    r = goldeval(*cmd, cwd=two, env=env_two)
    assert r.returncode == 0, r.stderr
    assert f"run {run_id} resumed ({n} case(s) reused" in r.stderr  # continued where machine one stopped
    assert pg.server.password not in r.stdout + r.stderr
    with pg.admin("resume") as c:
        assert c.execute("SELECT id, status FROM runs").fetchall() == [(run_id, "finished")]
        assert [r[0] for r in c.execute("SELECT case_id FROM cases ORDER BY seq")] == [case["id"] for case in CASES]
        assert c.execute("SELECT DISTINCT verdict FROM cases").fetchall() == [("match",)]
    assert not (one / ".goldeval" / "goldeval.db").exists() and not (two / ".goldeval" / "goldeval.db").exists()


def test_compare_report_and_tags_read_from_the_server_as_from_sqlite(pg, tmp_path, env):
    url = fresh_store(pg, "cmp")
    lite = str(tmp_path / "runs.db")
    before = labels_file(tmp_path / "before.jsonl", 40, wrong_every=5)  # rows 0, 5, 10, … 35 wrong
    after = labels_file(tmp_path / "after.jsonl", 40, wrong_every=4)  # rows 0, 4, 8, … 36 wrong
    # pass → fail: wrong after, right before: 4, 8, 12, 16, 24, 28, 32, 36 (20 is wrong in both) = 8 regressions
    compared = {}
    for store in (url, lite):
        for f in (before, after):
            r = goldeval("labels", str(f), "--positive", "yes", "--store", store, "-q", env=env)
            assert r.returncode == 0, r.stderr
        r = goldeval("runs", "tag", "latest~1", "baseline/main", "--store", store, env=env)
        assert r.returncode == 0, r.stderr
        r = goldeval("runs", "tag", "latest", "baseline/main", "--store", store, env=env)
        assert r.returncode == 2 and "--move" in r.stderr  # a tag moves only when told
        r = goldeval("compare", "baseline/main", "latest", "--store", store, "--fail-on-regression", "--out", "-", env=env)
        assert r.returncode == 1, r.stderr  # a pass became a fail
        cmp = json.loads(r.stdout)
        assert cmp["runs"]["a"]["ref"] == "baseline/main" and cmp["runs"]["a"]["tags"] == ["baseline/main"]
        assert cmp["runs"]["a"]["created_at"] < cmp["runs"]["b"]["created_at"]  # the baseline is the older run
        compared[store] = cmp
        report = tmp_path / f"report-{len(compared)}.html"
        r = goldeval("report", "baseline/main", "--compare", "latest", "--store", store, "--out", str(report), env=env)
        assert r.returncode == 0, r.stderr
        assert report.stat().st_size > 0
    pg_cmp, lite_cmp = compared[url], compared[lite]
    assert sorted(pg_cmp["regressions"]) == [f"case-{i:06d}" for i in (4, 8, 12, 16, 24, 28, 32, 36)]

    def same(c):  # everything but the run ids, times and ages, which differ between two recordings
        c = json.loads(json.dumps(c))
        for side in ("a", "b"):
            for k in ("id", "created_at"):
                c["runs"][side].pop(k)
        return c

    assert same(pg_cmp) == same(lite_cmp)  # to the last digit
    r = goldeval("runs", "tag", "latest", "baseline/main", "--move", "--store", url, env=env)
    assert r.returncode == 0 and "moved from run" in r.stderr, r.stderr
    r = goldeval("compare", "baseline/main", "latest", "--store", url, "--fail-on-regression", "-q", env=env)
    assert r.returncode == 0, r.stderr  # the same run on both sides: nothing regressed


def test_a_reading_command_on_an_empty_database_says_no_run_was_recorded(pg, env):
    pg.create_database("empty")
    r = goldeval("runs", "show", "latest", "--store", pg.url("empty"), env=env)
    assert r.returncode == 2 and "no goldeval run store" in r.stderr, r.stderr
    assert pg.server.password not in r.stderr


def test_a_database_of_another_program_is_refused(pg, tmp_path, env):
    pg.create_database("other", "CREATE TABLE runs (id int)")
    r = goldeval("labels", str(labels_file(tmp_path / "p.jsonl", 4)), "--positive", "yes", "--store", pg.url("other"), env=env)
    assert r.returncode == 3 and "of another program" in r.stderr, r.stderr


def test_a_store_another_goldeval_is_making_is_not_taken_for_another_programs(pg, monkeypatch):
    # The race of test_eight_processes_record_runs_into_one_store_at_once, made certain: a process looked for
    # _migrations before another goldeval's migration committed, then for the tables after; it saw the tables
    # without _migrations (the message a run got under load: "the database already has table(s) runs, cases of
    # another program"). The first lookup is made stale here; the store is a real goldeval store, so it must open.
    from goldeval.runs import pgstore

    url = fresh_store(pg, "racing")
    open_store(url).close()  # the other goldeval's store, committed
    real, calls = pgstore._applied, []

    def stale_first(conn):
        calls.append(1)
        return [] if len(calls) == 1 else real(conn)

    monkeypatch.setattr(pgstore, "_applied", stale_first)
    with open_store(url) as st:
        assert st.migrations_applied == []  # nothing to do: the schema was current
    assert len(calls) >= 2  # looked again, under the migrations' lock
    # and the other way: tables without _migrations are still another program's, looked at under the lock too
    pg.create_database("other2", "CREATE TABLE cases (id int)")
    with pytest.raises(Exception, match="of another program"):
        open_store(pg.url("other2"))


def test_the_store_url_may_come_from_goldeval_store(pg, tmp_path, env):
    url = fresh_store(pg, "fromenv")
    e = {**env, "GOLDEVAL_STORE": url}
    r = goldeval("labels", str(labels_file(tmp_path / "p.jsonl", 6)), "--positive", "yes", "--out", "-", env=e)
    assert r.returncode == 0, r.stderr
    run_id = json.loads(r.stdout)["run"]["id"]
    with pg.admin("fromenv") as c:
        assert c.execute("SELECT id FROM runs").fetchall() == [(run_id,)]
    assert not (tmp_path / "home" / "goldeval.db").exists()  # not the SQLite default


def test_a_bundle_round_trip_from_sqlite_to_the_server_compares_equal_to_the_last_digit(pg, tmp_path, env):
    url = fresh_store(pg, "bundles")
    lite = str(tmp_path / "ci.db")
    for f in (labels_file(tmp_path / "before.jsonl", 50, wrong_every=5), labels_file(tmp_path / "after.jsonl", 50, wrong_every=3)):
        r = goldeval("labels", str(f), "--positive", "yes", "--store", lite, "-q", env=env)
        assert r.returncode == 0, r.stderr
    ids = []
    for i, ref in enumerate(("latest~1", "latest")):
        bundle = tmp_path / f"run{i}.tar.gz"
        r = goldeval("runs", "export", ref, "--store", lite, "--bundle", str(bundle), env=env)
        assert r.returncode == 0, r.stderr
        for _ in range(2):  # twice: one run
            r = goldeval("runs", "import", str(bundle), "--store", url, env=env)
            assert r.returncode == 0, r.stderr
        ids.append(r.stderr.rsplit(" ", 1)[-1].strip())
    with pg.admin("bundles") as c:
        assert sorted(c.execute("SELECT id FROM runs").fetchall()) == sorted((i,) for i in ids)
        assert c.execute("SELECT count(*) FROM cases").fetchone()[0] == 100
    cmp = {}
    for store in (lite, url):
        r = goldeval("compare", *ids, "--store", store, "--out", "-", "-q", "--seed", "7", env=env)
        assert r.returncode == 0, r.stderr
        cmp[store] = r.stdout
    assert cmp[lite] == cmp[url]  # the whole comparison, byte for byte: ids, times, flips, intervals
    shown = {s: goldeval("runs", "show", ids[1], "--store", s, "--out", "-", "-q", env=env).stdout for s in (lite, url)}
    a, b = json.loads(shown[lite]), json.loads(shown[url])
    assert a.pop("run")["store"] != b.pop("run")["store"] and a == b  # the same results, from another store


def test_a_report_from_the_server_shows_the_texts_of_a_deleted_input(pg, tmp_path, env):
    # issue 29 item 6 on PostgreSQL: the input file kept in run_inputs (BYTEA), restored when the file is gone; the
    # expected texts are the PriMock57 file's own rows (Open-Scribe's published predictions), read before deletion
    url = fresh_store(pg, "texts")
    src = Path(__file__).resolve().parents[2] / "examples" / "data" / "openscribe_primock57_predictions.jsonl"
    preds = tmp_path / "preds.jsonl"
    preds.write_bytes(src.read_bytes())
    want = {r["id"]: r for r in map(json.loads, preds.read_text(encoding="utf-8").splitlines())}
    r = goldeval("score", str(preds), "--store", url, "-q", env=env)
    assert r.returncode == 0, r.stderr
    preds.unlink()
    with open_store(url) as st:
        run_id = st.resolve("latest")
        kept = st.kept_inputs(run_id)
        assert list(kept) == ["predictions"] and kept["predictions"]["size"] == len(src.read_bytes())
        model = report_model_from_store(st, run_id)
    assert {c["id"]: (c["prediction"], c["reference"]) for c in model["cases"]} == {
        i: (w["prediction"], w["reference"]) for i, w in want.items()}
    assert any("copy kept in the run store" in n for n in model["notes"])


def test_score_cases_coded_on_sqlite_are_the_same_rows_on_the_server(pg, tmp_path, env):
    # issue 31 item 1: goldeval score's cases reach a SQLite store as coded blocks (format 3, the C kernel's plain
    # rows) and a PostgreSQL store as rows of cases (RunStore.write_coded_block / PgRunStore.write_coded_block):
    # both read back the same rows, byte for byte, for 3,000 short rows with a blank line and a non-ASCII row among
    # them (left to the Python path, recorded in its place).
    url = fresh_store(pg, "coded")
    lite = tmp_path / "lite.db"
    preds = tmp_path / "p.jsonl"
    rows = [json.dumps({"id": f"r{i}", "prediction": f"bp {i % 97} mmhg stable", "reference": f"bp {i % 89} mmhg"})
            for i in range(3000)]
    rows[1500] = json.dumps({"id": "r1500", "prediction": "café au lait", "reference": "cafe"}, ensure_ascii=False)
    preds.write_text("\n".join(rows[:700]) + "\n\n" + "\n".join(rows[700:]) + "\n", encoding="utf-8")
    for store in (lite, url):
        r = goldeval("score", str(preds), "--store", str(store), "-q", "--workers", "1", "--out", str(tmp_path / "o.json"), env=env)
        assert r.returncode == 0, r.stderr
    with RunStore(lite) as a, open_store(url) as b:
        assert {f for (f,) in a.db.execute("SELECT DISTINCT format FROM case_blocks")} >= {3}
        got_a = [row[:1] + row[2:] for row in a.stored_cases(a.resolve("latest"))]
        got_b = [row[:1] + row[2:] for row in b.stored_cases(b.resolve("latest"))]
    assert len(got_a) == 3000 and got_a == got_b


@pytest.mark.parametrize("odd_id, why", [
    ("a\x00b", r"the case id 'a\\x00b' holds a NUL character"),
    # 9,000 random letters and digits (seeded): pglz cannot shrink them under the index row limit
    ("".join(random.Random(20261205).choices("abcdefghijklmnopqrstuvwxyz0123456789", k=9000)),
     r"is 9,000 bytes long, more than the server's index"),
], ids=["NUL", "9000-bytes"])
def test_an_id_the_server_cannot_keep_is_named_with_what_to_do(pg, tmp_path, env, odd_id, why):
    # break-fix (hG, 2026-12-05): a case id a SQLite store keeps but PostgreSQL cannot (a NUL character: text cannot
    # hold one; 9 KB of letters and digits: past the btree index row limit) failed the run with "writing N case rows ... failed
    # (...). Check that the server is reachable and that the role may read and write goldeval's tables": advice
    # about the network and grants, for an input problem. Expected: exit 3 (the store refused the write), the id
    # and the reason named, and where the run can be recorded instead; the same file records into SQLite.
    url = fresh_store(pg, f"odd_ids_{'nul' if chr(0) in odd_id else 'long'}")
    src = tmp_path / "labels.jsonl"
    rows = [{"id": f"c{i}", "gold": "yes" if i % 2 else "no", "pred": "yes"} for i in range(30)]
    rows[7]["id"] = odd_id
    src.write_text("".join(json.dumps(r) + "\n" for r in rows))
    r = goldeval("labels", str(src), "--positive", "yes", "--store", url, "-q", env=env)
    assert r.returncode == 3, r.stderr
    assert re.search(why, r.stderr), r.stderr
    assert "SQLite run store keeps any id" in r.stderr and "reachable" not in r.stderr
    ok = goldeval("labels", str(src), "--positive", "yes", "--store", str(tmp_path / "runs.db"), "-q", env=env)
    assert ok.returncode == 0, ok.stderr


def test_a_case_redone_by_a_resumed_run_keeps_its_place_on_the_server_as_in_sqlite(pg, tmp_path, env):
    # break-fix (hH, 2026-12-05): a case recorded again (a resumed run redoes the unscored cases it finds; the judge's
    # LLM stage records every case it sent again) keeps its place among the run's cases in a SQLite store (its row is
    # updated, its seq kept: test_runs_store's upsert test pins it) but went to the end on a PostgreSQL store (its
    # upsert set seq = excluded.seq): `runs export` of a resumed run listed the redone unscored cases after all the
    # others, where the uninterrupted run lists every case in the input's order. By hand: 30 rows c0..c29, every 4th
    # from c1 unscored (its prediction is a number); the run is cut after its first 14 cases (c0..c13, as a kill
    # leaves it: those committed, the run interrupted) and resumed by the same command, which redoes c1, c5, c9 and
    # c13. Expected (both stores): the resumed run's `runs export` and --out are the uninterrupted run's, and the
    # export lists c0..c29 in order.
    url = fresh_store(pg, "redone")
    src = tmp_path / "p.jsonl"
    rows = [{"id": f"c{i}", "prediction": 42 if i % 4 == 1 else f"bp {i % 7} stable", "reference": f"bp {i % 5}"}
            for i in range(30)]
    src.write_text("".join(json.dumps(r) + "\n" for r in rows))

    def score(store: str, out: str) -> tuple[str, list[dict], list[dict]]:
        r = goldeval("score", str(src), "--store", store, "-q", "--out", str(tmp_path / out), env=env)
        assert r.returncode == 0, r.stderr
        doc = json.loads((tmp_path / out).read_text())
        x = goldeval("runs", "export", doc["run"]["id"], "--store", store, env=env)
        assert x.returncode == 0, x.stderr
        return doc["run"]["id"], doc["per_example"], [json.loads(line) for line in x.stdout.splitlines()]

    for store in (str(tmp_path / "lite.db"), url):
        run_id, whole, exported = score(store, "whole.json")
        assert [c["id"] for c in exported] == [r["id"] for r in rows]
        with open_store(store) as st:  # cut after seq 13, as a run killed there leaves it
            st.db.execute("DELETE FROM cases WHERE run_id = ? AND seq >= 14", (run_id,))
            st.db.execute("DELETE FROM case_blocks WHERE run_id = ? AND seq0 >= 14", (run_id,))
            st.set_status(run_id, "interrupted")
            assert [c["id"] for c in st.iter_cases(run_id)] == [f"c{i}" for i in range(14)]
        resumed_id, again, exported_again = score(store, "resumed.json")
        assert resumed_id == run_id
        assert again == whole
        assert exported_again == exported, store


def test_rows_written_many_per_statement_keep_the_first_seq_and_the_last_record_on_the_server(pg):
    # The server's upsert as SQLite's (tests/unit/test_runs_store.py, the same rows by hand): 250 rows, 0..199 are
    # c0..c199 with score 0.5 except row 7, which repeats c5 (score 0.25) in the same statement; rows 200..249 repeat
    # c0..c49 with score 1.0 in a later call. A repeated id keeps its first seq and takes the last record (hH: the
    # server took the last seq, so a case written again moved to the end of the run's order).
    import orjson

    from goldeval.runs.store import RunMeta

    with open_store(fresh_store(pg, "upsert_seq")) as st:
        run_id = st.create_run(RunMeta(run_key="k1", scorer_name="token_f1", scorer_version="1", dataset_hash="d" * 64))
        rows = [(f"c{i}", i, "scored", None, 0.5, None, None, orjson.dumps({"id": f"c{i}", "n": i}).decode())
                for i in range(200)]
        rows[7] = ("c5", 7, "scored", None, 0.25, None, None, '{"id":"c5","n":7}')
        st.write_cases(run_id, rows)
        st.write_cases(run_id, [(f"c{i}", 200 + i, "scored", None, 1.0, None, None,
                                 orjson.dumps({"id": f"c{i}", "n": 200 + i}).decode()) for i in range(50)])
        got = {r[0]: (r[1], r[4], orjson.loads(r[7])["n"]) for r in st.stored_cases(run_id)}
        order = [c["id"] for c in st.iter_cases(run_id)]
    assert len(got) == 200
    assert got["c5"] == (5, 1.0, 205) and got["c7"] == (207, 1.0, 207)
    assert got["c0"] == (0, 1.0, 200) and got["c49"] == (49, 1.0, 249)
    assert got["c50"] == (50, 0.5, 50) and got["c199"] == (199, 0.5, 199)
    assert order == [f"c{i}" for i in range(200) if i != 7] + ["c7"]
