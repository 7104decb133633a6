"""Column names read for what their columns hold: content tokens with synonyms folded, role tags, rate names.

Re-exported by :mod:`goldeval.answers.values` (split from it to keep each module short).

Source: ``DESIGN.md`` "Data answers" (column pairing by name, rate columns), goldeval.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from collections.abc import Set as AbstractSet
from functools import lru_cache

_SYNONYMS = {
    "n": "count", "num": "count", "number": "count", "cnt": "count", "nb": "count", "count": "count",
    "times": "count",  # "times_enrolled": how many times, not a time of day
    "avg": "avg", "average": "avg", "mean": "avg",
    "pct": "percent", "percentage": "percent", "percent": "percent", "pc": "percent",
    "qty": "quantity", "amt": "amount", "yr": "year", "dt": "date",
    "minimum": "min", "maximum": "max", "sum": "sum",
}
_STOP = {"of", "the", "a", "an", "per", "by", "in", "for", "and", "t", "as", "distinct", "all"}

# Role tags that say what kind of quantity a column holds; two different tags from this set conflict.
_ROLE_OF = {
    "count": "count",
    "avg": "avg", "sum": "sum", "min": "min", "max": "max",
    "year": "time", "month": "time", "day": "time", "date": "time", "week": "time", "quarter": "time",
    "hour": "time", "time": "time", "timestamp": "time",
    "rate": "rate", "share": "rate", "percent": "rate", "ratio": "rate", "proportion": "rate", "fraction": "rate",
    "id": "id",
}
_RATE_WORDS = {"rate", "share", "percent", "ratio", "proportion", "fraction"}


def _stem(tok: str) -> str:
    if len(tok) > 4 and tok.endswith("ies"):
        return tok[:-3] + "y"
    if len(tok) > 3 and tok.endswith("s") and not tok.endswith("ss"):
        return tok[:-1]
    return tok


def name_tokens(name: str) -> tuple[str, ...]:
    """Content tokens of a column name, with synonyms folded: ``"n_admissions"`` → ``("count", "admission")``.

    Splits snake_case, camelCase, dots and SQL punctuation (``"COUNT(T1.name)"`` → ``("count", "name")``); drops
    table aliases (``T1``), stop words and digits. Computed once per name (a pairing reads each name many times).
    """
    return _name_tokens(str(name))


@lru_cache(maxsize=4096)
def _name_tokens(name: str) -> tuple[str, ...]:
    s = re.sub(r"(?<=[a-z])(?=[A-Z])", " ", name)
    out = []
    for raw in re.findall(r"[A-Za-z]+|\d+", s):
        tok = raw.lower()
        if tok.isdigit() or tok in _STOP:
            continue
        tok = _SYNONYMS.get(tok, tok)
        tok = _stem(tok)
        tok = _SYNONYMS.get(tok, tok)
        out.append(tok)
    return tuple(out)


def role_tags(tokens: Sequence[str]) -> set[str]:
    """Role tags of a name's tokens (``count``, ``time``, ``rate``, ``avg``, ``sum``, ``min``, ``max``, ``id``)."""
    return {_ROLE_OF[t] for t in tokens if t in _ROLE_OF}


def roles_conflict(a: AbstractSet[str], b: AbstractSet[str]) -> bool:
    """True when two names say their columns hold different kinds of quantity (a count is not a month).

    Both sides must carry role tags and share none; ``sum`` and ``count`` do not conflict with each other's absence.
    """
    return bool(a) and bool(b) and not (a & b)


def is_rate_name(name: str, declared: Sequence[str] = ()) -> bool:
    """A rate column: declared in ``rate_columns``, or named like a rate/share/pct/percent/ratio/proportion — and
    not like a count (``n_rate_changes``, ``count_of_share_holders`` count things: a count never accepts ×100)."""
    if name in declared:
        return True
    toks = set(name_tokens(name))
    return bool(_RATE_WORDS & toks) and "count" not in toks
