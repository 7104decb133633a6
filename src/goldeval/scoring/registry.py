"""The scorer registry: the built-in scorers (named here as strings, imported when first asked for), the ones
registered in this process, and the installed ``goldeval.scorers`` entry points; a scorer's metrics made gateable.
"""

from __future__ import annotations

import importlib
import importlib.metadata
from collections.abc import Mapping
from typing import Any

from goldeval.errors import InputError, shorten
from goldeval.gates import metrics
from goldeval.scoring.protocol import ENTRY_POINT_GROUP, Scorer

__all__ = ["available_scorers", "gate_families", "get_scorer", "register_plugin_metrics", "register_scorer", "scorer_of",
           "with_extra"]


# ---------------------------------------------------------------------------------------------------------------
# registry

_BUILTIN: dict[str, str] = {
    "token_f1": "goldeval.freetext.scorer:TokenF1",
    "rouge1": "goldeval.freetext.rouge_scorer:Rouge1",
    "rouge2": "goldeval.freetext.rouge_scorer:Rouge2",
    "rougeL": "goldeval.freetext.rouge_scorer:RougeL",
    "rougeLsum": "goldeval.freetext.rouge_scorer:RougeLsum",
    "semantic_similarity": "goldeval.freetext.semantic_scorer:SemanticSimilarity",
    "labels": "goldeval.labels.scorer:Labels",
    "answer_judge": "goldeval.answers.scorer:AnswerJudge",
}
_REGISTERED: dict[str, type[Scorer]] = {}


def register_scorer(cls: type[Scorer]) -> type[Scorer]:
    """Register a :class:`Scorer` subclass under its ``name`` in this process (tests, notebooks); an entry point
    does the same for an installed distribution. Its metrics become gateable. Usable as a class decorator.

    Raises:
        InputError: *cls* is not a Scorer subclass, has no ``name``, or takes a built-in's name.
    """
    if not (isinstance(cls, type) and issubclass(cls, Scorer)) or not isinstance(getattr(cls, "name", None), str) or not cls.name:
        raise InputError(f"register_scorer: expected a Scorer subclass with a name, got {shorten(cls)}.")
    if cls.name in _BUILTIN:
        raise InputError(f"register_scorer: {cls.name!r} is a built-in scorer's name; choose another name.")
    _REGISTERED[cls.name] = cls
    _register_metrics(cls)
    return cls


def _entry_points() -> dict[str, importlib.metadata.EntryPoint]:
    return {ep.name: ep for ep in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP)}


def available_scorers() -> list[str]:
    """Names of every scorer: the built-ins, the registered ones and the installed entry points, sorted."""
    return sorted(set(_BUILTIN) | set(_REGISTERED) | set(_entry_points()))


def get_scorer(name: str) -> Scorer:
    """An instance of the scorer called *name* (built-in, registered, or from the ``goldeval.scorers`` entry points).

    Raises:
        InputError: no scorer has that name (with the names there are), or its entry point cannot be loaded or is
            not a :class:`Scorer`.
    """
    if name in _BUILTIN:
        return _builtin(name)()
    cls = _REGISTERED.get(name)
    if cls is None:
        ep = _entry_points().get(name)
        if ep is None:
            raise InputError(f"--scorer {name}: no such scorer; there are: {', '.join(available_scorers())}. "
                             f"A third-party scorer registers under the entry point group {ENTRY_POINT_GROUP!r}.")
        try:
            cls = ep.load()
        except Exception as exc:  # a broken plug-in is bad input to this run, named, never an internal error of ours
            raise InputError(f"--scorer {name}: its entry point {ep.value!r} could not be loaded ({type(exc).__name__}: {exc}). "
                             "Reinstall the package that provides it.") from None
        if not (isinstance(cls, type) and issubclass(cls, Scorer)):
            raise InputError(f"--scorer {name}: its entry point {ep.value!r} is {shorten(cls)}, not a goldeval.scoring.protocol.Scorer subclass.")
        if getattr(cls, "name", None) != name:
            raise InputError(f"--scorer {name}: its entry point's class calls itself {getattr(cls, 'name', None)!r}; "
                             "the entry point name and Scorer.name must agree.")
        _REGISTERED[name] = cls
        _register_metrics(cls)
    return cls()


