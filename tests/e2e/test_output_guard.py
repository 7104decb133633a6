"""Issue 10 item 1: no output ever overwrites a file the command reads or writes, and outputs are written
atomically. Each test runs the command as a user would (CliRunner on the real examples, copied into tmp_path)
and checks the exit code and that the protected file's bytes are unchanged."""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

import pytest
from click.testing import CliRunner

from goldeval.cli import main

REPO = Path(__file__).resolve().parents[2]
SQL = REPO / "examples" / "sql"
DATA = REPO / "examples" / "data"


@pytest.fixture()
def ex(tmp_path: Path) -> Path:
    for name in ("cases.jsonl", "arm_a.jsonl", "clinic.sqlite", "dod.toml"):
        shutil.copy(SQL / name, tmp_path / name)
    shutil.copy(DATA / "openscribe_primock57_predictions.jsonl", tmp_path / "p.jsonl")
    return tmp_path


def _run(args: list[str]):
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


def _refused(result, path: Path, before: bytes) -> None:
    assert result.exit_code == 2, result.output
    assert "--out" in result.output and "overwrite" in result.output, result.output
    assert path.read_bytes() == before, "the protected file was changed"


@pytest.mark.parametrize("victim", ["clinic.sqlite", "cases.jsonl", "arm_a.jsonl", "dod.toml"])
def test_judge_out_onto_any_input_is_refused(ex: Path, victim: str) -> None:
    target = ex / victim
    before = target.read_bytes()
    r = _run(["judge", ex / "cases.jsonl", ex / "arm_a.jsonl", "--db", ex / "clinic.sqlite", "--gates", ex / "dod.toml",
              "--store", ex / "s.db", "--out", target])
    _refused(r, target, before)


def test_score_out_onto_its_input_and_onto_the_store(ex: Path) -> None:
    p = ex / "p.jsonl"
    before = p.read_bytes()
    _refused(_run(["score", p, "--no-store", "--out", p]), p, before)
    # the store: first record a run so the store exists and holds something
    assert _run(["score", p, "--store", ex / "s.db", "-q"]).exit_code == 0
    store_before = (ex / "s.db").read_bytes()
    _refused(_run(["score", p, "--store", ex / "s.db", "--out", ex / "s.db"]), ex / "s.db", store_before)


def test_store_not_yet_existing_is_protected_too(ex: Path) -> None:
    # --store s.db --out s.db where s.db does not exist yet: the results would be written over the new store
    r = _run(["score", ex / "p.jsonl", "--store", ex / "new.db", "--out", ex / "new.db"])
    assert r.exit_code == 2, r.output
    assert not (ex / "new.db").exists() or (ex / "new.db").read_bytes()[:16] == b"SQLite format 3\x00"


def test_runs_show_and_export_refuse_the_store(ex: Path) -> None:
    assert _run(["score", ex / "p.jsonl", "--store", ex / "s.db", "-q"]).exit_code == 0
    before = (ex / "s.db").read_bytes()
    _refused(_run(["runs", "show", "latest", "--store", ex / "s.db", "--out", ex / "s.db"]), ex / "s.db", before)
    _refused(_run(["runs", "export", "latest", "--store", ex / "s.db", "--out", ex / "s.db"]), ex / "s.db", before)
    _refused(_run(["compare", "latest", "latest", "--store", ex / "s.db", "--out", ex / "s.db"]), ex / "s.db", before)


def test_default_store_is_protected(ex: Path, monkeypatch) -> None:
    # no --store: the store is $GOLDEVAL_HOME/goldeval.db (the conftest sets GOLDEVAL_HOME per test)
    home = Path(os.environ["GOLDEVAL_HOME"])
    assert _run(["score", ex / "p.jsonl", "-q"]).exit_code == 0
    db = home / "goldeval.db"
    before = db.read_bytes()
    _refused(_run(["score", ex / "p.jsonl", "--out", db]), db, before)


