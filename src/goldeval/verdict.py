"""The verdict type shared by the rule-based data-answer judge and the LLM judge, and pass-rate accounting.

A verdict is ``match`` · ``near_match`` (defensibly different: neither pass nor fail) · ``no_match``, or
``needs_human`` when no verdict could be decided (an unparseable judge answer, a case no rule decides and no LLM
judge is configured for). ``needs_human`` is also set (as a flag) on a decided verdict whose confidence is ≤ 5.

A case that could not be scored at all (its query failed, its row was malformed) is *unscored*: it has a
``CaseOutcome`` with ``status="unscored"`` and a reason, and no verdict. It is never turned into a pass or a fail.

Source: ``DESIGN.md`` ("Terms", "Data answers"), goldeval.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field, fields, is_dataclass
from typing import Any, Literal

__all__ = [
    "VERDICTS",
    "GOLD_STATUSES",
    "Verdict",
    "CaseOutcome",
    "PassRate",
    "pass_rate",
    "pass_rate_class",
    "NEEDS_HUMAN_MAX_CONFIDENCE",
]

VerdictName = Literal["match", "near_match", "no_match", "needs_human"]
GoldStatus = Literal["verified", "verified_benign", "suspect", "verified_wrong"]

VERDICTS: tuple[str, ...] = ("match", "near_match", "no_match", "needs_human")
GOLD_STATUSES: tuple[str, ...] = ("verified", "verified_benign", "suspect", "verified_wrong")

#: A decided verdict with confidence at or below this is flagged ``needs_human``.
NEEDS_HUMAN_MAX_CONFIDENCE = 5


_ATOMS = (str, int, float, bool, type(None))


def _plain(value: Any) -> Any:
    """A copy of *value* as ``dataclasses.asdict`` makes it: dicts, lists and tuples rebuilt, dataclasses turned into
    dicts, other values deep-copied; str, int, float, bool and None returned as they are (immutable)."""
    t = type(value)
    if t in _ATOMS:
        return value
    # (An atom is returned as it is: the containers below test for one before calling _plain on it.)
    if t is dict:
        return {(k if type(k) in _ATOMS else _plain(k)): (v if type(v) in _ATOMS else _plain(v)) for k, v in value.items()}
    if t is list:
        return [v if type(v) in _ATOMS else _plain(v) for v in value]
    if t is tuple:
        return tuple(_plain(v) for v in value)
    if is_dataclass(value) and not isinstance(value, type):
        return asdict(value)
    if isinstance(value, (dict, list, tuple)):
        return asdict(_Box(value)).get("value")  # a subclass (Counter, a namedtuple…): exactly as asdict copies it
    return copy.deepcopy(value)


@dataclass(slots=True)
class _Box:
    value: Any


@dataclass(slots=True)
class Verdict:
    """One judged case.

    Attributes:
        verdict: ``match`` | ``near_match`` | ``no_match`` | ``needs_human`` (no verdict could be decided).
        confidence: 1–10; ``None`` only when ``verdict == "needs_human"`` and nothing could be read.
        needs_human: True when a person must look: no verdict, or confidence ≤ 5.
        why: One or two sentences a reviewer can check.
        column_pairing: golden column → prediction column (``None`` when a golden column found no partner).
        gold_status: ``verified`` | ``verified_benign`` | ``suspect`` | ``verified_wrong``.
        gold_note: Why the golden looks wrong, when ``gold_status`` is not ``verified``.
        decided_by: ``rule`` | ``llm`` | ``must_not_use`` | ``parse`` (what produced this verdict).
        located: ``{"golden_rows", "found", "missing": [...], "extra": n}`` for row answers, else ``None``.
        mismatch: A short description of how the answer differs (``"uniformly scaled ×100"``…), else ``None``.
        details: Anything else the judge wants to keep (pairing basis, ambiguity, raw judge text…).
    """

    verdict: VerdictName
    confidence: int | None
    needs_human: bool
    why: str
    column_pairing: dict[str, str | None] = field(default_factory=dict)
    gold_status: GoldStatus = "verified"
    gold_note: str | None = None
    decided_by: str = "rule"
    located: dict[str, Any] | None = None
    mismatch: str | None = None
    details: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict with the documented keys (``verdict``, ``confidence``, ``needs_human``, …).

        Equal to ``dataclasses.asdict(self)`` (containers copied, so the dict can be changed freely), built without
        its per-value deep copies of immutable cells (a judge writes three of these per case)."""
        return {name: _plain(getattr(self, name)) for name in _VERDICT_FIELDS}


