"""Issue 10 item 10: a judge run where most cases are unscored (no --db) must not print a bare "pass rate 100.0%":
the unscored share stands beside the pass rate, and more than half unscored is warned about.

Arm A on the clinic example without --db: 16 of the 22 attempts hold only a final_query (unscored without a
database), 4 match, 2 need a human (counted from examples/sql/arm_a.jsonl and the README's table)."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from goldeval.cli import main

SQL = Path(__file__).resolve().parents[2] / "examples" / "sql"


def test_pass_rate_line_carries_the_unscored_share_and_a_warning() -> None:
    r = CliRunner().invoke(main, ["judge", str(SQL / "cases.jsonl"), str(SQL / "arm_a.jsonl"), "--no-store"], terminal_width=200)
    assert r.exit_code == 0, r.output
    line = next(x for x in r.output.splitlines() if x.startswith("pass rate"))
    assert line.startswith("pass rate 100.0% = 4 match / 4 decided · 16 of 22 unscored"), line
    assert "warning: 16 of 22 cases (73%) are unscored" in r.output


def test_no_warning_when_few_are_unscored() -> None:
    r = CliRunner().invoke(main, ["judge", str(SQL / "cases.jsonl"), str(SQL / "arm_a.jsonl"), "--db", str(SQL / "clinic.sqlite"),
                                  "--no-store"], terminal_width=200)
    assert r.exit_code == 0, r.output
    line = next(x for x in r.output.splitlines() if x.startswith("pass rate"))
    assert "0 of 22 unscored" in line
    assert "are unscored" not in r.output
