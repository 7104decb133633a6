"""Gates: the definition of done a customer signed — its file format, the gateable metrics, evaluation.

Owns:
    :mod:`~goldeval.gates.definition`   the TOML file parsed into a :class:`DefinitionOfDone` of :class:`GateSpec`
    :mod:`~goldeval.gates.metrics`      the registry of gateable metrics (``METRICS``, ``PRODUCERS``)
    :mod:`~goldeval.gates.evaluate`     a results file against the gates (:func:`evaluate_gates`), explained

May import: the foundation modules (errors) only. Scorers register their metrics here (:mod:`goldeval.scoring`
imports this package, never the other way round).

This package re-exports the public names of :mod:`goldeval.gates.evaluate` (``from goldeval.gates import
load_gates`` keeps working), imported on first use.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from goldeval.gates.evaluate import (
        METRICS,
        PRODUCERS,
        Bound,
        DefinitionOfDone,
        GateReport,
        GateResult,
        GateSpec,
        Metric,
        check_scorer,
        evaluate_gates,
        families_of,
        known_metrics,
        load_gates,
        parse_gates,
        register_producer,
    )

__all__ = [
    "Bound",
    "DefinitionOfDone",
    "GateReport",
    "GateResult",
    "GateSpec",
    "METRICS",
    "PRODUCERS",
    "Metric",
    "check_scorer",
    "evaluate_gates",
    "families_of",
    "known_metrics",
    "load_gates",
    "parse_gates",
    "register_producer",
]


def __getattr__(name: str) -> Any:
    # the public names of goldeval.gates.evaluate, imported on first use (importing a submodule of this package stays light)
    if name in __all__:
        value = getattr(importlib.import_module("goldeval.gates.evaluate"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
