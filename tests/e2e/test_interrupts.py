"""Issue 10 item 2: Ctrl-C (SIGINT) or SIGTERM stops a run with exit 130, leaves it interrupted and resumable,
and records no verdict for the case in flight — during an SQLite query (where the KeyboardInterrupt raised in
the progress handler used to come back as OperationalError "interrupted": the case was recorded unscored and the
run finished with exit 0), during a DuckDB query, in the LLM stage, and in `replay`.

Each test starts the real command in a subprocess, waits until it is inside the slow step, sends the signal and
checks the exit code and the store. "Stopped by the signal, not by the end of the step" is also a condition, never
a time: the step runs far longer (a query under a 600 s limit, an LLM call answered after 600 s) than the command
is given to stop (120 s, which under load is mostly the interpreter's own exit: importing openai alone costs about
1 s of finalization on an idle machine), and a query stopped by its time limit would have recorded the slow case,
an LLM call waited for would have been answered. "Inside the slow step" is a condition the kernel reports, never a time: the slow query reads a table, so while it
runs the command holds a read lock on that database file (SQLite holds its SHARED lock until the statement ends,
DuckDB its file lock while the database is open), and the slow case's database is read by nothing else; the LLM
stage is entered when the fake endpoint has received the call. (A fixed wait after the run row appeared let the
signal land before the fast case was judged, under load: the fast case was then missing from the store.)"""

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

#: A query that counts to 10^11 (hours): it only ends when stopped. It starts from table t (x = 1), so that SQLite
#: holds a read lock on the database file for as long as it runs (see holds_lock).
SLOW = "WITH RECURSIVE c(i) AS (SELECT x FROM t UNION ALL SELECT i + 1 FROM c WHERE i < 100000000000) SELECT count(*) AS n FROM c"


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


#: How long a signalled command may take to end: far less than its slow step (600 s), far more than an exit under load.
STOP_WITHIN_S = 120


def children(pid: int) -> list[int]:
    """The child processes of *pid* (Linux ``/proc/PID/task/*/children``), e.g. its DuckDB worker."""
    out = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            out += [int(c) for c in (task / "children").read_text().split()]
        except OSError:  # the thread ended meanwhile
            pass
    return out


def holds_lock(pid: int, path: Path) -> bool:
    """Whether process *pid*, or one of its children (a DuckDB file is read by a worker process), holds a POSIX lock
    on the file *path* (Linux ``/proc/locks``: one line per lock, ``N: [->] POSIX ADVISORY READ|WRITE PID
    MAJ:MIN:INODE START END``; ``->`` marks a waiter, not a holder)."""
    pids = {str(pid), *map(str, children(pid))}
    inode = str(path.stat().st_ino)
    with open("/proc/locks", encoding="ascii") as fh:
        for line in fh:
            f = line.split()
            if len(f) >= 6 and f[1] != "->" and f[4] in pids and f[5].rsplit(":", 1)[-1] == inode:
                return True
    return False


def needs_proc_locks() -> None:
    if not Path("/proc/locks").exists():
        pytest.skip("these tests see that the command is inside its query by the kernel's lock table (/proc/locks, Linux)")


def stop_when(proc: subprocess.Popen, ready, sig: int, *, within: float = 120) -> tuple[int, float, str]:
    """Wait until ready() (the command is inside its slow step), send *sig*, return (exit code, seconds to stop, stderr)."""
    deadline = time.monotonic() + within
    while not ready():
        if proc.poll() is not None:
            pytest.fail(f"the command ended (exit {proc.returncode}) before it was stopped: {proc.stderr.read().decode()[-800:]}")
        if time.monotonic() > deadline:
            proc.kill()
            pytest.fail(f"the command never reached its slow step within {within:.0f} s")
        time.sleep(0.01)
    t0 = time.monotonic()
    proc.send_signal(sig)
    try:
        proc.wait(timeout=STOP_WITHIN_S)
    except subprocess.TimeoutExpired:
        proc.kill()
        pytest.fail(f"signal {sig} did not stop the command within {STOP_WITHIN_S} s")
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
    # Each case names its own database (--db-dir): the slow one's file is read by the slow query alone, so a lock
    # on it says the fast case is judged and the slow case is at its query.
    cases = write(tmp / "cases.jsonl", [
        {"id": "fast", "db": "fast", "question": "How many rows?", "golden": {"kind": "value", "columns": ["n"], "rows": [[1]]}},
        {"id": "slow", "db": "slow", "question": "How many?", "golden": {"kind": "value", "columns": ["n"], "rows": [[5]]}},
    ])
    attempts = write(tmp / "attempts.jsonl", [
        {"id": "fast", "final_query": "SELECT count(*) AS n FROM t"},
        {"id": "slow", "final_query": SLOW},
    ])
    return cases, attempts


