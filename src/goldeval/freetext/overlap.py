"""Token-level multiset precision, recall and F1 of a prediction against a reference: whole text and per section.

Definition (Open-Scribe ``eval/metrics.py``; the SQuAD v1.1 ``f1_score`` without its article/punctuation
normalization): both texts are tokenized; the overlap is the multiset intersection (a token counts
``min(times in prediction, times in reference)`` times); P = overlap / |prediction tokens|,
R = overlap / |reference tokens|, F1 = 2PR / (P + R), 0 when P + R = 0. Both texts without tokens → P = R = F1 = 1.0;
exactly one without tokens → 0.0. A pair where both texts lack tokens *because* the rule cannot read their letters
(CJK under the ASCII rule) raises :class:`~goldeval.errors.UnreadableTextError` instead of scoring 1.0.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass

from goldeval.errors import InputError, UnreadableTextError, shorten
from goldeval.freetext.tokens import OPENSCRIBE, Tokenizer, get_tokenizer

__all__ = [
    "Overlap",
    "SectionOverlap",
    "overlap_from_counts",
    "overlap_of_texts",
    "overlap_of_tokens",
    "refuse_unreadable",
    "section_f1",
    "section_texts",
    "token_f1",
]


@dataclass(frozen=True, slots=True)
class Overlap:
    """Precision, recall and F1 of one pair, with the counts behind them.

    Attributes:
        precision, recall, f1: Unrounded fractions in [0, 1].
        n_prediction, n_reference: Token counts of each side.
        n_overlap: Size of the multiset intersection.
    """

    precision: float
    recall: float
    f1: float
    n_prediction: int
    n_reference: int
    n_overlap: int

    @property
    def both_empty(self) -> bool:
        """True when neither side has a token (the scores are 1.0 by convention, not by evidence)."""
        return self.n_prediction == 0 and self.n_reference == 0

    def to_dict(self) -> dict[str, float | int]:
        """``{"precision", "recall", "f1"}`` (the upstream per-example keys) plus the three counts."""
        return {
            "precision": self.precision,
            "recall": self.recall,
            "f1": self.f1,
            "n_prediction": self.n_prediction,
            "n_reference": self.n_reference,
            "n_overlap": self.n_overlap,
        }


def overlap_from_counts(n_pred: int, n_ref: int, overlap: int) -> Overlap:
    """:class:`Overlap` from the three counts (token counts of each side and the multiset intersection size)."""
    if n_pred == 0 or n_ref == 0:
        v = 1.0 if n_pred == n_ref else 0.0
        return Overlap(v, v, v, n_pred, n_ref, 0)
    if overlap == 0:
        return Overlap(0.0, 0.0, 0.0, n_pred, n_ref, 0)
    p = overlap / n_pred
    r = overlap / n_ref
    return Overlap(p, r, 2 * p * r / (p + r), n_pred, n_ref, overlap)


def overlap_of_tokens(prediction_tokens: list[str], reference_tokens: list[str]) -> Overlap:
    """:class:`Overlap` of two token lists (already tokenized). See the module docstring for the definition."""
    n_pred = len(prediction_tokens)
    n_ref = len(reference_tokens)
    if n_pred == 0 or n_ref == 0:
        return overlap_from_counts(n_pred, n_ref, 0)
    pc = Counter(prediction_tokens)
    rc = Counter(reference_tokens)
    common = pc.keys() & rc.keys()
    return overlap_from_counts(n_pred, n_ref, sum(map(min, map(pc.__getitem__, common), map(rc.__getitem__, common))))


def overlap_of_texts(prediction: str, reference: str, tokenizer: Tokenizer) -> Overlap:
    """:class:`Overlap` of two texts under *tokenizer*, through its compiled fast path when it has one.

    No type checks and no unreadable-text check: the callers (:func:`token_f1`, the batch scorer) do those.
    """
    fast = tokenizer.fast_counts
    if fast is not None:
        return overlap_from_counts(*fast(prediction, reference))
    return overlap_of_tokens(tokenizer.tokenize(prediction), tokenizer.tokenize(reference))


def _check_text(value: object, name: str) -> str:
    if not isinstance(value, str):
        raise InputError(f"{name}: expected a str, got {type(value).__name__} {shorten(value)}.")
    return value


def refuse_unreadable(tok: Tokenizer, texts: dict[str, str]) -> None:
    """Raise UnreadableTextError when any of *texts* (where → text) holds a letter or digit *tok* cannot read.

    Call it only for a pair whose sides both have no tokens: that is when the "both empty → 1.0" convention would
    otherwise hand out a perfect score for text the rule never read.
    """
    for where, text in texts.items():
        ch = tok.unreadable(text)
        if ch is not None:
            alt = "unicode" if tok.name != "unicode" else "another rule"
            raise UnreadableTextError(
                f"{where}: holds {ch!r} (U+{ord(ch):04X}), which the {tok.name!r} tokenizer cannot read, so both texts "
                f"have no tokens and would score a silent 1.0. Score with --tokenizer {alt} (tokenizer={alt!r})."
            )


def token_f1(prediction: str, reference: str, *, tokenizer: Tokenizer | str = OPENSCRIBE) -> Overlap:
    """Token-level multiset F1 of a prediction against a reference text.

    Both texts are tokenized by ``tokenizer``; the overlap is the multiset intersection (a token counts
    min(times in prediction, times in reference) times).

    Args:
        prediction: Model output, any length. ``None`` is not accepted.
        reference: Gold text, any length.
        tokenizer: Token rule or its name; the default (``openscribe``) reproduces the published Open-Scribe figures.

    Returns:
        Overlap with precision, recall and f1, unrounded fractions in [0, 1], and the token counts.
        Both texts without tokens: all 1.0. Exactly one without tokens: all 0.0.

    Raises:
        InputError: if either text is not a str, or the tokenizer name is unknown.
        UnreadableTextError: (an InputError) both texts have no tokens but hold letters or digits the rule
            cannot read (e.g. CJK under ``openscribe``): the pair is unscorable under this rule, not perfect.

    Source:
        Open-Scribe ``eval/metrics.py`` (Apache-2.0); same multiset definition as the SQuAD v1.1 script's
        f1_score, without its article and punctuation normalization.
    """
    tok = get_tokenizer(tokenizer)
    pred = _check_text(prediction, "prediction")
    ref = _check_text(reference, "reference")
    result = overlap_of_texts(pred, ref, tok)
    if result.both_empty:
        refuse_unreadable(tok, {"prediction": pred, "reference": ref})
    return result


@dataclass(frozen=True, slots=True)
class SectionOverlap:
    """Section-level scores of one example.

    Attributes:
        per_section: section name → Overlap, for every section named on either side (absent = empty text), in
            reference order, then the prediction's extra sections.
        whole_text: Overlap of the pooled token multisets of all sections.
        macro_f1: Mean F1 over the sections with text on at least one side (``None`` when no section has text:
            two empty sections score 1.0 each but never inflate the average).
        macro_precision, macro_recall: The same means for precision and recall.
        scored_sections: The sections the macro-averages are taken over, shape ``(k,)``.
    """

    per_section: dict[str, Overlap]
    whole_text: Overlap
    macro_f1: float | None
    macro_precision: float | None
    macro_recall: float | None
    scored_sections: tuple[str, ...]


def section_texts(value: object, side: str) -> dict[str, str]:
    """Check a section map (name → str or null) and return it with null read as empty text.

    Raises:
        InputError: *value* is not a mapping, or a section's text is neither str nor null (named by *side*.name).
    """
    if not isinstance(value, Mapping):
        raise InputError(f"{side}: expected an object of section name → text, got {type(value).__name__} {shorten(value)}.")
    out: dict[str, str] = {}
    for name, text in value.items():
        if text is None:
            text = ""
        if not isinstance(text, str) or type(text).__name__ == "BigInt":  # goldeval.io.reading.BigInt: an integer past 64 bits
            kind = "int" if isinstance(text, str) else type(text).__name__
            raise InputError(f"{side}.{name}: a section must be a string (or null for absent), got {kind} {shorten(text)}.")
        out[str(name)] = text
    return out


def section_f1(
    prediction: Mapping[str, str | None],
    reference: Mapping[str, str | None],
    *,
    tokenizer: Tokenizer | str = OPENSCRIBE,
) -> SectionOverlap:
    """Per-section, pooled and macro-averaged token F1 of two section maps (e.g. SOAP notes).

    Args:
        prediction: section name → text; a missing or null section is empty text.
        reference: section name → text, same convention.
        tokenizer: Token rule or its name (default ``openscribe``).

    Returns:
        SectionOverlap: per-section Overlap (the both-empty and one-empty conventions of :func:`token_f1` apply per
        section), the whole text pooled (all sections' tokens in one multiset), and the macro-average over the
        sections that have text on at least one side.

    Raises:
        InputError: a side is not a mapping, or a section's text is neither str nor null.
        UnreadableTextError: a section (or the whole text) would score 1.0 only because the rule cannot read it.

    Source:
        Open-Scribe ``eval/metrics.py`` ``section_f1`` for the per-section scores; the macro-average that skips
        sections empty on both sides is goldeval's (upstream averages them in as 1.0).
    """
    tok = get_tokenizer(tokenizer)
    pred = section_texts(prediction, "prediction")
    ref = section_texts(reference, "reference")
    names = list(ref) + [n for n in pred if n not in ref]
    per_section: dict[str, Overlap] = {}
    pooled_pred: list[str] = []
    pooled_ref: list[str] = []
    for name in names:
        pt = tok.tokenize(pred.get(name, ""))
        rt = tok.tokenize(ref.get(name, ""))
        ov = overlap_of_tokens(pt, rt)
        if ov.both_empty:
            refuse_unreadable(tok, {f"prediction.{name}": pred.get(name, ""), f"reference.{name}": ref.get(name, "")})
        per_section[name] = ov
        pooled_pred += pt
        pooled_ref += rt
    whole = overlap_of_tokens(pooled_pred, pooled_ref)
    scored = tuple(n for n, ov in per_section.items() if not ov.both_empty)
    macro_f1: float | None
    macro_p: float | None
    macro_r: float | None
    if scored:
        k = len(scored)
        macro_f1 = sum(per_section[n].f1 for n in scored) / k
        macro_p = sum(per_section[n].precision for n in scored) / k
        macro_r = sum(per_section[n].recall for n in scored) / k
    else:
        macro_f1 = macro_p = macro_r = None
    return SectionOverlap(per_section, whole, macro_f1, macro_p, macro_r, scored)
