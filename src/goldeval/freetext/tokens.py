"""Token rules for free-text scoring, each named and versioned.

Two rules ship:

``openscribe`` (the default)
    Lowercase (``str.lower``), then tokens are the matches of ``[a-z0-9]+(?:[.'/-][a-z0-9]+)*``: runs of ASCII
    letters and digits joined by a single ``.`` ``'`` ``/`` or ``-`` with a letter or digit on both sides.
    ``138/86``, ``well-controlled``, ``7.1`` stay whole; ``Hb.`` → ``hb``; ``1,000`` → ``1``, ``000``. Every other
    character separates tokens. This reproduces Open-Scribe's published PriMock57 / ACI-Bench figures exactly.

``unicode``
    NFKC, curly apostrophes (U+2018, U+2019, U+02BC, U+FF07) read as ``'`` and Unicode hyphens (U+2010 hyphen,
    U+2011 non-breaking hyphen, U+2012 figure dash, U+2013 en dash, U+2212 minus) read as ``-``; then ``casefold``
    (and the ``i`` + U+0307 that casefold makes of ``İ`` read as ``i``). Tokens are runs of Unicode letters, digits
    and combining marks (so Devanagari, Bengali or Thai vowel signs do not split a word) joined the same way;
    CJK ideographs and kana are one token per character (as BERT's basic tokenizer and sacreBLEU's ``zh``
    tokenizer do), so two Chinese sentences share credit for the characters they share. Em dashes stay
    separators. Thai, Lao, Khmer and Burmese are written without spaces between words and are not segmented: a
    run of such text is one token. Symbols (emoji, ``°``) are not letters: they separate, under both rules.

A rule is never swapped in silently: the rule's name is recorded in every output, and text the chosen rule
cannot read is reported (:meth:`Tokenizer.unreadable`) so that two texts of, say, Cyrillic do not score 1.0 under
the ASCII rule through the "both texts without tokens" convention.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from itertools import accumulate

from goldeval.errors import InputError

__all__ = ["Tokenizer", "TokenSpans", "OPENSCRIBE", "UNICODE", "TOKENIZERS", "get_tokenizer"]


@dataclass(frozen=True, slots=True)
class TokenSpans:
    """The tokens of one text with where each stands in that text, as three parallel lists.

    Attributes:
        tokens: ``list[str]``, shape ``(n_tokens,)``; exactly what :attr:`Tokenizer.tokenize` returns for the text
            (normalized: lowercased, and under ``unicode`` NFKC-folded).
        starts: ``list[int]``, shape ``(n_tokens,)``; character offset (a ``str`` index, not bytes) in the text
            *as given* where token ``i`` begins.
        ends: ``list[int]``, shape ``(n_tokens,)``; offset just past it, so ``text[starts[i]:ends[i]]`` is the
            written form of ``tokens[i]`` (``"BP"`` for ``bp``). Starts and ends never decrease and lie in
            ``[0, len(text)]``; two spans overlap only when both tokens came from one written character (NFKC
            reads ``½`` as ``1⁄2``: two tokens, one character).

    Notes:
        Where normalizing changes the length of the text (``"İ".lower()`` is two characters; NFKC composes
        ``e`` + U+0301 into ``é``, or decomposes ``ﬁ`` into ``fi``), a span covers the whole written characters
        its token came from: the span of ``i`` in ``"İx"`` is ``"İ"``. Only when normalizing merges characters
        across a boundary that cannot be located (not seen in practice) is the span widened to the whole text.
    """

    tokens: list[str]
    starts: list[int]
    ends: list[int]

    def __len__(self) -> int:
        return len(self.tokens)

    def __iter__(self) -> Iterator[tuple[str, int, int]]:
        """``(token, start, end)`` triples in text order."""
        return zip(self.tokens, self.starts, self.ends)


@dataclass(frozen=True, slots=True)
class Tokenizer:
    """A named, versioned token rule.

    Attributes:
        name: The rule's name as recorded in outputs (``openscribe``, ``unicode``).
        version: Bumped whenever the rule's output can change for some input.
        description: One line for reports.
        tokenize: ``str -> list[str]``; tokens in text order, lowercased.
        _unreadable: ``str -> str | None``; the first letter or digit the rule cannot read, if any.
        fast_counts: Optional compiled ``(prediction, reference) -> (n_prediction, n_reference, n_overlap)`` that
            gives exactly the counts of ``tokenize`` + multiset intersection, faster; ``None`` when not built.
    """

    name: str
    version: str
    description: str
    tokenize: Callable[[str], list[str]]
    _unreadable: Callable[[str], str | None]
    fast_counts: Callable[[str, str], tuple[int, int, int]] | None = None
    _spans: Callable[[str], TokenSpans] | None = None

    def spans(self, text: str) -> TokenSpans:
        """The tokens of *text* with their character offsets in *text* (see :class:`TokenSpans`).

        ``spans(text).tokens == tokenize(text)`` for every text (a property test holds the two together); the
        offsets come from the same regular-expression pass (``re.split`` with the rule's pattern as its one
        group, and the running sum of the pieces' lengths), so this costs about what ``tokenize`` costs.

        Raises:
            InputError: a rule built without a span function (a third-party :class:`Tokenizer`).
        """
        if self._spans is None:
            raise InputError(f"tokenizer {self.name!r}: this rule gives no token offsets (it was built without a span "
                             "function); shared tokens cannot be located.")
        return self._spans(text)

    def unreadable(self, text: str) -> str | None:
        """The first letter or digit in *text* that this rule drops (e.g. a CJK or Cyrillic letter under
        ``openscribe``), or ``None`` when the rule can read every letter and digit in it."""
        return self._unreadable(text)

    def __call__(self, text: str) -> list[str]:
        return self.tokenize(text)



# --- openscribe ---------------------------------------------------------------------------------------------

_OPENSCRIBE_RE = re.compile(r"[a-z0-9]+(?:[.'/-][a-z0-9]+)*")
_openscribe_findall = _OPENSCRIBE_RE.findall
_NON_ASCII_RE = re.compile(r"[^\x00-\x7f]")


def _openscribe_tokenize(text: str) -> list[str]:
    return _openscribe_findall(text.lower())


def _openscribe_unreadable(text: str) -> str | None:
    if text.isascii():
        return None
    for m in _NON_ASCII_RE.finditer(text):
        ch = m.group()
        if ch.isalnum() and not _openscribe_findall(ch.lower()):
            return ch
    return None


_WORD_RE = re.compile(r"\w+")


def split_word(text: str) -> str | None:
    """The first word of *text* that the openscribe rule splits at a non-ASCII letter, else ``None``.

    A word here is a run of Unicode word characters (``\\w+``) holding both an ASCII letter or digit and a
    non-ASCII letter or digit: the rule keeps only the ASCII runs, so ``"Café"`` becomes ``caf`` and ``"résumé"``
    becomes ``r`` / ``sum`` (as upstream; scores do not change). A word wholly in another script (``東京``) is not
    split (it is unreadable: see :meth:`Tokenizer.unreadable`). Pure ASCII text returns ``None`` at once.
    """
    if text.isascii():
        return None
    # Only the words holding a non-ASCII character can be split: each is found from one of the (few) non-ASCII
    # characters that is a word character (``\w``: ``isalnum()`` or ``_``), grown to its word's ends, in text order;
    # the first that holds both kinds of letter or digit is the answer (the words in between are all ASCII). The
    # same first word as ``\w+`` over the whole text (tests/unit/test_freetext.py compares the two), without a match
    # object for every word of a long note.
    n, checked = len(text), -1
    for m in _NON_ASCII_RE.finditer(text):
        i = m.start()
        c = text[i]
        if i < checked or not (c.isalnum() or c == "_"):
            continue  # (in a word already looked at, or not a word character)
        left, right = i, i + 1
        while left > 0 and (text[left - 1].isalnum() or text[left - 1] == "_"):
            left -= 1
        while right < n and (text[right].isalnum() or text[right] == "_"):
            right += 1
        checked = right
        w = text[left:right]
        if any(c.isascii() and c.isalnum() for c in w) and any(not c.isascii() and c.isalnum() for c in w):
            return w
    return None


# --- offsets (Tokenizer.spans) ---------------------------------------------------------------------------


def _split_spans(parts: list[str]) -> tuple[list[str], list[int], list[int]]:
    """``pattern.split`` with one group gives ``[gap, token, gap, token, …, gap]``: the tokens are the odd pieces
    and each piece's end offset is the running sum of the lengths (all in C)."""
    bounds = list(accumulate(map(len, parts)))
    return parts[1::2], bounds[0:-1:2], bounds[1::2]


def _clusters(text: str) -> list[int]:
    """Start offsets of the text's clusters (a character that is not a combining mark and the marks after it),
    then ``len(text)``: the pieces that normalizing (lower, casefold, NFKC) maps independently in practice."""
    combining = unicodedata.combining
    out = [i for i, c in enumerate(text) if i == 0 or not combining(c)]
    out.append(len(text))
    return out


def _origins(text: str, fold: Callable[[str], str], folded: str) -> tuple[list[int], list[int]] | None:
    """For each character of ``folded == fold(text)``: the start and end in *text* of the written characters it
    came from. Clusters are folded one by one; a cluster whose fold is not independent of the next one (Hangul
    jamo that NFKC composes into a syllable) is folded together with it. ``None`` when no alignment is found."""
    cb = _clusters(text)
    pieces = [fold(text[cb[k]:cb[k + 1]]) for k in range(len(cb) - 1)]
    if "".join(pieces) == folded:
        gs: list[int] = []
        ge: list[int] = []
        for k, piece in enumerate(pieces):
            n = len(piece)
            gs += [cb[k]] * n
            ge += [cb[k + 1]] * n
        return gs, ge
    gs, ge = [], []
    pos, i, last = 0, 0, len(cb) - 1
    while i < last:
        j = i + 1
        piece = fold(text[cb[i]:cb[j]])
        while j < last and fold(text[cb[i]:cb[j + 1]]) != piece + fold(text[cb[j]:cb[j + 1]]):
            j += 1
            piece = fold(text[cb[i]:cb[j]])
        if not folded.startswith(piece, pos):
            return None
        gs += [cb[i]] * len(piece)
        ge += [cb[j]] * len(piece)
        pos += len(piece)
        i = j
    return (gs, ge) if pos == len(folded) else None


def _mapped_spans(text: str, folded: str, parts: list[str], fold: Callable[[str], str]) -> TokenSpans:
    tokens, starts, ends = _split_spans(parts)
    if len(folded) == len(text) and (text.isascii() or fold is str.lower):
        return TokenSpans(tokens, starts, ends)  # every character folded to exactly one: offsets are the same
    origin = _origins(text, fold, folded)
    if origin is None:  # pragma: no cover - no known text; the whole text is then each token's span
        return TokenSpans(tokens, [0] * len(tokens), [len(text)] * len(tokens))
    gs, ge = origin
    return TokenSpans(tokens, [gs[a] for a in starts], [ge[b - 1] for b in ends])


_openscribe_split = re.compile(f"({_OPENSCRIBE_RE.pattern})").split


def _openscribe_spans(text: str) -> TokenSpans:
    low = text.lower()
    return _mapped_spans(text, low, _openscribe_split(low), str.lower)


try:  # the optional C fast path (see _fast.c); the regex above stays the definition
    from goldeval._fast import overlap_counts as _openscribe_fast_counts
except ImportError:  # pragma: no cover - exercised where no compiler was available at install time
    _openscribe_fast_counts = None

OPENSCRIBE = Tokenizer(
    name="openscribe",
    version="1",
    description="lowercase; runs of ASCII letters/digits joined by single . ' / - (Open-Scribe eval/metrics.py)",
    tokenize=_openscribe_tokenize,
    _unreadable=_openscribe_unreadable,
    fast_counts=_openscribe_fast_counts,
    _spans=_openscribe_spans,
)

# --- unicode ------------------------------------------------------------------------------------------------

_APOSTROPHES = "\u2018\u2019\u02bc\uff07"
_HYPHENS = "\u2010\u2011\u2012\u2013\u2212"
_FOLD_TABLE = str.maketrans({**{c: "'" for c in _APOSTROPHES}, **{c: "-" for c in _HYPHENS}})
# Scripts written without spaces: one token per character (Hiragana, Katakana, CJK ideographs incl. extensions B–H).
_SPACELESS = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002fa1f\U00030000-\U000323af"


@functools.cache
def _unicode_re() -> re.Pattern[str]:
    """The unicode rule's pattern, built on first use: a word character is a letter or digit, or a combining mark
    (categories Mn, Mc, Me: Indic and Thai vowel signs, viramas), so that marks do not split words."""
    ranges: list[str] = []
    start: int | None = None
    prev = 0
    for cp in range(0x110000):
        if unicodedata.category(chr(cp))[0] == "M":
            if start is None:
                start = cp
            prev = cp
        elif start is not None:
            ranges.append(f"{re.escape(chr(start))}-{re.escape(chr(prev))}" if prev != start else re.escape(chr(start)))
            start = None
    marks = "".join(ranges)
    word = rf"(?:(?![{_SPACELESS}])[^\W_]|[{marks}])"
    return re.compile(rf"[{_SPACELESS}]|{word}+(?:[.'/-]{word}+)*")


def _unicode_fold(text: str) -> str:
    folded = unicodedata.normalize("NFKC", text).translate(_FOLD_TABLE).casefold()
    # casefold turns U+0130 (İ) into "i" + U+0307; Turkish and Azeri read it as plain i
    return folded.replace("i\u0307", "i")


def _unicode_tokenize(text: str) -> list[str]:
    return _unicode_re().findall(_unicode_fold(text))


@functools.cache
def _unicode_split() -> Callable[[str], list[str]]:
    return re.compile(f"({_unicode_re().pattern})").split


def _unicode_spans(text: str) -> TokenSpans:
    folded = _unicode_fold(text)
    return _mapped_spans(text, folded, _unicode_split()(folded), _unicode_fold)


def _unicode_unreadable(text: str) -> str | None:
    return None


UNICODE = Tokenizer(
    name="unicode",
    version="1",
    description="NFKC, curly apostrophes and Unicode hyphens folded, casefold; Unicode letters/digits; CJK per character",
    tokenize=_unicode_tokenize,
    _unreadable=_unicode_unreadable,
    _spans=_unicode_spans,
)

#: Every shipped rule by name.
TOKENIZERS: dict[str, Tokenizer] = {t.name: t for t in (OPENSCRIBE, UNICODE)}


def get_tokenizer(name: str | Tokenizer) -> Tokenizer:
    """The rule called *name* (``openscribe`` or ``unicode``); a :class:`Tokenizer` is returned as is.

    Raises:
        InputError: for an unknown name (the message lists the known ones).
    """
    if isinstance(name, Tokenizer):
        return name
    try:
        return TOKENIZERS[name]
    except (KeyError, TypeError):
        raise InputError(
            f"tokenizer: expected one of {', '.join(sorted(TOKENIZERS))}, got {name!r}. Pick one with --tokenizer."
        ) from None
