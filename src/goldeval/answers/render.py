"""Terminal rendering of data-answer (judge) results: one line per case and the pass-rate line."""

from __future__ import annotations

from typing import Any

from goldeval.intervals import WILSON, corrected_words, interval_words, wilson_interval

__all__ = ["render_judge"]


def render_judge(results: dict[str, Any], console: Any, *, not_shown: int = 0, kept_in: str | None = None) -> None:
    """Summary: one line per case of ``results["per_example"]`` (verdict, confidence, why), then, when *not_shown*
    cases were left out of that list, a line counting them (and saying where they are: *kept_in*, e.g. ``"--out
    r.json"``), and the pass-rate line with the counts beside it."""
    from rich.markup import escape  # start-up: rich loads only when a table is rendered
    from rich.table import Table  # start-up: rich loads only when a table is rendered

    table = Table(show_header=True, header_style="bold", box=None)
    for col in ("id", "verdict", "conf", "why"):
        table.add_column(col, overflow="fold")
    for case in results["per_example"]:
        if case["status"] == "unscored":
            table.add_row(escape(case["id"]), "[yellow]unscored[/]", "", escape(case.get("reason") or ""))
            continue
        v = case["verdict"]
        style = {"match": "green", "no_match": "red", "near_match": "cyan"}.get(v, "yellow")
        flag = " (needs human)" if case.get("needs_human") and v != "needs_human" else ""
        if case.get("gold_status") == "verified_wrong":
            flag += " (golden verified_wrong: not in the pass rate)"
        elif case.get("gold_status") == "suspect":
            flag += " (golden suspect)"
        conf = "" if case.get("confidence") is None else str(case["confidence"])
        table.add_row(escape(case["id"]), f"[{style}]{v}[/]{flag}", conf, escape(case.get("why") or ""))
    console.print(table)
    if not_shown:
        where = f"every case is in {kept_in}" if kept_in else "give --out FILE to keep every case"
        console.print(f"… and {not_shown} more cases not listed (the first {len(results['per_example'])} are); {where}.",
                      highlight=False, markup=False)
    a = results["aggregate"]
    rate = "undefined (nothing decided)" if a["undefined"].get("pass_rate") else f"{a['pass_rate']:.1%}"
    ci = wilson_interval(a["match"], a["decided"]) if 0 <= a["match"] <= a["decided"] else None
    console.print(
        f"pass rate {rate} = {a['match']} match / {a['decided']} decided · {a['unscored']} of {a['n']} unscored · "
        f"near_match {a['near_match']} · needs_human {a['needs_human']} · verified_wrong {a['verified_wrong']} · n {a['n']}"
        + ("" if ci is None else f" · {interval_words(WILSON, 0.95)} {ci[0]:.1%}–{ci[1]:.1%}"),
        highlight=False,
    )
    if isinstance(results.get("corrected_pass_rate"), dict):
        console.print(corrected_words(results["corrected_pass_rate"]), highlight=False, markup=False)
    if a["n"] and a["unscored"] * 2 > a["n"]:
        # the pass rate speaks for the few cases that could be judged: say so where it cannot be missed
        console.print(
            f"[yellow]warning:[/] {a['unscored']} of {a['n']} cases ({a['unscored'] / a['n']:.0%}) are unscored; the pass "
            f"rate covers only the {a['decided']} decided. See the reasons above (without --db a final_query cannot be run).",
            highlight=False,
        )
    for f in results.get("failures", [])[:10]:
        console.print(f"[yellow]skipped[/] {escape(f['error'])}")
