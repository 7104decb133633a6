"""Scoring: the one Scorer protocol every scorer implements, exact running sums, and the scorer registry.

Owns:
    :mod:`~goldeval.scoring.protocol`   :class:`Scorer`, :class:`Partial`, :class:`MetricSpec`, the record helpers
    :mod:`~goldeval.scoring.sums`       :class:`ExactSum`: means exact to the last digit whatever the split
    :mod:`~goldeval.scoring.registry`   :func:`get_scorer`, :func:`register_scorer`, the ``goldeval.scorers`` entry
                                        points; the built-in scorers are named there as strings and imported
                                        on first use, so this package imports no domain package; a scorer's
                                        metric families registered with the gates (:func:`gate_families`)

The built-in Scorers live with their domain: :mod:`goldeval.freetext.scorer`, :mod:`goldeval.labels.scorer`,
:mod:`goldeval.answers.scorer`.

May import: :mod:`goldeval.gates` (a scorer's metrics become gateable), :mod:`goldeval.io`, the foundation
modules. Never: a domain package, an engine, runs, report, pipeline, cli.
"""

from __future__ import annotations

from goldeval.scoring.protocol import ENTRY_POINT_GROUP, MetricSpec, Option, Partial, Scorer, as_option, numbered
from goldeval.scoring.registry import (
    available_scorers,
    gate_families,
    get_scorer,
    register_plugin_metrics,
    register_scorer,
    scorer_of,
)
from goldeval.scoring.sums import ExactSum

__all__ = [
    "ENTRY_POINT_GROUP",
    "ExactSum",
    "MetricSpec",
    "Option",
    "Partial",
    "Scorer",
    "as_option",
    "available_scorers",
    "gate_families",
    "get_scorer",
    "numbered",
    "register_plugin_metrics",
    "register_scorer",
    "scorer_of",
]
