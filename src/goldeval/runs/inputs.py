"""The input files a stored run (or a results file) was made of: each role's path and sha256.

A report reads its case texts back from these files, and every command that writes a file checks that it is none
of them (``--out`` over a run's own predictions destroys what the run was made of). Apart from
:mod:`goldeval.report.sources`, which reads the files, so that a command that only needs the paths (``compare``,
``runs export``) loads neither the report nor the data-answer judge.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from goldeval.runs.identity import recorded_path
from goldeval.scoring.registry import scorer_of

__all__ = ["input_files", "input_paths", "stored_run_inputs"]


def input_files(results: Mapping[str, Any], run: Mapping[str, Any] | None) -> dict[str, dict[str, Any]]:
    """role → ``{"path", "sha256"}`` of each input, from the run record when there is one, else from the results
    file (``input`` of a free-text run, ``inputs`` of a judge run, ``dataset`` of a labels run; an ``llm-judge``
    results file names only the sha256, so its ``path`` is ``None``)."""
    if run is not None and isinstance(run.get("inputs"), Mapping) and run["inputs"]:
        return {role: dict(v) for role, v in run["inputs"].items() if isinstance(v, Mapping)}
    out: dict[str, dict[str, Any]] = {}
    single = results.get("input") or results.get("dataset")
    if isinstance(single, Mapping) and single.get("path"):
        role = "predictions" if results.get("input") else "labels"
        out[role] = {"path": single.get("path"), "sha256": single.get("sha256")}
    multi = results.get("inputs")
    scorer = results.get("scorer")
    name = scorer.get("name") if isinstance(scorer, Mapping) else None
    shown_by = scorer_of(name) if isinstance(multi, Mapping) else None
    if isinstance(multi, Mapping) and shown_by is not None and name in shown_by.inputs_as_hashes:
        # results that record each input's sha256 under its role, not its path (`goldeval llm-judge --out`)
        for role in ("cases", "attempts", "rules"):
            if isinstance(multi.get(role), str):
                out[role] = {"path": None, "sha256": multi[role]}
    elif isinstance(multi, Mapping):
        for role in ("cases", "attempts", "db"):
            if multi.get(role):
                out[role] = {"path": multi[role], "sha256": multi.get(f"{role}_sha256")}
    return out


def input_paths(results: Mapping[str, Any], run: Mapping[str, Any] | None, *, base: str | None = None) -> dict[str, str]:
    """role → path of each input file of a run (or of a results file), resolved as :func:`load_sources` reads it.

    The paths a report must never be written over (``goldeval report --out``): they are the run's own files,
    whether or not their sha256 still matches. A database URL (``postgresql://…``) is not a file and is left out.

    Args:
        results: The results dict; run: the stored run or ``None``; base: as in :func:`load_sources`.

    Returns:
        ``{"predictions": "preds.jsonl"}``, ``{"cases": …, "attempts": …, "db": …}`` or ``{"labels": …}``.
    """
    out: dict[str, str] = {}
    for role, spec in input_files(results, run).items():
        path = spec.get("path")
        if isinstance(path, str) and path and path != "-" and "://" not in path:  # '-': stdin, not a file
            out[role] = recorded_path(spec, base) or path
    return out


def stored_run_inputs(store: Any, ref: str) -> dict[str, str]:
    """role → path of each input file of the stored run *ref* (:func:`input_paths` of its record and results),
    read without its cases (``RunStore.get_run(ref, with_cases=False)``).

    Raises:
        InputError: *ref* names no single run (as :meth:`goldeval.runs.store.RunStore.get_run`).
    """
    rec = store.get_run(ref, with_cases=False)  # the inputs are top-level keys: no case is read
    return input_paths(rec.get("results") or {}, rec)
