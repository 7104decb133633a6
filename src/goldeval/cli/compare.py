"""``goldeval compare RUN_A RUN_B``: two recorded runs, case by case."""

from __future__ import annotations

import sys

import click

from goldeval.cli._ci import junit_option, write_junit
from goldeval.cli._common import (
    EXIT_GATE_FAILED,
    EXIT_OK,
    calibration_option,
    exit_codes,
    guard_outputs,
    guarded,
    out_option,
    report_console,
    run_inputs,
    write_json,
)
from goldeval.cli._store import store_files, store_path_option
from goldeval.cli._types import SEED, Finite
from goldeval.errors import InputError
from goldeval.runs.backends import open_existing_store


@click.command()
@exit_codes
@click.argument("run_a")
@click.argument("run_b")
@store_path_option
@click.option("--fail-on-regression", is_flag=True,
              help="Exit 1 when any case went from pass to fail, or when no case was decided in both runs (verdict runs only).")
@out_option("Write the comparison JSON here ('-' for stdout).")
@click.option("--seed", type=SEED, default=0, show_default=True, help="Seed of the paired bootstrap.")
@click.option("--resamples", type=click.IntRange(min=100, max=1_000_000), default=10_000, show_default=True, help="Bootstrap resamples.")
@click.option("--confidence", type=Finite(0, 1, min_open=True, max_open=True), default=0.95, show_default=True,
              help="Coverage of the intervals (Newcombe's paired score interval of the pass-rate difference, the bootstrap's of the mean F1).")
@click.option("--top", type=click.IntRange(min=0), default=10, show_default=True, help="How many biggest F1 movers to list.")
@click.option("--quiet", "-q", is_flag=True, help="No summary on the console.")
@calibration_option
@junit_option
@guarded
def compare(run_a, run_b, store, fail_on_regression, out, seed, resamples, confidence, top, quiet, calibration, junit):
    """Compare RUN_A (before) with RUN_B (after), matching cases by id.

    \b
    Shows cases added or removed; for verdicts the flips (pass → fail, fail → pass, both whys side by side), the
    cases that stayed, near_match that is stable (in both) or flickering (in one only), McNemar's exact test and
    Newcombe's paired score interval (Newcombe 1998, method 10) for the pass-rate difference; for F1 the per-case
    deltas, the biggest movers and a paired bootstrap interval for the mean difference. RUN is an id, a tag
    (goldeval runs tag), a unique prefix, 'latest' or 'latest~N'. Each run's age is shown (a stale baseline is seen).
    With --calibration, each run's pass rate is also shown corrected for the judge's measured error.
    The CI line: goldeval compare baseline/main latest --fail-on-regression
    """
    from goldeval.runs.compare import CompareCases, compare_runs, regression_decision  # start-up: the run store loads only when the command runs

    guard_outputs({"--out": out, "--junit": junit}, {"--store": store_files(store), "--calibration": calibration})
    with open_existing_store(store) as st:
        a = st.get_run(run_a, with_results=False)
        b = st.get_run(run_b, with_results=False)
        for ref, run in ((run_a, a), (run_b, b)):  # the name each was given by (baseline/main) and its tags
            run["ref"], run["tags"] = ref, [t["name"] for t in st.tags(run["id"])]
        guard_outputs({"--out": out, "--junit": junit}, run_inputs(st, a["id"], b["id"]))  # never over their inputs
        cmp = compare_runs(
            # each record read down to what a comparison reads as it is decoded: ~200 bytes a free-text case
            CompareCases.of_run(st, a["id"]), CompareCases.of_run(st, b["id"]), run_a=a, run_b=b,
            seed=seed, n_resamples=resamples, confidence=confidence, top=top,
        )
        if calibration is not None:
            # start-up: the run store loads only when the command runs
            from goldeval.runs.corrected import add_corrected_to_comparison, load_calibration

            add_corrected_to_comparison(cmp, load_calibration(calibration, st), confidence=confidence)
    if (fail_on_regression or junit) and cmp["verdicts"] is None:

        raise InputError(
            f"{'--fail-on-regression' if fail_on_regression else '--junit'}: runs {a['id']} and {b['id']} hold no verdicts ({a['scorer_name']} scores), so no "
            "case can go from pass to fail. Drop the flag (and gate the score with --gates on the scoring command)."
        )
    if not quiet:
        # start-up: the report modules (~90 more, 0.1 s) load only when the summary is rendered
        from goldeval.report.runs import render_compare

        render_compare(cmp, report_console(out))
    if out:
        write_json(cmp, out)
    if junit:
        # start-up: the report modules load only when one is written or rendered
        from goldeval.report.junit import compare_junit

        write_junit(junit, compare_junit(cmp))  # one testcase per flipped case; pass → fail is a <failure>
    if fail_on_regression:
        decision = regression_decision(cmp)  # the same decision the compare page shows
        if decision["failed"]:
            if not decision["n_regressions"]:
                # the gate "no pass became a fail" never passes on no evidence: no case was decided in both runs
                click.echo(f"goldeval: --fail-on-regression: {decision['reason']}.", err=True)
            sys.exit(EXIT_GATE_FAILED)
    return EXIT_OK
