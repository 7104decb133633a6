"""The gates stage of a run: load the definition of done before scoring, evaluate it on the results after, and
finish the recorded run once, with its gate report."""

from __future__ import annotations

import os
from typing import Any

from goldeval.errors import InputError

__all__ = ["EXIT_BAD_INPUT", "EXIT_GATE_FAILED", "EXIT_OK", "apply_definition", "check_slice_gates", "hold_finish_for_gates",
           "load_definition"]

#: The exit decisions of a run (the CLI exits with them): every gate passes (or none given), a gate fails, nothing
#: could be scored.
EXIT_OK, EXIT_GATE_FAILED, EXIT_BAD_INPUT = 0, 1, 2


def load_definition(gates_path: str | os.PathLike[str] | None, *, scorer: str | None = None) -> Any:
    """The parsed definition of done, or ``None`` when no gates file was given.

    Args:
        gates_path: The TOML definition of done, or ``None``.
        scorer: The results' ``scorer.name`` (e.g. ``"token_f1"``): a gate on a metric that scorer never produces
            is refused now, before anything is scored or recorded (see :func:`goldeval.gates.evaluate.check_scorer`).

    Returns:
        A :class:`~goldeval.gates.definition.DefinitionOfDone`, or ``None``.

    Raises:
        InputError: a bad gates file, or a gate on a metric *scorer* never produces.
    """
    if gates_path is None:
        return None

    # start-up: the gates (tomllib, fractions, decimal, the scorer registry) load only when --gates is given
    from goldeval.gates.definition import load_gates
    from goldeval.gates.evaluate import check_scorer
    from goldeval.scoring.registry import gate_families

    dod = load_gates(gates_path)
    if scorer is not None:
        gate_families(scorer)  # the scorer's metric families, registered with the gates (Scorer.gate_families)
        check_scorer(dod, scorer)
    return dod


def check_slice_gates(definition: Any, slice_by: str | None) -> None:
    """Refuse, before anything is scored, a definition of done that gates a slice (``[gates.slices.NAME]``) of a run
    scored without ``--slice-by``: such a gate could only fail.

    Args:
        definition: A :class:`~goldeval.gates.definition.DefinitionOfDone`, or ``None``.
        slice_by: The run's slice field, or ``None``.

    Raises:
        InputError: a slice gate and no slice field, with the gate's line and what to pass.
    """
    if definition is None or slice_by is not None:
        return
    gate = next((g for g in definition.gates if getattr(g, "slice", None) is not None), None)
    if gate is not None:
        where = f"{definition.source}:{gate.line}" if gate.line else definition.source
        raise InputError(f"{where}: gate on {gate.metric!r} of slice {gate.slice!r} ([gates.slices.{gate.slice}]), but the "
                         "run is not sliced. Pass --slice-by FIELD (the case field whose values name the slices, e.g. "
                         "--slice-by difficulty), or drop the slice gates.")


def hold_finish_for_gates(recorder: Any, definition: Any) -> None:
    """With gates to evaluate (``definition`` not ``None``), keep the scorer from finishing the run: it is
    finished once, by :func:`apply_definition`, with the gate report (killed in between, it is left interrupted and
    resumable, never finished without its decision). Nothing happens without a recorder or without gates."""
    if recorder is not None and definition is not None and hasattr(recorder, "hold_finish"):
        recorder.hold_finish = True


def apply_definition(results: dict[str, Any], definition: Any, *, recorder: Any = None) -> Any:
    """Evaluate *definition* on *results*: the gate report goes under ``results["gates"]`` and the run is finished.

    Args:
        results: The results dict a scorer returned (mutated: ``"gates"`` is added).
        definition: A :class:`~goldeval.gates.definition.DefinitionOfDone`, or ``None`` (nothing is gated: returns ``None``).
        recorder: The run's recorder, if any: the run is finished with the results that now hold the gate report,
            so the store keeps the decision (see :func:`hold_finish_for_gates`).

    Returns:
        The :class:`~goldeval.gates.evaluate.GateReport` (``None`` without a definition).

    Raises:
        InputError: a gate that cannot be evaluated on these results (a positive-label mismatch…).
    """
    if definition is None:
        return None

    scorer = results.get("scorer") if isinstance(results, dict) else None
    from goldeval.gates.evaluate import evaluate_gates  # start-up: as in load_definition
    from goldeval.scoring.registry import gate_families

    gate_families(scorer.get("name") if isinstance(scorer, dict) else None)  # registered, as for load_definition
    report = evaluate_gates(results, definition)
    results["gates"] = report.to_dict()
    if recorder is not None:
        if hasattr(recorder, "hold_finish"):
            recorder.hold_finish = False
        recorder.finish(results)
    return report
