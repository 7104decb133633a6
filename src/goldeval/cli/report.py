"""``goldeval report``: one self-contained HTML page for a recorded run, two runs compared, a results file, or every
run of the store (``--runs``)."""

from __future__ import annotations

import os

import click

from goldeval.cli._common import EXIT_OK, calibration_option, echo, exit_codes, guard_outputs, guarded
from goldeval.cli._progress import Activity
from goldeval.cli._store import store_files, store_path_option
from goldeval.cli._types import SEED, Finite
from goldeval.errors import InputError
from goldeval.io.outputs import open_output, write_output
from goldeval.runs.backends import open_existing_store


@click.command()
@exit_codes
@click.argument("run", required=False)
@click.option("--compare", "compare_ref", default=None, metavar="RUN_B|B.json",
              help="Compare mode: RUN is A (before), RUN_B is B (after); flips, near_match, movers, McNemar, bootstrap. "
                   "With --results A.json, a second results file B.json.")
@click.option("--results", "results_file", default=None, type=click.Path(dir_okay=False, path_type=str),
              help="A results JSON goldeval wrote (instead of RUN from the store).")
@click.option("--runs", "runs_page", is_flag=True,
              help="A page across runs: every run of the store as a row (headline, interval, gates, versions) and per "
                   "arm a chart of the headline over time, marked where the judge version, rubric or dataset changed.")
@click.option("--arm", default=None, metavar="NAME", help="With --runs: only this arm's runs.")
@click.option("--tag", default=None, metavar="TAG",
              help="With --runs: only runs that carry this tag (goldeval runs tag), or a tag under it when it ends in '/' "
                   "(release/ chooses release/2026-11, release/2026-12).")
@click.option("--since", default=None, metavar="DATE",
              help="With --runs: only runs recorded on or after DATE (2026-12-01, or 2026-12-01T09:30; UTC).")
@store_path_option
@click.option("--out", "-o", required=True, metavar="report.html", help="Where to write the page ('-' for stdout).")
@click.option("--max-cases", type=click.IntRange(min=1), default=20_000, show_default=True,
              help="Above this many cases, embed every failing, changed or undecided case and a stated sample of the rest.")
@click.option("--redact", is_flag=True, help="Leave out every case text (predictions, references, answers, questions); keep ids, numbers, verdicts.")
@click.option("--min-f1", type=Finite(0, 1), default=None,
              help="Free text: a case whose F1 is below this is a failure in the table's filters.")
@click.option("--seed", type=SEED, default=0, show_default=True, help="Seed of the sample and of the bootstrap intervals.")
@click.option("--resamples", type=click.IntRange(min=100, max=1_000_000), default=2000, show_default=True,
              help="Bootstrap resamples of the headline interval.")
