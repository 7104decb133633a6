"""``goldeval labels`` (score a classifier's labels against gold: the ``labels`` scorer through
:func:`goldeval.pipeline.run.evaluate`, its batch kernel reading the file) and ``goldeval gate`` (apply a
definition of done to any results file goldeval wrote). Thin: parse options, call the library, render, map to exit
codes."""

from __future__ import annotations

import sys

import click

from goldeval.cli._ci import ci_options
from goldeval.cli._common import (
    EXIT_OK,
    calibration_option,
    exit_codes,
    guard_outputs,
    guarded,
    quiet_option,
    report_console,
    write_json,
)
from goldeval.cli._gating import apply_gates, gates_option, load_definition, slice_option
from goldeval.cli._inputs import INPUT
from goldeval.cli._observe import ConsoleObserver
from goldeval.cli._store import store_options
from goldeval.errors import InputError


@click.command("labels")
@exit_codes
@click.argument("file", type=INPUT)
@click.option("--positive", default=None, metavar="LABEL", help="The positive label (e.g. escalate); default: `positive` from --gates.")
# --*-column and --*-field are the same option (CSV / Parquet column or JSONL field), as on `score`
@click.option("--id-column", "--id-field", "id_column", default="id", show_default=True, help="Field / CSV column holding the case id.")
@click.option("--gold-column", "--gold-field", "gold_column", default="gold", show_default=True, help="Field / CSV column holding the gold label.")
@click.option("--pred-column", "--pred-field", "pred_column", default="pred", show_default=True,
              help="Field / CSV column holding the predicted label (null / empty = no label).")
@click.option("--second-gold-column", "--second-gold-field", "second_gold_column", default=None, metavar="NAME",
              help="A second annotator's label: adds annotator agreement, kappa and the disagreements.")
@click.option("--allow-absent-positive", is_flag=True, help="Score even when the positive label occurs in neither gold nor pred (a slice with no positives).")
@gates_option
@slice_option
@click.option("--out", "-o", default=None, metavar="PATH", help="Write the results JSON here ('-' = stdout; the summary then goes to stderr).")
@click.option(
    "--out-format", type=click.Choice(["json", "jsonl"]), default="json", show_default=True,
    help="json: one object, per_example one entry a line; jsonl: one per_example entry a line, then a line with the rest.",
)
@quiet_option("No summary table (the JSON still goes to --out; with --gates the gate table and decision are still printed).")
@ci_options
@store_options
@guarded
def labels(file, positive, id_column, gold_column, pred_column, second_gold_column, allow_absent_positive, gates, slice_by,
           out, out_format, quiet, run_store, ci):
    """Precision, recall and missed positives of predicted labels against gold labels.

    FILE is JSONL rows {"id", "gold", "pred"} or a CSV with those columns (names selectable).
    """
    from goldeval.pipeline.run import evaluate  # start-up: the library loads only when the command runs, not for --help

    # start-up: the library loads only when the command runs, not for --help
    from goldeval.scoring.registry import get_scorer

    guard_outputs({"--out": out, **ci.outputs()}, {"FILE": file, "--gates": gates, "--store": run_store.files()})
    scorer = get_scorer("labels")
    dod = load_definition(gates, scorer=scorer.name)  # a gate of another scorer is refused before scoring
    if dod is not None and dod.positive is not None:
        if positive is not None and positive != dod.positive:
            raise InputError(
                f"--positive {positive!r}: the definition of done {gates} agreed positive = {dod.positive!r}. "
                "Drop --positive or use the gates file for this label."
            )
        positive = dod.positive
    options = {
        "positive": positive,
        "id_field": id_column,
        "gold_field": gold_column,
        "pred_field": pred_column,
        "second_gold_field": second_gold_column,
        "require_positive": not allow_absent_positive,
    }
    console = report_console(out)
    # the examples stream to --out and, for --junit-cases, to the JUnit cases (kept: one per case); the run's note
    # is printed after the gate table (below)
    junit_cases: list[dict] | None = [] if ci.junit_cases else None
    with ConsoleObserver(console, quiet=quiet, render=lambda results, scorer, c: scorer.render_summary(results, c),
                         note=False, what="scoring labels", unit="rows") as observer:
        ev = evaluate(scorer, file, options=options, gates=gates, definition=dod, recording=run_store, out=out,
                      out_format=out_format, keep_cases=False, observer=observer, guard=ci.outputs(), input_role="labels",
                      on_example=None if junit_cases is None else junit_cases.append, slice_by=slice_by)
    if run_store.note and not quiet:
        click.echo(f"goldeval: {run_store.note}", err=True)
    results = ev.results
    ci.write(results if junit_cases is None else {**results, "per_example": junit_cases})
    if ev.exit_code != EXIT_OK:
        sys.exit(ev.exit_code)


@click.command("gate")
@exit_codes
@click.argument("results_file", metavar="RESULTS.json", type=INPUT)
@click.option("--gates", "gates", required=True, metavar="DOD.toml", type=INPUT, help="Definition of done (TOML [gates]).")
@click.option("--out", "-o", default=None, metavar="PATH", help="Write the results with the gate report added ('-' = stdout).")
@quiet_option("Print no gate table and no decision line (the exit code says pass or fail).")
@calibration_option
@ci_options
@guarded
def gate(results_file, gates, out, quiet, calibration, ci):
    """Apply a definition of done to any results file goldeval wrote (labels, free text, data answers).

    A gate on a metric this scorer never produces is bad input (exit 2). With --calibration, a data-answer results
    file gains the pass rate corrected for the judge's error (pass_rate_corrected, pass_rate_corrected_low) first.
    """
    from goldeval.io.resultsfile import read_results  # start-up: loaded only when the command runs, not for --help

    # start-up: the library loads only when the command runs, not for --help
    from goldeval.scoring.registry import register_plugin_metrics

    # no output ever overwrites an input (DESIGN.md), RESULTS.json included: write the gated results beside it
    guard_outputs({"--out": out, **ci.outputs()}, {"RESULTS.json": results_file, "--gates": gates, "--calibration": calibration})
    register_plugin_metrics()  # a third-party scorer's metrics are gateable too
    dod = load_definition(gates)
    results = read_results(str(results_file), gateable=True)
    if calibration is not None:
        # start-up: the run store loads only when a calibration is given
        from goldeval.runs.corrected import add_corrected_pass_rate, calibration_from, corrected_pass_rate

        add_corrected_pass_rate(results, corrected_pass_rate(results["aggregate"], calibration_from(calibration)))
    console = report_console(out, quiet=quiet)
    code = apply_gates(results, gates, console, definition=dod)
    if out is not None:
        write_json(results, out)
    ci.write(results)  # the results' "run" (when recorded) names the run in the JUnit suite and the summary
    if code != EXIT_OK:
        sys.exit(code)