@pytest.mark.parametrize("engine,sig", [("sqlite", signal.SIGINT), ("sqlite", signal.SIGTERM), ("duckdb", signal.SIGINT)])
def test_a_signal_during_a_query_stops_the_judge_run(tmp_path: Path, engine: str, sig: int) -> None:
    needs_proc_locks()
    dbs = tmp_path / "dbs"
    dbs.mkdir()
    make = _sqlite_db if engine == "sqlite" else _duckdb_db
    make(dbs / f"fast.{engine}")
    slow_db = make(dbs / f"slow.{engine}")
    cases, attempts = _judge_files(tmp_path)
    store = tmp_path / "s.db"
    proc = subprocess.Popen(goldeval("judge", cases, attempts, "--db-dir", dbs, "--timeout", "600", "--store", store, "-q"),
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    # The fast case is judged first; the slow case's database is opened when its turn comes (DuckDB locks the file
    # from then on, and its query starts right after) and SQLite locks it while the slow query runs.
    workers: list[int] = []
    code, took, err = stop_when(proc, lambda: holds_lock(proc.pid, slow_db) and not workers.extend(children(proc.pid)), sig)
    # SIGTERM has its own exit code and words (it exited 130 as Ctrl-C did)
    assert code == (143 if sig == signal.SIGTERM else 130), err
    # the worker of the query in flight is killed; another one (the fast case's) ends with the pipe from the run
    deadline = time.monotonic() + 5
    while [w for w in workers if Path(f"/proc/{w}").exists()] and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not [w for w in workers if Path(f"/proc/{w}").exists()], "a worker process outlived the run"
    assert ("stopped by SIGTERM" if sig == signal.SIGTERM else "interrupted") in err
    assert run_status(store) == ["interrupted"]
    cases_now = recorded(store)
    # (had the query run to its 600 s limit instead, the slow case would be recorded unscored, and exit 0)
    assert "slow" not in cases_now, f"the case in flight was recorded after {took:.1f} s: {cases_now['slow']}"
    assert cases_now["fast"] == ("scored", "match")


def test_ctrl_c_in_the_llm_stage_stops_the_run(tmp_path: Path) -> None:
    cases = write(tmp_path / "cases.jsonl", [
        {"id": "c1", "question": "Which ward had most admissions?", "golden": {"kind": "criteria"},
         "rubric": ["REQUIRED: names Cardiology"]},
    ])
    attempts = write(tmp_path / "attempts.jsonl", [{"id": "c1", "text": "Cardiology."}])
    store = tmp_path / "s.db"
    with FakeOpenAI(default=lambda req: Reply(delay=600)) as srv:
        proc = subprocess.Popen(
            goldeval("judge", cases, attempts, "--llm", "judge-model", "--base-url", srv.base_url, "--llm-timeout", "120",
                     "--store", store, "-q"),
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
            env={**__import__("os").environ, "OPENAI_API_KEY": "test"},
        )
        code, took, err = stop_when(proc, lambda: srv.calls >= 1, signal.SIGINT)
        # the call in flight was abandoned, not waited for: the server has not answered it yet
        assert srv.in_flight == 1, f"the command waited for the call in flight ({took:.1f} s)"
    assert code == 130, err
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
    needs_proc_locks()
    proc = subprocess.Popen(goldeval("replay", reg, "--cases", cases, "--db", db), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    # the slow query is the only reader of the database: SQLite holds its read lock while it runs
    code, took, err = stop_when(proc, lambda: holds_lock(proc.pid, db), signal.SIGINT)
    assert code == 130, err
    assert "interrupted" in err


# ---- the first moments of a command, and SIGTERM (issue 25 item 7)

def _early_outcome(proc: subprocess.Popen) -> tuple[int, list[str]]:
    try:
        proc.wait(timeout=STOP_WITHIN_S)
    except subprocess.TimeoutExpired:
        proc.kill()
        pytest.fail(f"the command did not end within {STOP_WITHIN_S} s of its signal")
    return proc.returncode, [line for line in proc.stderr.read().decode().splitlines() if line.strip()]


def _started(tmp: Path, *args, env=None) -> subprocess.Popen:
    """`goldeval ARGS` as its console script runs it; the line "R" on stderr says the interpreter is up and about to
    import goldeval (Python's own start-up, before goldeval's first statement, is not goldeval's to handle)."""
    code = "import sys; sys.stderr.write('R\\n'); sys.stderr.flush(); from goldeval.cli import main; sys.exit(main())"
    proc = subprocess.Popen([sys.executable, "-c", code, *[str(a) for a in args]], cwd=tmp, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    assert proc.stderr.readline() == b"R\n"
    return proc


def _before_goldeval_ran(code: int, lines: list[str]) -> bool:
    """Whether a Ctrl-C landed before goldeval's first statement could run (Python's start-up, the import system
    loading goldeval/__init__.py, up to its call of install_quiet_interrupts): Python's own traceback, whose
    frames are the -c line, the import system and that first part of goldeval/__init__.py alone."""
    import re

    import goldeval

    init = Path(goldeval.__file__)
    first = next((i for i, text in enumerate(init.read_text().splitlines(), 1) if text.startswith("install_quiet_interrupts()")), 0)
    frames = re.findall(r'File "([^"]+)", line (\d+)', "\n".join(lines))
    return (code == -signal.SIGINT and bool(lines) and lines[-1] == "KeyboardInterrupt"
            and all(f == "<string>" or f.startswith("<frozen") or f.endswith("goldeval/_startup.py")
                    or (f == str(init) and int(n) <= first) for f, n in frames))


def _env_without_home() -> dict[str, str]:
    import os

    return {k: v for k, v in os.environ.items() if k != "GOLDEVAL_HOME"}  # the store is ./.goldeval/goldeval.db


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_in_the_first_moments_exits_with_one_line(tmp_path: Path, sig: int) -> None:
    # While goldeval and click are imported, the command line parsed, the command's modules imported, the store
    # opened and the run started: every moment gives 130 (Ctrl-C) or 143 (SIGTERM) and one line, or the command
    # had finished (exit 0). Before: a traceback (exit 1 or death by the signal), or click's "Aborted!" (exit 1).
    rows = write(tmp_path / "p.jsonl", [{"id": f"r{i}", "prediction": "blood pressure fine", "reference": "blood pressure"}
                                         for i in range(200)])
    expected = 130 if sig == signal.SIGINT else 143
    seen = []
    for delay in (0.01, 0.02, 0.035, 0.05, 0.07, 0.1, 0.13, 0.17, 0.22, 0.3, 0.4, 0.55, 0.75, 1.0):
        proc = _started(tmp_path, "score", rows, "-q", env=_env_without_home())
        time.sleep(delay)
        proc.send_signal(sig)
        code, lines = _early_outcome(proc)
        seen.append((delay, code, lines))
        if sig == signal.SIGTERM and code == -signal.SIGTERM:
            # before the command started (goldeval.cli imported, click not yet running) SIGTERM keeps its default
            # action, which ends the process at once: the shell reports it as 143 too, and there is nothing to say
            assert lines == [], seen[-1]
            continue
        if _before_goldeval_ran(code, lines):
            continue  # the interpreter's own start-up: no code of goldeval had run yet
        assert code in (expected, 0), seen[-1]
        assert len(lines) == (1 if code else 0), seen[-1]
        if code:
            assert lines[0].startswith("goldeval: " + ("interrupted" if sig == signal.SIGINT else "stopped by SIGTERM")), seen[-1]
    assert any(code == expected for _, code, _ in seen), seen
    # whatever moment it was stopped at, the store it leaves works for the next command
    again = subprocess.run(goldeval("score", rows, "-q"), cwd=tmp_path, env=_env_without_home(), capture_output=True,
                           text=True, timeout=300)
    assert again.returncode == 0, again.stderr


def test_ctrl_c_while_the_store_is_created_exits_130_and_the_store_still_works(tmp_path: Path) -> None:
    rows = write(tmp_path / "p.jsonl", [{"id": "a", "prediction": "x", "reference": "x"}])
    store = tmp_path / ".goldeval" / "goldeval.db"
    proc = _started(tmp_path, "score", rows, "-q", env=_env_without_home())
    deadline = time.monotonic() + 120
    while not store.exists() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.001)
    proc.send_signal(signal.SIGINT)  # the store file was just created: its tables are being made, or the run started
    code, lines = _early_outcome(proc)
    assert (code, len(lines)) in ((130, 1), (0, 0)), (code, lines)
    again = subprocess.run(goldeval("score", rows, "-q"), cwd=tmp_path, env=_env_without_home(), capture_output=True,
                           text=True, timeout=300)
    assert again.returncode == 0, again.stderr


def _cases_committed(store: Path) -> int:
    if not store.exists():
        return 0
    con = sqlite3.connect(store, timeout=5)
    try:
        # (rows, and the cases recorded in blocks)
        return con.execute("SELECT (SELECT count(*) FROM cases) + (SELECT coalesce(sum(n), 0) FROM case_blocks)").fetchone()[0]
    except sqlite3.OperationalError:
        return 0
    finally:
        con.close()


@pytest.mark.parametrize("to", ["process", "group"])
def test_sigterm_stops_a_run_as_ctrl_c_does_with_its_own_exit_code(tmp_path: Path, to: str) -> None:
    # A run large enough (over 8 MB) to be recorded by a writer process; SIGTERM to the command or to its whole
    # process group (what a CI runner or `kill -TERM -PGID` sends). Before: exit 130 with Ctrl-C's words, or, to
    # the group, the writer died and the run ended "writer process ended unexpectedly (BrokenPipeError)", exit 3.
    import os
    import random

    rng = random.Random(25)
    vocab = [f"w{i}" for i in range(500)]
    big = tmp_path / "big.jsonl"
    with big.open("w") as fh:
        for i in range(40_000):
            ref = rng.choices(vocab, k=40)
            fh.write(json.dumps({"id": f"r{i:06d}", "prediction": " ".join(ref[:30]), "reference": " ".join(ref)}) + "\n")
    assert big.stat().st_size > 8_000_000
    store = tmp_path / "s.db"
    cmd = goldeval("score", big, "--workers", "1", "--store", store, "-q")
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
    deadline = time.monotonic() + 300
    while _cases_committed(store) == 0:
        if proc.poll() is not None:
            pytest.fail(f"the run ended (exit {proc.returncode}) before it was stopped: {proc.stderr.read().decode()[-800:]}")
        if time.monotonic() > deadline:
            proc.kill()
            pytest.fail("no case was committed within 300 s")
        time.sleep(0.01)
    if to == "group":
        os.killpg(proc.pid, signal.SIGTERM)
    else:
        proc.send_signal(signal.SIGTERM)
    code, lines = _early_outcome(proc)
    if code == 0:
        pytest.skip("the run finished before SIGTERM reached it (a very fast machine)")
    assert code == 143, lines
    assert lines == ["goldeval: stopped by SIGTERM; a recorded run resumes when the same command is run again."], lines
    assert run_status(store) == ["interrupted"]
    again = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert again.returncode == 0, again.stderr
    assert run_status(store) == ["finished"] and _cases_committed(store) == 40_000
