"""``goldeval report``: one self-contained HTML page for a recorded run, two runs compared, or a results file."""

from __future__ import annotations

import os

import click

from goldeval.cli._common import EXIT_OK, echo, exit_codes, guard_outputs, guarded
from goldeval.cli._store import store_files, store_path_option
from goldeval.cli._types import SEED, Finite
from goldeval.errors import InputError
from goldeval.io.outputs import open_output
from goldeval.runs.store import RunStore


@click.command()
@exit_codes
@click.argument("run", required=False)
@click.option("--compare", "compare_ref", default=None, metavar="RUN_B|B.json",
              help="Compare mode: RUN is A (before), RUN_B is B (after); flips, near_match, movers, McNemar, bootstrap. "
                   "With --results A.json, a second results file B.json.")
@click.option("--results", "results_file", default=None, type=click.Path(dir_okay=False, path_type=str),
              help="A results JSON goldeval wrote (instead of RUN from the store).")
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
@guarded
def report(run, compare_ref, results_file, store, out, max_cases, redact, min_f1, seed, resamples, quiet):
    """Write one self-contained HTML report of RUN (an id, a unique prefix, 'latest' or 'latest~N').

    \b
    The page fetches nothing (every script, style and chart is inline; it works offline from file://), shows case
    texts as text (never as markup), and holds: the run's header (versions, hashes, who agreed to the gates), the
    PASS/FAIL decision with each gate, the summary with the headline's bootstrap interval, charts for the scorer,
    and a table of cases with filters, search, sorting and rows that open to everything about a case.
    """
    # start-up: the report modules load only when one is written or rendered
    from goldeval.report.model import ReportOptions

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
    guard_outputs({"--out": out}, others)
    options = ReportOptions(max_cases=max_cases, redact=redact, min_f1=min_f1, seed=seed, resamples=resamples)
    if results_file is not None:
        # start-up: the report modules load only when one is written or rendered
        from goldeval.report.build import report_inputs, report_model_from_results

        guard_outputs({"--out": out}, report_inputs(results_path=results_file, compare_results=compare_ref))
        _refuse_replacing_a_file_that_is_no_page(out)
        model = report_model_from_results(results_file, compare_path=compare_ref, options=options, seed=seed)
    else:
        # start-up: the report modules load only when one is written or rendered
        from goldeval.report.build import report_inputs, report_model_from_store

        with RunStore.open_existing(store) as st:
            guard_outputs({"--out": out}, report_inputs(store=st, run=run, compare=compare_ref))
            _refuse_replacing_a_file_that_is_no_page(out)
            model = report_model_from_store(st, run, compare=compare_ref, options=options, seed=seed)

    # start-up: the report modules load only when one is written or rendered
    from goldeval.report.html import write_html

    with open_output(out) as fh:  # the page a chunk of cases at a time, never one string (atomic for a file)
        write_html(model, fh)
    if not quiet and out != "-":
        n = len(model["cases"])
        sample = model.get("sample")
        extra = f" ({sample['n_total']:,} in the run; sampled, see the page)" if sample else ""
        click.echo(f"goldeval: report written to {out}: {model['decision']['status']}, {n:,} case(s) embedded{extra}"
                   + (", texts redacted" if redact else ""), err=True)
        for note in model.get("notes") or []:
            echo(f"goldeval: note: {note}")
    return EXIT_OK


def _refuse_replacing_a_file_that_is_no_page(out: str) -> None:
    """An existing regular file at *out* is replaced only when its name says it is a page (.html, .htm): an HTML
    report written over ``preds.jsonl`` or ``dod.toml`` of another run is a typo that destroys a user's file (a
    newcomer overwrote a shipped example that way). Raises InputError (exit 2), before any work."""


    if out != "-" and os.path.isfile(out) and not out.lower().endswith((".html", ".htm")):
        raise InputError(f"--out {out}: the file exists and is not an .html page; goldeval will not replace it with a "
                         "report. Name a .html file (e.g. report.html), or remove that file first.")
