"""Free text: token rules, multiset overlap, token F1 and section F1, ROUGE, semantic similarity, and their Scorers.

Owns:
    :mod:`~goldeval.freetext.tokens`    the token rules (``OPENSCRIBE``, ``UNICODE``; the C fast path of the first)
    :mod:`~goldeval.freetext.overlap`   token F1 / section F1 of two texts (:class:`Overlap`, :class:`SectionOverlap`)
    :mod:`~goldeval.freetext.scorer`    the per-row rule and :class:`TokenF1`, the ``token_f1`` Scorer
    :mod:`~goldeval.freetext.files`     :class:`FreeTextConfig`, :func:`results_head`: what a file's results hold
    :mod:`~goldeval.freetext.rouge`     ROUGE-1/2/L/Lsum of two texts, equal to rouge-score (via rouge-score-rs)
    :mod:`~goldeval.freetext.semantic`  cosine of WordLlama embeddings (the ``semantic`` extra; weights in its wheel)
    :mod:`~goldeval.freetext.pairscorer`  the Scorer of a score of two texts (whole note, sections, exact means)
    :mod:`~goldeval.freetext.rouge_scorer`  the ``rouge1``, ``rouge2``, ``rougeL``, ``rougeLsum`` Scorers
    :mod:`~goldeval.freetext.semantic_scorer`  the ``semantic_similarity`` Scorer

May import: :mod:`goldeval.scoring` (the protocol, exact sums), :mod:`goldeval.io`, the foundation modules
(errors, ...). Never: another domain package, an engine, runs, report, pipeline, cli. Token F1 over a file
(``score_file``, ``score_rows``) runs the local engine: it is :mod:`goldeval.pipeline.files`'.

This package re-exports the public names of :mod:`goldeval.freetext.files`, imported on first use. The old
``from goldeval.freetext import score_file`` keeps working with a DeprecationWarning naming
:mod:`goldeval.pipeline.files` (:func:`goldeval._compat.moved_attribute`).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from goldeval._compat import moved_attribute

if TYPE_CHECKING:
    from goldeval.freetext.files import (
        SCORER_NAME,
        SCORER_VERSION,
        FreeTextConfig,
        results_head,
    )

__all__ = [
    "FreeTextConfig",
    "SCORER_NAME",
    "SCORER_VERSION",
    "results_head",
]


def __getattr__(name: str) -> Any:
    # the public names of goldeval.freetext.files, imported on first use (importing a submodule of this package stays light)
    if name in __all__:
        value = getattr(importlib.import_module("goldeval.freetext.files"), name)
        globals()[name] = value
        return value
    # the deprecation path of score_file / score_rows, which moved up a layer (see moved_attribute)
    return moved_attribute(__name__, name)
