"""Labels: confusion counts, precision / recall / missed, kappa and agreement, the label reader, and their Scorer.

Owns:
    :mod:`~goldeval.labels.metrics`     pair counts, :class:`LabelScore`, the per-label table, the confusion matrix
    :mod:`~goldeval.labels.agreement`   Cohen's kappa and inter-annotator agreement
    :mod:`~goldeval.labels.reader`      the ``labels`` command's row loop over a JSONL file (C fast path)
    :mod:`~goldeval.labels.scorer`      :class:`Labels`, the ``labels`` Scorer

May import: :mod:`goldeval.scoring`, :mod:`goldeval.io`, the foundation modules. Never: another domain package,
an engine, runs, report, pipeline, cli.

This package re-exports the public names the old ``goldeval.labels`` module had (from :mod:`~goldeval.labels.metrics`
and :mod:`~goldeval.labels.reader`; ``from goldeval.labels import score_labels`` keeps working), imported on first use.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from goldeval.labels.metrics import (
        SCORER_NAME,
        SCORER_VERSION,
        Confusion,
        ConfusionMatrix,
        LabelRow,
        LabelScore,
        confusion_counts,
        confusion_matrix,
        pair_counts,
        per_label_table,
        score_confusion,
        score_from_pairs,
        score_labels,
        solve,
    )
    from goldeval.labels.reader import score_label_file, score_label_rows

__all__ = [
    "Confusion",
    "ConfusionMatrix",
    "LabelRow",
    "LabelScore",
    "SCORER_NAME",
    "SCORER_VERSION",
    "confusion_counts",
    "confusion_matrix",
    "pair_counts",
    "per_label_table",
    "score_confusion",
    "score_from_pairs",
    "score_label_file",
    "score_label_rows",
    "score_labels",
    "solve",
]


def __getattr__(name: str) -> Any:
    # the public names of goldeval.labels.metrics, imported on first use (importing a submodule of this package stays light)
    if name in __all__:
        where = "goldeval.labels.reader" if name in ("score_label_file", "score_label_rows") else "goldeval.labels.metrics"
        value = getattr(importlib.import_module(where), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
