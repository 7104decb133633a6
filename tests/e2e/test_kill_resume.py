"""Kill a scoring process half-way, resume it, and check the resumed run equals an uninterrupted one."""

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
import zstandard
from held_runs import committed, held_open, positions, state

from goldeval.runs.blocks import block_rows

pytestmark = pytest.mark.slow

N_ROWS = 80_000


def goldeval(*args: str) -> list[str]:
    return [sys.executable, "-c", "from goldeval.cli import main; main()", *[str(a) for a in args]]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    """80,000 short free-text rows (deterministic): big enough that scoring takes a few seconds."""
    path = tmp_path_factory.mktemp("corpus") / "corpus.jsonl"
    rng = random.Random(20261129)
    vocab = [f"w{i}" for i in range(800)] + ["138/86", "well-controlled", "7.1", "pt's"]
    with path.open("w") as fh:
        for i in range(N_ROWS):
            ref = rng.choices(vocab, k=40)
            pred = [w if rng.random() < 0.7 else rng.choice(vocab) for w in ref]
            fh.write(json.dumps({"id": f"r{i:06d}", "prediction": " ".join(pred), "reference": " ".join(ref)}) + "\n")
    return path






def start_and_stop(corpus: Path, db: Path, sig: int, *, at_least: int = 8_000) -> subprocess.CompletedProcess | int:
    """Start `goldeval score` recording into *db*, stop it half-way with *sig* once *at_least* cases are committed.

    "Half-way" is made certain, not hoped for: under load the writer process commits well behind the scorer, and
    a scorer that had read its whole input by the time the count was reached was signalled while finishing (the
    run then came out finished, or killed with every case committed). So the scorer is held (SIGSTOP) once it is
    half-way through the file or the count is reached; while it is held it reads no further and its writer goes
    on committing; the signal goes once the count is reached, with the scorer's read offset (/proc/PID/fdinfo)
    still short of the end of the file. Afterwards the test waits until no process has the store open: the writer
    process of a killed scorer commits what it had received, then ends (this was a 0.5 s quiet period)."""
    if not Path("/proc/self/fdinfo").is_dir():
        pytest.skip("this test sees where the scorer reads and who has the store open through /proc (Linux)")
    size = corpus.stat().st_size
    proc = subprocess.Popen(goldeval("score", corpus, "--workers", "1", "--store", db, "-q"), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 300

    def waiting(what: str) -> None:
        if proc.poll() is not None:
            pytest.fail(f"the scorer finished (exit {proc.returncode}) before it could be stopped: {proc.stderr.read().decode()[-500:]}")
        if time.monotonic() > deadline:
            proc.kill()
            pytest.fail(f"the scorer never {what} within 300 s")
        time.sleep(0.01)

    # the prepass reads the whole file before any case is recorded: look at the offset once cases are committed
    while not ((n := committed(db)) >= at_least or (n >= 1 and min(positions(proc.pid, corpus), default=0) >= size // 2)):
        waiting("committed a case")
    os.kill(proc.pid, signal.SIGSTOP)
    while state(proc.pid) != "T":
        waiting("stopped on SIGSTOP")
    unread = size - min(positions(proc.pid, corpus), default=size)
    if unread <= 0:
        os.kill(proc.pid, signal.SIGCONT)
        pytest.fail("the scorer had read its whole input before it could be held half-way")
    while committed(db) < at_least:  # the scorer is held; its writer process commits what it was sent
        waiting(f"committed {at_least} cases")
    proc.send_signal(sig)  # SIGKILL ends a stopped process at once; SIGTERM is delivered when it continues
    os.kill(proc.pid, signal.SIGCONT)
    proc.wait(timeout=120)
    while held_open(db):
        if time.monotonic() > deadline:
            pytest.fail(f"processes {held_open(db)} still have the store open 300 s after the start")
        time.sleep(0.05)
    return proc.returncode


def run_key_of(db: Path) -> str:
    con = sqlite3.connect(db)
    try:
        return con.execute("SELECT run_key FROM runs").fetchone()[0]
    finally:
        con.close()


def stored(db: Path) -> tuple[list[tuple], list[dict]]:
    con = sqlite3.connect(db)
    try:
        runs = con.execute("SELECT id, status FROM runs").fetchall()
        # the cases rows and the blocks' records, by seq: a block of JSON lines (format 1) is zstd frames of
        # newline-separated records from seq0; a coded one (format 3, goldeval score's records) is rebuilt by the
        # store's block reader
        by_seq = list(con.execute("SELECT seq, data FROM cases"))
        for seq0, n, blob, ids, fmt in con.execute("SELECT seq0, n, data, ids, format FROM case_blocks"):
            if fmt == 1:
                by_seq += enumerate(zstandard.ZstdDecompressor().decompress(blob).decode().split("\n"), seq0)
            else:
                by_seq += [(row[1], row[7]) for row in block_rows([(seq0, n, blob, ids, fmt)], None)]
        cases = [json.loads(data) for _, data in sorted(by_seq)]
        assert len({seq for seq, _ in by_seq}) == len(by_seq)  # no seq twice
        return runs, cases
    finally:
        con.close()


def test_killed_run_resumes_to_the_same_result(corpus, tmp_path):
    db = tmp_path / "killed.db"
    code = start_and_stop(corpus, db, signal.SIGKILL)
    assert code == -signal.SIGKILL
    runs, cases = stored(db)
    assert len(runs) == 1 and runs[0][1] == "running"  # killed outright: it never marked itself
    done = len(cases)
    assert 0 < done < N_ROWS, "killed half-way"
    # a large input is not hashed before the scoring: the run's key is set when it finishes; until then the
    # next identical invocation finds it by the input's path, size and modification time
    assert run_key_of(db).startswith("pending:")
    listed = subprocess.run(goldeval("runs", "list", "--store", db, "--json"), capture_output=True, text=True, timeout=60)
    assert json.loads(listed.stdout)[0]["status"] == "interrupted"  # stored 'running', but its process is gone

    # Run the same command again: the unfinished run of the same inputs is resumed by default.
    resumed = subprocess.run(goldeval("score", corpus, "--workers", "1", "--store", db, "--out", tmp_path / "resumed.json"),
                             capture_output=True, text=True, timeout=300)
    assert resumed.returncode == 0, resumed.stderr
    assert f"run {runs[0][0]} resumed ({done} case(s) reused from the store)" in resumed.stderr

    full = subprocess.run(goldeval("score", corpus, "--workers", "1", "--store", tmp_path / "full.db", "--out", tmp_path / "full.json"),
                          capture_output=True, text=True, timeout=300)
    assert full.returncode == 0, full.stderr

    a = json.loads((tmp_path / "resumed.json").read_text())
    b = json.loads((tmp_path / "full.json").read_text())
    assert a["run"]["id"] == runs[0][0]  # the resumed file names the run it resumed (issue 12)
    for doc in (a, b):
        doc["aggregate"].pop("elapsed_sec")
        doc.pop("run")  # each names its own run and store
    assert a == b  # the resumed results equal an uninterrupted run's

    runs_after, cases_after = stored(db)
    assert runs_after == [(runs[0][0], "finished")]  # the same run, finished; no second run
    assert run_key_of(db) == run_key_of(tmp_path / "full.db")  # the same inputs and options: the same key
    _, cases_full = stored(tmp_path / "full.db")
    assert len(cases_after) == N_ROWS  # no duplicate, none missing
    assert sorted(cases_after, key=lambda c: c["id"]) == sorted(cases_full, key=lambda c: c["id"])
    assert cases_after[:done] == cases[:done]  # what was committed before the kill was kept, not redone


def test_an_interrupted_large_run_resumes_by_id_too(corpus, tmp_path):
    db = tmp_path / "term.db"
    start_and_stop(corpus, db, signal.SIGTERM)
    (run_id, status), = stored(db)[0]
    assert status == "interrupted" and run_key_of(db).startswith("pending:")
    other = subprocess.run(goldeval("score", corpus, "--workers", "1", "--store", db, "--resume", run_id, "--tokenizer", "unicode", "-q"),
                           capture_output=True, text=True, timeout=120)
    assert other.returncode == 2 and "different" in other.stderr  # other options: refused, nothing changed
    again = subprocess.run(goldeval("score", corpus, "--workers", "1", "--store", db, "--resume", run_id),
                           capture_output=True, text=True, timeout=300)
    assert again.returncode == 0, again.stderr
    assert f"run {run_id} resumed" in again.stderr
    runs, cases = stored(db)
    assert runs == [(run_id, "finished")] and len(cases) == N_ROWS


def test_terminated_run_commits_its_last_batch_and_is_marked_interrupted(corpus, tmp_path):
    db = tmp_path / "term.db"
    code = start_and_stop(corpus, db, signal.SIGTERM)
    assert code != 0
    runs, cases = stored(db)
    assert runs[0][1] == "interrupted"
    ids = [c["id"] for c in cases]
    # everything recorded before the signal was committed: the cases are a gap-free prefix of the file
    assert ids == [f"r{i:06d}" for i in range(len(ids))]
    listed = subprocess.run(goldeval("runs", "show", runs[0][0], "--store", db), capture_output=True, text=True, timeout=60)
    assert "did not finish (interrupted)" in listed.stdout
