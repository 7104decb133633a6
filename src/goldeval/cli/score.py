"""``goldeval score``: token F1 of a file of predictions and references, or any scorer with ``--scorer NAME``.

Every scorer and every input format (JSONL, CSV, Parquet) goes through the one Scorer interface on the local engine
(:func:`goldeval.engines.local.run`: every core for JSONL, resume, the store written beside the scoring, the
per-example entries streamed to ``--out``, none kept in memory); ``--engine spark`` through :mod:`goldeval.engines.spark`.
"""

from __future__ import annotations

import contextlib
import sys

import click

from goldeval.cli._types import cores

from goldeval.cli._common import EXIT_BAD_INPUT, exit_codes, fail, guard_outputs, guarded, report_console
from goldeval.cli._ci import ci_options
from goldeval.cli._gating import apply_gates, gates_option, hold_finish_for_gates, load_definition
from goldeval.cli._inputs import INPUT
from goldeval.cli._spark import spark_options
from goldeval.cli._store import store_options


@click.command()
@exit_codes
@click.argument("file", type=INPUT)
# --*-field and --*-column are the same option (JSONL field or CSV / Parquet column), as on `labels`
@click.option("--prediction-field", "--prediction-column", "prediction_field", default="prediction", show_default=True,
              help="Field (JSONL) or column (CSV, Parquet) with the prediction (text or an object of sections).")
@click.option("--reference-field", "--reference-column", "reference_field", default="reference", show_default=True,
              help="Field or column with the reference, e.g. reference_sections.")
@click.option("--id-field", "--id-column", "id_field", default="id", show_default=True, help="Field or column with the stable row id.")
@click.option(
    "--tokenizer",
    type=click.Choice(["openscribe", "unicode"]),
    default="openscribe",
    show_default=True,
    help="Token rule: openscribe (ASCII, reproduces the published figures) or unicode (NFKC, any script).",
)
@click.option("--out", "-o", default=None, metavar="PATH", help="Write the results JSON here ('-' for stdout), as the rows are scored.")
@click.option(
    "--out-format", type=click.Choice(["json", "jsonl"]), default="json", show_default=True,
    help="json: one object, per_example one entry a line; jsonl: one per_example entry a line, then a line with the rest.",
)
@click.option(
    "--workers", type=cores(), default=None,
    help="Processes to score with, at most the number of cores (default: all cores for files of 10k rows or more, else 1).",
)
@click.option("--quiet", "-q", is_flag=True, help="No summary table (the JSON still goes to --out; with --gates the gate table and decision are still printed).")
@click.option("--scorer", "scorer_name", default="token_f1", show_default=True, metavar="NAME",
              help="Scorer: token_f1, or one registered under the entry point group goldeval.scorers.")
@click.option("--option", "-O", "scorer_options", multiple=True, metavar="KEY=VALUE",
              help="An option of the scorer (repeatable), e.g. -O normalize=none; values are read as JSON when they parse.")
@spark_options
@gates_option
@ci_options
@store_options
@guarded
def score(file, prediction_field, reference_field, id_field, tokenizer, out, out_format, workers, quiet, scorer_name,
          scorer_options, engine, spark_master, per_case, gates, run_store, ci):
    """Token F1 (precision, recall, F1) of every row of FILE, per example and macro-averaged (or --scorer NAME).

    FILE is JSONL, CSV or Parquet: {"id", "prediction", "reference"} per row, texts as strings or objects of
    sections. Rows that cannot be scored are listed with their line number (row index for Parquet), counted in
    n_failed and left out of the means.
    """
    fields = {"prediction_field": prediction_field, "reference_field": reference_field, "id_field": id_field, "tokenizer": tokenizer}
    if engine == "spark":
        from goldeval.cli._spark import score_on_spark
        from goldeval.scoring.registry import get_scorer

        takes = get_scorer(scorer_name).options
        given = {k: v for k, v in fields.items() if k in takes and (scorer_name == "token_f1" or k != "tokenizer")}
        return score_on_spark(scorer_name, file, {**given, **_parse_options(scorer_options)}, master=spark_master,
                              per_case=per_case, out=out, out_format=out_format, quiet=quiet, gates=gates,
                              run_store=run_store, ci=ci)
    if per_case is not None:
        from goldeval.errors import InputError

        raise InputError("--per-case writes the per-case Parquet of a Spark run: give it with --engine spark.")
    return _score_local(scorer_name, file, fields, scorer_options, workers=workers, out=out, out_format=out_format,
                        quiet=quiet, gates=gates, run_store=run_store, ci=ci)


#: The keys of a per_example entry that a JUnit testcase of one case needs (report.junit._case_tests).
_JUNIT_KEYS = ("id", "status", "reason", "error", "whole_note", "outcome", "gold", "pred", "verdict", "why", "gold_status",
               "confidence")


def _slim(entry: dict) -> dict:
    """What a JUnit testcase of one case needs: id, status, the score or outcome or verdict, the reason."""
    return {k: entry[k] for k in _JUNIT_KEYS if k in entry}


