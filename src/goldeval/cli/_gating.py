"""The reusable ``--gates`` option and :func:`apply_gates`, for every scoring command (``labels``, ``score``,
``judge``) and for ``gate``.

Use::

    @gates_option
    def my_command(..., gates: str | None, out: str | None):
        results = ...                                   # the results dict, not yet written
        console = report_console(out)
        code = apply_gates(results, gates, console)     # adds results["gates"], prints the decision
        write_json(results, out)                        # the gate report is in the file
        sys.exit(code)                                  # 0 every gate passes (or none given), 1 a gate fails

A bad gates file raises :class:`~goldeval.errors.InputError` (exit 2 under ``guarded``); load it before scoring
with :func:`load_definition` to fail fast.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from goldeval.cli._common import EXIT_GATE_FAILED, EXIT_OK
from goldeval.cli._inputs import INPUT
from goldeval.pipeline.gating import apply_definition, hold_finish_for_gates, load_definition

__all__ = ["gates_option", "apply_gates", "hold_finish_for_gates", "load_definition", "render_gate_report", "slice_option"]


def gates_option(func: Callable[..., Any]) -> Callable[..., Any]:
    """``--gates DOD.toml``: the definition of done to apply (passed to the command as ``gates``)."""
    return click.option(
        "--gates",
        "gates",
        default=None,
        metavar="DOD.toml",
        type=INPUT,
        help="Definition of done (TOML [gates]); exit 1 when a gate fails. Its sha256 is recorded in the results.",
    )(func)


def slice_option(func: Callable[..., Any]) -> Callable[..., Any]:
    """``--slice-by FIELD``: every metric per value of a case field too (passed to the command as ``slice_by``)."""
    return click.option(
        "--slice-by",
        "slice_by",
        default=None,
        metavar="FIELD",
        help="A case field (difficulty, db, a tag column): every metric per value of it too, under 'slices' in the "
             "results, on the console and in JUnit; a row without it is in the slice '(none)'. Gates may name a "
             "slice: [gates.slices.hard] pass_rate = { min = 0.6 }.",
    )(func)


def apply_gates(results: dict, gates_path: str | None, console: Any, *, definition: Any = None, recorder: Any = None) -> int:
    """Evaluate the gates on *results* (:func:`goldeval.pipeline.gating.apply_definition`), print the report, return
    the exit code: 0 when every gate passes (or nothing was gated), 1 when a gate fails.

    ``definition`` is an already loaded definition (then ``gates_path`` is ignored); a bad gates file raises
    InputError."""
    dod = definition if definition is not None else load_definition(gates_path)
    report = apply_definition(results, dod, recorder=recorder)
    if report is None:
        return EXIT_OK
    render_gate_report(report, console)
    return EXIT_OK if report.passed else EXIT_GATE_FAILED


def render_gate_report(report: Any, console: Any) -> None:
    """A table (gate · observed · its interval · limit · result · on this set) and the summary line, unwrapped."""
    from rich.markup import escape  # start-up: rich loads only when a table is rendered
    from rich.table import Table  # start-up: rich loads only when a table is rendered

    from goldeval.gates.evaluate import interval_text  # start-up: the gates load only when a report is rendered

    d = report.definition
    who = ", ".join(x for x in (f"agreed by {d['agreed_by']}" if d.get("agreed_by") else "", f"on {d['agreed_on']}" if d.get("agreed_on") else "") if x)
    table = Table(title=escape(f"Definition of done: {d['path']}" + (f" ({who})" if who else "")), title_justify="left")
    for col in ("gate", "observed", "interval", "limit", "result", "on this set"):
        table.add_column(col, overflow="fold")
    for r in report.results:
        op = "≥" if r.op == "min" else "≤"
        limit = r.limit_text if r.limit_metric is None else f"{r.limit_metric} ({'?' if r.limit is None else _as_shown(r.limit, r.observed_text)})"
        observed = r.observed_text if r.observed_text is not None else "—"
        result = "[green]pass[/green]" if r.passed else "[red]FAIL[/red]"
        table.add_row(r.metric if r.slice is None else escape(f"{r.metric} [{r.slice}]"), observed, interval_text(r.to_dict()), escape(f"{op} {limit}"), result,
                      escape(r.reason or r.allowed_on_this_set or ""))
    console.print(table)
    for w in report.warnings:
        console.print(f"warning: {w}", markup=False, highlight=False, soft_wrap=True)
    console.print(report.summary, markup=False, highlight=False, soft_wrap=True)


def _as_shown(limit: float, observed_text: str | None) -> str:
    """A limit another metric's value sets, to the decimals the observed value is shown with (the gates round both
    alike so that they never seem to contradict the decision: 0.40040 against 0.40045, not against 0.400)."""
    if observed_text is None or not observed_text.replace(".", "", 1).lstrip("-").isdigit():
        return f"{limit:.3f}"
    decimals = len(observed_text.partition(".")[2])
    return f"{limit:.{decimals}f}"
