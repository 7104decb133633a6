"""ROUGE-1, ROUGE-2, ROUGE-L and ROUGE-Lsum of a prediction against a reference, equal to Google's ``rouge-score``.

Definitions (Lin 2004, as ``rouge-score`` 0.1.2 computes them, the implementation behind the ACI-Bench and HELM
figures). Both texts are tokenized by ``rouge-score``'s default rule: lowercase, every character outside ``a-z0-9``
is a separator, and with ``use_stemmer`` the Porter stemmer (NLTK's, ``ORIGINAL_ALGORITHM``) is applied to tokens
longer than three characters.

- ``rouge1`` / ``rouge2``: the multisets of word n-grams (n = 1, 2); overlap = multiset intersection;
  P = overlap / n-grams of the prediction, R = overlap / n-grams of the reference.
- ``rougeL``: the longest common subsequence (LCS) of the two token sequences; P = LCS / prediction tokens,
  R = LCS / reference tokens.
- ``rougeLsum``: summary-level LCS. Each text is split into sentences **at newlines** (``"\\n"``; empty lines
  dropped) and, for every reference sentence, the union of its LCS tokens with each prediction sentence is counted
  (each token at most as often as it occurs on both sides). A note written one sentence per line scores
  differently from the same words on one line; ``rouge-score`` splits only at newlines unless asked to split
  sentences with NLTK, and goldeval does the same.
- F = 2PR / (P + R), 0 when P + R = 0. A text without tokens (empty, or only letters outside ``a-z``) scores
  P = R = F = 0, on either side or both: ``rouge-score``'s convention, kept so that the numbers equal its numbers
  (token F1 scores two empty texts 1.0; ROUGE never does).

The scores are computed by ``rouge-score-rs`` (Rust; its tests fail on any difference in any float from
``rouge-score``), and goldeval's tests compare them with ``rouge-score`` itself, to the last digit, on the shipped
PriMock57 and ACI-Bench files with and without the stemmer.

Source: C.-Y. Lin, "ROUGE: A Package for Automatic Evaluation of Summaries", ACL 2004 workshop; ``rouge-score``
0.1.2 ``rouge_scorer.py`` (Apache-2.0); ``rouge-score-rs`` 0.2.1.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from rouge_score_rs import RougeScorer

from goldeval.errors import InputError, shorten

__all__ = ["ROUGE_TYPES", "RougeScore", "has_rouge_tokens", "rouge", "rouge_pairs"]

#: The ROUGE variants goldeval scores, by ``rouge-score``'s own names.
ROUGE_TYPES: tuple[str, ...] = ("rouge1", "rouge2", "rougeL", "rougeLsum")

_TOKEN_CHAR = re.compile(r"[a-z0-9]")


@dataclass(frozen=True, slots=True)
class RougeScore:
    """Precision, recall and F-measure of one ROUGE variant for one pair.

    Attributes:
        precision, recall, f1: Unrounded fractions in [0, 1] (``rouge-score``'s ``precision``, ``recall``,
            ``fmeasure``).
    """

    precision: float
    recall: float
    f1: float


@lru_cache(maxsize=16)
def _scorer(rouge_type: str, use_stemmer: bool) -> RougeScorer:
    return RougeScorer([rouge_type], use_stemmer=use_stemmer)


def _check_type(rouge_type: str) -> str:
    if rouge_type not in ROUGE_TYPES:
        raise InputError(f"rouge_type must be one of {', '.join(ROUGE_TYPES)}, got {shorten(rouge_type)}.")
    return rouge_type


def has_rouge_tokens(text: str) -> bool:
    """Whether *text* has at least one token under ``rouge-score``'s rule (a letter ``a-z`` or digit after
    lowercasing): a text without one scores 0 on every ROUGE variant."""
    return _TOKEN_CHAR.search(text.lower()) is not None


def rouge_pairs(predictions: Sequence[str], references: Sequence[str], *, rouge_type: str = "rougeL",
                use_stemmer: bool = False) -> list[RougeScore]:
    """ROUGE of each prediction against the reference at the same position.

    Args:
        predictions: Model outputs, shape ``(n,)``. references: Gold texts, shape ``(n,)``.
        rouge_type: ``rouge1``, ``rouge2``, ``rougeL`` or ``rougeLsum`` (see the module docstring).
        use_stemmer: Porter-stem tokens longer than three characters, as ``rouge-score``'s ``use_stemmer``.

    Returns:
        One :class:`RougeScore` per pair, in order, equal to ``rouge_score.rouge_scorer.RougeScorer([rouge_type],
        use_stemmer=use_stemmer).score(reference, prediction)[rouge_type]`` to the last digit.

    Raises:
        InputError: an unknown *rouge_type*, sequences of different lengths, or a text that is not a ``str``.

    Source:
        ``rouge-score`` 0.1.2 (computed by ``rouge-score-rs`` 0.2.1, equal to it bit for bit).

    Example:
        >>> [round(s.f1, 4) for s in rouge_pairs(["the cat sat"], ["the cat sat down"], rouge_type="rouge1")]
        [0.8571]
    """
    _check_type(rouge_type)
    if len(predictions) != len(references):
        raise InputError(f"rouge_pairs: {len(predictions)} predictions but {len(references)} references; pass one "
                         "reference per prediction.")
    for side, texts in (("predictions", predictions), ("references", references)):
        for i, t in enumerate(texts):
            if not isinstance(t, str):
                raise InputError(f"rouge_pairs: {side}[{i}] must be a str, got {type(t).__name__} {shorten(t)}.")
    if not predictions:
        return []
    # (the scorer takes the reference first, as rouge-score's score(target, prediction) does)
    scored = _scorer(rouge_type, bool(use_stemmer)).score_batch(list(references), list(predictions))
    return [RougeScore(*s[rouge_type]) for s in scored]


def rouge(prediction: str, reference: str, *, rouge_type: str = "rougeL", use_stemmer: bool = False) -> RougeScore:
    """ROUGE of one prediction against one reference text.

    Args:
        prediction: Model output, any length. reference: Gold text, any length.
        rouge_type: ``rouge1``, ``rouge2``, ``rougeL`` (default) or ``rougeLsum``; see the module docstring.
        use_stemmer: Porter-stem tokens longer than three characters (``rouge-score``'s option).

    Returns:
        RougeScore with precision, recall and f1, unrounded fractions in [0, 1]. A side without tokens: all 0.0.

    Raises:
        InputError: an unknown *rouge_type*, or a text that is not a ``str``.

    Source:
        ``rouge-score`` 0.1.2 ``RougeScorer.score``; Lin (2004).

    Example:
        >>> rouge("The quick brown dog jumps on the log.", "The quick brown fox jumps over the lazy dog",
        ...       rouge_type="rouge1", use_stemmer=True)
        RougeScore(precision=0.75, recall=0.6666666666666666, f1=0.7058823529411765)
    """
    return rouge_pairs([prediction], [reference], rouge_type=rouge_type, use_stemmer=use_stemmer)[0]
