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

__all__ = ["gates_option", "apply_gates", "hold_finish_for_gates", "load_definition", "render_gate_report"]


def gates_option(func: Callable[..., Any]) -> Callable[..., Any]:
    from goldeval.cli._inputs import INPUT

    """``--gates DOD.toml``: the definition of done to apply (passed to the command as ``gates``)."""
    return click.option(
        "--gates",
        "gates",
        default=None,
        metavar="DOD.toml",
        type=INPUT,
        help="Definition of done (TOML [gates]); exit 1 when a gate fails. Its sha256 is recorded in the results.",
    )(func)


def load_definition(gates_path: str | None, *, scorer: str | None = None):
    """The parsed definition of done, or ``None`` when no ``--gates`` was given (raises InputError when bad).

    With ``scorer`` (the results' ``scorer.name``, e.g. ``"token_f1"``), a gate on a metric that scorer never
    produces is refused now, before anything is scored or recorded (see :func:`goldeval.gates.evaluate.check_scorer`).
    """
    if gates_path is None:
        return None
    from goldeval.gates.evaluate import check_scorer
    from goldeval.gates.definition import load_gates

    dod = load_gates(gates_path)
    if scorer is not None:
        check_scorer(dod, scorer)
    return dod


def apply_gates(results: dict, gates_path: str | None, console: Any, *, definition: Any = None, recorder: Any = None) -> int:
    """Evaluate the gates on *results*, store the report under ``results["gates"]``, print it, return the exit code.

    Args:
        results: The results dict a scorer returned (mutated: ``"gates"`` is added).
        gates_path: Path of the TOML definition of done, or ``None`` for no gating (returns 0, adds nothing).
        console: A rich Console for the table and the one-line summary.
        definition: An already loaded :class:`~goldeval.gates.definition.DefinitionOfDone` (then ``gates_path`` is ignored).
        recorder: The run's recorder, if any: when gates were applied, the run is finished with the results that
            now hold the gate report, so the store keeps the decision. Give the recorder to
            :func:`hold_finish_for_gates` before scoring, so that the run is finished once, here.

    Returns:
        0 when every gate passes (or nothing was gated), 1 when a gate fails.

    Raises:
        InputError: a bad gates file, a gate on a metric this scorer never produces, a positive-label mismatch.
    """
    dod = definition if definition is not None else load_definition(gates_path)
    if dod is None:
        return EXIT_OK
    from goldeval.gates.evaluate import evaluate_gates

    report = evaluate_gates(results, dod)
    results["gates"] = report.to_dict()
    if recorder is not None:
        if hasattr(recorder, "hold_finish"):
            recorder.hold_finish = False
        recorder.finish(results)
    render_gate_report(report, console)
    return EXIT_OK if report.passed else EXIT_GATE_FAILED


def hold_finish_for_gates(recorder: Any, definition: Any) -> None:
    """With gates to evaluate (``definition`` not ``None``), keep the scorer from finishing the run: it is
    finished once, by :func:`apply_gates`, with the gate report (killed in between, it is left interrupted and
    resumable, never finished without its decision). Nothing happens without a recorder or without gates."""
    if recorder is not None and definition is not None and hasattr(recorder, "hold_finish"):
        recorder.hold_finish = True


def render_gate_report(report: Any, console: Any) -> None:
    """A table (gate · observed · limit · result · on this set) and the summary line, unwrapped."""
    from rich.markup import escape
    from rich.table import Table

    d = report.definition
    who = ", ".join(x for x in (f"agreed by {d['agreed_by']}" if d.get("agreed_by") else "", f"on {d['agreed_on']}" if d.get("agreed_on") else "") if x)
    table = Table(title=escape(f"Definition of done: {d['path']}" + (f" ({who})" if who else "")), title_justify="left")
    for col in ("gate", "observed", "limit", "result", "on this set"):
        table.add_column(col, overflow="fold")
    for r in report.results:
        op = "≥" if r.op == "min" else "≤"
        limit = r.limit_text if r.limit_metric is None else f"{r.limit_metric} ({'?' if r.limit is None else f'{r.limit:.3f}'})"
        observed = r.observed_text if r.observed_text is not None else "—"
        result = "[green]pass[/green]" if r.passed else "[red]FAIL[/red]"
        table.add_row(r.metric, observed, escape(f"{op} {limit}"), result, escape(r.reason or r.allowed_on_this_set or ""))
    console.print(table)
    for w in report.warnings:
        console.print(f"warning: {w}", markup=False, highlight=False, soft_wrap=True)
    console.print(report.summary, markup=False, highlight=False, soft_wrap=True)
