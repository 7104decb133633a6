"""``goldeval labels`` (score a classifier's labels against gold) and ``goldeval gate`` (apply a definition of
done to any results file goldeval wrote). Thin: parse options, call the library, render, map to exit codes."""

from __future__ import annotations

import contextlib
import sys

import click

from goldeval.cli._common import EXIT_OK, echo, exit_codes, guard_outputs, guarded, quiet_option, report_console, write_json
from goldeval.cli._ci import ci_options
from goldeval.cli._gating import apply_gates, gates_option, hold_finish_for_gates, load_definition
from goldeval.cli._inputs import INPUT
from goldeval.cli._store import store_options


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
@click.option("--out", "-o", default=None, metavar="PATH", help="Write the results JSON here ('-' = stdout; the summary then goes to stderr).")
@click.option(
    "--out-format", type=click.Choice(["json", "jsonl"]), default="json", show_default=True,
    help="json: one object, per_example one entry a line; jsonl: one per_example entry a line, then a line with the rest.",
)
@quiet_option("No summary table (the JSON still goes to --out; with --gates the gate table and decision are still printed).")
@ci_options
@store_options
@guarded
def labels(file, positive, id_column, gold_column, pred_column, second_gold_column, allow_absent_positive, gates, out,
           out_format, quiet, run_store, ci):
    """Precision, recall and missed positives of predicted labels against gold labels.

    FILE is JSONL rows {"id", "gold", "pred"} or a CSV with those columns (names selectable).
    """
    from goldeval.errors import InputError
    from goldeval.labels.metrics import SCORER_NAME, SCORER_VERSION
    from goldeval.labels.reader import score_label_file

    guard_outputs({"--out": out, **ci.outputs()}, {"FILE": file, "--gates": gates, "--store": run_store.files()})
    dod = load_definition(gates, scorer=SCORER_NAME)  # a gate of another scorer is refused before scoring
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
    with contextlib.ExitStack() as stack:
        writer = None
        if out is not None:  # per_example streams to --out as the rows are read (one entry a line)
            from goldeval.io.resultsfile import ResultsFile

            writer = stack.enter_context(ResultsFile(out, out_format))
            writer.begin({"scorer": {"name": SCORER_NAME, "version": SCORER_VERSION}, "positive": positive})
        # the examples stream to the results file and, for --junit-cases, to the JUnit cases (kept: one per case)
        junit_cases: list[dict] | None = [] if ci.junit_cases else None

        def on_examples(entries: list[dict]) -> None:
            if writer is not None:
                writer.examples(entries, flat=True)  # (id, line, gold, pred, outcome: scalars)
            if junit_cases is not None:
                junit_cases.extend(entries)
        with run_store.recording(
            scorer_name=SCORER_NAME, scorer_version=SCORER_VERSION, inputs={"labels": file}, config=options, dod=gates
        ) as recorder:
            hold_finish_for_gates(recorder, dod)  # the run is finished once, with its gate report
            # only --out: the entries as their JSON (no dict for a row the C reader scores)
            lines_only = writer is not None and junit_cases is None
            results = score_label_file(file, recorder=recorder, refuse_empty=True, keep_per_example=False,
                                       on_examples=on_examples if (not lines_only and (writer is not None or junit_cases is not None)) else None,
                                       on_example_lines=writer.example_lines if lines_only else None,
                                       **options)
            if not quiet:
                _render_labels(results, console)
            code = apply_gates(results, gates, console, definition=dod, recorder=recorder)
        if run_store.note and not quiet:
            click.echo(f"goldeval: {run_store.note}", err=True)
        run_store.stamp(results)  # the top-level "run": {id, arm, store} (absent with --no-store)
        if writer is not None:
            writer.close(results)
    ci.write(results if junit_cases is None else {**results, "per_example": junit_cases})
    if code != EXIT_OK:
        sys.exit(code)


