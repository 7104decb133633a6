"""Per-slice metrics: any :class:`~goldeval.scoring.protocol.Scorer` run with ``--slice-by FIELD`` gives every
metric of its ``aggregate`` for each value of a case field as well (``difficulty``, ``db``, a tag column).

:func:`sliced` turns a scorer into one that reads the field from each input row, puts the slice name on the
row's record (``"slice"``) and aggregates one partial for the whole input and one per slice, from the same
per-case records, by the scorer's own :class:`~goldeval.scoring.protocol.Partial`::

    scorer = sliced(get_scorer("token_f1"), "difficulty")
    results = scorer.aggregate(scorer.score_batch(rows, config), config)
    results["slice_by"]                 # "difficulty"
    results["slices"]["hard"]           # the aggregate token F1 gives on the rows of difficulty "hard" alone

So a slice's aggregate **equals** what the scorer gives on that slice's rows alone, exactly (the same partial, the
same exact sums, merged in any order: on every core locally or on Spark). A row that lacks the field (or holds
null, a blank text or an empty list) is in the slice :data:`NO_SLICE` (``"(none)"``); a list of texts or numbers (a
tag column) puts the row in each of its slices; a number or a boolean is named as JSON writes it (``3``,
``true``). A value that names no slice (an object, a nested list) puts the row in :data:`BAD_SLICE` and lists it
under ``results["slice_errors"]`` with its line and the field: the case is still scored and counted in the whole.

Which field of a row is read is the scorer's :meth:`~goldeval.scoring.protocol.Scorer.slice_value` (the data-answer
judge reads the case, not the joined row); what configuration a slice is finished under, its
:meth:`~goldeval.scoring.protocol.Scorer.slice_config` (a labels slice may hold no positive at all).

Source: issue 28 item 4; the slice table of BIRD (simple / moderate / challenging) and Inspect's grouped metrics.
"""

from __future__ import annotations

import copy
from collections import deque
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

import orjson

from goldeval.errors import InputError, shorten
from goldeval.io.reading import Row, RowError
from goldeval.scoring.protocol import SLICE_KEY, Partial, Reused, Scorer, numbered

__all__ = ["BAD_SLICE", "NO_SLICE", "SLICE_KEY", "SlicedPartial", "SlicedScorer", "slice_names", "sliced", "unsliced"]

#: The slice of a row without the field (absent, null, blank text, empty list).
NO_SLICE = "(none)"
#: The slice of a row whose field holds a value that names no slice (an object, a nested list).
BAD_SLICE = "(invalid)"
_SLICE_ERROR = "slice_error"
#: ``slice_value``'s answer for an item that belongs to no slice (a data-answer row failure: not a case).
NOT_A_CASE = object()


def slice_names(value: Any) -> tuple[list[str], str | None]:
    """The slices a row whose slice field holds *value* belongs to, and why it names none (``None`` when it does).

    Args:
        value: The field's value as read from the row (JSON types); ``None`` for an absent field.

    Returns:
        ``(names, problem)``: ``names`` is never empty — ``[NO_SLICE]`` for an absent, null or blank value or an
        empty list, ``[BAD_SLICE]`` (with ``problem``, what was expected) for an object or a nested list; a
        list's names in their first order, each once.

    Example:
        >>> slice_names("hard"), slice_names(3), slice_names(["a", "b", "a"]), slice_names(None)
        ((['hard'], None), (['3'], None), (['a', 'b'], None), (['(none)'], None))
    """
    if isinstance(value, list):
        names: list[str] = []
        for v in value:
            try:
                one = _scalar_name(v)
            except ValueError:
                return [BAD_SLICE], f"a list of texts or numbers, got a list holding {_json(v)}"
            if one is not None and one not in names:
                names.append(one)
        return (names or [NO_SLICE]), None
    try:
        single = _scalar_name(value)
    except ValueError:
        return [BAD_SLICE], f"a text, a number or a list of them, got {_json(value)}"
    return [NO_SLICE if single is None else single], None


def _scalar_name(value: Any) -> str | None:
    """A scalar's slice name, ``None`` for no value.

    Raises:
        ValueError: *value* is no scalar (an object, a list)."""
    if value is None:
        return None
    if isinstance(value, str):
        return value if value.strip() else None
    if isinstance(value, (bool, int, float)):
        return orjson.dumps(value).decode()  # as JSON writes it: true, 3, 0.5
    raise ValueError(value)


