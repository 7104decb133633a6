"""Terminal rendering of any scorer's results (a third-party scorer's, or one run through ``--scorer NAME``)."""

from __future__ import annotations

from typing import Any

from goldeval.io.printable import fmt

__all__ = ["render_scorer"]


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
