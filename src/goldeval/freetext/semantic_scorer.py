"""The ``semantic_similarity`` scorer: cosine of WordLlama embeddings, whole note and per section, macro mean.

``goldeval score FILE --scorer semantic_similarity`` (needs ``pip install 'goldeval[semantic]'``; the weights ship in
the ``wordllama`` wheel, nothing is downloaded). Records: ``whole_note`` {similarity} and, for sectioned rows,
``sections`` {name: {similarity}}, ``sections_empty_both``, ``section_macro`` (as :mod:`goldeval.freetext.pairscorer`
lays out). Aggregate keys: ``semantic_similarity_mean`` (macro mean over the scored rows, exact) and, for sectioned
rows, ``semantic_similarity_section_mean`` with per-section means under ``sections``. The model (library, its
version, configuration, dimension) is part of the configuration recorded with a run, so it is in the run's key: a
run with another model or another ``wordllama`` release is another run, never resumed into this one.

What it measures and what not: :mod:`goldeval.freetext.semantic`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from goldeval.freetext.pairscorer import PairScorer
from goldeval.freetext.semantic import model_info, similarity_pairs

__all__ = ["SemanticSimilarity"]


class SemanticSimilarity(PairScorer):
    """Cosine similarity of WordLlama (``l2_supercat``, 256-d) embeddings of prediction and reference.

    A text that is empty or whitespace has no embedding: two of them score 1.0, one against a text 0.0, and the
    record says ``empty`` (counted in ``n_with_empty_text``).
    """

    name = "semantic_similarity"
    version = "1"
    values = ("similarity",)
    headline = "semantic_similarity_mean"
    gate_families = ("semantic_similarity",)

    def configure(self, **options: Any) -> dict[str, Any]:
        config = super().configure(**options)
        config["model"] = model_info()  # wordllama missing fails here (InputError), before any row is read
        return config

    def store_config(self, config: Mapping[str, Any]) -> dict[str, Any]:
        """The options and the model (library, version, name, dimension): recorded with the run, in its key."""
        return {k: v for k, v in config.items() if k != "source"}

    def results_head(self, config: Mapping[str, Any]) -> dict[str, Any]:
        """``scorer``, ``model`` and ``config``: the first keys of the results."""
        return {"scorer": {"name": self.name, "version": self.version}, "model": dict(config["model"]),
                "config": {k: config[k] for k in self.options}}

    def score_texts(self, predictions: list[str], references: list[str], config: Mapping[str, Any]) -> list[dict[str, float]]:
        return [{"similarity": s} for s in similarity_pairs(predictions, references)]

    def has_text(self, text: str, config: Mapping[str, Any]) -> bool:
        return bool(text.strip())

    def aggregate_key(self, value: str, *, section: bool = False) -> str:
        return "semantic_similarity_section_mean" if section else "semantic_similarity_mean"