def _json(value: Any) -> str:
    """*value* as the row's JSON spells it, shortened."""
    try:
        text = orjson.dumps(value).decode()
    except TypeError:
        return shorten(value)
    return text if len(text) <= 60 else text[:59] + "…"


class SlicedPartial(Partial):
    """The whole input's partial and one per slice, all of the scorer's own kind.

    Attributes:
        whole: The partial over every record (what the results' ``aggregate`` comes from).
        by: slice name → the partial over that slice's records (kept without ``per_example``).
        errors: ``{"line", "id", "error"}`` of each row whose field names no slice.
    """

    def __init__(self, whole: Partial, template: Partial) -> None:
        self.whole = whole
        self.template = template  # an empty partial (no cases kept): copied for each new slice
        self.by: dict[str, Partial] = {}
        self.errors: list[dict[str, Any]] = []

    def add(self, record: Mapping[str, Any]) -> None:
        self.whole.add(record)
        names = record.get(SLICE_KEY)
        if names is None:
            return  # not a case (a row failure of the data-answer judge): in the whole only
        for name in ([names] if isinstance(names, str) else names):
            part = self.by.get(name)
            if part is None:
                part = self.by[name] = copy.deepcopy(self.template)
            part.add(record)
        if _SLICE_ERROR in record:
            self.errors.append({"line": record.get("line"), "id": record.get("id"), "error": record[_SLICE_ERROR]})

    def merge(self, other: Partial) -> None:
        if not isinstance(other, SlicedPartial):
            raise TypeError(f"SlicedPartial.merge: expected a SlicedPartial, got {type(other).__name__}")
        self.whole.merge(other.whole)
        for name, part in other.by.items():
            mine = self.by.get(name)
            if mine is None:
                self.by[name] = part
            else:
                mine.merge(part)
        self.errors += other.errors


class SlicedScorer(Scorer):
    """What :func:`sliced` mixes into a scorer's class: reads the slice field, slices the partials, adds
    ``slice_by``, ``slices`` (and ``slice_errors``) to the results. Not used on its own."""

    #: The field (a case field, a column) the rows are sliced by.
    slice_by: str
    _unsliced_class: type[Scorer]

    @property
    def has_batch_kernel(self) -> bool:
        """``False``: a batch kernel reads its file without this class's slicing, so a sliced run scores row by row."""
        return False

    def __reduce__(self) -> Any:
        return (sliced, (unsliced(self), self.slice_by))

    def score_batch(self, rows: Iterable[Any], config: Mapping[str, Any]) -> Iterator[dict[str, Any]]:
        """The scorer's records, each with ``"slice"`` (a name, or a list of names) read from its row, and
        ``"slice_error"`` when the field holds a value that names no slice. A reused case keeps its recorded slice
        when it has one."""
        src = config.get("source") or "rows"
        pending: deque[Any] = deque()
        field = self.slice_by

        def tee(items: Iterable[Any]) -> Iterator[Any]:
            for item in numbered(items, src):
                pending.append(self._slice_of(item, field, src))
                yield item

        for rec in self._unsliced_class.score_batch(self, tee(rows), config):
            if not pending:
                raise RuntimeError(f"scorer {self.name!r} yielded more records than rows (score_batch must yield one per row)")
            names, problem = pending.popleft()
            if names is NOT_A_CASE:
                yield rec
                continue
            if names is None:  # a reused case: its recorded slice, else its row's was not at hand
                if SLICE_KEY in rec:
                    yield rec
                    continue
                names, problem = [NO_SLICE], None
            rec = {**rec, SLICE_KEY: names[0] if len(names) == 1 else names}
            if problem is not None:
                rec[_SLICE_ERROR] = problem
            yield rec

    def _slice_of(self, item: Any, field: str, src: str) -> tuple[Any, str | None]:
        """``(names, problem)`` of one item; ``(None, None)`` for a reused case without its row."""
        if isinstance(item, RowError):  # a row that could not be read: unscored, in the slice of no value
            return [NO_SLICE], None
        if isinstance(item, Reused):
            data = item.data
            if data is None:
                return None, None
        elif isinstance(item, Row):
            data = item.data
        else:
            data = item
        value = self.slice_value(data, field) if isinstance(data, Mapping) else None
        if value is NOT_A_CASE:
            return NOT_A_CASE, None
        names, problem = slice_names(value)
        if problem is not None:
            line = getattr(item, "line", None)
            problem = (f"{src}:{line}: field '{field}' (--slice-by) must be {problem}. The case is scored and counted "
                       f"in the whole, in the slice {BAD_SLICE!r}; fix the row or slice by another field.")
        return names, problem

    def new_partial(self, config: Mapping[str, Any], *, keep_cases: bool = True) -> Partial:
        plain = self._unsliced_class
        return SlicedPartial(plain.new_partial(self, config, keep_cases=keep_cases), plain.new_partial(self, config, keep_cases=False))

    def finish(self, partial: Partial, config: Mapping[str, Any]) -> dict[str, Any]:
        """The scorer's results over the whole, plus ``slice_by`` (the field), ``slices`` (slice name → the
        aggregate the scorer gives on that slice's records alone, ``elapsed_sec`` left out; names sorted, with
        ``"(none)"`` and ``"(invalid)"`` last) and ``slice_errors`` when a row's field named no slice.

        A slice the scorer cannot finish (an error only that slice's rows show) holds ``{"error": message}``
        instead: a gate on it fails with the message."""
        if not isinstance(partial, SlicedPartial):
            raise TypeError(f"{type(self).__name__}.finish: expected the partial new_partial made, got {type(partial).__name__}")
        plain = self._unsliced_class
        results = plain.finish(self, partial.whole, config)
        slice_config = self.slice_config(config)
        slices: dict[str, Any] = {}
        for name in sorted(partial.by, key=lambda s: (s in (NO_SLICE, BAD_SLICE), s == BAD_SLICE, s)):
            try:
                agg = dict(plain.finish(self, partial.by[name], slice_config)["aggregate"])
            except InputError as exc:
                agg = {"error": str(exc)}
            agg.pop("elapsed_sec", None)
            slices[name] = agg
        results["slice_by"] = self.slice_by
        results["slices"] = slices
        if partial.errors:
            results["slice_errors"] = sorted(partial.errors, key=lambda e: (e["line"] is None, e["line"] or 0))
        return results


