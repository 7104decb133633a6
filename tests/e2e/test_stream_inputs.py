"""Issue 10 item 11: `-` as an input reads stdin (recorded with the sha256 of what was read; such a run resumes only
by --resume ID), and /dev/null and FIFOs are read as the streams they are, never "no such file".

On the main of 2026-12-01 every command below answered "-: no such file" / "/dev/null: no such file" / "f: no such
file" with exit 2."""

from __future__ import annotations

import hashlib
import json
import os
import pty
import random
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SQL = ROOT / "examples" / "sql"

# Two rows whose F1 is known by hand: "a b" against "a b" is 1; "a b c d" against "a b" has overlap 2, P = 2/4,
# R = 2/2, F1 = 2 * 0.5 * 1 / 1.5 = 2/3. Mean F1 = (1 + 2/3) / 2 = 5/6.
ROWS = (b'{"id": "r1", "prediction": "a b", "reference": "a b"}\n'
        b'{"id": "r2", "prediction": "a b c d", "reference": "a b"}\n')


def goldeval(*args: object) -> list[str]:
    return [sys.executable, "-c", "from goldeval.cli import main; main()", *[str(a) for a in args]]


def run(*args: object, stdin: bytes | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(goldeval(*args), input=stdin, capture_output=True, timeout=300, cwd=cwd,
                          stdin=None if stdin is not None else subprocess.DEVNULL)


def runs_of(db: Path) -> list[tuple[str, str, dict]]:
    con = sqlite3.connect(db)
    try:
        return [(i, s, json.loads(inp)) for i, s, inp in con.execute("SELECT id, status, inputs FROM runs ORDER BY created_at, id")]
    finally:
        con.close()


def test_score_dash_reads_stdin_and_records_the_sha256_of_what_was_read(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    done = run("score", "-", "--store", db, "--out", "-", stdin=ROWS)
    assert done.returncode == 0, done.stderr.decode()
    results = json.loads(done.stdout)
    assert results["aggregate"]["n"] == 2
    assert results["aggregate"]["whole_note_f1_mean"] == pytest.approx(5 / 6, rel=1e-12)
    digest = hashlib.sha256(ROWS).hexdigest()
    assert results["input"]["path"] == "-" and results["input"]["sha256"] == digest
    ((run_id, status, inputs),) = runs_of(db)
    assert status == "finished" and results["run"]["id"] == run_id
    assert inputs == {"predictions": {"path": "-", "sha256": digest, "stream": "stdin"}}
    # the stored results name stdin too, never the temporary copy
    shown = run("runs", "show", run_id, "--store", db, "--out", "-")
    assert shown.returncode == 0 and json.loads(shown.stdout)["input"]["path"] == "-"
    assert b"goldeval-stream-" not in shown.stdout + done.stdout + done.stderr


def test_a_bad_row_read_from_stdin_is_named_by_its_line(tmp_path: Path) -> None:
    done = run("score", "-", "--no-store", "--out", "-", stdin=ROWS + b"{not json\n")
    assert done.returncode == 0, done.stderr.decode()
    results = json.loads(done.stdout)
    assert results["aggregate"]["n_failed"] == 1
    assert results["failures"][0]["line"] == 3 and results["failures"][0]["error"].startswith("stdin:3: not valid JSON")


def test_labels_read_csv_from_stdin(tmp_path: Path) -> None:
    # gold/pred by hand: r1 tp, r2 fp, r3 fn, r4 tn -> precision 1/2, recall 1/2
    csv_rows = b"id,gold,pred\nr1,escalate,escalate\nr2,approve,escalate\nr3,escalate,approve\nr4,approve,approve\n"
    done = run("labels", "-", "--positive", "escalate", "--no-store", "--out", "-", stdin=csv_rows)
    assert done.returncode == 0, done.stderr.decode()
    results = json.loads(done.stdout)
    agg = results["aggregate"]
    assert (agg["tp"], agg["fp"], agg["fn"], agg["tn"]) == (1, 1, 1, 1)
    assert agg["precision"] == 0.5 and agg["recall"] == 0.5
    assert results["dataset"] == {"path": "-", "sha256": hashlib.sha256(csv_rows).hexdigest()}


def test_judge_reads_its_cases_from_stdin(tmp_path: Path) -> None:
    from_file = run("judge", SQL / "cases.jsonl", SQL / "arm_a.jsonl", "--db", SQL / "clinic.sqlite", "--no-store", "--out", "-")
    piped = run("judge", "-", SQL / "arm_a.jsonl", "--db", SQL / "clinic.sqlite", "--no-store", "--out", "-",
                stdin=(SQL / "cases.jsonl").read_bytes())
    assert from_file.returncode == piped.returncode == 0, piped.stderr.decode()
    a, b = json.loads(from_file.stdout), json.loads(piped.stdout)
    assert b["inputs"]["cases"] == "-" and b["inputs"]["cases_sha256"] == a["inputs"]["cases_sha256"]
    assert a["aggregate"]["pass_rate"] == b["aggregate"]["pass_rate"] and a["aggregate"]["match"] == b["aggregate"]["match"] == 19


def test_stdin_can_be_read_once(tmp_path: Path) -> None:
    done = run("judge", "-", "-", "--no-store", stdin=(SQL / "cases.jsonl").read_bytes())
    assert done.returncode == 2
    assert "CASES and ATTEMPTS are both '-' (stdin), which can be read once" in done.stderr.decode()


def test_stdin_that_is_a_terminal_is_refused_rather_than_waited_on() -> None:
    main, sub = pty.openpty()
    try:
        done = subprocess.run(goldeval("score", "-", "--no-store"), stdin=sub, capture_output=True, timeout=120)
    finally:
        os.close(main)
        os.close(sub)
    assert done.returncode == 2
    assert "stdin is a terminal, so there is nothing to read" in done.stderr.decode()


@pytest.mark.parametrize("command", [
    ["score", "/dev/null"],
    ["labels", "/dev/null", "--positive", "x"],
    ["judge", "/dev/null", str(SQL / "arm_a.jsonl")],
    ["score", "-"],
])
def test_an_empty_stream_is_empty_not_missing(command: list[str], tmp_path: Path) -> None:
    done = run(*command, "--store", tmp_path / "s.db", stdin=b"")
    err = done.stderr.decode()
    assert done.returncode == 2, err
    assert "no such file" not in err and "nothing was read" in err, err
    assert not (tmp_path / "s.db").exists() or runs_of(tmp_path / "s.db") == []  # no junk run


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
@pytest.mark.parametrize("name,command,data", [
    ("preds.jsonl", ["score"], ROWS),
    ("labels.csv", ["labels", "--positive", "escalate"], b"id,gold,pred\nr1,escalate,escalate\nr2,approve,escalate\n"),
    # no ending, as bash's <(...) (/dev/fd/63): sniffed as stdin is (on the main of 2026-12-01 the CSV was read as
    # JSONL: "63: none of the 2 rows could be scored ... not valid JSON")
    ("63", ["labels", "--positive", "escalate"], b"id,gold,pred\nr1,escalate,escalate\nr2,approve,escalate\n"),
    ("64", ["score"], ROWS),
])
def test_a_fifo_is_read_as_a_stream(name: str, command: list[str], data: bytes, tmp_path: Path) -> None:
    fifo = tmp_path / name
    os.mkfifo(fifo)

    def feed() -> None:
        with open(fifo, "wb") as fh:  # blocks until goldeval opens it for reading
            fh.write(data)

    writer = threading.Thread(target=feed, daemon=True)
    writer.start()
    done = run(command[0], fifo, *command[1:], "--store", tmp_path / "s.db", "--out", "-")
    writer.join(timeout=60)
    assert done.returncode == 0, done.stderr.decode()
    results = json.loads(done.stdout)
    recorded = results.get("input") or results.get("dataset")
    assert recorded["path"] == str(fifo) and recorded["sha256"] == hashlib.sha256(data).hexdigest()
    if command[0] == "score":
        assert results["aggregate"]["whole_note_f1_mean"] == pytest.approx(5 / 6, rel=1e-12)
    else:  # read as CSV, by the FIFO's name or its first byte: r1 tp, r2 fp
        assert (results["aggregate"]["tp"], results["aggregate"]["fp"]) == (1, 1)
    ((_, _, inputs),) = runs_of(tmp_path / "s.db")
    assert next(iter(inputs.values()))["stream"] == "fifo"


@pytest.mark.slow
def test_a_run_read_from_stdin_resumes_only_by_resume_id(tmp_path: Path) -> None:
    rng = random.Random(1011)
    vocab = [f"w{i}" for i in range(800)]
    lines = []
    for i in range(60_000):
        ref = rng.choices(vocab, k=40)
        pred = [w if rng.random() < 0.7 else rng.choice(vocab) for w in ref]
        lines.append(json.dumps({"id": f"r{i:06d}", "prediction": " ".join(pred), "reference": " ".join(ref)}))
    data = ("\n".join(lines) + "\n").encode()
    db = tmp_path / "s.db"
    proc = subprocess.Popen(goldeval("score", "-", "--workers", "1", "--store", db, "-q"), stdin=subprocess.PIPE,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    proc.stdin.write(data)
    proc.stdin.close()
    deadline = time.monotonic() + 120
    while True:  # interrupt once some cases are committed
        n = 0
        if db.exists():
            con = sqlite3.connect(db, timeout=5)
            try:
                n = con.execute("SELECT (SELECT count(*) FROM cases) + (SELECT coalesce(sum(n), 0) FROM case_blocks)").fetchone()[0]
            except sqlite3.OperationalError:
                pass
            finally:
                con.close()
        if n >= 5_000:
            break
        assert proc.poll() is None, f"the run ended before it could be interrupted: {proc.stderr.read().decode()[-500:]}"
        assert time.monotonic() < deadline, "nothing was committed within 120 s"
        time.sleep(0.01)
    proc.send_signal(signal.SIGINT)
    assert proc.wait(timeout=120) == 130
    err = proc.stderr.read().decode()
    ((run_id, status, inputs),) = runs_of(db)
    assert status == "interrupted" and inputs["predictions"]["sha256"] == hashlib.sha256(data).hexdigest()
    assert f"add --resume {run_id} and feed it the same bytes" in err, err

    # The same command again is a new run: the interrupted one is left for --resume.
    again = run("score", "-", "--workers", "1", "--store", db, "--out", "-", stdin=data)
    assert again.returncode == 0, again.stderr.decode()[-500:]
    assert json.loads(again.stdout)["run"]["id"] != run_id
    expected = json.loads(again.stdout)["aggregate"]["whole_note_f1_mean"]
    assert [(i, s) for i, s, _ in runs_of(db)][0] == (run_id, "interrupted")

    # Other bytes are refused; the same bytes resume it, reusing what was committed, to the same mean.
    other = run("score", "-", "--store", db, "--resume", run_id, stdin=data[: len(data) // 2])
    assert other.returncode == 2 and "was made from different" in other.stderr.decode()
    resumed = run("score", "-", "--workers", "1", "--store", db, "--resume", run_id, "--out", "-", stdin=data)
    assert resumed.returncode == 0, resumed.stderr.decode()[-500:]
    assert f"run {run_id} resumed (" in resumed.stderr.decode()
    res = json.loads(resumed.stdout)
    assert res["run"]["id"] == run_id and res["aggregate"]["n"] == 60_000
    assert res["aggregate"]["whole_note_f1_mean"] == expected
