"""Prose answers: stated values, refusals, hedges, and instructions aimed at the grader.

An answer's text is data. Anything in it that addresses the grader (``GRADE: match``, ``Ignore all previous
instructions``, a quoted ``{"verdict": ...}``) is cut away before values are read, and noted; it is never obeyed.

* :func:`stated_numbers` — the numbers an answer states (``1,234``, ``58.7%``, ``-3.5``), minus the numbers the
  question itself mentions (``Ward 7``), read only from the part of the text before any grader-aimed instruction.
* :func:`refusal` — whether the answer declines, and whether it names what is missing (``no field that records
  blood type``) or is generic (``I cannot answer this``).
* :func:`hedged` — whether the answer offers several candidate values (``either 40 or 42``, ``between 40 and 45``).

Source: ``DESIGN.md`` "Data answers" (refusals, hedges), goldeval; injection markers from inspect_ai#3603.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["Prose", "read_prose", "stated_numbers", "refusal", "hedged", "strip_grader_text"]

_INJECTION = re.compile(
    r"(\[\s*end\s+(?:of\s+)?(?:data|answer|submission)\s*\]"
    r"|^\s*grade\s*:"
    r"|\bignore\s+(?:all\s+|any\s+)?(?:the\s+)?(?:previous|prior|above|earlier)\s+(?:instructions|rules|prompts?)"
    r"|\byou\s+are\s+(?:now\s+)?(?:the|a)\s+(?:grader|judge|evaluator)"
    r"|\bsystem\s+prompt\b"
    r"|\{\s*\"?(?:verdict|grade|score|confidence)\"?\s*:"
    r"|^\s*(?:verdict|score)\s*[:=])",
    re.IGNORECASE | re.MULTILINE,
)

_NUMBER = re.compile(
    r"(?<![\w.])[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?"
    # a scale word or an attached suffix: "1.2 million", "79 thousand", "79k", "3.5M", "2bn" ("79 m" stays 79:
    # a lone m may be metres or minutes)
    r"(?:\s?%|\s(?:thousand|million|billion|trillion)\b|(?:k|K|M|bn|BN|B)\b)?(?![\w])"
)
_PERCENT = re.compile(r"(?<![\w.])[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:\s?%|\s(?:percent|per cent)\b)", re.IGNORECASE)
_SCALE = {"thousand": 1e3, "k": 1e3, "million": 1e6, "m": 1e6, "billion": 1e9, "bn": 1e9, "b": 1e9, "trillion": 1e12}
_SCALE_RE = re.compile(r"(?:\s(thousand|million|billion|trillion)|(k|K|M|bn|BN|B))$")

_REFUSAL = re.compile(
    r"\b(?:cannot|can ?not|can't|unable to|not able to|impossible to|no way to|not possible"
    r"|insufficient (?:data|information)|not enough (?:data|information)"
    r"|(?:do|does|did) not (?:have|contain|record|track|include|store)|(?:doesn't|don't|didn't) (?:have|contain|record|track|include|store)"
    r"|(?:is|are) not (?:available|recorded|tracked|stored)|(?:isn't|aren't) (?:available|recorded|tracked|stored)"
    r"|i don't know|unanswerable|no data (?:on|about|for))\b",
    re.IGNORECASE,
)
_NAMES_MISSING = re.compile(
    r"\b(?:no|not? (?:a|any)|lacks?(?: a| any)?|without(?: a| any)?|missing)\s+(?:\w+\s+){0,3}?"
    r"(?:field|column|table|attribute|entity|variable|record|data|information|measure|dimension)s?\b"
    r"|\b(?:do|does|doesn't|don't)\s+(?:not\s+)?(?:have|contain|record|track|include|store)\s+(?:a\s+|any\s+|the\s+)?\w+"
    r"|\b(?:is|are|isn't|aren't)\s+(?:not\s+)?(?:recorded|tracked|stored|available)\b",
    re.IGNORECASE,
)
_HEDGE = re.compile(
    r"\beither\b[^.]*\bor\b"                                                  # either 22 or 24
    r"|\bbetween\s+[-+]?\d[\d,.]*\s*%?\s+and\s+[-+]?\d"                          # between 40 and 45
    r"|\d\s*%?\s*(?:-|–|to)\s*[-+]?\d"                                          # 40-45, 40 to 45
    r"|\d[\d,.]*\s*%?\s+or\s+(?:maybe\s+|perhaps\s+|possibly\s+)?[-+]?\d"          # 22 or 24
    r"|\b(?:possibly|perhaps|maybe|could be|might be|depending on|depends on|alternatively|if we count)\b",
    re.IGNORECASE,
)


@dataclass(frozen=True, slots=True)
class Prose:
    """What a prose answer says, as read by rule.

    Attributes:
        answer_text: The part of the text that answers (before any grader-aimed instruction).
        injected: The grader-aimed part that was cut away (empty when there was none).
        numbers: Numbers stated in ``answer_text`` that are not mentioned in the question, in order.
        refusal: The answer declines.
        names_missing: The refusal names what the data lacks (specific), rather than a generic "cannot".
        hedged: The answer offers several candidates or a range.
    """

    answer_text: str
    injected: str
    numbers: tuple[float, ...]
    refusal: bool
    names_missing: bool
    hedged: bool
    #: Stated numbers written at least once as a plain number (not ``20%`` / ``20 percent``): only these can be a
    #: count. ``None`` when not worked out (every number counts as plain).
    plain: frozenset[float] | None = None


def strip_grader_text(text: str) -> tuple[str, str]:
    """Split *text* at the first instruction aimed at the grader: ``(answer part, cut part)``."""
    m = _INJECTION.search(text)
    if not m:
        return text, ""
    return text[: m.start()], text[m.start():]


def _to_number(tok: str) -> float:
    m = _SCALE_RE.search(tok)
    if m:  # "1.2 million" is 1,200,000, not 1.2; "79 thousand" is not 79
        word = (m.group(1) or m.group(2)).lower()
        return _to_number(tok[: m.start()]) * _SCALE[word]
    t = tok.replace(",", "").replace(" ", "")
    if t.endswith("%"):
        return float(t[:-1])
    return float(t)


_DATE = re.compile(
    r"\b\d{4}-\d{1,2}-\d{1,2}(?:[T ]\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?)?\b"      # 2024-03-01, 2024-03-01 10:00
    r"|\b\d{1,2}[/.]\d{1,2}[/.]\d{2,4}\b"                                       # 01/03/2024, 1.3.24
    r"|\b\d{1,2}:\d{2}(?::\d{2})?\b"                                             # 10:30
)


def _without_dates(text: str) -> str:
    """Dates and times replaced by a space: their digits are not stated values (nor a range like 40-45)."""
    return _DATE.sub(" ", text)


def stated_numbers(text: str, question: str = "") -> tuple[float, ...]:
    """Numbers stated in *text*, minus those the *question* mentions (``Ward 7`` is not an answer).

    Dates and clock times (``2024-03-01``, ``01/03/2024``, ``10:30``) are not read as numbers."""
    asked = {_to_number(m.group(0)) for m in _NUMBER.finditer(_without_dates(question or ""))}
    out = []
    for m in _NUMBER.finditer(_without_dates(text)):
        x = _to_number(m.group(0))
        if x in asked:
            continue
        out.append(x)
    return tuple(out)


_NO_FIELD = re.compile(
    r"\b(?:has|have|there is|there are|contains?|holds?|with)\s+no\s+(?:\w+\s+){0,3}?"
    r"(?:field|column|table|attribute|entity|variable|data|information|record)s?\b",
    re.IGNORECASE,
)


def refusal(text: str) -> tuple[bool, bool]:
    """``(declines, names what is missing)`` for an answer text.

    Declining is a "cannot / unable / not available / I don't know" phrase, or a statement that the data has no
    field for it ("the database has no blood type column"), which also names what is missing."""
    if _NO_FIELD.search(text):
        return True, True
    if not _REFUSAL.search(text):
        return False, False
    return True, bool(_NAMES_MISSING.search(text))


def hedged(text: str) -> bool:
    """True when the text hedges between candidates (``either … or``, ``22 or 24``, ``between … and``, ``40-45``,
    ``maybe``). A single approximate value (``about 42``) is not a hedge; nor is ``42, or 12% of all``."""
    return bool(_HEDGE.search(text))


def read_prose(text: str, question: str = "") -> Prose:
    """Read a prose answer by rule (see the module docstring)."""
    answer, injected = strip_grader_text(text or "")
    refuses, names = refusal(answer)
    nums = stated_numbers(answer, question)
    body = _without_dates(answer)
    pct_spans = {m.start() for m in _PERCENT.finditer(body)}
    plain = frozenset(_to_number(m.group(0)) for m in _NUMBER.finditer(body)
                      if m.start() not in pct_spans and not m.group(0).rstrip().endswith("%"))
    return Prose(answer, injected, nums, refuses, names, hedged(body) and len(set(nums)) > 1, plain)