def _score_local(name: str, file: str, fields: dict, options: tuple[str, ...], *, workers, out, out_format, quiet, gates,
                 run_store, ci):
    """Score FILE with the scorer *name* on the local engine: guard the outputs, check the gates file, record,
    stream the entries to --out (and, for --junit-cases, to the JUnit cases), render, gate, exit."""
    import os

    from goldeval.engines.local import run
    from goldeval.scoring.registry import get_scorer

    console = report_console(out)
    # an --out that is the input, the gates or the store, or that cannot be written, fails before any scoring
    guard_outputs({"--out": out, **ci.outputs()}, {"FILE": file, "--gates": gates, "--store": run_store.files()})
    scorer = get_scorer(name)  # registers its metrics with the gates
    given = {k: v for k, v in fields.items() if k in scorer.options}
    if name != "token_f1":
        given.pop("tokenizer", None)
    opts = {**given, **_parse_options(options)}
    # a bad gates file, or a gate on a metric this scorer never produces, fails before any scoring
    definition = load_definition(gates, scorer=scorer.name)
    if "positive" in scorer.options and definition is not None and getattr(definition, "positive", None) is not None:
        # as `goldeval labels` does: the agreed positive label of the definition of done is the run's
        if opts.get("positive") is not None and opts["positive"] != definition.positive:
            from goldeval.errors import InputError

            raise InputError(f"-O positive={opts['positive']}: the definition of done {gates} agreed positive = "
                             f"{definition.positive!r}. Drop -O positive or use the gates file for this label.")
        opts["positive"] = definition.positive
    config = scorer.configure(**opts, source=os.path.basename(file))
    if scorer.name == "labels" and config.get("positive") is None:
        from goldeval.errors import InputError

        # refused before anything is read or recorded (no run is left behind); `score` has no --positive option
        raise InputError(f"score --scorer labels: no positive label given. Pass -O positive=LABEL (e.g. -O positive=escalate), "
                         "or --gates with a definition of done that sets positive = \"LABEL\" (or use goldeval labels FILE "
                         "--positive LABEL).")
    with contextlib.ExitStack() as stack:
        writer = None
        if out:
            from goldeval.io.resultsfile import ResultsFile

            writer = stack.enter_context(ResultsFile(out, out_format))
            writer.begin(_results_head(scorer, config))
        # the examples stream to the results file and, for --junit-cases, as (id, status, F1) to the JUnit cases
        junit_cases: list[dict] | None = [] if ci.junit_cases else None

        def on_example(entry: dict) -> None:
            if writer is not None:
                writer.example(entry)
            if junit_cases is not None:
                junit_cases.append(_slim(entry))

        streamed = writer is not None or junit_cases is not None
        with run_store.recording(
            scorer_name=scorer.name, scorer_version=scorer.version, inputs={"predictions": file},
            config=scorer.store_config(config), tokenizer=config.get("tokenizer"), dod=gates,
        ) as recorder:
            hold_finish_for_gates(recorder, definition)  # the run is finished once, with its gate report
            # without JUnit cases the entries go to the file as the JSON the scoring process wrote
            sink = {"on_example_json": writer.example_json} if writer is not None and junit_cases is None else (
                {"on_example": on_example} if streamed else {})
            results = _with_progress(
                lambda progress, on_total: run(scorer, file, config, workers=workers, recorder=recorder, progress=progress,
                                               on_total=on_total, keep_cases=False, **sink),
                quiet,
            )
            if run_store.note and not quiet:
                click.echo(f"goldeval: {run_store.note}", err=True)
            if not quiet:
                if scorer.name == "token_f1":
                    from goldeval.report.freetext import render_freetext

                    render_freetext(results, console)
                else:
                    from goldeval.report.scorer import render_scorer

                    render_scorer(results, console)
            code = apply_gates(results, gates, console, definition=definition, recorder=recorder)
        run_store.stamp(results)  # the top-level "run": {id, arm, store} (absent with --no-store)
        if writer is not None:
            writer.close(results)
    ci.write(results if junit_cases is None else {**results, "per_example": junit_cases})
    agg = results["aggregate"]
    if agg.get("n_scored", agg.get("n")) == 0:
        first = results["failures"][0]["error"] if results.get("failures") else "no rows"
        fail(f"no row of {file} could be scored ({agg.get('n_failed', 0)} failed); the first: {first}", EXIT_BAD_INPUT)
    sys.exit(code)


def _results_head(scorer, config) -> dict:
    """The keys a results file holds before ``per_example`` (known before any row is scored)."""
    if scorer.name == "token_f1":
        from goldeval.freetext.files import results_head

        return results_head(config["tokenizer"], prediction_field=config["prediction_field"],
                            reference_field=config["reference_field"], id_field=config["id_field"])
    return {"scorer": {"name": scorer.name, "version": scorer.version}}


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


def _parse_options(pairs: tuple[str, ...]) -> dict:
    """``KEY=VALUE`` pairs as a dict; a value is read as JSON when it parses (``true``, ``3``), else kept as text."""
    import orjson

    from goldeval.errors import InputError

    out = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise InputError(f"--option {pair!r}: expected KEY=VALUE, e.g. -O normalize=none.")
        try:
            out[key.replace("-", "_")] = orjson.loads(value)
        except orjson.JSONDecodeError:
            out[key.replace("-", "_")] = value
    return out
