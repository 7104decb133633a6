"""``goldeval score``: token F1 of a file of predictions and references, or any scorer with ``--scorer NAME``.

Parse the options, run :func:`goldeval.pipeline.run.evaluate` (the local engine or Spark, the store, resume, gates,
the results streamed to ``--out``), show it (:class:`~goldeval.cli._observe.ConsoleObserver`), write the CI
outputs, exit with the run's decision.
"""

from __future__ import annotations

import sys

import click

from goldeval.cli._ci import ci_options
from goldeval.cli._common import EXIT_BAD_INPUT, exit_codes, fail, guarded, report_console
from goldeval.cli._gating import gates_option, slice_option
from goldeval.cli._inputs import INPUT
from goldeval.cli._observe import ConsoleObserver
from goldeval.cli._spark import spark_options
from goldeval.cli._store import store_options
from goldeval.cli._types import cores
from goldeval.errors import InputError


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
    help="Processes to score with, at most the number of cores (default: all cores for files of 10k rows or more, else 1). "
         "Where token F1's compiled path reads the file, threads of one process instead, and by default all cores only "
         "for long rows (1 KB a line or more), else 1.",
)
@click.option("--quiet", "-q", is_flag=True, help="No summary table (the JSON still goes to --out; with --gates the gate table and decision are still printed).")
@click.option("--scorer", "scorer_name", default="token_f1", show_default=True, metavar="NAME",
              help="Scorer: token_f1, rouge1, rouge2, rougeL, rougeLsum (-O use_stemmer=true), semantic_similarity "
                   "(the semantic extra), labels, answer_judge, or one registered under the entry point group goldeval.scorers.")
@click.option("--option", "-O", "scorer_options", multiple=True, metavar="KEY=VALUE",
              help="An option of the scorer (repeatable), e.g. -O positive=escalate; the value is read as the type the scorer "
                   "declares for that option (text, true/false, an integer, a number).")
@spark_options
@gates_option
@slice_option
@ci_options
@store_options
@guarded
def score(file, prediction_field, reference_field, id_field, tokenizer, out, out_format, workers, quiet, scorer_name,
          scorer_options, engine, spark_master, per_case, gates, slice_by, run_store, ci):
    """Token F1 (precision, recall, F1) of every row of FILE, per example and macro-averaged (or --scorer NAME).

    FILE is JSONL, CSV or Parquet: {"id", "prediction", "reference"} per row, texts as strings or objects of
    sections. Rows that cannot be scored are listed with their line number (row index for Parquet), counted in
    n_failed and left out of the means.
    """
    from goldeval.pipeline.run import evaluate  # start-up: the library loads only when the command runs, not for --help

    # start-up: the library loads only when the command runs, not for --help
    from goldeval.scoring.registry import get_scorer

    fields = {"prediction_field": prediction_field, "reference_field": reference_field, "id_field": id_field, "tokenizer": tokenizer}
    scorer = get_scorer(scorer_name)  # registers its metrics with the gates
    # a field option goes to every scorer that takes it; --tokenizer only when given (its default is token F1's
    # own, and must not override another scorer's default for an option of the same name)
    from click.core import ParameterSource

    if click.get_current_context().get_parameter_source("tokenizer") is not ParameterSource.COMMANDLINE:
        fields.pop("tokenizer")
    given = {k: v for k, v in fields.items() if k in scorer.options}
    options = {**given, **_parse_options(scorer_options, scorer)}
    console = report_console(out)
    # the examples stream to --out and, for --junit-cases, as (id, status, F1) to the JUnit cases
    junit_cases: list[dict] | None = [] if ci.junit_cases and engine != "spark" else None
    # a bar on a terminal from 2,000 rows (a smaller file is done before a bar is worth drawing)
    with ConsoleObserver(console, quiet=quiet, render=_render if engine != "spark" else _render_generic,
                         what="scoring", unit="rows", min_total=2000) as observer:
        ev = evaluate(scorer if engine != "spark" else scorer_name, file, options=options, gates=gates,
                      recording=run_store, out=out, out_format=out_format, workers=workers, engine=engine,
                      spark_master=spark_master, per_case=per_case, keep_cases=False,
                      on_example=None if junit_cases is None else (lambda entry: junit_cases.append(_slim(entry))),
                      observer=observer, guard=ci.outputs(), batch_kernel=False, slice_by=slice_by)
    results = ev.results
    ci.write(results if junit_cases is None else {**results, "per_example": junit_cases})
    if ev.problem is not None:
        fail(ev.problem, EXIT_BAD_INPUT)
    sys.exit(ev.exit_code)


#: The keys of a per_example entry that a JUnit testcase of one case needs (report.junit._case_tests).
_JUNIT_KEYS = ("id", "status", "reason", "error", "whole_note", "outcome", "gold", "pred", "verdict", "why", "gold_status",
               "confidence")


def _slim(entry: dict) -> dict:
    """What a JUnit testcase of one case needs: id, status, the score or outcome or verdict, the reason."""
    return {k: entry[k] for k in _JUNIT_KEYS if k in entry}


def _render(results: dict, scorer, console) -> None:
    scorer.render_summary(results, console)


def _render_generic(results: dict, scorer, console) -> None:
    """A Spark run's summary (its results hold no per_example): the aggregate table of any scorer."""
    # start-up: the library loads only when the command runs, not for --help
    from goldeval.scoring.render import render_scorer

    render_scorer(results, console)


def _parse_options(pairs: tuple[str, ...], scorer) -> dict:
    """``KEY=VALUE`` pairs as a dict, each value converted by the type *scorer* declares for that option
    (:meth:`goldeval.scoring.protocol.Scorer.options_from_text`: ``positive=1`` is the label ``"1"``)."""

    texts: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise InputError(f"--option {pair!r}: expected KEY=VALUE, e.g. -O positive=escalate.")
        texts[key] = value
    return scorer.options_from_text(texts)
