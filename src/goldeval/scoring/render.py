"""Terminal rendering of any scorer's results (a third-party scorer's, or one run through ``--scorer NAME``)."""

from __future__ import annotations

from typing import Any

from goldeval.io.printable import fmt

__all__ = ["render_scorer", "render_slices"]


def render_scorer(results: dict[str, Any], console: Any, *, max_failures: int = 10) -> None:
    """Print the scalar entries of ``results["aggregate"]`` (undefined ones as ``undefined``) and the first failures.

    Args:
        results: A results dict (``{"scorer", "aggregate", "failures"?}``).
        console: A ``rich.console.Console``.
        max_failures: How many failure lines to show (the rest are counted).
    """
    from rich.table import Table  # start-up: rich loads only when a table is rendered

    agg = results["aggregate"]
    undefined = agg.get("undefined") or {}
    name = (results.get("scorer") or {}).get("name", "?")
    src = (results.get("input") or {}).get("path") or "rows"
    console.print(f"{name} of {src}", markup=False, highlight=False, soft_wrap=True)
    table = Table(title_justify="left")
    table.add_column("metric")
    table.add_column("value", justify="right")
    for key, value in agg.items():
        if key == "headline":
            continue
        if key in undefined:
            table.add_row(key, "undefined")
        elif isinstance(value, (int, float, str)) or value is None:
            table.add_row(key, fmt(value) if not isinstance(value, str) else value)
    console.print(table)
    for metric, reason in undefined.items():
        console.print(f"[yellow]{metric} undefined: {reason}[/]", soft_wrap=True)
    failures = results.get("failures") or []
    if failures:
        console.print(f"[yellow]{len(failures)} row(s) not scored (left out of the metrics):[/]")
        for f in failures[:max_failures]:
            console.print(f"  {f['error']}", markup=False, highlight=False, soft_wrap=True)
        if len(failures) > max_failures:
            console.print(f"  … and {len(failures) - max_failures} more (all are listed in the JSON under 'failures')")


def render_slices(results: dict[str, Any], console: Any, *, columns: tuple[str, ...] = (), headline: str | None = None,
                  max_slices: int = 50) -> None:
    """Print ``results["slices"]`` (a run with ``--slice-by``) as one table: a row per slice, a column per metric.

    Args:
        results: A results dict; nothing is printed without ``slices``.
        console: A ``rich.console.Console``.
        columns: The aggregate keys to show (a scorer's ``slice_columns``); empty: ``n``, ``n_scored`` and
            *headline*. A value the slice lists under ``undefined`` shows as ``undefined``; a slice the scorer could
            not aggregate shows its error. The rows with a field that names no slice are listed after it.
    """
    slices = results.get("slices")
    if not isinstance(slices, dict) or not slices:
        return
    from rich.markup import escape  # start-up: rich loads only when a table is rendered
    from rich.table import Table  # start-up: rich loads only when a table is rendered

    cols = list(columns) or [c for c in ("n", "n_scored", headline) if c]
    table = Table(title=escape(f"per slice of {results.get('slice_by', '?')} ({len(slices)} {'slice' if len(slices) == 1 else 'slices'})"), title_justify="left")
    table.add_column("slice", overflow="fold")
    for c in cols:
        table.add_column(c, justify="right")
    errors = []
    for i, (name, agg) in enumerate(slices.items()):
        if i == max_slices:
            break
        if not isinstance(agg, dict):
            continue
        if "error" in agg:
            errors.append((name, agg["error"]))
            table.add_row(escape(str(name)), *["—" for _ in cols])
            continue
        undefined = agg.get("undefined") or {}
        cells = []
        for c in cols:
            v = agg.get(c)
            cells.append("undefined" if c in undefined else "—" if v is None else v if isinstance(v, str) else fmt(v))
        table.add_row(escape(str(name)), *cells)
    console.print(table)
    if len(slices) > max_slices:
        console.print(f"… and {len(slices) - max_slices} more slices (all are in the results under 'slices')",
                      markup=False, highlight=False, soft_wrap=True)
    for name, error in errors:
        console.print(f"slice {name}: not aggregated: {error}", markup=False, highlight=False, soft_wrap=True)
    bad = results.get("slice_errors") or []
    if bad:
        console.print(f"[yellow]{len(bad)} row(s) name no slice (scored, counted in the whole, in the slice '(invalid)'):[/]")
        for e in bad[:10]:
            console.print(f"  {e['error']}", markup=False, highlight=False, soft_wrap=True)
        if len(bad) > 10:
            console.print(f"  … and {len(bad) - 10} more (all are listed in the JSON under 'slice_errors')")
