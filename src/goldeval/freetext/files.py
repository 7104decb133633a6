"""Batch free-text scoring, the domain's part: the config and the head of the results object.

Token F1 over a file or rows (:func:`goldeval.pipeline.files.score_file` / :func:`~goldeval.pipeline.files.score_rows`)
runs the local engine, which is pipeline work; this module keeps the names a caller of those needs from the domain
(:class:`FreeTextConfig`, :func:`results_head`, ``SCORER_NAME``, ``SCORER_VERSION``). The old paths
``goldeval.freetext.files.score_file`` / ``score_rows`` / ``PARALLEL_MIN_ROWS`` still work, with a DeprecationWarning
(see :func:`goldeval._compat.moved_attribute`).
"""

from __future__ import annotations

from typing import Any

from goldeval._compat import moved_attribute
from goldeval.freetext.scorer import (
    SCORER_NAME,
    SCORER_VERSION,
    FreeTextConfig,
    results_head,
)

__all__ = ["FreeTextConfig", "results_head", "SCORER_NAME", "SCORER_VERSION"]


def __getattr__(name: str) -> Any:
    # the deprecation path of score_file / score_rows / PARALLEL_MIN_ROWS, which moved up a layer (see moved_attribute)
    return moved_attribute(__name__, name)
