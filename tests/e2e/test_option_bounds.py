"""Issue 10 item 3: every numeric option is finite and in range (``--timeout nan`` hung the judge for ever,
``--workers 1000`` was accepted although its help says at most the number of cores)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from goldeval.cli import main

REPO = Path(__file__).resolve().parents[2]
SQL = REPO / "examples" / "sql"
P = REPO / "examples" / "data" / "openscribe_primock57_predictions.jsonl"
JUDGE = ["judge", SQL / "cases.jsonl", SQL / "arm_a.jsonl", "--db", SQL / "clinic.sqlite", "--no-store"]
LLM = [*JUDGE, "--llm", "m", "--base-url", "http://127.0.0.1:9/v1", "--dry-run"]

BAD = [
    (JUDGE, "--timeout", "nan"), (JUDGE, "--timeout", "inf"), (JUDGE, "--timeout", "0"), (JUDGE, "--timeout", "-1"),
    (JUDGE, "--max-rows", "0"),
    (JUDGE, "--max-result-mb", "0"), (JUDGE, "--max-result-mb", "nan"), (JUDGE, "--max-result-mb", "-1"),
    (["score", P, "--no-store"], "--workers", str((os.cpu_count() or 1) + 1)),
    (["score", P, "--no-store"], "--workers", "1000"),
    (LLM, "--llm-timeout", "nan"), (LLM, "--llm-timeout", "inf"),
    (LLM, "--llm-temperature", "nan"),
    (LLM, "--price-in", "inf"), (LLM, "--price-out", "nan"),
    (LLM, "--max-cost", "nan"), (LLM, "--max-cost", "inf"),
    (LLM, "--max-concurrency", "100000"),
    (LLM, "--repeat", "100000"),
    (["compare", "latest", "latest"], "--confidence", "nan"),
    (["compare", "latest", "latest"], "--seed", "-1"),
    (["runs", "list"], "--limit", "-1"),
]


@pytest.mark.parametrize("base,option,value", BAD, ids=[f"{b[0]}{o}={v}" for b, o, v in BAD])
def test_numeric_options_are_finite_and_in_range(base, option, value) -> None:
    r = CliRunner().invoke(main, [str(a) for a in base] + [option, value])
    assert r.exit_code == 2, f"{option} {value}: exit {r.exit_code}\n{r.output}"
    assert option in r.output, r.output


def test_in_range_values_are_accepted() -> None:
    r = CliRunner().invoke(main, [str(a) for a in JUDGE] + ["--timeout", "2.5", "--max-rows", "10", "--max-result-mb", "0.5", "-q"])
    assert r.exit_code == 0, r.output
    r = CliRunner().invoke(main, ["score", str(P), "--no-store", "-q", "--workers", str(os.cpu_count() or 1)])
    assert r.exit_code == 0, r.output