def test_llm_judge_dry_run_out_onto_cases_is_refused(ex: Path) -> None:
    c = ex / "cases.jsonl"
    before = c.read_bytes()
    r = _run(["llm-judge", c, ex / "arm_a.jsonl", "--llm", "m", "--base-url", "http://127.0.0.1:9/v1", "--dry-run", "--out", c])
    _refused(r, c, before)


def test_symlink_and_hard_link_to_an_input_are_the_same_file(ex: Path) -> None:
    p = ex / "p.jsonl"
    before = p.read_bytes()
    (ex / "link.json").symlink_to(p)
    os.link(p, ex / "hard.json")
    _refused(_run(["score", p, "--no-store", "--out", ex / "link.json"]), p, before)
    _refused(_run(["score", p, "--no-store", "--out", ex / "hard.json"]), p, before)


def test_replay_and_review_refuse_their_inputs(ex: Path) -> None:
    reg = ex / "reg.jsonl"
    reg.write_text('{"run_id": "x", "id": "q01", "verdict": "match"}\n')
    before = reg.read_bytes()
    _refused(_run(["replay", reg, "--cases", ex / "cases.jsonl", "--out", reg]), reg, before)
    c_before = (ex / "cases.jsonl").read_bytes()
    _refused(_run(["replay", reg, "--cases", ex / "cases.jsonl", "--out", ex / "cases.jsonl"]), ex / "cases.jsonl", c_before)


def test_review_import_refuses_regressions_onto_its_input(ex: Path) -> None:
    assert _run(["judge", ex / "cases.jsonl", ex / "arm_a.jsonl", "--db", ex / "clinic.sqlite", "--store", ex / "s.db", "-q"]).exit_code == 0
    assert _run(["review", "export", "latest", "--store", ex / "s.db", "--out", ex / "review.jsonl"]).exit_code == 0
    before = (ex / "review.jsonl").read_bytes()
    r = _run(["review", "import", ex / "review.jsonl", "--store", ex / "s.db", "--regressions", ex / "review.jsonl"])
    assert r.exit_code == 2, r.output
    assert (ex / "review.jsonl").read_bytes() == before
    s_before = (ex / "s.db").read_bytes()
    r = _run(["review", "export", "latest", "--store", ex / "s.db", "--out", ex / "s.db"])
    _refused(r, ex / "s.db", s_before)


def test_results_replace_an_existing_file_atomically_keeping_its_mode(ex: Path) -> None:
    out = ex / "r.json"
    out.write_text("old")
    os.chmod(out, 0o640)
    r = _run(["score", ex / "p.jsonl", "--no-store", "-q", "--out", out])
    assert r.exit_code == 0, r.output
    assert out.read_text().startswith("{")
    assert stat.S_IMODE(out.stat().st_mode) == 0o640
    assert [p.name for p in ex.iterdir() if p.name.startswith(".r.json")] == []  # no temp file left behind


def test_dev_null_and_a_fifo_are_written_directly(ex: Path) -> None:
    r = _run(["score", ex / "p.jsonl", "--no-store", "-q", "--out", "/dev/null"])
    assert r.exit_code == 0, r.output
    assert Path("/dev/null").is_char_device()  # still a device, not replaced by a regular file
    fifo = ex / "fifo"
    os.mkfifo(fifo)
    import threading

    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(open(fifo, "rb").read()))
    reader.start()
    r = _run(["score", ex / "p.jsonl", "--no-store", "-q", "--out", fifo])
    reader.join(10)
    assert r.exit_code == 0, r.output
    assert stat.S_ISFIFO(fifo.stat().st_mode)
    assert got and got[0].startswith(b"{")