def _render_labels(results: dict, console) -> None:
    from rich.markup import escape
    from rich.table import Table

    a = results["aggregate"]
    und = a.get("undefined", {})

    def rate(key: str, digits: int = 3) -> str:
        return "undefined" if key in und else f"{a[key]:.{digits}f}"

    t = Table(title=escape(f"labels: positive = {results['positive']!r}"), title_justify="left")
    for col, just in (("metric", "left"), ("value", "right"), ("from", "left")):
        t.add_column(col, justify=just)
    t.add_row("precision", rate("precision"), f"{a['tp']} of {a['predicted_positives']} predicted positive")
    t.add_row("recall", rate("recall"), f"{a['tp']} of {a['gold_positives']} gold positives")
    t.add_row("missed", str(a["missed"]), f"{rate('missed_per_100', 1)} per 100 gold positives")
    t.add_row("f1", rate("f1"), "")
    t.add_row("kappa", rate("kappa"), "Cohen's, predictions vs gold")
    t.add_row("accuracy", rate("accuracy"), "never the headline")
    if "agreement" in a and len(results["per_label"]) > 2:  # binary: the same number as accuracy
        t.add_row("agreement", rate("agreement"), "all labels: predicted label = gold label")
    t.add_row("counts", "", f"tp {a['tp']} · fp {a['fp']} · fn {a['fn']} · tn {a['tn']}")
    t.add_row("cases", str(a["n"]), f"{a['n_scored']} scored, {a['n_failed']} failed, {a['null_predictions']} without a prediction")
    console.print(t)
    if len(results["per_label"]) > 2:
        pl = Table(title="per label (one-vs-rest)", title_justify="left")
        for col in ("label", "precision", "recall", "f1", "support", "predicted"):
            pl.add_column(col, justify="right")
        for r in results["per_label"]:
            und_r = r.get("undefined") or {}
            cells = ["undefined" if k in und_r else f"{r[k]:.3f}" for k in ("precision", "recall", "f1")]
            pl.add_row(escape(repr(str(r["label"]))), *cells, str(r["support"]), str(r["predicted"]))
        console.print(pl)
    if "annotator_kappa" in a:
        ak = "undefined" if "annotator_kappa" in und else f"{a['annotator_kappa']:.3f}"
        console.print(
            f"annotators: {a['annotator_n']} cases, agreement {a['annotator_agreement']:.3f}, kappa {ak}; "
            f"{len(results['disagreements'])} disagreements to adjudicate",
            markup=False, highlight=False, soft_wrap=True,
        )
    for key, why in und.items():
        console.print(f"{key} undefined: {why}", markup=False, highlight=False, soft_wrap=True)
    _print_problems(results)


def _print_problems(results: dict) -> None:
    fails = results.get("failures", [])
    warns = results.get("warnings", [])
    for f in fails[:10]:
        echo(f"failed: {f['error']}")
    if len(fails) > 10:
        click.echo(f"… and {len(fails) - 10} more failed rows (all listed in the results JSON under 'failures').", err=True)
    for w in warns[:10]:
        echo(f"warning: {w['warning']}")
    if len(warns) > 10:
        click.echo(f"… and {len(warns) - 10} more warnings (listed in the results JSON under 'warnings').", err=True)


@click.command("gate")
@exit_codes
@click.argument("results_file", metavar="RESULTS.json", type=INPUT)
@click.option("--gates", "gates", required=True, metavar="DOD.toml", type=INPUT, help="Definition of done (TOML [gates]).")
@click.option("--out", "-o", default=None, metavar="PATH", help="Write the results with the gate report added ('-' = stdout).")
@quiet_option("Print no gate table and no decision line (the exit code says pass or fail).")
@ci_options
@guarded
def gate(results_file, gates, out, quiet, ci):
    """Apply a definition of done to any results file goldeval wrote (labels, free text, data answers).

    A gate on a metric this scorer never produces is bad input (exit 2).
    """
    from goldeval.io.resultsfile import read_results
    from goldeval.scoring.registry import register_plugin_metrics

    # no output ever overwrites an input (DESIGN.md), RESULTS.json included: write the gated results beside it
    guard_outputs({"--out": out, **ci.outputs()}, {"RESULTS.json": results_file, "--gates": gates})
    register_plugin_metrics()  # a third-party scorer's metrics are gateable too
    dod = load_definition(gates)
    results = read_results(str(results_file), gateable=True)
    console = report_console(out, quiet=quiet)
    code = apply_gates(results, gates, console, definition=dod)
    if out is not None:
        write_json(results, out)
    ci.write(results)  # the results' "run" (when recorded) names the run in the JUnit suite and the summary
    if code != EXIT_OK:
        sys.exit(code)
