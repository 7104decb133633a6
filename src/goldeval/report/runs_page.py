"""The page across runs (``goldeval report --runs``): every run of a store as a row with its headline, interval,
gates and versions, and per arm a chart of the headline over time with the intervals and a marker wherever the
measurement changed between two runs of that arm (judge version, rubric, dataset).

Each run's headline and interval are the ones its own report shows (:func:`goldeval.report.model.headline_summary`):
a pass rate with its Wilson score interval, a mean F1 with a bootstrap percentile interval over the cases, a label
F1 with a bootstrap over its outcome counts. The page is one self-contained file, like a run's report
(:func:`goldeval.report.html.render_runs_html`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from goldeval.errors import InputError, shorten
from goldeval.report import charts
from goldeval.report.model import ReportOptions, headline_summary
from goldeval.runs.store import gates_passed

__all__ = ["runs_model", "parse_since", "measurement_changes", "tag_matches", "CHANGE_FIELDS", "NO_ARM"]

#: What, changing between two runs of one arm, moves the headline by itself: field → the name the page gives it
#: (the judge's version, the rubric, the dataset; and the scorer's version and tokenizer, which measure anew too).
CHANGE_FIELDS: dict[str, str] = {"judge_version": "judge", "rubric_hash": "rubric", "dataset_hash": "dataset",
                                 "scorer_version": "scorer", "tokenizer": "tokenizer"}
_NOT_HASHES = ("judge_version", "scorer_version", "tokenizer")
#: The arm of runs recorded without ``--arm``.
NO_ARM = "(no arm)"


def parse_since(text: str) -> datetime:
    """A ``--since`` value as a UTC time: a date (``2026-12-01``, from its midnight) or a date and time
    (``2026-12-01T09:30``, ``2026-12-01 09:30:00+01:00``); a time without an offset is UTC, as the store's are.

    Raises:
        InputError: anything else (the message names the forms it accepts).

    Example:
        >>> parse_since("2026-12-01").isoformat(), parse_since("2026-12-01T10:30+01:00").isoformat()
        ('2026-12-01T00:00:00+00:00', '2026-12-01T09:30:00+00:00')
    """
    try:
        when = datetime.fromisoformat(text.strip())
    except (ValueError, AttributeError):
        raise InputError(f"--since {shorten(text)}: expected a date (2026-12-01) or a date and time (2026-12-01T09:30, UTC "
                         "unless it has an offset). Give the day from which runs are shown.") from None
    return when.replace(tzinfo=UTC) if when.tzinfo is None else when.astimezone(UTC)


def _when(run: Mapping[str, Any]) -> datetime | None:
    try:
        when = datetime.fromisoformat(str(run.get("created_at")))
    except ValueError:
        return None
    return when.replace(tzinfo=UTC) if when.tzinfo is None else when.astimezone(UTC)


def _short(value: Any) -> str:
    return "—" if value is None else str(value)[:12]


def measurement_changes(previous: Mapping[str, Any], run: Mapping[str, Any]) -> list[str]:
    """What changed in how a run was measured since the previous run of its arm: ``["judge 1.5.0 → 1.6.0",
    "rubric a5b5d3396797 → 9f12aa000000", ...]`` over :data:`CHANGE_FIELDS` (hashes shortened to 12 characters; a
    field one run lacks reads "—").

    Example:
        >>> measurement_changes({"judge_version": "1.5.0", "dataset_hash": "d1"}, {"judge_version": "1.6.0", "dataset_hash": "d1"})
        ['judge 1.5.0 → 1.6.0']
    """
    out = []
    for field, name in CHANGE_FIELDS.items():
        a, b = previous.get(field), run.get(field)
        if a != b:
            shown = (a or "—", b or "—") if field in _NOT_HASHES else (_short(a), _short(b))
            out.append(f"{name} {shown[0]} → {shown[1]}")
    return out


def _gate_lines(results: Mapping[str, Any]) -> list[dict[str, Any]]:
    gates = results.get("gates")
    if not isinstance(gates, Mapping):
        return []
    out = []
    for g in gates.get("gates") or []:
        if isinstance(g, Mapping):
            named = g.get("metric") if g.get("slice") is None else f"{g.get('metric')} [slice {g['slice']}]"
            out.append({"metric": g.get("metric"), "slice": g.get("slice"), "op": g.get("op"), "limit": g.get("limit"),
                        "text": f"{named} {g.get('observed_text') if g.get('observed_text') is not None else '—'} "
                                f"{'≥' if g.get('op') == 'min' else '≤'} {g.get('limit_text')}",
                        "passed": bool(g.get("passed"))})
    return out


def _row(run: Mapping[str, Any], opts: ReportOptions) -> dict[str, Any]:
    results = run.get("results")
    row: dict[str, Any] = {
        "id": run["id"], "arm": run.get("arm") or NO_ARM, "when": str(run.get("created_at") or "")[:19].replace("T", " "),
        "status": run.get("status"), "scorer": f"{run.get('scorer_name')}@{run.get('scorer_version')}",
        "n": run.get("n") if run.get("n") is not None else run.get("n_recorded"),
        "goldeval_version": run.get("goldeval_version") or "—", "judge_version": run.get("judge_version") or "—",
        "tokenizer": run.get("tokenizer") or "—", "rubric": _short(run.get("rubric_hash")),
        "dataset": _short(run.get("dataset_hash")), "dod": _short(run.get("dod_hash")), "tags": list(run.get("tags") or []),
        "headline": None, "value": None, "ci": None, "gates": None, "gate_lines": [], "changed": [],
    }
    if isinstance(results, Mapping):
        head = headline_summary(results, opts)
        row.update(headline=head.get("name"), key=head.get("key"), value=head.get("value"), ci=head.get("ci"),
                   interval_note=head.get("interval_note"), undefined=head.get("undefined"),
                   gates=gates_passed(results), gate_lines=_gate_lines(results))
    return row


def tag_matches(name: str, tag: str) -> bool:
    """Whether the tag *name* is chosen by ``--tag`` *tag*: the same name, or, for a *tag* ending in ``/``, a name
    under it (``release/`` chooses ``release/2026-11`` and ``release/2026-12``, not ``release-candidate``).

    Example:
        >>> tag_matches("release/2026-12", "release/"), tag_matches("baseline/main", "baseline/main"), tag_matches("releases", "release/")
        (True, True, False)
    """
    return name == tag or (tag.endswith("/") and name.startswith(tag))


def runs_model(store: Any, *, arm: str | None = None, since: datetime | None = None, tag: str | None = None,
               options: ReportOptions | None = None, store_name: str | None = None) -> dict[str, Any]:
    """Everything the page across runs shows, JSON-ready (charts as SVG strings).

    Args:
        store: An open :class:`goldeval.runs.store.RunStore` (SQLite or PostgreSQL).
        arm: Only this arm's runs (``--arm``).
        since: Only runs recorded at or after this UTC time (:func:`parse_since`).
        tag: Only runs that carry this tag, or a tag under it when it ends in ``/`` (:func:`tag_matches`).
        options: :class:`~goldeval.report.model.ReportOptions` (the headline intervals' confidence, resamples, seed).
        store_name: How the page names the store (default: the store's path).

    Returns:
        ``{"title", "store", "filters", "n_runs", "rows", "arms"}``: ``rows`` newest first, one per run (``id``,
        ``arm``, ``when`` UTC, ``status``, ``scorer``, ``n``, ``headline``, ``value``, ``ci``, ``gates``
        (True / False / None), ``gate_lines``, versions and hashes, ``tags``, ``changed``: what changed since the
        arm's previous run); ``arms`` one per arm and headline, oldest run first, with its ``chart`` (SVG of
        :func:`goldeval.report.charts.timeline`), ``changes`` [{``n`` (the marker's number on the chart), ``after``,
        ``run``, ``what``, ``fields``}] and ``n_runs``.

    Raises:
        InputError: no run matches (the message names the filters, or says the store holds none).
    """
    opts = options or ReportOptions()
    listed = store.list_runs(arm=arm)
    if since is not None:
        listed = [r for r in listed if (_when(r) or datetime.min.replace(tzinfo=UTC)) >= since]
    tags: dict[str, list[str]] = {}
    for t in store.tags():
        tags.setdefault(t["run_id"], []).append(t["name"])
    if tag is not None:
        listed = [r for r in listed if any(tag_matches(name, tag) for name in tags.get(r["id"], []))]
    filters = {"--arm": arm, "--since": since.isoformat() if since else None, "--tag": tag}
    if not listed:
        given = " ".join(f"{k} {v}" for k, v in filters.items() if v is not None)
        raise InputError(f"report --runs: no run in store {store_name or store.path}"
                         + (f" matches {given}; drop a filter, or list the runs with `goldeval runs list`." if given
                            else "; record one first (goldeval score|labels|judge)."))
    rows = []
    for brief in listed:
        run = store.get_run(brief["id"], with_results=brief.get("status") == "finished")
        run["tags"] = tags.get(run["id"], [])
        rows.append(_row(run, opts))
    # per arm (and headline: one arm scored by two scorers is two charts), oldest first
    groups: dict[tuple[str, str | None], list[dict[str, Any]]] = {}
    for row, brief in zip(reversed(rows), reversed(listed), strict=True):
        row["_run"] = brief
        groups.setdefault((row["arm"], row["headline"]), []).append(row)
    arms = []
    for (name, headline), members in groups.items():
        changes: list[dict[str, Any]] = []
        previous = None
        for row in members:
            brief = row["_run"]
            if previous is not None:
                what = measurement_changes(previous, brief)
                row["changed"] = what
                if what:
                    changes.append({"n": len(changes) + 1, "after": previous["id"], "run": brief["id"], "what": what,
                                    "fields": [w.split(" ", 1)[0] for w in what],
                                    "when": _midpoint(_when(previous), _when(brief))})
            previous = brief
        arms.append(_arm_view(name, headline, members, changes))
    for row in rows:
        row.pop("_run", None)
    arms.sort(key=lambda a: (a["arm"], str(a["headline"])))
    return {"title": "goldeval runs" + (f" · arm {arm}" if arm else "") + (f" · tag {tag}" if tag else "")
            + (f" · since {since.date().isoformat()}" if since else ""),
            "store": store_name or str(store.path), "filters": {k: v for k, v in filters.items() if v is not None},
            "n_runs": len(rows), "rows": rows, "arms": arms,
            "interval_notes": sorted({r["interval_note"] for r in rows if r.get("interval_note")})}


def _midpoint(a: datetime | None, b: datetime | None) -> datetime | None:
    if a is None or b is None:
        return b or a
    return a + (b - a) / 2


def _same_gate(members: Sequence[Mapping[str, Any]]) -> tuple[str, float] | None:
    """The gate on the headline's metric when every gated run of the arm has the same one."""
    found = set()
    for row in members:
        for g in row.get("gate_lines") or []:
            if (g["metric"] == row.get("key") and g.get("slice") is None  # (a slice's gate bounds the slice, not the headline)
                    and g.get("limit") is not None and g.get("op") in ("min", "max")):
                found.add((str(g["op"]), float(g["limit"])))
    return found.pop() if len(found) == 1 else None


def _arm_view(arm: str, headline: str | None, members: list[dict[str, Any]], changes: list[dict[str, Any]]) -> dict[str, Any]:
    points = [{"when": _when(row["_run"]), "value": row.get("value"), "low": (row.get("ci") or [None, None])[0],
               "high": (row.get("ci") or [None, None])[1], "passed": row.get("gates")}
              for row in members if row.get("value") is not None and _when(row["_run"]) is not None]
    bounded = headline is not None and not any(v > 1.0 or v < 0.0 for p in points for v in (p["value"], p["low"], p["high"])
                                               if v is not None)
    chart = None
    if headline is not None:
        chart = charts.timeline(points, title=f"{arm}: {headline}, {len(points)} run(s)", ylabel=headline,
                                changes=[(c["when"], f"{c['n']} {', '.join(c['fields'])}") for c in changes if c.get("when") is not None],
                                gate=_same_gate(members), ylim=(0.0, 1.0) if bounded else None)
    return {"arm": arm, "headline": headline, "n_runs": len(members), "n_points": len(points), "chart": chart,
            "changes": [{k: v for k, v in c.items() if k != "when"} for c in changes]}