_CLASSES: dict[type[Scorer], type[SlicedScorer]] = {}


def sliced(scorer: Scorer, field: str) -> Scorer:
    """*scorer* with per-slice aggregates by *field*: the same records (each with its ``"slice"``), the same
    options, name, version and hooks, and ``slices`` in its results.

    Args:
        scorer: Any :class:`~goldeval.scoring.protocol.Scorer` instance (its state is shared, not copied).
        field: The case field to slice by (``difficulty``, ``db``, a tag column): a non-blank text.

    Returns:
        An instance of a subclass of *scorer*'s class (so every ``isinstance`` and hook holds) that pickles as
        ``sliced(scorer, field)``. A scorer already sliced is sliced by *field* instead.

    Raises:
        InputError: *field* is not a non-blank text.

    Example:
        >>> from goldeval.scoring.registry import get_scorer
        >>> s = sliced(get_scorer("token_f1"), "difficulty")
        >>> rows = [{"id": "a", "prediction": "x y", "reference": "x y", "difficulty": "easy"},
        ...         {"id": "b", "prediction": "x", "reference": "y", "difficulty": "hard"}]
        >>> r = s.aggregate(s.score_batch(rows, s.configure()), s.configure())
        >>> {k: v["whole_note_f1_mean"] for k, v in r["slices"].items()}
        {'easy': 1.0, 'hard': 0.0}
    """
    if not isinstance(field, str) or not field.strip():
        raise InputError(f"--slice-by: expected the name of a case field (e.g. difficulty), got {shorten(field)}.")
    base = unsliced(scorer)
    cls = type(base)
    sub = _CLASSES.get(cls)
    if sub is None:
        meta: Any = type(cls)  # (ABCMeta: the subclass is made as its class was)
        sub = meta(f"Sliced{cls.__name__}", (SlicedScorer, cls), {"__module__": __name__, "_unsliced_class": cls})
        _CLASSES[cls] = sub
    obj = object.__new__(sub)
    obj.__dict__.update(base.__dict__)
    obj.slice_by = field
    return obj


def unsliced(scorer: Scorer) -> Scorer:
    """The plain scorer behind a :func:`sliced` one (*scorer* itself when it is not sliced)."""
    if not isinstance(scorer, SlicedScorer):
        return scorer
    obj = object.__new__(scorer._unsliced_class)
    obj.__dict__.update({k: v for k, v in scorer.__dict__.items() if k != "slice_by"})
    return obj
