"""A case's rubric as a reader sees it: each clause with its marker, the verdict the marker fixes, and the part the
clause played in the case's verdict (it decided it, was overridden, or held the rule verdict open for the LLM judge).

The markers and the verdicts they fix are the doctrine's (``DESIGN.md`` "Data answers", *Rubric markers*; the LLM
judge's system prompt, doctrine 7): PREFERRED, ACCEPT → match; DIVERGENT → near_match; WRONG → no_match; REQUIRED
omitted → no_match; CREDITED (and an unmarked clause) omitted → still a match. The rules never decide a verdict by a
clause: a clause that may move a rule verdict hands the case to the LLM judge (``details["undecided_because"]``
names its markers), and the LLM judge names the clause it applied in its ``why`` (doctrine: "name it in why"; an
overridden clause: "say in why that rubric clause "<clause>" was overridden").

Source: ``DESIGN.md`` "Data answers", goldeval; :data:`goldeval.llm.prompt.SYSTEM_PROMPT` (doctrine 7 and the
near_match test).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from goldeval.answers.shapes import rubric_of

__all__ = ["MARKER_EFFECTS", "clause_roles"]

#: marker → ``(verdict it fixes, when)``: ``when`` is ``"present"`` (the answer does what the clause says) or
#: ``"omitted"`` (the answer leaves it out). CREDITED fixes no verdict: omitting it still leaves a match.
MARKER_EFFECTS: dict[str, tuple[str | None, str]] = {
    "PREFERRED": ("match", "present"),
    "ACCEPT": ("match", "present"),
    "DIVERGENT": ("near_match", "present"),
    "WRONG": ("no_match", "present"),
    "REQUIRED": ("no_match", "omitted"),
    "CREDITED": (None, "omitted"),
}

_WORDS = re.compile(r"[a-z0-9]+")


def _words(text: str) -> str:
    """Lower-case words joined by one space: "Reports a steady  decline." → "reports a steady decline"."""
    return " ".join(_WORDS.findall(text.lower()))


def _effect(marker: str) -> str:
    verdict, when = MARKER_EFFECTS[marker]
    if verdict is None:
        return "credited: omitting it still leaves a match"
    return f"{verdict} when the answer does this" if when == "present" else f"{verdict} when the answer omits it"


def clause_roles(
    rubric: Sequence[Any] | None,
    *,
    verdict: str | None,
    why: str | None,
    decided_by: str | None,
    undecided_because: str | None = None,
) -> list[dict[str, Any]]:
    """Each rubric clause with its marker, what the marker does, and the part it played in the verdict.

    Args:
        rubric: The case's ``rubric`` as the case file gives it (strings with an optional ``MARKER:`` prefix, or
            ``{"marker", "text"}`` objects), or the parsed ``details["rubric"]`` of a judged record. ``None`` or
            empty: no clause.
        verdict: The case's final verdict (``match``, ``near_match``, ``no_match``, ``needs_human``) or ``None``.
        why: The case's ``why``.
        decided_by: ``"rule"``, ``"llm"``, ``"must_not_use"``, ``"parse"`` (as the verdict records it).
        undecided_because: ``details["undecided_because"]`` of a rule verdict held open for the LLM judge.

    Returns:
        One dict per clause, in order: ``marker`` (one of :data:`MARKER_EFFECTS`; an unmarked clause is
        CREDITED), ``text``, ``fixes`` (the verdict the marker fixes, ``None`` for CREDITED), ``when``
        (``"present"`` / ``"omitted"``), ``effect`` (those two in words) and ``role``:

        * ``"decided"`` — an LLM verdict whose ``why`` cites the clause, and the verdict is the one its marker
          fixes (a REQUIRED clause: a no_match);
        * ``"overridden"`` — the ``why`` cites it and says it was overridden, with another verdict than the one
          its marker fixes;
        * ``"cited"`` — the ``why`` cites it otherwise (a REQUIRED clause met, a CREDITED clause);
        * ``"held_open"`` — the rules did not make their verdict final because of the clause (its marker is
          named in ``undecided_because``; a criteria golden's clauses are the whole key, and none is singled out);
        * ``None`` — no part the record shows.

        A ``why`` cites a clause when it holds the clause's words in order (case and punctuation aside; a clause of
        two words or more: one word is too common to name a clause), or when it names the clause's marker in
        capitals and no other clause carries that marker. Only an LLM verdict cites:
        the rules decide no verdict by a clause.

    Raises:
        Nothing: a clause of another shape is read as :func:`~goldeval.answers.shapes.rubric_of` reads it.

    Example:
        >>> [c["role"] for c in clause_roles(["REQUIRED: names the busiest month", "WRONG: reports a steady decline"],
        ...      verdict="no_match", why="Reports a steady decline, which the rubric marks WRONG.", decided_by="llm")]
        [None, 'decided']
    """
    if not rubric:
        return []
    clauses = rubric_of(rubric)
    why_text = why if isinstance(why, str) else ""
    why_words = f" {_words(why_text)} "
    overridden = "overrid" in why_text.lower()
    per_marker: dict[str, int] = {}
    for m, _ in clauses:
        per_marker[m] = per_marker.get(m, 0) + 1
    held = set(re.findall(r"\b(" + "|".join(MARKER_EFFECTS) + r")\b", undecided_because or ""))
    out: list[dict[str, Any]] = []
    for marker, text in clauses:
        fixes, when = MARKER_EFFECTS[marker]
        role: str | None = None
        if decided_by == "llm" and why_text:
            words = _words(text)
            cited = (words.count(" ") >= 1 and f" {words} " in why_words) or (
                per_marker[marker] == 1 and re.search(rf"\b{marker}\b", why_text) is not None)
            if cited:
                if fixes is not None and verdict == fixes:
                    role = "decided"
                elif fixes is not None and overridden and when == "present" and verdict in ("match", "near_match", "no_match"):
                    role = "overridden"
                else:
                    role = "cited"
        elif decided_by == "rule" and verdict == "needs_human" and marker in held:
            role = "held_open"
        out.append({"marker": marker, "text": text, "fixes": fixes, "when": when, "effect": _effect(marker), "role": role})
    return out

