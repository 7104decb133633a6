"""The ROUGE scorers: ``rouge1``, ``rouge2``, ``rougeL`` and ``rougeLsum`` behind the one Scorer interface.

``goldeval score FILE --scorer rougeL [-O use_stemmer=true]``. Each row's prediction and reference (strings, or
objects of sections) are scored as :mod:`goldeval.freetext.pairscorer` lays out; each pair's precision, recall and
F-measure are ``rouge-score``'s to the last digit (:func:`goldeval.freetext.rouge.rouge_pairs`). Aggregate keys:
``<name>_f1_mean``, ``<name>_precision_mean``, ``<name>_recall_mean`` (macro means over the scored rows, exact),
and for sectioned rows ``<name>_section_f1_mean`` (and precision, recall) with per-section means under
``sections``. ``n_with_empty_text`` counts rows where a side has no token (scored 0 by ``rouge-score``'s rule);
``n_with_unreadable_text`` rows holding letters outside ``a-z`` that the rule drops (``first_unreadable`` names
the first).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from goldeval.freetext.pairscorer import PairScorer
from goldeval.freetext.rouge import has_rouge_tokens, rouge_pairs
from goldeval.freetext.tokens import OPENSCRIBE
from goldeval.scoring.protocol import Option

__all__ = ["ROUGE_SCORERS", "Rouge", "Rouge1", "Rouge2", "RougeL", "RougeLsum"]

_STEMMER = Option(False, bool, "Porter-stem tokens longer than three characters, as rouge-score's use_stemmer")


class Rouge(PairScorer):
    """ROUGE (one variant, named by :attr:`name`) of free text, whole note and sections.

    Records: ``whole_note`` {precision, recall, f1} (``rouge-score``'s precision, recall, fmeasure) and, for
    sectioned rows, ``sections``, ``sections_empty_both``, ``section_macro``; ``empty`` when a side has no token;
    ``unreadable`` {side, char} when a side holds a letter the rule drops. See the module docstring for the results.
    """

    version = "1"
    values = ("precision", "recall", "f1")
    options: ClassVar[Mapping[str, Any]] = {**PairScorer.options, "use_stemmer": _STEMMER}
    report_kind = "freetext"

    def score_texts(self, predictions: list[str], references: list[str], config: Mapping[str, Any]) -> list[dict[str, float]]:
        scores = rouge_pairs(predictions, references, rouge_type=self.name, use_stemmer=bool(config["use_stemmer"]))
        return [{"precision": s.precision, "recall": s.recall, "f1": s.f1} for s in scores]

    def has_text(self, text: str, config: Mapping[str, Any]) -> bool:
        return has_rouge_tokens(text)

    def aggregate_key(self, value: str, *, section: bool = False) -> str:
        return f"{self.name}_section_{value}_mean" if section else f"{self.name}_{value}_mean"

    def flags(self, prediction: str, reference: str, config: Mapping[str, Any]) -> dict[str, Any]:
        # rouge-score reads a-z and 0-9 only, the letters the openscribe rule reads: say when text was dropped
        for side, text in (("prediction", prediction), ("reference", reference)):
            ch = OPENSCRIBE.unreadable(text)
            if ch is not None:
                return {"unreadable": {"side": side, "char": ch}}
        return {}


class Rouge1(Rouge):
    """``rouge1``: overlap of word unigrams (see :class:`Rouge`)."""

    name = "rouge1"
    headline = "rouge1_f1_mean"
    gate_families = ("rouge1",)


class Rouge2(Rouge):
    """``rouge2``: overlap of word bigrams (see :class:`Rouge`)."""

    name = "rouge2"
    headline = "rouge2_f1_mean"
    gate_families = ("rouge2",)


class RougeL(Rouge):
    """``rougeL``: longest common subsequence of the two token sequences (see :class:`Rouge`)."""

    name = "rougeL"
    headline = "rougeL_f1_mean"
    gate_families = ("rougeL",)


class RougeLsum(Rouge):
    """``rougeLsum``: summary-level LCS over the sentences, split at newlines (see :class:`Rouge`)."""

    name = "rougeLsum"
    headline = "rougeLsum_f1_mean"
    gate_families = ("rougeLsum",)


#: The ROUGE scorer class of each ``rouge-score`` name.
ROUGE_SCORERS: dict[str, type[Rouge]] = {c.name: c for c in (Rouge1, Rouge2, RougeL, RougeLsum)}