def scorer_of(results_name: str | None) -> Scorer | None:
    """The scorer whose hooks show results named *results_name* (``results["scorer"]["name"]``, a run's
    ``scorer_name``): that scorer, a built-in that lists the name in its ``result_names``, or ``None`` when no
    installed scorer has it (a plug-in since removed: the caller shows the generic view)."""
    if not isinstance(results_name, str):
        return None
    for name in _BUILTIN:
        cls = _builtin(name)
        if name == results_name or results_name in cls.result_names:
            return cls()
    try:
        return get_scorer(results_name)
    except InputError:
        return None


def register_plugin_metrics() -> None:
    """Make the metrics of every installed third-party scorer gateable (``goldeval gate`` calls it before it reads
    a definition of done). A plug-in that cannot be loaded is skipped here (``get_scorer`` names the problem)."""
    for name in _entry_points():
        if name not in _BUILTIN and name not in _REGISTERED:
            try:
                get_scorer(name)
            except InputError:
                continue


def gate_families(results_name: str | None) -> frozenset[str] | None:
    """The metric families of results named *results_name*, registered with the gates on the way: those a command
    writes without a scorer (already registered by :mod:`goldeval.gates.metrics`), else those of the scorer that
    shows them (:func:`scorer_of`; ``Scorer.gate_families``). ``None`` when no one declares any (the gates then
    match the results by their keys).

    Args:
        results_name: ``results["scorer"]["name"]``, or the ``--scorer`` of a run about to start.

    Returns:
        The family names (``{"answers"}`` for ``llm_judge``), or ``None``.

    Source: :data:`goldeval.gates.metrics.PRODUCERS`.

    Example:
        >>> sorted(gate_families("token_f1"))
        ['free_text']
    """
    known = metrics.families_of(results_name)
    if known is not None:
        return known
    if scorer_of(results_name) is None:  # loads (and so registers) the scorer that shows these results
        return None
    return metrics.families_of(results_name)


def _builtin(name: str) -> type[Scorer]:
    module, attr = _BUILTIN[name].split(":")
    cls: type[Scorer] = getattr(importlib.import_module(module), attr)
    if cls.name not in metrics.PRODUCERS:
        _register_families(cls)
    return cls


def _register_families(cls: type[Scorer]) -> None:
    """The gates learn which metric families *cls*'s results hold, under its name and each of its result names."""
    families = set(cls.gate_families) | ({cls.name} if any(m.family == cls.name for m in metrics.METRICS.values()) else set())
    for name in (cls.name, *cls.result_names) if families else ():
        try:
            metrics.register_producer(name, families)
        except ValueError as exc:
            raise InputError(f"scorer {cls.name!r}: gate_families {sorted(cls.gate_families)}: {exc} "
                             "Name the families of the metrics its results hold.") from None


def _register_metrics(cls: type[Scorer]) -> None:
    for metric, spec in cls.metrics.items():
        known = metrics.METRICS.get(metric)
        if known is not None and known.family != cls.name:
            continue  # a metric goldeval already defines keeps its definition
        metrics.METRICS[metric] = metrics.Metric(metric, cls.name, spec.description, spec.better, spec.unit)
    _register_families(cls)


def with_extra(scorer: Scorer, results: dict[str, Any], extra: Mapping[str, Any] | None) -> dict[str, Any]:
    """*results* with *extra*'s entries placed before ``aggregate`` (the order today's results files have), and a
    third-party scorer's headline metric named under ``aggregate["headline"]`` (``runs list`` shows it)."""
    if scorer.name not in _BUILTIN and scorer.headline and "headline" not in results["aggregate"]:
        results["aggregate"]["headline"] = scorer.headline
    if not extra:
        return results
    out: dict[str, Any] = {}
    for key, value in results.items():
        if key == "aggregate":
            out.update(extra)
        out[key] = value
    return out
