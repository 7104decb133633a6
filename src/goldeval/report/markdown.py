"""A Markdown summary of a run for CI step pages (GitHub's ``$GITHUB_STEP_SUMMARY``, GitLab, a PR comment):
the decision, the gates and the headline numbers. All rounding happens here."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from goldeval.gates.evaluate import interval_text
from goldeval.io.printable import printable

__all__ = ["summary_markdown"]

_HEADLINES = (
    ("whole_note_f1_mean", "whole-note F1 (macro)"),
    ("section_f1_mean", "section F1 (macro)"),
    ("pass_rate", "pass rate"),
    ("pass_rate_corrected", "pass rate corrected for the judge's error"),
    ("pass_rate_corrected_low", "its 95% interval, low end"),
    ("pass_rate_corrected_high", "its 95% interval, high end"),
    ("f1", "F1"),
    ("precision", "precision"),
    ("recall", "recall"),
    ("missed", "missed"),
    ("missed_per_100", "missed per 100"),
)
_COUNTS = ("n", "n_scored", "n_failed", "match", "no_match", "decided", "near_match", "needs_human", "unscored", "verified_wrong")


def _cell(value: Any) -> str:
    """Text for one table cell: ``|`` escaped, newlines folded, Markdown's own characters made literal."""
    text = "—" if value is None or value == "" else printable(str(value))  # controls shown escaped (U+202E …)
    for ch in ("\\", "|", "*", "_", "`", "<", ">", "[", "]"):
        text = text.replace(ch, "\\" + ch)
    return " ".join(text.split())


def _num(value: Any) -> str:
    if value is None:
        return "—"
    if isinstance(value, bool) or isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return f"{value:.4f}"
    return str(value)


def summary_markdown(results: Mapping[str, Any]) -> str:
    """The summary as Markdown text (ends with a newline).

    Args:
        results: A results dict (with ``gates`` when a definition of done was applied, ``run`` when recorded).

    Returns:
        A heading with the decision (PASS / FAIL / no gates), the plain decision line, a table of gates (gate,
        bound, value, its interval, result, what it allows on this set), and a table of the headline numbers and counts;
        undefined metrics are said so, never shown as a number.
    """
    scorer = (results.get("scorer") or {}).get("name", "goldeval")
    given_run = results.get("run")
    run = given_run if isinstance(given_run, Mapping) else {}
    gates = results.get("gates") if isinstance(results.get("gates"), Mapping) else None
    agg = results.get("aggregate") or {}
    und = agg.get("undefined") or {}
    status = "no gates" if gates is None else ("PASS" if gates.get("passed") else "FAIL")
    icon = {"PASS": "✅", "FAIL": "❌"}.get(status, "ℹ️")
    who = f" · run `{printable(run['id'], keep_newlines=False)}`" if run.get("id") else ""
    arm = f" ({_cell(run['arm'])})" if run.get("arm") else ""
    lines = [f"### {icon} goldeval {scorer}: {status}{who}{arm}", ""]
    if gates is not None:
        lines += [_cell(gates.get("summary")), ""]
        d = gates.get("definition") or {}
        agreed = ", ".join(x for x in (f"agreed by {d['agreed_by']}" if d.get("agreed_by") else "",
                                        f"on {d['agreed_on']}" if d.get("agreed_on") else "") if x)
        lines += [f"Definition of done: {_cell(d.get('path'))}" + (f" ({_cell(agreed)})" if agreed else ""), ""]
        lines += ["| gate | bound | value | interval | result | on this set |", "|---|---|---|---|---|---|"]
        for g in gates.get("gates") or []:
            bound = f"{'≥' if g.get('op') == 'min' else '≤'} {g.get('limit_text')}"
            name = g.get("metric") if g.get("slice") is None else f"{g.get('metric')} [slice {g['slice']}]"
            lines.append(f"| {_cell(name)} | {_cell(bound)} | {_cell(g.get('observed_text'))} | "
                         f"{_cell(interval_text(g))} | {'pass' if g.get('passed') else '**FAIL**'} | "
                         f"{_cell(g.get('reason') or g.get('allowed_on_this_set'))} |")
        lines.append("")
    else:
        lines += ["No definition of done was applied (give `--gates DOD.toml`).", ""]
    rows = []
    headlines = list(_HEADLINES)
    own = agg.get("headline")  # a scorer's own headline metric (rougeL_f1_mean), shown first
    if isinstance(own, str) and own in agg and own not in dict(_HEADLINES):
        headlines.insert(0, (own, _cell(own)))
    for key, label in headlines:
        if key in agg:
            rows.append((label, "undefined: " + _cell(und[key]) if key in und else _num(agg[key])))
    for key in _COUNTS:
        if key in agg and not isinstance(agg[key], (dict, list)):
            rows.append((key, _num(agg[key])))
    if rows:
        lines += ["| metric | value |", "|---|---|"] + [f"| {label} | {value} |" for label, value in rows] + [""]
    lines += _slices_table(results, [k for k, _ in headlines])
    if run.get("id"):
        store = f" --store {printable(run['store'], keep_newlines=False)}" if run.get("store") else ""
        lines += [f"Report: `goldeval report {run['id']}{store} --out report.html`", ""]
    return "\n".join(lines)


def _slices_table(results: Mapping[str, Any], headline_keys: list[str]) -> list[str]:
    """A run scored with ``--slice-by``: a table of its slices (``n`` and the headline numbers the slices hold, at
    most three; an undefined value said so, a slice not aggregated with its error). No lines without slices."""
    slices = results.get("slices")
    if not isinstance(slices, Mapping) or not slices:
        return []
    present = [k for k in headline_keys if any(isinstance(a, Mapping) and k in a for a in slices.values())][:3]
    lines = [f"Per slice of {_cell(results.get('slice_by'))}:", "",
             "| slice | n | " + " | ".join(_cell(k) for k in present) + " |", "|---|---|" + "---|" * len(present)]
    for name, agg in slices.items():
        if not isinstance(agg, Mapping):
            continue
        given = agg.get("undefined")
        und: Mapping[str, Any] = given if isinstance(given, Mapping) else {}
        cells = ["undefined" if k in und else _num(agg.get(k)) for k in present]
        if "error" in agg and cells:
            cells = [f"not aggregated: {_cell(agg['error'])}"] + ["—"] * (len(cells) - 1)
        lines.append(f"| {_cell(name)} | {_num(agg.get('n'))} | " + " | ".join(cells) + " |")
    return lines + [""]
