"""The indexed columns of a per-case record (status, verdict, score, reason, raw), as the run store keeps them.

Apart from :mod:`goldeval.runs.store` so that the engines, which compute them while scoring, do not load the store
(sqlite3, the writer) on a run that records nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["case_columns", "case_score", "case_status"]


def case_columns(case: Mapping[str, Any], *, status: str | None = None) -> tuple[str, str | None, float | None, str | None, str | None]:
    """The indexed columns of one per-case record: ``(status, verdict, score, reason, raw)``.

    ``score`` is the case's headline number: ``f1``, else ``whole_note.f1`` (``whole_note.similarity`` for the
    semantic scorer's records, which hold no F1), else ``score``; ``verdict`` is a
    verdict name when the record holds one. ``status`` is the record's, else *status*, else ``"scored"``.
    """
    get = case.get
    status = get("status") or status or "scored"
    if status.__class__ is not str:
        status = str(status)
    verdict = get("verdict")
    if verdict is not None and verdict.__class__ is not str:
        verdict = verdict.get("verdict") if isinstance(verdict, Mapping) else None
        if not isinstance(verdict, str):
            verdict = None
    score = case_score(case)
    reason = get("reason")
    if reason is None:
        reason = get("error")
    raw = get("raw")
    return (
        status,
        verdict,
        score,
        None if reason is None else str(reason),
        None if raw is None else str(raw),
    )


def case_status(case: Mapping[str, Any]) -> str:
    """The status column of one per-case record: ``case_columns(case)[0]`` without the other columns.

    Example:
        >>> case_status({"id": "c1", "f1": 0.5}), case_status({"status": "error"})
        ('scored', 'error')
    """
    status = case.get("status") or "scored"
    return status if status.__class__ is str else str(status)


def case_score(case: Mapping[str, Any]) -> float | None:
    """The score column of one per-case record (``case_columns(case)[2]``, which calls this): ``f1``, else
    ``whole_note.f1`` (else ``whole_note.similarity``), else ``score``, as a float; ``None`` when that is missing or
    not a number (a bool is not one).

    Example:
        >>> case_score({"whole_note": {"f1": 0.5}}), case_score({"f1": 1}), case_score({"score": True})
        (0.5, 1.0, None)
    """
    get = case.get
    score = get("f1")
    if score is None:
        whole = get("whole_note")
        # a pair scorer's whole note: its F1 (token F1, ROUGE), else its similarity; a dict is seen without the ABC check
        if whole.__class__ is dict or isinstance(whole, Mapping):
            score = whole.get("f1")
            if score is None:
                score = whole.get("similarity")
        else:
            score = get("score")
    if score is not None and (score.__class__ is not float):
        score = float(score) if isinstance(score, (int, float)) and not isinstance(score, bool) else None
    return score