def test_out_onto_the_rules_file_or_the_judge_cache_is_refused(ex: Path, monkeypatch) -> None:
    # the remaining files item 1 names: llm-judge's --rules input and the judge cache ($GOLDEVAL_HOME/judge_cache.db)
    assert _run(["judge", ex / "cases.jsonl", ex / "arm_a.jsonl", "--db", ex / "clinic.sqlite", "--no-store", "-q",
                 "--out", ex / "rules.json"]).exit_code == 0
    rules = ex / "rules.json"
    before = rules.read_bytes()
    llm = ["--llm", "m", "--base-url", "http://127.0.0.1:9/v1"]
    r = _run(["llm-judge", ex / "cases.jsonl", ex / "arm_a.jsonl", "--rules", rules, *llm, "--dry-run", "--out", rules])
    _refused(r, rules, before)
    assert "is the --rules input" in r.output
    monkeypatch.setenv("OPENAI_API_KEY", "not-used")
    cache = Path(os.environ["GOLDEVAL_HOME"]) / "judge_cache.db"
    cache.parent.mkdir(parents=True, exist_ok=True)
    cache.write_bytes(b"SQLite format 3\x00")  # stands for the cache of earlier runs: its bytes must survive
    for args in (["judge", ex / "cases.jsonl", ex / "arm_a.jsonl", "--db", ex / "clinic.sqlite", "--no-store", *llm],
                 ["llm-judge", ex / "cases.jsonl", ex / "arm_a.jsonl", "--rules", rules, *llm, "--no-store"]):
        r = _run([*args, "--out", cache])
        _refused(r, cache, b"SQLite format 3\x00")
        assert "is the judge cache input" in r.output


@pytest.mark.parametrize("how", ["gzip", "utf-16", "utf-16 by a symlink"])
def test_out_onto_a_compressed_or_utf16_input_is_refused(ex: Path, how: str) -> None:
    # A .gz or UTF-16 input is scored from a decoded temporary copy; the guard compared --out with that copy, so
    # `score p.jsonl.gz --out p.jsonl.gz` replaced the user's predictions with the results (exit 0). The input is
    # the file the user named: refused (exit 2) and its bytes unchanged.
    import gzip

    plain = (ex / "p.jsonl").read_bytes()
    if how == "gzip":
        src = ex / "p.jsonl.gz"
        src.write_bytes(gzip.compress(plain))
    else:
        src = ex / "p16.jsonl"
        src.write_bytes(plain.decode("utf-8").encode("utf-16"))
    out = src
    if how.endswith("symlink"):
        out = ex / "link.jsonl"
        out.symlink_to(src)
    before = src.read_bytes()
    _refused(_run(["score", src, "--no-store", "--out", out]), src, before)
    # a healthy case stays healthy: the same input scores, its results written elsewhere
    assert _run(["score", src, "--no-store", "-q", "--out", ex / "r.json"]).exit_code == 0


@pytest.mark.parametrize("out", ["p.jsonl", "/dev/stdin"])
def test_out_onto_the_file_stdin_is_redirected_from_is_refused(ex: Path, out: str) -> None:
    # `goldeval score - --out p.jsonl < p.jsonl` (or --out /dev/stdin): stdin was spooled to a temporary copy and
    # the guard saw only '-', so the predictions file was replaced by the results (exit 0). Refused, exit 2.
    import subprocess
    import sys

    p = ex / "p.jsonl"
    before = p.read_bytes()
    with open(p, "rb") as stdin:
        r = subprocess.run([sys.executable, "-m", "goldeval", "score", "-", "--no-store", "-q", "--out", out],
                           stdin=stdin, capture_output=True, text=True, cwd=ex)
    assert r.returncode == 2, r.stderr
    assert "standard input" in r.stderr and "overwrite" in r.stderr, r.stderr
    assert p.read_bytes() == before
    # a healthy case: the same redirect with --out elsewhere scores (exit 0)
    with open(p, "rb") as stdin:
        ok = subprocess.run([sys.executable, "-m", "goldeval", "score", "-", "--no-store", "-q", "--out", "r.json"],
                            stdin=stdin, capture_output=True, text=True, cwd=ex)
    assert ok.returncode == 0, ok.stderr
