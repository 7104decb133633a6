"""Terminal rendering of free-text (token F1) results."""

from __future__ import annotations

from typing import Any

from goldeval.io.printable import fmt, fmt_seconds

__all__ = ["render_freetext"]


def render_freetext(results: dict[str, Any], console: Any, *, max_failures: int = 10) -> None:
    """Print the summary table of a ``score`` results dict, the section table if any, and the first failures.

    Args:
        results: What :func:`goldeval.score_file` returns.
        console: A ``rich.console.Console``.
        max_failures: How many failure lines to show (the rest are counted).
    """
    from rich.table import Table  # start-up: rich loads only when a table is rendered

    agg = results["aggregate"]
    src = (results.get("input") or {}).get("path") or "rows"
    console.print(f"token F1 of {src}", markup=False, highlight=False, soft_wrap=True)
    table = Table(title_justify="left")
    table.add_column("metric")
    table.add_column("value", justify="right")
    table.add_row("rows scored (n)", f"{agg['n']} of {agg['n_rows']}")
    table.add_row("rows failed (n_failed)", str(agg["n_failed"]))
    for key, label in (
        ("whole_note_f1_mean", "whole-note F1 (macro)"),
        ("whole_note_precision_mean", "whole-note precision (macro)"),
        ("whole_note_recall_mean", "whole-note recall (macro)"),
        ("section_f1_mean", "section F1 (macro over sections with text)"),
    ):
        if key in agg:
            value = "undefined" if key in agg.get("undefined", {}) else fmt(agg[key])
            table.add_row(label, value)
    table.add_row("tokenizer", f"{agg['tokenizer']}@{agg.get('tokenizer_version', '?')}")
    table.add_row("elapsed", fmt_seconds(agg["elapsed_sec"]))
    console.print(table)
    sections = agg.get("sections")
    if sections:
        st = Table(title="per section (examples with text on either side)", title_justify="left")
        for col in ("section", "n", "both empty", "precision", "recall", "F1"):
            st.add_column(col, justify="left" if col == "section" else "right")
        for name, s in sections.items():
            st.add_row(name, str(s["n"]), str(s["n_empty_both"]), fmt(s["precision_mean"]), fmt(s["recall_mean"]), fmt(s["f1_mean"]))
        console.print(st)
    n_unread = agg.get("n_with_unreadable_text", 0)
    if n_unread:
        first = agg.get("first_unreadable")
        if first is None:  # results written before first_unreadable was part of the aggregate
            r = next(r for r in results["per_example"] if "unreadable" in r)
            first = {"id": r["id"], **r["unreadable"]}
        console.print(
            f"[yellow]{n_unread} scored row(s) hold letters the {agg['tokenizer']} rule cannot read and were scored on the "
            f"rest (first: {first['id']!r}, {first['side']} has {first['char']!r}); "
            "consider --tokenizer unicode.[/]", soft_wrap=True)
    n_split = agg.get("n_with_split_words", 0)
    if n_split:
        first = agg.get("first_split_word") or {}
        console.print(
            f"[yellow]{n_split} scored row(s) have words the {agg['tokenizer']} rule split at a non-ASCII letter "
            f"(first: {first.get('id')!r}, {first.get('side')} has {first.get('word')!r}); that is the upstream rule "
            "and the scores follow it; --tokenizer unicode keeps such words whole.[/]", soft_wrap=True, highlight=False)
    for reason in agg.get("undefined", {}).items():
        console.print(f"[yellow]{reason[0]} undefined: {reason[1]}[/]")
    failures = results.get("failures") or []
    if failures:
        console.print(f"[yellow]{len(failures)} row(s) not scored (left out of the means):[/]")
        for f in failures[:max_failures]:
            console.print(f"  {f['error']}", markup=False, highlight=False, soft_wrap=True)
        if len(failures) > max_failures:
            console.print(f"  … and {len(failures) - max_failures} more (all are listed in the JSON under 'failures')")
