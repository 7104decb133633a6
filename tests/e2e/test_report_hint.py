"""Issue 12 item 6: after a recorded run every scoring command names the run in its results file and says, on
stderr, the command that opens its report; that command, run as printed, writes the report of that run."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest
from click.testing import CliRunner

from goldeval.cli import main

REPO = Path(__file__).resolve().parents[2]
PRIMOCK = REPO / "examples" / "data" / "openscribe_primock57_predictions.jsonl"
LABELS = REPO / "examples" / "labels"
SQL = REPO / "examples" / "sql"

COMMANDS = {
    # name: (arguments, exit code: arm B and the pilot claims fail their definitions of done, README)
    "score": (["score", PRIMOCK], 0),
    "labels": (["labels", LABELS / "pilot_claims.jsonl", "--gates", LABELS / "dod.toml"], 1),
    "judge": (["judge", SQL / "cases.jsonl", SQL / "arm_b.jsonl", "--db", SQL / "clinic.sqlite", "--gates", SQL / "dod.toml"], 1),
}


def run(args, code):
    result = CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)
    assert result.exit_code == code, (args, result.output)
    return result


def _hint(stderr: str) -> list[str]:
    # "goldeval: run ID recorded; its report: goldeval report ID --store PATH --out report.html"
    line = next(ln for ln in stderr.splitlines() if "its report: goldeval report " in ln)
    return shlex.split(line.split("its report: ", 1)[1])


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_a_recorded_run_says_how_to_open_its_report_and_that_command_works(name, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the printed command writes report.html into the working folder
    args, code = COMMANDS[name]
    store = tmp_path / "g.db"
    res = run([*args, "--store", store, "--arm", f"arm-{name}", "--out", tmp_path / "r.json"], code)
    results = json.loads((tmp_path / "r.json").read_text())
    assert results["run"] == {"id": results["run"]["id"], "arm": f"arm-{name}", "store": str(store)}
    cmd = _hint(res.stderr)
    assert cmd[:3] == ["goldeval", "report", results["run"]["id"]] and cmd[-2:] == ["--out", "report.html"]
    run(cmd[1:], 0)  # as printed, without the program name
    page = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert f"goldeval report · {results['run']['id']}" in page and f"arm-{name}" in page
    # the same command without a store: no run to name, no report to point to
    res = run([*args, "--no-store", "--out", tmp_path / "n.json"], code)
    assert "run" not in json.loads((tmp_path / "n.json").read_text()) and "its report:" not in res.stderr


def test_llm_judge_says_how_to_open_its_report(tmp_path, monkeypatch):
    pytest.importorskip("openai")
    from fake_openai_server import FakeOpenAI, Reply
    from test_llm_judge_cli import ATTEMPTS, CASES, write

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GOLDEVAL_HOME", str(tmp_path / "home"))  # default store and the call cache
    cases, attempts = write(tmp_path / "cases.jsonl", CASES), write(tmp_path / "attempts.jsonl", ATTEMPTS)
    with FakeOpenAI(default=lambda req: Reply()) as srv:
        res = run(["llm-judge", cases, attempts, "--llm", "judge-model", "--base-url", srv.base_url, "--out", "r.json"], 0)
    results = json.loads((tmp_path / "r.json").read_text())
    cmd = _hint(res.stderr)
    # the default store (under GOLDEVAL_HOME): the printed command names no --store, and finds the run there
    assert cmd == ["goldeval", "report", results["run"]["id"], "--out", "report.html"]
    run(cmd[1:], 0)
    assert (tmp_path / "report.html").exists()