_VERDICT_FIELDS = tuple(f.name for f in fields(Verdict))


@dataclass(slots=True)
class CaseOutcome:
    """What happened to one case: ``status`` ``scored`` (with a verdict) or ``unscored`` (with a reason).

    Attributes:
        golden_used: For a case whose golden carries ``alternatives``: which golden decided the verdict,
            ``"primary"`` or ``"alternatives[i]"`` (0-based). ``None`` (and absent from :meth:`to_dict`) for a case
            without alternatives.
        golden_verdicts: For such a case, what each golden gave, the primary first: ``[{"golden", "verdict",
            "confidence", "needs_human", "gold_status", "gold_note", "why"}]``. ``None`` otherwise.
    """

    id: str
    status: Literal["scored", "unscored"]
    verdict: Verdict | None = None
    reason: str | None = None
    raw: str | None = None
    golden_used: str | None = None
    golden_verdicts: list[dict[str, Any]] | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id, "status": self.status}
        if self.verdict is not None:
            out.update(self.verdict.to_dict())
        if self.golden_used is not None:
            out["golden_used"] = self.golden_used
        if self.golden_verdicts is not None:
            out["golden_verdicts"] = _plain(self.golden_verdicts)
        if self.reason is not None:
            out["reason"] = self.reason
        if self.raw is not None:
            out["raw"] = self.raw
        return out


@dataclass(frozen=True, slots=True)
class PassRate:
    """Pass-rate accounting: ``rate = match / (match + no_match)``; the rest is counted beside it, never folded in.

    ``rate`` is 0.0 and ``undefined`` is True when nothing was decided (no gate passes on no evidence).
    """

    rate: float
    undefined: bool
    match: int
    no_match: int
    decided: int
    near_match: int
    needs_human: int
    unscored: int
    verified_wrong: int
    n: int

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _counted_fields(o: CaseOutcome) -> dict[str, Any]:
    """The fields of ``o.to_dict()`` that the pass rate reads (without building the whole dict)."""
    v = o.verdict
    if v is None:
        return {"status": o.status}
    return {"status": o.status, "verdict": v.verdict, "gold_status": v.gold_status, "needs_human": v.needs_human}


def pass_rate_class(outcome: CaseOutcome | Mapping[str, Any]) -> str:
    """The one count of :func:`pass_rate` a judged case goes to: ``unscored``, ``verified_wrong``,
    ``needs_human``, ``near_match``, ``match`` or ``no_match``, checked in that order (see :func:`pass_rate`).

    Args:
        outcome: A ``CaseOutcome`` or its ``to_dict()`` form.
    """
    d = _counted_fields(outcome) if isinstance(outcome, CaseOutcome) else outcome
    if d.get("status") == "unscored" or d.get("verdict") is None:
        return "unscored"
    if d.get("gold_status") == "verified_wrong":
        return "verified_wrong"
    if d.get("needs_human") or d.get("verdict") == "needs_human":
        return "needs_human"
    if d["verdict"] in ("near_match", "match", "no_match"):
        return d["verdict"]
    return "unscored"


def pass_rate(outcomes: Iterable[CaseOutcome | dict[str, Any]]) -> PassRate:
    """Pass rate over judged cases, the one accounting used everywhere (CLI, compare, report).

    Args:
        outcomes: ``CaseOutcome`` objects or their ``to_dict()`` form.

    Returns:
        PassRate. A case is excluded from the denominator — and counted in exactly one of these, checked in this
        order — when it is unscored, its golden is ``verified_wrong``, it ``needs_human`` (no verdict, or
        confidence ≤ 5), or its verdict is ``near_match``. Pass = ``match``; decided = ``match + no_match``.

    Source: ``DESIGN.md`` "Data answers" (pass rate), goldeval.
    """
    counts = dict(match=0, no_match=0, near_match=0, needs_human=0, unscored=0, verified_wrong=0)
    n = 0
    for o in outcomes:
        n += 1
        counts[pass_rate_class(o)] += 1
    decided = counts["match"] + counts["no_match"]
    return PassRate(
        rate=counts["match"] / decided if decided else 0.0,
        undefined=decided == 0,
        decided=decided,
        n=n,
        **counts,
    )
