"""Run identity: the hashes that say two invocations are the same run (run key, dataset hash, rubric text), and
the input hashes a results dict reports.

Moved out of :mod:`goldeval.runs.recorder` (which re-exports every name here); the definitions are unchanged.

Source: issue #5 ("Resume": what "the same run" is).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from typing import Any

import orjson

__all__ = ["run_key", "dataset_hash", "rubric_text", "hashes_from_results"]


def _canonical(obj: Any) -> bytes:
    return orjson.dumps(obj, option=orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS | orjson.OPT_SERIALIZE_NUMPY)


def dataset_hash(input_hashes: Mapping[str, str]) -> str:
    """sha256 over the input files' sha256 values, by role (``{"cases": ..., "predictions": ...}``)."""
    return hashlib.sha256(_canonical(dict(input_hashes))).hexdigest()


def rubric_text(cases_path: str | os.PathLike[str]) -> str | None:
    """The rubric of a case file as one canonical text (its sha256 is the run's rubric hash): every case's
    ``rubric`` clauses (and ``must_not_use`` entries), by case id, as sorted-key JSON; ``None`` when no case has
    one. Rows that cannot be read are skipped (the scorer reports them)."""
    from goldeval.io import Row, read_rows

    rubric: dict[str, Any] = {}
    for item in read_rows(cases_path):
        if isinstance(item, Row) and item.data.get("id") is not None:
            entry = {k: item.data[k] for k in ("rubric", "must_not_use") if item.data.get(k)}
            if entry:
                rubric[str(item.data["id"])] = entry
    return _canonical(rubric).decode() if rubric else None


def run_key(*, scorer_name: str, scorer_version: str, input_hashes: Mapping[str, str], config: Mapping[str, Any], arm: str | None) -> str:
    """The key two invocations share when they are the same run: sha256 of the input files' hashes (by role),
    the resolved configuration (keys sorted), the scorer's name and version, and the arm name."""
    payload = {
        "scorer": scorer_name,
        "scorer_version": str(scorer_version),
        "inputs": dict(input_hashes),
        "config": dict(config),
        "arm": arm,
    }
    return hashlib.sha256(_canonical(payload)).hexdigest()


def hashes_from_results(results: Mapping[str, Any], inputs: Mapping[str, str]) -> dict[str, str]:
    """The sha256 a results dict reports for each input, by role: ``{"path": p, "sha256": h}`` objects (score,
    labels) and ``{"<name>": p, "<name>_sha256": h}`` pairs (judge) found in its top two levels, matched to
    *inputs* (role → path) by resolved path. Inputs it does not report are left out."""
    by_path = {os.path.realpath(p): role for role, p in inputs.items()}
    found: dict[str, str] = {}

    def visit(obj: Any, depth: int) -> None:
        if not isinstance(obj, Mapping) or depth > 2:
            return
        path, digest = obj.get("path"), obj.get("sha256")
        if isinstance(path, str) and isinstance(digest, str) and os.path.realpath(path) in by_path:
            found.setdefault(by_path[os.path.realpath(path)], digest)
        for key, value in obj.items():
            if isinstance(key, str) and isinstance(value, str) and isinstance(obj.get(f"{key}_sha256"), str):
                real = os.path.realpath(value)
                if real in by_path:
                    found.setdefault(by_path[real], obj[f"{key}_sha256"])
            elif isinstance(value, Mapping):
                visit(value, depth + 1)

    visit(results, 0)
    return {role: h for role, h in found.items() if len(h) == 64}
