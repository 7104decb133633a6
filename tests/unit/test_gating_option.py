"""cli/_gating.py: the reusable --gates option and apply_gates, as the score and judge commands will call them."""

from __future__ import annotations

import io

import click
from click.testing import CliRunner
from rich.console import Console

from goldeval.cli._gating import apply_gates, gates_option

RESULTS = {
    "scorer": {"name": "token_f1", "version": "1"},
    "aggregate": {"n": 3, "n_scored": 3, "n_failed": 0, "whole_note_f1_mean": 0.5, "undefined": {}},
}


def _console():
    buf = io.StringIO()
    return Console(file=buf, width=200), buf


def test_no_gates_returns_0_and_adds_nothing():
    results = dict(RESULTS)
    console, buf = _console()
    assert apply_gates(results, None, console) == 0
    assert "gates" not in results and buf.getvalue() == ""


def test_gates_are_added_before_writing_and_the_code_follows_the_verdict(tmp_path):
    dod = tmp_path / "dod.toml"
    dod.write_text("[gates]\nwhole_note_f1_mean = { min = 0.6 }\n")
    results = {k: (dict(v) if isinstance(v, dict) else v) for k, v in RESULTS.items()}
    console, buf = _console()
    assert apply_gates(results, str(dod), console) == 1
    assert results["gates"]["passed"] is False
    assert buf.getvalue().splitlines()[-1] == "FAIL: whole_note_f1_mean 0.500 fails 0.6; a mean over the 3 scored examples."
    dod.write_text("[gates]\nwhole_note_f1_mean = { min = 0.5 }\n")  # inclusive
    assert apply_gates(results, str(dod), console) == 0 and results["gates"]["passed"] is True


def test_the_option_passes_gates_to_the_command():
    @click.command()
    @gates_option
    def cmd(gates):
        click.echo(repr(gates))

    assert CliRunner().invoke(cmd, ["--gates", "x.toml"]).output.strip() == "'x.toml'"
    assert CliRunner().invoke(cmd, []).output.strip() == "None"


def test_load_definition_checks_the_scorer_early(tmp_path):
    import pytest

    from goldeval.cli._gating import load_definition
    from goldeval.errors import InputError

    f = tmp_path / "dod.toml"
    f.write_text("[gates]\nn_failed = { max = 0 }\npass_rate = { min = 0.9 }\n")
    assert load_definition(str(f)) is not None  # no scorer named: no check
    assert load_definition(str(f), scorer="answer_judge") is not None
    with pytest.raises(InputError, match=r"dod\.toml:3: gate on 'pass_rate' \(answers metric\), but scorer 'token_f1' never produces it"):
        load_definition(str(f), scorer="token_f1")


def test_the_table_shows_a_limit_another_metric_sets_to_the_observed_value_s_digits():
    # kappa 0.4004 against annotator_kappa 0.40045 fails; the table's limit cell read "annotator_kappa (0.400)" beside
    # an observed 0.400: it is shown to the observed value's digits (the gate report's 0.40040), "(0.40045)"
    from goldeval.gates import evaluate_gates, parse_gates
    from goldeval.cli._gating import render_gate_report

    agg = {"kappa": 0.4004, "annotator_kappa": 0.40045, "n_scored": 20}
    report = evaluate_gates({"aggregate": agg}, parse_gates('[gates]\nkappa = { min = "annotator_kappa" }\n'))
    console, buf = _console()
    render_gate_report(report, console)
    row = next(line for line in buf.getvalue().splitlines() if line.lstrip("│┃ ").startswith("kappa"))
    assert "0.40040" in row and "≥ annotator_kappa (0.40045)" in row and "FAIL" in row
