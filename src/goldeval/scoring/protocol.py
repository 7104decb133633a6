"""The one Scorer interface: ``score_batch(rows, config) -> per-case records``, ``aggregate(records, config) -> results``.

Every scorer — the three built-in ones (``token_f1``, ``labels``, ``answer_judge``) and any third-party one
registered under the entry point group ``goldeval.scorers`` — is a :class:`Scorer`. The CLI
(``goldeval score --scorer NAME``), the run store, the gates, the reports and the engines (one process here, Spark
in :mod:`goldeval.engines.spark`) speak only to it::

    scorer = get_scorer("token_f1")
    config = scorer.configure(tokenizer="openscribe")         # options checked, defaults filled (a JSON-ready dict)
    records = scorer.score_batch(read_rows("preds.jsonl"), config)   # pure: no store, no printing, no exit
    results = scorer.aggregate(records, config)               # the results dict today's `goldeval score` writes

**Per-case records** (one per input row, in row order; JSON-ready dicts)::

    {"id": str | None, "line": int, "status": "scored" | "unscored", "error"?: str, "duplicate_of"?: int, ...}

``line`` is the row's 1-based line (JSONL), line with the header as 1 (CSV) or 1-based row index (Parquet, rows in
memory). An ``unscored`` record carries the reason in ``error``, with its line, and counts in ``n_failed``; it is
never a pass or a fail. A record whose id repeats an earlier row's carries ``duplicate_of`` (that row's line) and
is never recorded under the id (the store keys cases by id). The rest is the scorer's own: ``whole_note`` /
``tokens`` for token F1, ``gold`` / ``pred`` / ``outcome`` for labels, the verdict fields for the judge.

**Aggregation is mergeable**, so an engine can aggregate where the records are and merge on one machine::

    part = scorer.new_partial(config); part.add(record) ...   # per partition: bounded state (counts, exact sums)
    part.merge(other_part)                                    # exact: order and split never change the result
    results = scorer.finish(part, config)                     # == scorer.aggregate(all records, config)

Means are exact running sums (:class:`goldeval.scoring.sums.ExactSum`, rounded once), so any split gives the mean
:func:`statistics.mean` gives, to the last digit (PriMock57 ``whole_note_f1_mean`` 0.27861937781204515).
``keep_cases=False`` leaves ``per_example`` out of the state (an engine keeps the records where they are).

A third-party scorer subclasses :class:`Scorer`, and its distribution declares::

    [project.entry-points."goldeval.scorers"]
    exact_match = "my_package.module:ExactMatch"

Its ``metrics`` (name → :class:`MetricSpec`) become gateable under ``--gates``. See ``tests/plugins/`` for a
complete one (exact match) that the tests install.
"""

from __future__ import annotations

import abc
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from goldeval.errors import InputError, given, shorten
from goldeval.io.reading import Row, RowError

__all__ = [
    "ENTRY_POINT_GROUP",
    "MetricSpec",
    "Partial",
    "Scorer",
    "numbered",
]

#: The entry point group third-party scorers register under.
ENTRY_POINT_GROUP = "goldeval.scorers"


@dataclass(frozen=True, slots=True)
class MetricSpec:
    """A gateable metric a scorer adds to ``aggregate`` (see :data:`goldeval.gates.metrics.METRICS`).

    Attributes:
        description: One line for help texts and gate messages.
        better: ``higher`` or ``lower``.
        unit: ``fraction`` (in [0, 1]) · ``per_100`` · ``count`` · ``kappa`` · ``amount``.
    """

    description: str
    better: str = "higher"
    unit: str = "fraction"


class Partial(abc.ABC):
    """Mergeable aggregation state of one scorer: :meth:`add` records, :meth:`merge` another partial.

    Must be picklable (engines ship it between processes) and bounded in size apart from what it is asked to keep
    (``per_example`` with ``keep_cases``; failures and warnings, one entry per bad row)."""

    @abc.abstractmethod
    def add(self, record: Mapping[str, Any]) -> None:
        """Fold one per-case record in."""

    @abc.abstractmethod
    def merge(self, other: Partial) -> None:
        """Fold *other* (the same scorer's partial over other records) in, exactly."""

    def update(self, records: Iterable[Mapping[str, Any]]) -> Partial:
        """:meth:`add` every record; returns ``self``."""
        for rec in records:
            self.add(rec)
        return self


