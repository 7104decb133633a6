"""Token rules for free-text scoring, each named and versioned.

Two rules ship:

``openscribe`` (the default)
    Lowercase (``str.lower``), then tokens are the matches of ``[a-z0-9]+(?:[.'/-][a-z0-9]+)*``: runs of ASCII
    letters and digits joined by a single ``.`` ``'`` ``/`` or ``-`` with a letter or digit on both sides.
    ``138/86``, ``well-controlled``, ``7.1`` stay whole; ``Hb.`` → ``hb``; ``1,000`` → ``1``, ``000``. Every other
    character separates tokens. This reproduces Open-Scribe's published PriMock57 / ACI-Bench figures exactly.

``unicode``
    NFKC, curly apostrophes (U+2018, U+2019, U+02BC, U+FF07) read as ``'`` and Unicode hyphens (U+2010 hyphen,
    U+2011 non-breaking hyphen, U+2012 figure dash, U+2013 en dash, U+2212 minus) read as ``-``; then ``casefold``.
    Tokens are runs of Unicode letters and digits joined the same way; CJK ideographs, kana and other scripts
    written without spaces (Han, Hiragana, Katakana) are one token per character (as BERT's basic tokenizer and
    sacreBLEU's ``zh`` tokenizer do), so two Chinese sentences share credit for the characters they share.
    Em dashes stay separators. Combining marks that Python does not count as letters (some Indic vowel signs)
    split a word; NFKC composes the Latin, Greek and Cyrillic ones first.

A rule is never swapped in silently: the rule's name is recorded in every output, and text the chosen rule
cannot read is reported (:meth:`Tokenizer.unreadable`) so that two texts of, say, Cyrillic do not score 1.0 under
the ASCII rule through the "both texts without tokens" convention.
"""

from __future__ import annotations

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

    @property
    def label(self) -> str:
        """``name@version``, the form recorded in outputs."""
        return f"{self.name}@{self.version}"


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
# Scripts written without spaces: one token per character.
_SPACELESS = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002fa1f"
_WORD_CHAR = rf"(?:(?![{_SPACELESS}])[^\W_])"
_UNICODE_RE = re.compile(rf"[{_SPACELESS}]|{_WORD_CHAR}+(?:[.'/-]{_WORD_CHAR}+)*")


def _unicode_tokenize(text: str) -> list[str]:
    return _UNICODE_RE.findall(unicodedata.normalize("NFKC", text).translate(_FOLD_TABLE).casefold())


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
