"""The indexed columns of a per-case record (status, verdict, score, reason, raw), as the run store keeps them.

Apart from :mod:`goldeval.runs.store` so that the engines, which compute them while scoring, do not load the store
(sqlite3, the writer) on a run that records nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["case_columns"]


def case_columns(case: Mapping[str, Any], *, status: str | None = None) -> tuple[str, str | None, float | None, str | None, str | None]:
    """The indexed columns of one per-case record: ``(status, verdict, score, reason, raw)``.

    ``score`` is the case's headline number: ``f1``, else ``whole_note.f1`` (``whole_note.similarity`` for the
    semantic scorer's records, which hold no F1), else ``score``; ``verdict`` is a
    verdict name when the record holds one. ``status`` is the record's, else *status*, else ``"scored"``.
    """
    get = case.get
    status = get("status") or status or "scored"
    verdict = get("verdict")
    if verdict is not None and verdict.__class__ is not str:
        verdict = verdict.get("verdict") if isinstance(verdict, Mapping) else None
        if not isinstance(verdict, str):
            verdict = None
    score = get("f1")
    if score is None:
        whole = get("whole_note")
        if isinstance(whole, Mapping):  # a pair scorer's whole note: its F1 (token F1, ROUGE), else its similarity
            score = whole.get("f1")
            if score is None:
                score = whole.get("similarity")
        else:
            score = get("score")
    if score is not None and (score.__class__ is not float):
        score = float(score) if isinstance(score, (int, float)) and not isinstance(score, bool) else None
    reason = get("reason")
    if reason is None:
        reason = get("error")
    raw = get("raw")
    return (
        status if status.__class__ is str else str(status),
        verdict,
        score,
        None if reason is None else str(reason),
        None if raw is None else str(raw),
    )
