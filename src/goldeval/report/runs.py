"""Terminal rendering of the run store: the runs table, one run's header and summary, a comparison of two runs."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from goldeval.report import fmt
from goldeval.intervals import NEWCOMBE_PAIRED, corrected_words, interval_words
from goldeval.io.printable import printable
from goldeval.scoring.protocol import Scorer
from goldeval.scoring.registry import scorer_of
from goldeval.scoring.render import render_slices
from goldeval.runs.compare import run_age_seconds

__all__ = ["render_runs_list", "render_run", "render_compare", "age_words"]

def _e(value: Any) -> str:
    """*value* as text with rich markup escaped: ids, arm names, paths, configuration and judge text are data, and
    a ``[/]`` or ``[red]`` in them must print as written (``[/]`` in an arm name made `runs list` crash)."""
    from rich.markup import escape  # start-up: rich loads only when a table is rendered

    return escape(str(value))


def _when(stamp: str | None) -> str:
    return "—" if not stamp else stamp[:19].replace("T", " ")


def _gates(value: bool | None) -> str:
    return "—" if value is None else ("pass" if value else "FAIL")


_SHORT = {"whole_note_f1_mean": "F1", "section_f1_mean": "section F1", "pass_rate": "pass", "macro_f1": "macro F1"}


#: Space between two columns of the runs table: one cell of right padding and the (blank) column divider.
_GAP = 2


def _fit(columns: list[tuple[str, list[str]]], width: int, *, wrap: bool = True) -> list[int] | None:
    """Column widths (in terminal cells) that fit *width* without cutting a word, or ``None`` when none do.

    *columns* is ``[(header, [cell text, ...]), ...]``; a text may hold several lines. Each column starts at its
    natural width (its longest line, measured as printed: control characters escaped); while the table is too wide,
    the column with the most room above its longest word gives up one cell (rich then wraps it at spaces: "F1 0.279"
    may become "F1" over "0.279", never "F1 0.2"). With ``wrap=False`` no cell may wrap: the natural widths or None.
    """
    from rich.cells import cell_len  # start-up: rich loads only when a table is rendered


    def lines(c: int) -> list[str]:
        header, cells = columns[c]
        return [printable(line) for text in (header, *cells) for line in (text.splitlines() or [""])]

    natural = [max(cell_len(line) for line in lines(c)) for c in range(len(columns))]
    word = [max(cell_len(w) for line in lines(c) for w in (line.split() or [""])) for c in range(len(columns))]
    widths = list(natural)
    excess = sum(widths) + _GAP * (len(widths) - 1) - width
    if excess > 0 and not wrap:
        return None
    while excess > 0:
        c = max(range(len(widths)), key=lambda k: (widths[k] - word[k], -k))
        if widths[c] <= word[c]:
            return None
        widths[c] -= 1
        excess -= 1
    return widths


def render_runs_list(runs: list[Mapping[str, Any]], console: Any, *, filters: Mapping[str, Any] | None = None) -> None:
    """The ``goldeval runs list`` table: id, arm, when (UTC), scorer, n, headline metric, gates (or the status of a
    run that did not finish). *filters* (option → value, e.g. ``{"--arm": "gpt4"}``) are named when nothing matches.

    Whatever the terminal's width, no number or word is cut: the widest layout that fits ``console.width`` is
    chosen — all seven columns; then without "when" (a run id starts with its UTC date and time); then with the
    arm over the scorer in one column — first among the layouts where no cell wraps, then among those where cells
    wrap only at spaces. Where even that does not fit, each run is
    one line that wraps at spaces.
    """
    from rich import box  # start-up: rich loads only when a table is rendered
    from rich.table import Table  # start-up: rich loads only when a table is rendered
    from rich.text import Text  # start-up: rich loads only when a table is rendered

    if not runs:
        given = {k: v for k, v in (filters or {}).items() if v is not None}
        if given:
            console.print("no run matches " + " ".join(f"{k} {v}" for k, v in given.items()) + " (drop the filter to see every run)",
                          markup=False, highlight=False)
        else:
            console.print("no run recorded in this store yet")
        return
    rows = []
    for r in runs:
        n = r.get("n") if r.get("n") is not None else r.get("n_recorded")
        name = r.get("headline_name")
        value = r.get("headline_value")
        head = "—" if name is None else f"{_SHORT.get(name, name)} {'undefined' if value is None else fmt(value)}"
        gates = _gates(r.get("gates_passed")) if r["status"] == "finished" else f"({r['status']})"
        rows.append({"id": str(r["id"]), "arm": str(r.get("arm") or "—"), "when": _when(r.get("created_at"))[5:16],
                     "scorer": str(r["scorer_name"]), "n": fmt(n), "headline": head, "gates": gates})

    def column(key: str) -> tuple[str, list[str]]:
        if key == "arm\nscorer":
            return key, [f"{x['arm']}\n{x['scorer']}" for x in rows]
        return key, [x[key] for x in rows]

    layouts = [
        ("runs (newest first; times UTC)", ["id", "arm", "when", "scorer", "n", "headline", "gates"]),
        ("runs (newest first; an id starts with its UTC date and time)", ["id", "arm", "scorer", "n", "headline", "gates"]),
        ("runs (newest first; an id starts with its UTC date and time)", ["id", "arm\nscorer", "n", "headline", "gates"]),
    ]
    # the first layout in which no cell wraps; else the first in which cells wrap only at spaces
    for wrap, (title, keys) in ((w, layout) for w in (False, True) for layout in layouts):
        columns = [column(k) for k in keys]
        widths = _fit(columns, console.width, wrap=wrap)
        if widths is None:
            continue
        table = Table(title=title, title_justify="left", box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False,
                      padding=(0, 1, 0, 0))
        for (header, _), w in zip(columns, widths):
            table.add_column(header, width=w, justify="right" if header == "n" else "left", overflow="fold")
        for i in range(len(rows)):
            table.add_row(*(_e(cells[i]) for _, cells in columns))
        console.print(table)
        return
    # narrower than the longest words of the table: one run a line, wrapped at spaces
    console.print(Text("runs (newest first; an id starts with its UTC date and time)"))
    for x in rows:
        console.print(Text(f"{x['id']}  arm {x['arm']} · {x['scorer']} · n {x['n']} · {x['headline']} · gates {x['gates']}"))


def render_run_header(run: Mapping[str, Any], console: Any) -> None:
    """What pins a run: id, arm, times, versions, hashes, inputs and configuration."""
    from rich.table import Table  # start-up: rich loads only when a table is rendered

    table = Table(title=f"run {_e(run['id'])}", title_justify="left", show_header=False)
    table.add_column("key")
    table.add_column("value", overflow="fold")
    rows = [
        ("arm", run.get("arm") or "—"),
        ("status", run["status"]),
        ("created (UTC)", _when(run.get("created_at"))),
        ("finished (UTC)", _when(run.get("finished_at"))),
        ("goldeval", run.get("goldeval_version") or "—"),
        ("scorer", f"{run['scorer_name']}@{run['scorer_version']}"),
        ("tokenizer", run.get("tokenizer") or "—"),
        ("judge version", run.get("judge_version") or "—"),
        ("rubric sha256", run.get("rubric_hash") or "—"),
        ("definition of done sha256", run.get("dod_hash") or "—"),
        ("dataset sha256", run.get("dataset_hash") or "—"),
    ]

    for role, f in (run.get("inputs") or {}).items():
        digest = f"sha256 {str(f['sha256'])[:12]}…" if f.get("sha256") else "no sha256: not a file"
        rows.append((f"input {role}", f"{f.get('path')} ({digest})"))
    for key, value in (run.get("config") or {}).items():
        # as the results JSON spells it: 'null' is '—', true/false/lists in JSON, not Python's None/True/['a']
        shown = "—" if value is None else value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
        rows.append((f"config {key}", shown))
    rows.append(("cases recorded", str(run.get("n_recorded", "—"))))
    for k, v in rows:
        table.add_row(_e(k), _e(v))
    console.print(table)


def render_generic(results: Mapping[str, Any], console: Any) -> None:
    """The aggregate of any results dict as a two-column table (numbers rounded to 3 decimals)."""
    from rich.table import Table  # start-up: rich loads only when a table is rendered

    agg = results.get("aggregate") or {}
    table = Table(title="aggregate", title_justify="left")
    table.add_column("metric")
    table.add_column("value", justify="right")
    for key, value in agg.items():
        if key == "undefined" or isinstance(value, (dict, list)):
            continue
        shown = "undefined" if key in (agg.get("undefined") or {}) else fmt(value) if isinstance(value, (int, float)) else str(value)
        table.add_row(_e(key), _e(shown))
    console.print(table)
    for metric, why in (agg.get("undefined") or {}).items():
        console.print(f"[yellow]{_e(metric)} undefined: {_e(why)}[/]")


def render_run(run: Mapping[str, Any], console: Any) -> None:
    """``goldeval runs show``: the run's header, then the summary its scoring command printed (from the stored
    results), or, for a run that did not finish, how far it got and how to resume it."""
    render_run_header(run, console)
    results = run.get("results")
    if results is None:
        console.print(
            f"[yellow]run {_e(run['id'])} did not finish ({_e(run['status'])}): {run.get('n_recorded', 0)} case(s) recorded. "
            "Run the same command again to resume it (or pass --resume " + _e(run["id"]) + ").[/]"
        )
        return
    # the summary the scorer's own command printed (its render_summary hook); the generic table for a scorer that
    # has none, or is no longer installed
    scorer = scorer_of(run["scorer_name"])
    if scorer is not None and type(scorer).render_summary is not Scorer.render_summary:
        scorer.render_summary(results, console)
    else:
        render_generic(results, console)
    render_slices(results, console, columns=getattr(scorer, "slice_columns", ()), headline=getattr(scorer, "headline", None))
    gates = results.get("gates")
    if isinstance(gates, Mapping) and gates.get("summary"):
        style = "green" if gates.get("passed") else "red"
        console.print(f"[{style}]gates: {_e(gates['summary'])}[/]", highlight=False)


def _pr(p: Mapping[str, Any] | None) -> str:
    if p is None:
        return "—"
    rate = "undefined" if p["undefined"] else f"{100 * p['rate']:.1f}%"
    return (
        f"{rate} ({p['match']}/{p['decided']} decided; beside it: near_match {p['near_match']}, needs_human "
        f"{p['needs_human']}, unscored {p['unscored']}, verified_wrong {p['verified_wrong']})"
    )


def _ci(b: Mapping[str, Any], scale: float = 1.0, unit: str = "", digits: int = 4) -> str:
    if b.get("ci") is None:
        return b.get("note") or "—"
    lo, hi = b["ci"]
    return (
        f"{scale * b['diff']:+.{digits}f}{unit}, {round(100 * b['confidence'], 1):g}% CI "
        f"[{scale * lo:+.{digits}f}{unit}, {scale * hi:+.{digits}f}{unit}] "
        f"(paired bootstrap, {b['n_pairs']} pairs, {b['n_resamples']} resamples, seed {b['seed']})"
    )


def _diff(d: Mapping[str, Any] | None, fallback: Mapping[str, Any]) -> str:
    """A pass-rate difference B − A in points with Newcombe's paired interval (``verdicts.difference``); a results
    file written before it had one shows its bootstrap interval."""
    if not d:
        return _ci(fallback, 100, " pt", 1)
    if d.get("ci") is None:
        return d.get("note") or "—"
    lo, hi = d["ci"]
    return (f"{100 * d['diff']:+.1f} pt, {interval_words(NEWCOMBE_PAIRED, d['confidence'])} "
            f"[{100 * lo:+.1f} pt, {100 * hi:+.1f} pt] ({d['n_pairs']} pairs decided in both)")


def _short(value: object, width: int = 40) -> str:
    # a field one run does not have reads "none", not Python's None; true/false and lists as the JSON spells them

    text = "none" if value is None else value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= width else text[: width - 1] + "…"


def age_words(seconds: float) -> str:
    """An age in the largest whole unit: ``"3 days ago"``, ``"5 hours ago"``, ``"just now"`` (under a minute); a
    time in the future (clocks of two machines apart) is ``"in the future (clock skew?)"``.

    Example:
        >>> age_words(3 * 86400 + 5), age_words(7200), age_words(30)
        ('3 days ago', '2 hours ago', 'just now')
    """
    if seconds < -60:
        return "in the future (clock skew?)"
    for unit, size in (("day", 86400), ("hour", 3600), ("minute", 60)):
        if seconds >= size:
            n = int(seconds // size)
            return f"{n} {unit}{'s' if n != 1 else ''} ago"
    return "just now"


def render_compare(cmp: Mapping[str, Any], console: Any, *, max_rows: int = 20) -> None:
    """``goldeval compare``: cases added/removed, verdict flips with both whys, stable / flickering near_match,
    McNemar, F1 movers and the bootstrap intervals."""
    from rich.table import Table  # start-up: rich loads only when a table is rendered

    ra, rb = cmp["runs"]["a"] or {}, cmp["runs"]["b"] or {}
    label_a = f"A {ra.get('id', '?')} ({ra.get('arm') or 'no arm'})"
    label_b = f"B {rb.get('id', '?')} ({rb.get('arm') or 'no arm'})"
    console.print(f"[bold]compare[/] {_e(label_a)} → {_e(label_b)}", highlight=False)
    for side, brief in (("A", ra), ("B", rb)):
        age = run_age_seconds(brief.get("created_at"))
        if age is not None:
            named = f"{brief['ref']} = " if brief.get("ref") and brief.get("ref") != brief.get("id") else ""
            console.print(f"  {side}: {_e(named)}run {_e(str(brief.get('id')))}, recorded {age_words(age)} "
                          f"({_e(str(brief.get('created_at'))[:19].replace('T', ' '))} UTC)", highlight=False)
    console.print(f"cases: {cmp['n_common']} in both · {len(cmp['added'])} added in B · {len(cmp['removed'])} removed from A", highlight=False)
    for w in cmp.get("warnings") or []:
        console.print(f"[yellow]warning: {_e(w)}[/]")
    differs = cmp.get("differs") or {}
    # A different definition of done changes the gates, not how a case is scored: said apart, never as a
    # measurement difference (a run gated and one not gated were otherwise "measured differently").
    measured = {k: v for k, v in differs.items() if k not in ("arm", "dataset_hash", "dod_hash")}
    if measured:
        # A difference in how the runs were measured (tokenizer, judge, rubric, options) moves scores by itself:
        # say so next to the numbers, so that it is not read as a change of the model under test.
        items: list[str] = []
        for k, (a, b) in measured.items():
            if isinstance(a, dict) and isinstance(b, dict):  # the resolved options: name only those that differ
                items += [f"{key}: {_short(a.get(key))} → {_short(b.get(key))}" for key in sorted(set(a) | set(b))
                          if a.get(key) != b.get(key) and f"{key}:" not in " ".join(items)]
            else:
                items.append(f"{k}: {_short(a)} → {_short(b)}")
        parts = "; ".join(items)
        console.print(f"[yellow]note: the runs were measured differently ({_e(parts)}); part of any difference below "
                      "comes from that, not from the model under test.[/]")
    if "dod_hash" in differs:
        a, b = differs["dod_hash"]
        console.print(f"note: the definitions of done differ ({_e(_short(a))} → {_e(_short(b))}): that changes the "
                      "gates, not how the cases were scored.", highlight=False)
    for name, ids in (("added", cmp["added"]), ("removed", cmp["removed"])):
        if ids:
            shown = ", ".join(ids[:max_rows]) + (f" … (+{len(ids) - max_rows})" if len(ids) > max_rows else "")
            console.print(f"  {name}: {shown}", highlight=False, markup=False)
    v = cmp.get("verdicts")
    if cmp.get("labels") and v:
        _render_label_compare(cmp, console, max_rows=max_rows)
    elif v:
        console.print(f"pass rate A: {_pr(v['pass_rate']['a'])}", highlight=False)
        console.print(f"pass rate B: {_pr(v['pass_rate']['b'])}", highlight=False)
        corrected = cmp.get("corrected_pass_rate")
        if isinstance(corrected, Mapping):
            for side in ("a", "b"):
                console.print(corrected_words(corrected[side], label=f"pass rate {side.upper()} corrected for the judge's error"),
                              highlight=False, markup=False)
            if corrected.get("note"):
                console.print(f"note: {corrected['note']}", highlight=False, markup=False)
        flips = v["flips"]
        for key, title in (("pass_to_fail", "pass → fail (regressions)"), ("fail_to_pass", "fail → pass (fixes)")):
            rows = flips[key]
            if not rows:
                console.print(f"{title}: none")
                continue
            t = Table(title=f"{title}: {len(rows)}", title_justify="left")
            t.add_column("case", no_wrap=True)
            t.add_column("A: verdict · why", overflow="fold")
            t.add_column("B: verdict · why", overflow="fold")
            for r in rows[:max_rows]:
                t.add_row(_e(r["id"]), _e(f"{r['a']['verdict']} · {r['a']['why'] or ''}"), _e(f"{r['b']['verdict']} · {r['b']['why'] or ''}"))
            console.print(t)
            if len(rows) > max_rows:
                console.print(f"  … and {len(rows) - max_rows} more (all in the JSON under verdicts.flips.{key})")
        console.print(f"stayed: pass {len(v['stayed']['pass'])} · fail {len(v['stayed']['fail'])}")
        nm = v["near_match"]
        console.print(
            f"near_match: {len(nm['stable'])} stable (near_match in both: a coverage finding) · "
            f"{len(nm['flickering'])} flickering (near_match in one run only: "
            + ("judge noise, the answers are the same)" if "dataset_hash" not in (cmp.get("differs") or {})
               else "the answers differ between the runs, so this may be the answers, not judge noise)")
        )
        for r in nm["flickering"][:max_rows]:
            console.print(f"  flickering {r['id']}: A {r['a']['verdict']} → B {r['b']['verdict']}", highlight=False, markup=False)
        if v["left_decided"]:
            console.print(f"decided in one run only: {len(v['left_decided'])} (e.g. " + ", ".join(
                f"{r['id']} {r['a']}→{r['b']}" for r in v["left_decided"][:5]) + ")", highlight=False, markup=False)
        changed = v.get("golden_changed") or []
        if changed:
            console.print(f"deciding golden changed: {len(changed)} (" + ", ".join(
                f"{r['id']} {r['a']} → {r['b']}" for r in changed[:max_rows])
                + (f" … +{len(changed) - max_rows}" if len(changed) > max_rows else "") + ")", highlight=False, markup=False)
        m = v["mcnemar"]
        if m["p_value"] is None:
            console.print(f"McNemar exact: {m['note']}")
        else:
            console.print(f"McNemar exact: {m['b']} pass→fail vs {m['c']} fail→pass, two-sided p = {m['p_value']:.4g}")
        console.print(f"pass-rate difference B − A: {_diff(v.get('difference'), v['bootstrap'])}", highlight=False)
    s = cmp.get("scores")
    if s:
        console.print(
            f"F1 over {s['n_pairs']} cases scored in both: A {fmt(s['mean_a'])} → B {fmt(s['mean_b'])} · "
            f"{s['improved']} up, {s['worsened']} down, {s['unchanged']} unchanged", highlight=False,
        )
        console.print(f"mean F1 difference B − A: {_ci(s['bootstrap'])}", highlight=False)
        if s["biggest_movers"]:
            t = Table(title="biggest movers", title_justify="left")
            for col in ("case", "A", "B", "delta"):
                t.add_column(col, justify="left" if col == "case" else "right")
            for r in s["biggest_movers"]:
                t.add_row(_e(r["id"]), fmt(r["a"], 4), fmt(r["b"], 4), f"{r['delta']:+.4f}")
            console.print(t)
        if s["scored_in_one_only"]:
            console.print(f"scored in one run only: {len(s['scored_in_one_only'])}")
    if cmp["regressions"] and not cmp.get("labels"):
        console.print(f"[red]{len(cmp['regressions'])} case(s) went from pass to fail[/]")


#: What a label case's move between two runs is called (outcome in A, outcome in B).
_LABEL_MOVES = {("tp", "fn"): "new miss", ("fn", "tp"): "fixed miss", ("tn", "fp"): "new false positive",
                ("fp", "tn"): "fixed false positive"}


def _label(value: Any) -> str:
    return "no label" if value is None else repr(value)


def _label_run_line(side: str, c: Mapping[str, Any]) -> str:
    undefined = c.get("undefined") or {}

    def rate(name: str, num: int, den: int, what: str) -> str:
        if name in undefined:
            return f"{name} undefined ({undefined[name]})"
        return f"{name} {fmt(c[name])} ({num} of {den} {what})"

    return (
        f"labels {side}: positive {_label(c.get('positive'))} · "
        + rate("precision", c["tp"], c["predicted_positives"], "predicted positive") + " · "
        + rate("recall", c["tp"], c["gold_positives"], "gold positives")
        + f" · missed {c['fn']} · false positives {c['fp']} · {c['n']} scored, {c['n_unscored']} unscored"
    )


def _render_label_compare(cmp: Mapping[str, Any], console: Any, *, max_rows: int) -> None:
    """The label part of ``goldeval compare``: missed positives and false positives in each run, which are new and
    which were fixed, the cases whose predicted label changed, and McNemar / the bootstrap in those words."""
    from rich.table import Table  # start-up: rich loads only when a table is rendered

    lab, v = cmp["labels"], cmp["verdicts"]
    a, b = lab["a"], lab["b"]
    console.print(_e(_label_run_line("A", a)), highlight=False)
    console.print(_e(_label_run_line("B", b)), highlight=False)
    for key, title, count in (("missed", "missed positives", "fn"), ("false_positives", "false positives", "fp")):
        console.print(f"{title}: {a[count]} in A → {b[count]} in B · {len(lab[key]['new'])} new · "
                      f"{len(lab[key]['fixed'])} fixed", highlight=False)
    moved = lab["label_flips"] + [c for c in lab["gold_changed"] if c not in lab["label_flips"]]
    if not moved:
        console.print("label flips: none (every case scored in both runs has the same predicted label)")
    else:
        t = Table(title=f"label flips: {len(lab['label_flips'])} case(s) whose predicted label changed"
                        + (f", {len(lab['gold_changed'])} whose gold label changed" if lab["gold_changed"] else ""),
                  title_justify="left")
        for col in ("case", "gold", "A: predicted (outcome)", "B: predicted (outcome)", "what moved"):
            t.add_column(col, overflow="fold")
        for c in moved[:max_rows]:
            gold = _label(c["gold_b"]) if c["gold_a"] == c["gold_b"] else f"{_label(c['gold_a'])} → {_label(c['gold_b'])}"
            if c["gold_a"] != c["gold_b"]:
                what = "gold label changed"
            else:
                what = _LABEL_MOVES.get((c["outcome_a"], c["outcome_b"]), f"still {c['outcome_b']}: both wrong" if c["outcome_b"] in ("fp", "fn")
                                        else f"still {c['outcome_b']}")
            t.add_row(_e(c["id"]), _e(gold), _e(f"{_label(c['pred_a'])} ({c['outcome_a']})"),
                      _e(f"{_label(c['pred_b'])} ({c['outcome_b']})"), what)
        console.print(t)
        if len(moved) > max_rows:
            console.print(f"  … and {len(moved) - max_rows} more (all in the JSON under labels.label_flips)")
    if lab["gold_changed"]:
        console.print(f"[yellow]warning: {len(lab['gold_changed'])} case(s) carry a different gold label in the two runs: "
                      "their moves come from the gold, not from the model under test[/]")
    if lab["scored_in_one_only"]:
        console.print(f"scored in one run only: {len(lab['scored_in_one_only'])}")
    m = v["mcnemar"]
    if m["p_value"] is None:
        console.print("McNemar exact: no discordant pairs (no case went from a right label to a wrong one or back), "
                      "so there is nothing to test")
    else:
        console.print(f"McNemar exact: {m['b']} right → wrong vs {m['c']} wrong → right, two-sided p = {m['p_value']:.4g}")
    console.print(f"right-label share difference B − A (one-vs-rest for {_e(_label(b.get('positive')))}): "
                  f"{_diff(v.get('difference'), v['bootstrap'])}", highlight=False)
    if cmp["regressions"]:
        console.print(f"[red]{len(cmp['regressions'])} case(s) went from a right label to a wrong one: "
                      f"{len(lab['missed']['new'])} new missed positive(s), {len(lab['false_positives']['new'])} new false "
                      "positive(s)" + (", the others where the gold label changed" if lab["gold_changed"] else "") + "[/]")
