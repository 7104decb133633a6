"""An example third-party goldeval scorer: exact match of a prediction string against a reference string.

Installed for the tests by putting this folder on ``sys.path`` / ``PYTHONPATH``: the
``goldeval_exact_match-0.1.0.dist-info`` beside it declares the entry point (``pyproject.toml`` declares the same
for a real ``pip install``)::

    [project.entry-points."goldeval.scorers"]
    exact_match = "goldeval_exact_match:ExactMatch"

Rows ``{"id", "prediction", "reference"}`` (field names are options). A row matches when the two strings are equal
after stripping outer whitespace (``normalize = "strip"``, the default) or exactly (``normalize = "none"``).
Aggregate: ``exact_match_rate`` = matches / scored rows (undefined when nothing was scored), ``n_exact``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from goldeval.errors import InputError, shorten
from goldeval.io import RowError
from goldeval.scoring.protocol import MetricSpec, Partial, Reused, Scorer, check_id, duplicate_error, failure_entry, numbered


class ExactMatch(Scorer):
    """Exact string match; see the module docstring."""

    name = "exact_match"
    version = "1"
    options = {"prediction_field": "prediction", "reference_field": "reference", "id_field": "id", "normalize": "strip"}
    metrics = {
        "exact_match_rate": MetricSpec("share of scored rows whose prediction equals the reference", "higher", "fraction"),
        "n_exact": MetricSpec("rows whose prediction equals the reference", "higher", "count"),
    }
    headline = "exact_match_rate"

    def configure(self, **options: Any) -> dict[str, Any]:
        config = super().configure(**options)
        if config["normalize"] not in ("strip", "none"):
            raise InputError(f"exact_match: normalize must be 'strip' or 'none', got {config['normalize']!r}.")
        return config

    def score_batch(self, rows: Iterable[Any], config: Mapping[str, Any]) -> Iterator[dict[str, Any]]:
        src = config["source"]
        seen: dict[str, int] = {}
        for item in numbered(rows, src):
            if type(item) is Reused:
                yield item.record
                continue
            if type(item) is RowError:
                yield {"id": item.id, "line": item.line, "status": "unscored", "error": item.error}
                continue
            where = f"{src}:{item.line}"
            rid, error = check_id(item.data, config["id_field"], where)
            if rid is not None and rid in seen:
                yield {"id": rid, "line": item.line, "status": "unscored", "duplicate_of": seen[rid],
                       "error": duplicate_error(src, item.line, rid, seen[rid])}
                continue
            if rid is not None:
                seen[rid] = item.line
            texts = []
            for field in (config["prediction_field"], config["reference_field"]):
                value = item.data.get(field)
                if error is None and not isinstance(value, str):
                    error = f"{where}: field '{field}' must be a string, got {shorten(value)}. Fix the row."
                texts.append(value)
            if error is not None:
                yield {"id": rid, "line": item.line, "status": "unscored", "error": error}
                continue
            pred, ref = texts
            if config["normalize"] == "strip":
                pred, ref = pred.strip(), ref.strip()
            yield {"id": rid, "line": item.line, "status": "scored", "score": 1.0 if pred == ref else 0.0}

    def new_partial(self, config: Mapping[str, Any], *, keep_cases: bool = True) -> Partial:
        return _Partial(keep_cases)

    def finish(self, partial: Partial, config: Mapping[str, Any]) -> dict[str, Any]:
        assert isinstance(partial, _Partial)
        p = partial
        agg: dict[str, Any] = {"n": p.n_rows, "n_scored": p.n_scored, "n_failed": len(p.failures), "n_exact": p.n_exact,
                               "exact_match_rate": p.n_exact / p.n_scored if p.n_scored else None, "undefined": {}}
        if not p.n_scored:
            agg["undefined"]["exact_match_rate"] = "no row could be scored"
        return {"scorer": {"name": self.name, "version": self.version}, "config": self.store_config(config),
                "aggregate": agg, "per_example": p.per_example, "failures": sorted(p.failures, key=lambda f: f["line"])}


class _Partial(Partial):
    def __init__(self, keep: bool) -> None:
        self.keep, self.n_rows, self.n_scored, self.n_exact = keep, 0, 0, 0
        self.per_example: list[dict[str, Any]] = []
        self.failures: list[dict[str, Any]] = []

    def add(self, record: Mapping[str, Any]) -> None:
        self.n_rows += 1
        if record["status"] != "scored":
            self.failures.append(failure_entry(record))
            return
        self.n_scored += 1
        self.n_exact += record["score"] == 1.0
        if self.keep:
            self.per_example.append({k: record[k] for k in ("id", "line", "score")})

    def merge(self, other: Partial) -> None:
        assert isinstance(other, _Partial)
        self.n_rows += other.n_rows
        self.n_scored += other.n_scored
        self.n_exact += other.n_exact
        self.per_example += other.per_example
        self.failures += other.failures
