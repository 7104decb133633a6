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

from goldeval.io.reading import Row, read_rows

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

    rubric: dict[str, Any] = {}
    for item in read_rows(cases_path):
        if isinstance(item, Row) and item.data.get("id") is not None:
            entry = {k: item.data[k] for k in ("rubric", "must_not_use") if item.data.get(k)}
            if entry:
                rubric[str(item.data["id"])] = entry
    return _canonical(rubric).decode() if rubric else None


def input_entry(path: str, sha256: str | None, **more: Any) -> dict[str, Any]:
    """How a run records one input file: ``{"path": as given, "sha256", "abspath": the absolute path when the run
    was made, ...more}``. The path stays as the user typed it (shown, compared); ``abspath`` lets a report or an
    export made from another folder find a relative input (:func:`recorded_path`)."""
    return {"path": path, "sha256": sha256, "abspath": os.path.abspath(path), **more}


def recorded_path(spec: Mapping[str, Any], base: str | None = None) -> str | None:
    """Where a recorded input is read from: its ``path`` when that names a file from the working folder (or is
    absolute), else *base* joined with it when that is a file, else the ``abspath`` recorded with the run when that
    is a file, else the ``path`` as recorded (``None`` without one). A run recorded before ``abspath`` existed
    resolves as before."""
    path = spec.get("path")
    if not isinstance(path, str) or not path:
        return None
    if os.path.isabs(path) or os.path.exists(path):
        return path
    if base is not None and os.path.exists(os.path.join(base, path)):
        return os.path.join(base, path)
    recorded = spec.get("abspath")
    if isinstance(recorded, str) and os.path.isfile(recorded):
        return recorded
    return os.path.join(base, path) if base is not None else path


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
