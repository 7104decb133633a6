"""Small builders of rule verdicts shared by the table and prose rules (confidence ≤ 5 sets ``needs_human``).

Source: ``DESIGN.md`` "Terms" (verdict), goldeval.
"""

from __future__ import annotations

from typing import Any

from goldeval.verdict import NEEDS_HUMAN_MAX_CONFIDENCE, Verdict


def make_verdict(verdict: str, confidence: int | None, why: str, **kw: Any) -> Verdict:
    needs = verdict == "needs_human" or confidence is None or confidence <= NEEDS_HUMAN_MAX_CONFIDENCE
    return Verdict(verdict=verdict, confidence=confidence, needs_human=needs, why=why, **kw)  # type: ignore[arg-type]


def undecided_verdict(why: str, because: str, **kw: Any) -> Verdict:
    v = make_verdict("needs_human", None, why, **kw)
    v.details["undecided_because"] = because
    return v


def fmt_value(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:g}"
    return repr(v) if isinstance(v, str) else str(v)