class Scorer(abc.ABC):
    """A scorer: options, per-row scoring, mergeable aggregation. Subclass it for a new scorer.

    Class attributes:
        name: The scorer's name (``goldeval score --scorer NAME``; ``results["scorer"]["name"]``; the store's
            scorer column). version: Its version (part of a run's key).
        options: option name → default value; :meth:`configure` refuses any other name.
        metrics: gateable metrics this scorer adds (name → :class:`MetricSpec`), registered with the gates.
        headline: The aggregate key ``runs list`` shows.
        lenient_json: Read JSONL lines leniently (:func:`goldeval.io.reading.decode_line`: NaN literals and lone
            surrogate escapes read with the standard library instead of failing the row). Default ``False``: every
            engine reads the rows as :func:`goldeval.io.reading.read_jsonl` does.
    """

    name: ClassVar[str]
    version: ClassVar[str] = "1"
    options: ClassVar[Mapping[str, Any]] = {}
    metrics: ClassVar[Mapping[str, MetricSpec]] = {}
    headline: ClassVar[str | None] = None
    lenient_json: ClassVar[bool] = False
    #: How the run store rebuilds ``per_example`` from the recorded cases when the entries were streamed, not kept:
    #: ``"scored"`` — the entries are the ``scored`` cases without ``status`` (the default :meth:`example_entry`);
    #: ``"all"`` — every recorded case, as :meth:`case_record` stored it, is an entry; ``None`` — the entries are
    #: not the cases (the store then rebuilds them from the scored cases, and says they differ).
    per_example_from_cases: ClassVar[str | None] = "scored"

    def configure(self, **options: Any) -> dict[str, Any]:
        """The resolved configuration: the defaults of :attr:`options` overridden by *options* (``None`` keeps the
        default), plus ``source`` (the input's name in messages, default ``"rows"``).

        Raises:
            InputError: an option this scorer does not take (with the ones it takes).
        """
        source = options.pop("source", None) or "rows"
        unknown = sorted(set(options) - set(self.options))
        if unknown:
            takes = ", ".join(sorted(self.options)) or "none"
            raise InputError(f"scorer {self.name!r}: unknown option(s) {', '.join(unknown)}; it takes: {takes}.")
        config = {k: (options[k] if options.get(k) is not None else v) for k, v in self.options.items()}
        config["source"] = source
        return config

    @abc.abstractmethod
    def score_batch(self, rows: Iterable[Any], config: Mapping[str, Any]) -> Iterator[dict[str, Any]]:
        """Per-case records (see the module docstring), one per row, in order; pure (no store, no output).

        Args:
            rows: :class:`goldeval.io.reading.Row` / :class:`goldeval.io.reading.RowError` items (as :func:`goldeval.io.reading.read_rows`
                yields them), or plain dicts (numbered from 1; see :func:`numbered`); an engine resuming a run
                also passes :class:`Reused` items, whose record is yielded as it is.
            config: What :meth:`configure` returned.

        Yields:
            Exactly one record per item, in order (an engine pairs them by position and line): a ``RowError`` or
            a row that cannot be scored is an ``unscored`` record with its reason in ``error`` (``source:line:
            what was expected, what was given, what to do``), never an exception.

        Raises:
            InputError: only what no single row causes and no row could be scored under (a database that cannot
                be opened); the engines let it go up (the CLI: exit 2).
        """

    @abc.abstractmethod
    def new_partial(self, config: Mapping[str, Any], *, keep_cases: bool = True) -> Partial:
        """An empty aggregation state (``keep_cases``: keep the records for ``per_example``)."""

    @abc.abstractmethod
    def finish(self, partial: Partial, config: Mapping[str, Any]) -> dict[str, Any]:
        """The results dict (``scorer``, ``config``, ``aggregate``, ``per_example``, ``failures``, …).

        Raises:
            InputError: what the whole input shows to be wrong (a column no row has, no positive label…).
        """

    def example_entry(self, record: Mapping[str, Any]) -> dict[str, Any] | None:
        """The ``per_example`` entry of one record (what ``--out`` streams), or ``None`` when the record has none.
        Default: a ``scored`` record without its ``status``. A partial kept with ``keep_cases`` holds these."""
        if record.get("status") != "scored":
            return None
        return {k: v for k, v in record.items() if k != "status" and k != "reused"}

    def case_record(self, record: Mapping[str, Any]) -> Mapping[str, Any]:
        """What the run store keeps for a record (``Recorder.record``; what a resumed run reuses). Default: the
        record itself."""
        return record

    def id_of(self, raw: Any) -> str | None:
        """The id text of a row whose id field holds *raw* (``None``: no usable id), as :meth:`score_batch` reads
        it: the engines' repeated-id pass applies the same rule. Default: :func:`check_id`'s."""
        if isinstance(raw, bool) or not isinstance(raw, (str, int)) or (isinstance(raw, str) and not raw.strip()):
            return None
        return str(raw)

    def aggregate(self, records: Iterable[Mapping[str, Any]], config: Mapping[str, Any], *, keep_cases: bool = True) -> dict[str, Any]:
        """:meth:`finish` of one partial over *records* (streamed: the records are not kept unless ``keep_cases``)."""
        return self.finish(self.new_partial(config, keep_cases=keep_cases).update(records), config)

    def store_config(self, config: Mapping[str, Any]) -> dict[str, Any]:
        """The configuration recorded with a run and hashed into its key (``source`` left out)."""
        return {k: v for k, v in config.items() if k != "source"}


