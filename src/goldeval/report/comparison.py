"""What a compare page leads with: the verdict of the comparison of run A (before) with run B (after), and the
charts that set A against B.

The verdict is what ``goldeval compare`` decides, in the same words: the flips both ways, McNemar's exact test,
the difference with its interval (Newcombe's paired score interval for a pass rate or a right-label share; the
paired bootstrap for a mean F1) and what ``--fail-on-regression`` would decide
(:func:`goldeval.runs.compare.regression_decision`, the function the CLI exits on). The charts are drawn from every
case of both runs, not from the sample the page embeds.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from goldeval.intervals import NEWCOMBE_PAIRED, interval_words
from goldeval.report import charts
from goldeval.report.runs import age_words
from goldeval.runs.compare import regression_decision, run_age_seconds

__all__ = ["comparison_verdict", "compare_charts", "flow_counts", "NOT_IN_A", "NOT_IN_B"]

#: The flow chart's category of a case that only one run holds.
NOT_IN_A, NOT_IN_B = "(not in A)", "(not in B)"

_VERDICT_COLOURS = {"match": "#2e7d32", "no_match": "#c62828", "near_match": "#0277bd", "needs_human": "#ef6c00",
                    "unscored": "#6d6d6d", "verified_wrong": "#8d6e63", NOT_IN_A: "#bdbdbd", NOT_IN_B: "#bdbdbd"}
_OUTCOME_COLOURS = {"tp": "#2e7d32", "tn": "#81c784", "fp": "#ef6c00", "fn": "#c62828", "unscored": "#6d6d6d",
                    NOT_IN_A: "#bdbdbd", NOT_IN_B: "#bdbdbd"}
_AS_VERDICT = {"pass": "match", "fail": "no_match"}


def _side(brief: Mapping[str, Any] | None, side: str) -> dict[str, Any]:
    brief = brief or {}
    age = run_age_seconds(brief.get("created_at"))
    return {"side": side, "id": brief.get("id"), "arm": brief.get("arm"), "ref": brief.get("ref"),
            "when": str(brief.get("created_at") or "")[:19].replace("T", " ") or None,
            "age": None if age is None else age_words(age)}


def _ids(ids: list[str], limit: int = 10) -> str:
    return ", ".join(ids[:limit]) + (f" … (+{len(ids) - limit})" if len(ids) > limit else "")


def _points(d: Mapping[str, Any], scale: float, unit: str, digits: int) -> str:
    lo, hi = d["ci"]
    return f"{scale * d['diff']:+.{digits}f}{unit} [{scale * lo:+.{digits}f}{unit}, {scale * hi:+.{digits}f}{unit}]"


def comparison_verdict(cmp: Mapping[str, Any]) -> dict[str, Any]:
    """The verdict of a comparison as the compare page's first section shows it.

    Args:
        cmp: What :func:`goldeval.runs.compare.compare_runs` returns (A before, B after).

    Returns:
        ``{"status", "decision", "runs", "items"}``: ``status`` is ``"REGRESSION"`` (``--fail-on-regression``
        would exit 1), ``"NO REGRESSION"`` (it would exit 0) or ``"NO VERDICTS"`` (F1 runs: the flag does not
        apply); ``decision`` is :func:`~goldeval.runs.compare.regression_decision`; ``runs`` the two sides
        (``side``, ``id``, ``arm``, ``ref``, ``when`` UTC, ``age`` in words); ``items`` ``[[label, text], ...]``:
        the cases in both runs, the flips both ways with their ids, McNemar's exact test and the difference B − A
        with its interval (the decision is said once, in ``decision``).

    Example:
        >>> from goldeval.runs.compare import compare_runs
        >>> v = comparison_verdict(compare_runs({"q1": {"verdict": "match"}}, {"q1": {"verdict": "no_match"}}))
        >>> v["status"], v["items"][1]
        ('REGRESSION', ['pass → fail', '1: q1'])
    """
    decision = regression_decision(cmp)
    status = "NO VERDICTS" if not decision["applies"] else "REGRESSION" if decision["failed"] else "NO REGRESSION"
    runs = cmp.get("runs") or {}
    items: list[list[str]] = [["cases", f"{cmp.get('n_common', 0)} in both · {len(cmp.get('added') or [])} added in B · "
                                        f"{len(cmp.get('removed') or [])} removed from A"]]
    v = cmp.get("verdicts")
    labels = bool(cmp.get("labels"))
    if isinstance(v, Mapping):
        flips = v.get("flips") or {}
        p2f = [f["id"] for f in flips.get("pass_to_fail") or []]
        f2p = [f["id"] for f in flips.get("fail_to_pass") or []]
        items.append(["right → wrong label" if labels else "pass → fail", f"{len(p2f)}" + (f": {_ids(p2f)}" if p2f else "")])
        items.append(["wrong → right label" if labels else "fail → pass", f"{len(f2p)}" + (f": {_ids(f2p)}" if f2p else "")])
        m = v.get("mcnemar") or {}
        ways = ("right → wrong", "wrong → right") if labels else ("pass→fail", "fail→pass")  # as `goldeval compare` says it
        items.append(["McNemar exact", m.get("note") or "—" if m.get("p_value") is None else
                      f"{m['b']} {ways[0]} vs {m['c']} {ways[1]}, two-sided p = {m['p_value']:.4g}"])
        d = v.get("difference") or {}
        what = "right-label share difference B − A" if labels else "pass-rate difference B − A"
        if d.get("ci") is not None:
            items.append([what, f"{_points(d, 100, ' pt', 1)}, {interval_words(d.get('interval_method') or NEWCOMBE_PAIRED, d['confidence'])}"
                                f" ({d['n_pairs']} case(s) decided in both)"])
        else:
            items.append([what, d.get("note") or "undefined: no case was decided in both runs"])
    s = cmp.get("scores")
    if isinstance(s, Mapping):
        items.append(["F1 over the cases scored in both", f"A {s['mean_a']:.4f} → B {s['mean_b']:.4f} over {s['n_pairs']} case(s) · "
                                                          f"{s['improved']} up, {s['worsened']} down, {s['unchanged']} unchanged"])
        b = s.get("bootstrap") or {}
        if b.get("ci") is not None:
            items.append(["mean F1 difference B − A", f"{_points(b, 1, '', 4)}, {round(100 * b['confidence'], 1):g}% paired bootstrap "
                                                     f"percentile interval ({b['n_resamples']:,} resamples, seed {b['seed']})"])
    return {"status": status, "decision": decision, "runs": [_side(runs.get("a"), "A"), _side(runs.get("b"), "B")],
            "items": items}


def _category(row: Mapping[str, Any] | None, kind: str) -> str | None:
    if row is None:
        return None
    if kind == "labels":
        return row.get("outcome") if row.get("bucket") != "unscored" and row.get("outcome") else "unscored"
    return _AS_VERDICT.get(row.get("bucket") or "unscored", row.get("bucket") or "unscored")


def flow_counts(rows_a: Mapping[str, Mapping[str, Any]], rows_b: Iterable[Mapping[str, Any]], kind: str) -> Counter[tuple[str, str]]:
    """``(A's category, B's category) -> cases`` over the union of both runs' cases: a verdict run's categories are
    the pass rate's buckets in verdict words (match, no_match, near_match, needs_human, unscored, verified_wrong),
    a label run's the outcomes (tp, tn, fp, fn, unscored); a case one run does not hold is ``(not in A)`` or
    ``(not in B)`` on that side.

    Args:
        rows_a: case id → the report's row of run A (``bucket``, ``outcome``).
        rows_b: The report's rows of run B.
        kind: ``"answers"`` or ``"labels"`` (:func:`goldeval.report.model.scorer_kind`).

    Example:
        >>> sorted(flow_counts({"q1": {"bucket": "pass"}}, [{"id": "q1", "bucket": "fail"}, {"id": "q2", "bucket": "pass"}],
        ...                    "answers").items())
        [(('(not in A)', 'match'), 1), (('match', 'no_match'), 1)]
    """
    out: Counter[tuple[str, str]] = Counter()
    seen: set[str] = set()
    for r in rows_b:
        seen.add(r["id"])
        out[(_category(rows_a.get(r["id"]), kind) or NOT_IN_A, _category(r, kind) or NOT_IN_B)] += 1
    for cid, a in rows_a.items():
        if cid not in seen:
            out[(_category(a, kind) or NOT_IN_A, NOT_IN_B)] += 1
    return out


def _gate_of(results: Mapping[str, Any], key: str | None) -> tuple[str, float] | None:
    gates = results.get("gates")
    if not key or not isinstance(gates, Mapping):
        return None
    for g in gates.get("gates") or []:
        if (isinstance(g, Mapping) and g.get("metric") == key and g.get("slice") is None  # (a slice's gate: not the whole's value)
                and g.get("limit") is not None and g.get("op") in ("min", "max")):
            return str(g["op"]), float(g["limit"])
    return None


def _around_zero(ci: list[float]) -> tuple[float, float]:
    """An x axis centred on 0 (no difference) that holds the interval with room: at least ±0.05, at most ±1."""
    reach = min(1.0, max(0.05, 1.25 * max(abs(ci[0]), abs(ci[1]))))
    return -reach, reach


def compare_charts(cmp: Mapping[str, Any], kind: str, *, rows_a: Mapping[str, Mapping[str, Any]],
                   rows_b: Sequence[Mapping[str, Any]], summary_a: Mapping[str, Any], summary_b: Mapping[str, Any],
                   results_a: Mapping[str, Any], results_b: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The A-against-B charts, as ``[{"title", "svg", "note"?}]`` (SVG from :mod:`goldeval.report.charts`):

    * verdict and label runs: how the cases flowed between the runs' verdicts (or label outcomes);
    * runs with per-case F1: each case's F1 in A against B, the biggest movers marked with their ids;
    * both: each run's headline with its interval (the summary's: Wilson for a pass rate, bootstrap for a mean F1
      or a label F1), with the gate's bound when both runs gate it alike, and the difference B − A with its
      interval (Newcombe's paired interval, or the paired bootstrap of the mean F1).

    Args:
        cmp: :func:`goldeval.runs.compare.compare_runs` of A and B.
        kind: The scorers' report kind (``freetext``, ``labels``, ``answers``, ``generic``).
        rows_a: case id → the report's row of each case of A; rows_b: B's rows.
        summary_a, summary_b: Each run's summary (``headline`` with ``name``, ``key``, ``value``, ``ci``).
        results_a, results_b: Each run's results (their gates).
    """
    out: list[dict[str, Any]] = []
    runs = cmp.get("runs") or {}
    label = {side: f"{side.upper()} {((runs.get(side) or {}).get('arm') or (runs.get(side) or {}).get('id') or '')}".strip()
             for side in ("a", "b")}
    if kind in ("answers", "labels") and cmp.get("verdicts"):
        counts = flow_counts(rows_a, rows_b, kind)
        order = (["tp", "tn", "fp", "fn", "unscored"] if kind == "labels" else
                 ["match", "no_match", "near_match", "needs_human", "unscored", "verified_wrong"])
        order = [*order, *(c for c in (NOT_IN_A, NOT_IN_B) if any(c in k for k in counts))]
        what = "label outcomes" if kind == "labels" else "verdicts"
        moved = sum(n for (a, b), n in counts.items() if a != b)
        out.append({"title": f"{what}: how the cases moved from A to B", "id": "flows",
                    "svg": charts.flows(counts, order, title=f"{what}, A → B ({moved} of {sum(counts.values())} case(s) moved)",
                                        colors=_OUTCOME_COLOURS if kind == "labels" else _VERDICT_COLOURS,
                                        left=label["a"], right=label["b"]),
                    "note": ("Left: each case's " + ("outcome" if kind == "labels" else "verdict, as the pass rate counts it,")
                             + " in A; right: in B. A band is as wide as the cases that moved that way; bands that change "
                             "category are drawn darker, in the colour of where they end.")})
    s = cmp.get("scores")
    if isinstance(s, Mapping) and s.get("n_pairs"):
        deltas = s.get("deltas") or []
        movers = s.get("biggest_movers") or []
        out.append({"title": "per-case F1: A against B, the biggest movers marked", "id": "paired-f1",
                    "svg": charts.paired_scatter([d["a"] for d in deltas], [d["b"] for d in deltas],
                                                 marked=[(m["a"], m["b"], str(m["id"])) for m in movers],
                                                 title=f"per-case F1, {s['n_pairs']} case(s) scored in both", xlabel=f"F1 in {label['a']}",
                                                 ylabel=f"F1 in {label['b']}"),
                    "note": (f"{s['improved']} up, {s['worsened']} down, {s['unchanged']} unchanged. Marked: the "
                             f"{len(movers)} biggest movers (green: better in B, red: worse); on the dotted diagonal a case "
                             "scored the same in both.")})
    ha, hb = summary_a.get("headline") or {}, summary_b.get("headline") or {}
    if ha.get("name") or hb.get("name"):
        name = hb.get("name") or ha.get("name")
        gate_a, gate_b = _gate_of(results_a, ha.get("key")), _gate_of(results_b, hb.get("key"))
        rows = [(label[side], h.get("value"), *(h.get("ci") or [None, None])) for side, h in (("a", ha), ("b", hb))]
        out.append({"title": f"{name}: A and B with their intervals", "id": "headlines",
                    "svg": charts.intervals(rows, title=f"{name} of each run", xlabel=str(name),
                                            gate=gate_b if gate_a == gate_b else None),
                    "note": "; ".join(dict.fromkeys(str(h.get("interval_note")) for h in (ha, hb) if h.get("interval_note"))) or None})
    v = cmp.get("verdicts")
    diff = (v or {}).get("difference") if isinstance(v, Mapping) else None
    if isinstance(diff, Mapping) and diff.get("ci") is not None:
        what = "right-label share" if cmp.get("labels") else "pass rate"
        out.append({"title": f"{what} difference B − A", "id": "difference",
                    "svg": charts.intervals([("B − A", diff["diff"], *diff["ci"])], title=f"{what} difference B − A", xlabel=f"{what} B − A",
                                            xlim=_around_zero(diff["ci"]), zero_line=True),
                    "note": f"{interval_words(diff.get('interval_method') or NEWCOMBE_PAIRED, diff['confidence'])}, over the "
                            f"{diff['n_pairs']} case(s) decided in both runs. Left of the dotted line: B is worse."})
    elif isinstance(s, Mapping) and (s.get("bootstrap") or {}).get("ci") is not None:
        b = s["bootstrap"]
        out.append({"title": "mean F1 difference B − A", "id": "difference",
                    "svg": charts.intervals([("B − A", b["diff"], *b["ci"])], title="mean F1 difference B − A", xlabel="mean F1 B − A",
                                            xlim=_around_zero(b["ci"]), zero_line=True),
                    "note": f"{round(100 * b['confidence'], 1):g}% paired bootstrap percentile interval over the {b['n_pairs']} "
                            f"case(s) scored in both ({b['n_resamples']:,} resamples, seed {b['seed']})."})
    return out