@click.option("--quiet", "-q", is_flag=True, help="Print nothing but errors.")
@calibration_option
@guarded
def report(run, compare_ref, results_file, runs_page, arm, tag, since, store, out, max_cases, redact, min_f1, seed, resamples,
           quiet, calibration):
    """Write one self-contained HTML report of RUN (an id, a unique prefix, 'latest' or 'latest~N').

    \b
    The page fetches nothing (every script, style and chart is inline; it works offline from file://), shows case
    texts as text (never as markup), and holds: the run's header (versions, hashes, who agreed to the gates), the
    PASS/FAIL decision with each gate, the summary with the headline's bootstrap interval, charts for the scorer,
    and a table of cases with filters, search, sorting and rows that open to everything about a case.
    With --compare RUN_B the page leads with the comparison of RUN (A, before) with RUN_B (B, after).
    With --runs (and no RUN) the page holds every run of the store instead (--arm, --tag, --since choose them).
    A run judged with --calibration shows its corrected pass rate; give --calibration here to correct any
    data-answer run.
    """
    # start-up: the report modules load only when one is written or rendered
    from goldeval.report.model import ReportOptions

    if runs_page:
        return _runs_page(arm=arm, tag=tag, since=since, store=store, out=out, seed=seed, resamples=resamples, quiet=quiet,
                          others={"RUN": run, "--results": results_file, "--compare": compare_ref,
                                  "--calibration": calibration})
    chosen = [k for k, v in (("--arm", arm), ("--tag", tag), ("--since", since)) if v is not None]
    if chosen:
        raise InputError(f"report: {chosen[0]} chooses the runs of the page across runs; "
                         "pass --runs too (goldeval report --runs --arm NAME --out runs.html).")
    if (run is None) == (results_file is None):
        raise InputError("report: give RUN (from the store) or --results FILE (a results JSON), not both and not neither.")
    others: dict = {"--results": results_file}
    if results_file is not None and compare_ref is not None:

        if not os.path.isfile(compare_ref):
            raise InputError(f"--compare {compare_ref}: no such file. With --results A.json, --compare names a second "
                             "results file (B.json, the run after); to compare two recorded runs give RUN --compare RUN_B.")
        others["--compare"] = compare_ref
    if results_file is None:

        others["--store"] = store_files(store)
    others["--calibration"] = calibration
    guard_outputs({"--out": out}, others)
    options = ReportOptions(max_cases=max_cases, redact=redact, min_f1=min_f1, seed=seed, resamples=resamples)
    if results_file is not None:
        # start-up: the report modules load only when one is written or rendered
        from goldeval.report.build import report_inputs, report_model_from_results

        guard_outputs({"--out": out}, report_inputs(results_path=results_file, compare_results=compare_ref))
        _refuse_replacing_a_file_that_is_no_page(out)
        from goldeval.runs.corrected import calibration_from  # start-up: the run store loads only when the command runs

        calib = None if calibration is None else calibration_from(calibration, store)
        model = Activity("building the report", quiet=quiet).run(
            report_model_from_results, results_file, compare_path=compare_ref, options=options, seed=seed, calibration=calib)
    else:
        # start-up: the report modules load only when one is written or rendered
        from goldeval.report.build import report_inputs, report_model_from_store

        with open_existing_store(store) as st:
            guard_outputs({"--out": out}, report_inputs(store=st, run=run, compare=compare_ref))
            _refuse_replacing_a_file_that_is_no_page(out)
            # start-up: the run store loads only when the command runs
            from goldeval.runs.corrected import load_calibration

            calib = None if calibration is None else load_calibration(calibration, st)
            model = Activity("building the report", quiet=quiet).run(
                report_model_from_store, st, run, compare=compare_ref, options=options, seed=seed, calibration=calib,
                stream=True)  # one run's cases read from the store with a cursor, their texts as the page is written

    # start-up: the report modules load only when one is written or rendered
    from goldeval.report.html import write_html

    with open_output(out) as fh:  # the page a chunk of cases at a time, never one string (atomic for a file)
        write_html(model, fh)
    if not quiet and out != "-":
        n = len(model["cases"])
        sample = model.get("sample")
        extra = f" ({sample['n_total']:,} in the run; sampled, see the page)" if sample else ""
        cmp = model.get("compare")
        status = (f"{cmp['verdict']['status']} (A {model['decision_a']['status']}, B {model['decision']['status']})"
                  if cmp else model["decision"]["status"])
        click.echo(f"goldeval: report written to {out}: {status}, {n:,} case(s) embedded{extra}"
                   + (", texts redacted" if redact else ""), err=True)
        for note in model.get("notes") or []:
            echo(f"goldeval: note: {note}")
    return EXIT_OK


def _runs_page(*, arm, tag, since, store, out, seed, resamples, quiet, others) -> int:
    """``report --runs``: the page across runs of the store (library: :func:`goldeval.report.runs_page.runs_model`)."""
    # start-up: the report modules load only when one is written or rendered
    from goldeval.report.html import render_runs_html
    from goldeval.report.model import ReportOptions
    from goldeval.report.runs_page import parse_since, runs_model

    given = [k for k, v in others.items() if v is not None]
    if given:
        raise InputError(f"report --runs: the page across runs is made of the store's runs; it takes no {' or '.join(given)}. "
                         "Drop it (choose the runs with --arm, --tag and --since), or drop --runs for one run's report.")
    when = None if since is None else parse_since(since)
    guard_outputs({"--out": out}, {"--store": store_files(store)})
    _refuse_replacing_a_file_that_is_no_page(out)
    with open_existing_store(store) as st:
        model = runs_model(st, arm=arm, tag=tag, since=when, options=ReportOptions(seed=seed, resamples=resamples))
    write_output(out, render_runs_html(model).encode("utf-8"))
    if not quiet and out != "-":
        click.echo(f"goldeval: runs page written to {out}: {model['n_runs']:,} run(s), {sum(1 for a in model['arms'] if a['chart'])} chart(s) "
                   "of a headline over time", err=True)
    return EXIT_OK


def _refuse_replacing_a_file_that_is_no_page(out: str) -> None:
    """An existing regular file at *out* is replaced only when its name says it is a page (.html, .htm): an HTML
    report written over ``preds.jsonl`` or ``dod.toml`` of another run is a typo that destroys a user's file (a
    newcomer overwrote a shipped example that way). Raises InputError (exit 2), before any work."""


    if out != "-" and os.path.isfile(out) and not out.lower().endswith((".html", ".htm")):
        raise InputError(f"--out {out}: the file exists and is not an .html page; goldeval will not replace it with a "
                         "report. Name a .html file (e.g. report.html), or remove that file first.")
