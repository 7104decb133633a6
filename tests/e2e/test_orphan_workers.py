"""Issue 10 item 9: a `kill -9` of `goldeval score --workers 2` leaves no process behind (pool workers, forkserver,
resource tracker, the store's writer process), and the run it was recording can still be resumed.

On the main of 2026-12-01 the two pool workers waited for work for ever (each holds the write end of its own task
queue, so it never sees the end of it), they kept the forkserver alive (every child of the forkserver holds its
"alive" pipe), and those kept the resource tracker alive: 4 of 4 such processes were still there 15 s after the kill.
"""

from __future__ import annotations

import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc to see the worker processes"),
]

N_ROWS = 150_000


def goldeval(*args: object) -> list[str]:
    return [sys.executable, "-c", "from goldeval.cli import main; main()", *[str(a) for a in args]]


def _stat(pid: int) -> list[bytes] | None:
    """Fields of /proc/PID/stat after the command name (state, ppid, pgrp, session, ...), None when gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            raw = fh.read()
    except OSError:
        return None
    return raw[raw.rindex(b")") + 2:].split()


def _cmdline(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            return fh.read().replace(b"\0", b" ").decode(errors="replace")[:160]
    except OSError:
        return "?"


def _processes() -> dict[int, list[bytes]]:
    out = {}
    for name in os.listdir("/proc"):
        if name.isdigit() and (st := _stat(int(name))) is not None:
            out[int(name)] = st
    return out


def descendants(root: int) -> set[int]:
    """Every process below *root* (children, their children, ...) and every process of its session."""
    procs = _processes()
    found = {pid for pid, st in procs.items() if int(st[3]) == root and pid != root}
    frontier = {root}
    while frontier:
        frontier = {pid for pid, st in procs.items() if int(st[1]) in frontier} - found
        found |= frontier
    return found


def alive(pid: int) -> bool:
    st = _stat(pid)
    return st is not None and st[0] not in (b"Z", b"X")  # a zombie has ended; only its parent's wait is missing


def committed(db: Path) -> int:
    if not db.exists():
        return 0
    con = sqlite3.connect(db, timeout=5)
    try:
        # (rows, and the cases recorded in blocks)
        return con.execute("SELECT (SELECT count(*) FROM cases) + (SELECT coalesce(sum(n), 0) FROM case_blocks)").fetchone()[0]
    except sqlite3.OperationalError:
        return 0
    finally:
        con.close()


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    """150,000 rows (about 15 MB, so the store records them through its writer process) whose F1 is known by hand.

    Every reference is 8 distinct words from one vocabulary. Rows 0, 3, 6, ... predict the reference itself: P = R =
    F1 = 1. The other rows predict its first 4 words and 4 words from a second, disjoint vocabulary: overlap 4, so
    P = 4/8, R = 4/8, F1 = 0.5. Mean F1 = (50,000 * 1 + 100,000 * 0.5) / 150,000 = 2/3.
    """
    path = tmp_path_factory.mktemp("orphans") / "corpus.jsonl"
    rng = random.Random(109)
    words = [f"r{i}" for i in range(3000)]
    other = [f"x{i}" for i in range(3000)]
    with path.open("w") as fh:
        for i in range(N_ROWS):
            ref = rng.sample(words, 8)
            pred = ref if i % 3 == 0 else ref[:4] + rng.sample(other, 4)
            fh.write(json.dumps({"id": f"c{i:06d}", "prediction": " ".join(pred), "reference": " ".join(ref)}) + "\n")
    return path


def test_kill_9_of_score_with_workers_leaves_no_process_and_the_run_resumes(corpus: Path, tmp_path: Path) -> None:
    db = tmp_path / "store.db"
    err = (tmp_path / "stderr.txt").open("wb")
    # A session of its own: every process the scorer starts (forkserver, resource tracker, workers, writer) is in it.
    # The unicode tokenizer: token F1's compiled line kernel (openscribe) scores in threads, with no pool to leave
    # behind; every other scorer still goes to the pool of processes (the tokens here are the same under both).
    proc = subprocess.Popen(goldeval("score", corpus, "--workers", "2", "--tokenizer", "unicode", "--store", db, "-q"),
                            stdout=subprocess.DEVNULL, stderr=err, start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        seen: set[int] = set()
        # In flight: the pool's two workers and the forkserver exist, and cases are being committed.
        while len(seen) < 3 or committed(db) < 2_000:
            if proc.poll() is not None:
                pytest.fail(f"the scorer ended (exit {proc.returncode}) before it could be killed: "
                            f"{(tmp_path / 'stderr.txt').read_text()[-800:]}")
            if time.monotonic() > deadline:
                pytest.fail(f"the pool did not start within 120 s (processes below the scorer: {sorted(seen)})")
            seen |= descendants(proc.pid)
            time.sleep(0.02)
        seen |= descendants(proc.pid)
        assert proc.poll() is None, "the scorer finished before the kill: the corpus is too small for this machine"
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        # Bounded wait (not a timing assertion): a stray process is one still alive after 60 s.
        wait_until = time.monotonic() + 60
        while (left := {p for p in seen | descendants(proc.pid) if alive(p)}) and time.monotonic() < wait_until:
            time.sleep(0.1)
        names = {p: _cmdline(p) for p in left}
        for p in left:  # never leave a stray process behind this test either
            try:
                os.kill(p, signal.SIGKILL)
            except OSError:
                pass
        assert not left, f"{len(left)} of {len(seen)} processes outlived the killed scorer by 60 s: {names}"
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        err.close()

    # The run is left 'running' by a dead process: the same command resumes it and finishes it, with the mean
    # worked out above.
    con = sqlite3.connect(db)
    try:
        ((run_id, status, n_before),) = con.execute(
            "SELECT r.id, r.status, (SELECT count(*) FROM cases c WHERE c.run_id = r.id) "
            "+ (SELECT coalesce(sum(n), 0) FROM case_blocks b WHERE b.run_id = r.id) FROM runs r").fetchall()
    finally:
        con.close()
    # (0 < n_before: killed in flight. Usually n_before < N_ROWS; under load the scorer may have committed every case
    # and still be finishing when the kill lands, a run still 'running' that resumes the same way: seen once.)
    assert status in ("running", "interrupted") and 0 < n_before <= N_ROWS
    again = subprocess.run(goldeval("score", corpus, "--workers", "2", "--tokenizer", "unicode", "--store", db, "--out", "-"),
                           capture_output=True, timeout=600)
    assert again.returncode == 0, again.stderr.decode()[-800:]
    results = json.loads(again.stdout)
    assert results["run"]["id"] == run_id
    assert f"run {run_id} resumed ({n_before} case(s) reused from the store)" in again.stderr.decode()
    assert results["aggregate"]["n"] == N_ROWS and results["aggregate"]["n_failed"] == 0
    assert results["aggregate"]["whole_note_f1_mean"] == pytest.approx(2 / 3, rel=1e-12)
