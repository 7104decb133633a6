"""Issue 10 item 2: Ctrl-C (SIGINT) or SIGTERM stops a run with exit 130, leaves it interrupted and resumable,
and records no verdict for the case in flight — during an SQLite query (where the KeyboardInterrupt raised in
the progress handler used to come back as OperationalError "interrupted": the case was recorded unscored and the
run finished with exit 0), during a DuckDB query, in the LLM stage, and in `replay`.

Each test starts the real command in a subprocess, waits until it is inside the slow step, sends the signal and
checks the exit code, the store and the time it took to stop (generous bounds: the step itself would run 60 s)."""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from fake_openai_server import FakeOpenAI, Reply  # noqa: E402

#: A query that counts to 10^11 (hours): it only ends when stopped.
SLOW = "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 100000000000) SELECT count(*) AS n FROM c"


def goldeval(*args) -> list[str]:
    return [sys.executable, "-c", "from goldeval.cli import main; main()", *[str(a) for a in args]]


def write(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def recorded(store: Path) -> dict[str, tuple[str, str | None]]:
    if not store.exists():
        return {}
    con = sqlite3.connect(store, timeout=5)
    try:
        return {cid: (st, v) for cid, st, v in con.execute("SELECT case_id, status, verdict FROM cases")}
    except sqlite3.OperationalError:
        return {}
    finally:
        con.close()


def run_status(store: Path) -> list[str]:
    if not store.exists():
        return []
    con = sqlite3.connect(store, timeout=5)
    try:
        return [s for (s,) in con.execute("SELECT status FROM runs")]
    except sqlite3.OperationalError:
        return []
    finally:
        con.close()


def stop_when(proc: subprocess.Popen, ready, sig: int, *, within: float = 60, settle: float = 0.3) -> tuple[int, float, str]:
    """Wait until ready() (the command is inside its slow step), send *sig*, return (exit code, seconds to stop, stderr)."""
    deadline = time.monotonic() + within
    while not ready():
        if proc.poll() is not None:
            pytest.fail(f"the command ended (exit {proc.returncode}) before it was stopped: {proc.stderr.read().decode()[-800:]}")
        if time.monotonic() > deadline:
            proc.kill()
            pytest.fail("the command never reached its slow step")
        time.sleep(0.02)
    time.sleep(settle)  # well inside the slow step
    t0 = time.monotonic()
    proc.send_signal(sig)
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        pytest.fail(f"signal {sig} did not stop the command within 30 s")
    return proc.returncode, time.monotonic() - t0, proc.stderr.read().decode()


def _sqlite_db(path: Path) -> Path:
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE t (x INTEGER)")
    con.execute("INSERT INTO t VALUES (1)")
    con.commit()
    con.close()
    return path


def _duckdb_db(path: Path) -> Path:
    duckdb = pytest.importorskip("duckdb", reason="the duckdb extra is part of [test]; install it")
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE t (x INTEGER)")
    con.execute("INSERT INTO t VALUES (1)")
    con.close()
    return path


def _judge_files(tmp: Path) -> tuple[Path, Path]:
    cases = write(tmp / "cases.jsonl", [
        {"id": "fast", "question": "How many rows?", "golden": {"kind": "value", "columns": ["n"], "rows": [[1]]}},
        {"id": "slow", "question": "How many?", "golden": {"kind": "value", "columns": ["n"], "rows": [[5]]}},
    ])
    attempts = write(tmp / "attempts.jsonl", [
        {"id": "fast", "final_query": "SELECT count(*) AS n FROM t"},
        {"id": "slow", "final_query": SLOW},
    ])
    return cases, attempts


@pytest.mark.parametrize("engine,sig", [("sqlite", signal.SIGINT), ("sqlite", signal.SIGTERM), ("duckdb", signal.SIGINT)])
def test_a_signal_during_a_query_stops_the_judge_run(tmp_path: Path, engine: str, sig: int) -> None:
    db = _sqlite_db(tmp_path / "d.sqlite") if engine == "sqlite" else _duckdb_db(tmp_path / "d.duckdb")
    cases, attempts = _judge_files(tmp_path)
    store = tmp_path / "s.db"
    proc = subprocess.Popen(goldeval("judge", cases, attempts, "--db", db, "--timeout", "60", "--store", store, "-q"),
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    # the run is created before judging starts; the fast case takes milliseconds, the slow one for ever
    code, took, err = stop_when(proc, lambda: run_status(store) == ["running"], sig, settle=1.5)
    assert code == 130, err
    assert "interrupted" in err
    assert took < 10, f"took {took:.1f} s to stop"
    assert run_status(store) == ["interrupted"]
    cases_now = recorded(store)
    assert "slow" not in cases_now, f"the case in flight was recorded: {cases_now['slow']}"
    assert cases_now["fast"] == ("scored", "match")


def test_ctrl_c_in_the_llm_stage_stops_the_run(tmp_path: Path) -> None:
    cases = write(tmp_path / "cases.jsonl", [
        {"id": "c1", "question": "Which ward had most admissions?", "golden": {"kind": "criteria"},
         "rubric": ["REQUIRED: names Cardiology"]},
    ])
    attempts = write(tmp_path / "attempts.jsonl", [{"id": "c1", "text": "Cardiology."}])
    store = tmp_path / "s.db"
    with FakeOpenAI(default=lambda req: Reply(delay=60)) as srv:
        proc = subprocess.Popen(
            goldeval("judge", cases, attempts, "--llm", "judge-model", "--base-url", srv.base_url, "--llm-timeout", "120",
                     "--store", store, "-q"),
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
            env={**__import__("os").environ, "OPENAI_API_KEY": "test"},
        )
        code, took, err = stop_when(proc, lambda: srv.calls >= 1, signal.SIGINT)
    assert code == 130, err
    assert took < 10, f"took {took:.1f} s to stop (the call in flight would take 60 s)"
    assert run_status(store) == ["interrupted"]
    assert recorded(store).get("c1", (None, None))[1] in (None, "needs_human"), "an LLM verdict was recorded for the case in flight"


def test_ctrl_c_in_replay_exits_130(tmp_path: Path) -> None:
    db = _sqlite_db(tmp_path / "d.sqlite")
    cases = write(tmp_path / "cases.jsonl", [
        {"id": "slow", "question": "How many?", "golden": {"kind": "value", "columns": ["n"], "rows": [[5]]}},
    ])
    reg = write(tmp_path / "reg.jsonl", [
        {"run_id": "r1", "id": "slow", "verdict": "no_match", "reviewer": "ann", "answer": {"id": "slow", "final_query": SLOW}},
    ])
    proc = subprocess.Popen(goldeval("replay", reg, "--cases", cases, "--db", db), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    started = time.monotonic()
    code, took, err = stop_when(proc, lambda: time.monotonic() - started > 3, signal.SIGINT)
    assert code == 130, err
    assert took < 10
