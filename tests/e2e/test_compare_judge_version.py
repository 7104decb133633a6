"""Issue 11: compare of two runs judged under different rule-judge versions says so beside the numbers, as it does
for tokenizers (the clinic example, arm A, judged twice; the first run recorded as judge 1.1.0)."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

import goldeval.answers.judge as answers_judge
import goldeval.pipeline.judging as pipeline_judging
from goldeval.cli import main

EX = Path(__file__).resolve().parents[2] / "examples" / "sql"


def test_compare_says_when_runs_were_judged_by_different_judge_versions(tmp_path, monkeypatch):
    store = tmp_path / "g.db"
    args = ["judge", str(EX / "cases.jsonl"), str(EX / "arm_a.jsonl"), "--db", str(EX / "clinic.sqlite"), "--store", str(store), "-q"]
    with monkeypatch.context() as m:
        # the run pipeline records the version it imported (goldeval.pipeline.judging): patch it where it is read
        m.setattr(pipeline_judging, "JUDGE_VERSION", "1.1.0")
        res = CliRunner().invoke(main, args)
        assert res.exit_code == 0, res.output
    res = CliRunner().invoke(main, args)
    assert res.exit_code == 0, res.output
    res = CliRunner().invoke(main, ["compare", "latest~1", "latest", "--store", str(store)])
    assert res.exit_code == 0, res.output
    text = " ".join(res.output.split())
    assert f"judge_version: 1.1.0 → {answers_judge.JUDGE_VERSION}" in text and "measured differently" in text
    assert text.index("measured differently") < text.index("pass rate A")   # said beside (before) the numbers


def test_compare_says_a_changed_definition_of_done_is_not_a_measurement_difference(tmp_path):
    """The same arm judged twice, once without and once with --gates (found by a new user on a fresh clone): the
    scores were measured alike, so compare names the definitions of done apart and never prints Python's None."""
    store = tmp_path / "g.db"
    args = ["judge", str(EX / "cases.jsonl"), str(EX / "arm_a.jsonl"), "--db", str(EX / "clinic.sqlite"), "--store", str(store), "-q"]
    assert CliRunner().invoke(main, args).exit_code == 0
    res = CliRunner().invoke(main, args + ["--gates", str(EX / "dod.toml")])
    assert res.exit_code == 0, res.output  # arm A passes the clinic gates (README)
    res = CliRunner().invoke(main, ["compare", "latest~1", "latest", "--store", str(store)])
    assert res.exit_code == 0, res.output
    text = " ".join(res.output.split())
    assert "measured differently" not in text and "None" not in text
    assert "note: the definitions of done differ (none → " in text
    assert "that changes the gates, not how the cases were scored." in text
