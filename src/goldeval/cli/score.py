"""``goldeval score``: token F1 of a JSONL file of predictions and references."""

from __future__ import annotations

import sys

import click

from goldeval.cli._common import EXIT_BAD_INPUT, fail, guard_outputs, guarded, report_console, write_json
from goldeval.cli._gating import apply_gates, gates_option, hold_finish_for_gates, load_definition
from goldeval.cli._store import store_options


@click.command()
@click.argument("file", type=click.Path(dir_okay=False, path_type=str))
@click.option("--prediction-field", default="prediction", show_default=True, help="Field with the prediction (text or an object of sections).")
@click.option("--reference-field", default="reference", show_default=True, help="Field with the reference, e.g. reference_sections.")
@click.option("--id-field", default="id", show_default=True, help="Field with the stable row id.")
@click.option(
    "--tokenizer",
    type=click.Choice(["openscribe", "unicode"]),
    default="openscribe",
    show_default=True,
    help="Token rule: openscribe (ASCII, reproduces the published figures) or unicode (NFKC, any script).",
)
@click.option("--out", "-o", default=None, metavar="PATH", help="Write the results JSON here ('-' for stdout).")
@click.option(
    "--workers", type=click.IntRange(min=1), default=None,
    help="Processes to score with, at most the number of cores (default: all cores for files of 10k rows or more, else 1).",
)
@click.option("--quiet", "-q", is_flag=True, help="No summary table (the JSON still goes to --out).")
@gates_option
@store_options
@guarded
def score(file, prediction_field, reference_field, id_field, tokenizer, out, workers, quiet, gates, run_store):
    """Token F1 (precision, recall, F1) of every row of FILE, per example and macro-averaged.

    FILE is JSONL: {"id", "prediction", "reference"} per line, texts as strings or objects of sections.
    Rows that cannot be scored are listed with their line number, counted in n_failed and left out of the means.
    """
    from goldeval.freetext import SCORER_NAME, SCORER_VERSION, score_file
    from goldeval.report.freetext import render_freetext

    console = report_console(out)
    # an --out that is the input, the gates or the store, or that cannot be written, fails before any scoring
    guard_outputs({"--out": out}, {"FILE": file, "--gates": gates, "--store": run_store.files()})
    from goldeval.freetext import SCORER_NAME as _scorer

    # a bad gates file, or a gate on a metric this scorer never produces, fails before any scoring
    definition = load_definition(gates, scorer=_scorer)
    config = {"prediction_field": prediction_field, "reference_field": reference_field, "id_field": id_field, "tokenizer": tokenizer}
    with run_store.recording(
        scorer_name=SCORER_NAME, scorer_version=SCORER_VERSION, inputs={"predictions": file}, config=config, tokenizer=tokenizer,
        dod=gates,
    ) as recorder:
        hold_finish_for_gates(recorder, definition)  # the run is finished once, with its gate report
        results = _with_progress(
            lambda progress, on_total: score_file(
                file,
                prediction_field=prediction_field,
                reference_field=reference_field,
                id_field=id_field,
                tokenizer=tokenizer,
                workers=workers,
                recorder=recorder,
                progress=progress,
                on_total=on_total,
            ),
            quiet,
        )
        if run_store.note and not quiet:
            click.echo(f"goldeval: {run_store.note}", err=True)
        if not quiet:
            render_freetext(results, console)
        code = apply_gates(results, gates, console, definition=definition, recorder=recorder)
    if out:
        write_json(results, out)
    if results["aggregate"]["n"] == 0:
        first = results["failures"][0]["error"] if results["failures"] else "no rows"
        fail(f"no row of {file} could be scored ({results['aggregate']['n_failed']} failed); the first: {first}", EXIT_BAD_INPUT)
    sys.exit(code)


def _with_progress(run, quiet: bool):
    """Run *run(progress, on_total)* with a progress bar on stderr for batches of 2,000 rows or more."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    from goldeval.cli._common import stderr_console

    state: dict = {}

    def on_total(total: int) -> None:
        if quiet or total < 2000:
            return
        bar = Progress(
            TextColumn("scoring"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
            console=stderr_console(), transient=True,
        )
        bar.start()
        state["bar"] = bar
        state["task"] = bar.add_task("rows", total=total)

    def progress(k: int) -> None:
        bar = state.get("bar")
        if bar is not None:
            bar.advance(state["task"], k)

    try:
        return run(progress, on_total)
    finally:
        if "bar" in state:
            state["bar"].stop()
