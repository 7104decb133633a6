"""Where the tokens two texts share stand in each, as the report's free-text detail marks them (the multiset
overlap token F1 counts), in the compact form the page embeds. The report's hot loop at 20,000 embedded notes."""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

from goldeval.errors import InputError
from goldeval.freetext.tokens import OPENSCRIBE as _OPENSCRIBE

try:  # the optional C fast path (goldeval/_fast.c); shared_marks_python stays the definition
    from goldeval._fast import shared_marks as _FAST_MARKS
except ImportError:  # pragma: no cover - where no compiler was available at install time, or an older build
    _FAST_MARKS = None

__all__ = ["shared_spans", "shared_marks", "compact_spans"]

_ALNUM = re.compile(r"[^\W_]")  # a letter or a digit (what every token rule is made of)


def shared_spans(prediction: str, reference: str, tokenizer: Any) -> tuple[list[int], list[int]] | None:
    """Where the tokens the two texts share stand in each text, as flat ``[start, end, start, end, …]`` character
    offsets: for each token, its first ``min(count in prediction, count in reference)`` occurrences in each text
    (the multiset overlap that token F1 counts), located by :meth:`goldeval.freetext.tokens.Tokenizer.spans`. ``None`` when
    the rule gives no offsets (a third-party rule built without a span function)."""
    try:
        sp, sr = tokenizer.spans(prediction), tokenizer.spans(reference)
    except InputError:
        return None
    common = Counter(sp.tokens) & Counter(sr.tokens)

    def pick(s: Any) -> list[int]:
        left = dict(common)
        out: list[int] = []
        for tok, a, b in s:
            n = left.get(tok)
            if n:
                left[tok] = n - 1
                out += (a, b)
        return out

    return pick(sp), pick(sr)


def shared_marks(prediction: str, reference: str, tokenizer: Any) -> tuple[list[int], list[int]] | None:
    """The shared-token marks of both texts as the page embeds them: ``compact_spans(text, shared_spans(…))`` for
    each (a property test holds the two equal), in one pass over each text's tokens (the report's hot loop at
    20,000 embedded cases).

    Marking the first ``min(count here, count there)`` occurrences of a token is marking its first ``count there``
    occurrences, so no intersection is built. Two marks merge when no letter or digit stands between them. In an
    ASCII text every letter and digit belongs to a token under both shipped rules, so there that is the same as
    "the two marked tokens are neighbours" and the text is not looked at; elsewhere the characters between two
    marks are searched. Two ASCII texts under ``openscribe`` take the compiled path (``goldeval._fast.shared_marks``,
    the same definition in C; a property test holds the two equal) when it was built. ``None`` as for
    :func:`shared_spans`.
    """
    if _FAST_MARKS is not None and tokenizer is _OPENSCRIBE:
        fast = _FAST_MARKS(prediction, reference)  # None unless both texts are ASCII
        if fast is not None:
            return fast
    return shared_marks_python(prediction, reference, tokenizer)


def shared_marks_python(prediction: str, reference: str, tokenizer: Any) -> tuple[list[int], list[int]] | None:
    """The pure-Python definition :func:`shared_marks` falls back to (``_fast.shared_marks`` is the same in C): for
    each text, its shared tokens (multiset overlap, as token F1 counts them) as alternating gap / run lengths in
    characters; ``None`` when a text cannot be tokenized."""
    try:
        sp, sr = tokenizer.spans(prediction), tokenizer.spans(reference)
    except InputError:
        return None
    shipped = getattr(tokenizer, "name", None) in ("openscribe", "unicode")
    cp, cr = Counter(sp.tokens), Counter(sr.tokens)
    return _marks(prediction, sp, cr, shipped), _marks(reference, sr, cp, shipped)


def _marks(text: str, s: Any, other: Counter, shipped: bool) -> list[int]:
    left = dict(other)
    get = left.get
    out: list[int] = []
    starts, ends = s.starts, s.ends
    prev_end, prev_i = 0, -2
    if shipped and text.isascii():
        for i, tok in enumerate(s.tokens):
            n = get(tok)
            if n:
                left[tok] = n - 1
                b = ends[i]
                if prev_i == i - 1:
                    out[-1] += b - prev_end
                else:
                    a = starts[i]
                    out.append(a - prev_end)
                    out.append(b - a)
                prev_end, prev_i = b, i
        return out
    search = _ALNUM.search
    for i, tok in enumerate(s.tokens):
        n = get(tok)
        if n:
            left[tok] = n - 1
            a, b = starts[i], ends[i]
            if out and (a <= prev_end or search(text, prev_end, a) is None):
                out[-1] += b - prev_end
            else:
                out.append(a - prev_end)
                out.append(b - a)
            prev_end = b
    return out


def compact_spans(text: str, spans: list[int]) -> list[int]:
    """*spans* (flat ``[start, end, …]``, in text order) as the page embeds them: runs of marked tokens separated
    only by characters that hold no letter or digit (spaces, punctuation: never a token) merged into one mark, then
    written as ``[gap, length, gap, length, …]`` (gap from the end of the previous mark). About a tenth of the flat
    offsets on a note that copies long stretches of its reference."""
    merged: list[int] = []
    for i in range(0, len(spans), 2):
        start, end = spans[i], spans[i + 1]
        if merged and _ALNUM.search(text, merged[-1], start) is None:
            merged[-1] = end
        else:
            merged += (start, end)
    out: list[int] = []
    prev = 0
    for i in range(0, len(merged), 2):
        out += (merged[i] - prev, merged[i + 1] - merged[i])
        prev = merged[i + 1]
    return out