# ---------------------------------------------------------------------------------------------------------------
# rows


def numbered(rows: Iterable[Any], source: str = "rows") -> Iterator[Any]:
    """*rows* as :class:`~goldeval.io.reading.Row` / :class:`~goldeval.io.reading.RowError` items: those pass through; a plain
    dict becomes ``Row(i, dict)`` with *i* its 1-based position; anything else a ``RowError`` naming it."""

    for i, r in enumerate(rows, start=1):
        if isinstance(r, (Row, RowError, Reused)):
            yield r
        elif isinstance(r, dict):
            yield Row(i, r)
        else:
            yield RowError(i, None, f"{source}:{i}: expected an object, got {shorten(r)}.")


def check_id(data: Mapping[str, Any], id_field: str, where: str, option: str = "--id-field") -> tuple[str | None, str | None]:
    """``(id, None)`` for a usable id (a non-empty string, or an integer read as its decimal string), else
    ``(None, error)``."""
    raw = data.get(id_field)
    if isinstance(raw, bool) or not isinstance(raw, (str, int)) or (isinstance(raw, str) and not raw.strip()):
        got = given(data, id_field)
        return None, (f"{where}: field '{id_field}' must be a non-empty string (or an integer), {got}. Give every row a "
                      f"stable id, or name the id field with {option}.")
    return str(raw), None


def duplicate_error(source: str, line: int, rid: str, first: int) -> str:
    """The message of a row whose id repeats the row at line *first* (the same words in every engine)."""
    return f"{source}:{line}: id {rid!r} repeats line {first}. Ids must be unique; remove or rename the duplicate."


def duplicate_record(source: str, line: int, rid: str, first: int) -> dict[str, Any]:
    """The record of a row whose id repeats the row at line *first*: unscored, ``duplicate_of`` that line, never
    recorded under the id (the same record in every engine)."""
    return {"id": rid, "line": line, "status": "unscored", "duplicate_of": first,
            "error": duplicate_error(source, line, rid, first)}


class RepeatedIds:
    """Marks the records whose id repeats an earlier one (``duplicate_of``, status ``unscored``)."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.seen: dict[str, int] = {}

    def check(self, rec: dict[str, Any]) -> dict[str, Any]:
        rid = rec.get("id")
        if rid is None:
            return rec
        line = rec["line"]
        first = self.seen.setdefault(rid, line)
        if first == line:  # (lines are unique: only the row itself has its line)
            return rec
        return duplicate_record(self.source, line, rid, first)


def failure_entry(rec: Mapping[str, Any]) -> dict[str, Any]:
    """The ``failures`` entry of an unscored record: ``{"line", "id", "error"}``."""
    return {"line": rec["line"], "id": rec.get("id"), "error": rec["error"]}


class Reused:
    """A row whose case the resumed run already holds: :meth:`Scorer.score_batch` yields ``record`` as it is."""

    __slots__ = ("line", "record")

    def __init__(self, line: int, record: dict[str, Any]) -> None:
        self.line, self.record = line, record


def _reusing(rows: Iterable[Any], previous: Mapping[str, Mapping[str, Any]]) -> Iterator[Any]:
    if not previous:
        yield from rows
        return

    for item in numbered(rows):
        if type(item) is Row:
            rid = item.data.get("id")
            prev = previous.get(str(rid)) if rid is not None else None
            if prev is not None and prev.get("status") == "scored" and prev.get("line") == item.line:
                yield Reused(item.line, {**prev, "reused": True})
                continue
        yield item


def counter_merge(a: Counter, b: Mapping[Any, int]) -> None:
    """Add *b*'s counts into *a* (``Counter.update`` without its mapping detour)."""
    for k, v in b.items():
        a[k] += v
