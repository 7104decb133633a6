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
from collections.abc import Callable
from dataclasses import dataclass

from goldeval.errors import InputError

__all__ = ["Tokenizer", "OPENSCRIBE", "UNICODE", "TOKENIZERS", "get_tokenizer"]


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
    for m in _WORD_RE.finditer(text):
        w = m.group()
        if not w.isascii() and any(c.isascii() and c.isalnum() for c in w) and any(not c.isascii() and c.isalnum() for c in w):
            return w
    return None


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
    start = prev = None
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


def _unicode_tokenize(text: str) -> list[str]:
    folded = unicodedata.normalize("NFKC", text).translate(_FOLD_TABLE).casefold()
    # casefold turns U+0130 (İ) into "i" + U+0307; Turkish and Azeri read it as plain i
    return _unicode_re().findall(folded.replace("i\u0307", "i"))


def _unicode_unreadable(text: str) -> str | None:
    return None


UNICODE = Tokenizer(
    name="unicode",
    version="1",
    description="NFKC, curly apostrophes and Unicode hyphens folded, casefold; Unicode letters/digits; CJK per character",
    tokenize=_unicode_tokenize,
    _unreadable=_unicode_unreadable,
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
