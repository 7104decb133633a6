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

Its ``options`` (name → default, or name → :class:`Option` for a declared type and help) are what
``configure`` takes and what ``goldeval score -O KEY=VALUE`` converts its text by (:meth:`Scorer.options_from_text`).
Its ``metrics`` (name → :class:`MetricSpec`) become gateable under ``--gates``. See ``tests/plugins/`` for a
complete one (exact match) that the tests install.
"""

from __future__ import annotations

import abc
import math
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

import orjson

from goldeval.errors import InputError, given, shorten
from goldeval.io.reading import Row, RowError
from goldeval.scoring.render import render_scorer

__all__ = [
    "ENTRY_POINT_GROUP",
    "SLICE_KEY",
    "MetricSpec",
    "Option",
    "Partial",
    "Scorer",
    "as_option",
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
        unit: ``fraction`` (in [0, 1]) · ``per_100`` · ``count`` · ``kappa`` · ``amount`` · ``cosine`` (in [-1, 1]).
    """

    description: str
    better: str = "higher"
    unit: str = "fraction"


#: What each declared option type accepts, as the messages say it.
_EXPECTED: dict[Any, str] = {str: "text", bool: "true or false", int: "an integer", float: "a number", "json": "a JSON value or text"}
_TRUE = frozenset({"true", "yes", "on", "1"})
_FALSE = frozenset({"false", "no", "off", "0"})


@dataclass(frozen=True, slots=True)
class Option:
    """One option a scorer takes: its default, the type of its value and one line of help.

    A scorer's ``options`` maps each name to an ``Option`` or to a bare default; a bare default declares the type
    of its value (``str``, ``bool``, ``int``, ``float``), and a bare ``None`` the type ``"json"``.

    Attributes:
        default: The value when the option is not given (``None``: the scorer's own fallback).
        type: ``str`` (the text as given: a label ``1`` stays the string ``"1"``) · ``bool`` (``true``/``false``,
            ``yes``/``no``, ``on``/``off``, ``1``/``0``, any case) · ``int`` · ``float`` (finite; an integer is
            accepted) · ``"json"`` (a JSON value when the text parses as one, else the text).
        help: One line saying what the option does.
        choices: The only values allowed (after conversion), or ``None``.

    Example:
        >>> Option(True, bool, "refuse a positive label absent from the file").convert("no")
        False
    """

    default: Any = None
    type: Any = str
    help: str = ""
    choices: tuple[Any, ...] | None = None

    def __post_init__(self) -> None:
        if self.type not in _EXPECTED:
            raise TypeError(f"Option type must be one of str, bool, int, float or 'json', got {self.type!r}.")

    @property
    def expected(self) -> str:
        """What a value must be, in words (``an integer``; ``one of 'a', 'b'``)."""
        if self.choices is not None:
            return "one of " + ", ".join(repr(c) for c in self.choices)
        return _EXPECTED[self.type]

    def convert(self, text: str) -> Any:
        """The value *text* (an ``-O KEY=VALUE`` value) stands for under this option's type.

        Raises:
            ValueError: *text* is not a value of the type (or not one of the choices); the message says what it is
                expected to be.
        """
        value: Any
        if self.type is str:
            value = text
        elif self.type is bool:
            word = text.strip().lower()
            if word not in _TRUE and word not in _FALSE:
                raise ValueError(self.expected)
            value = word in _TRUE
        elif self.type is int:
            try:
                value = int(text.strip())
            except ValueError:
                raise ValueError(self.expected) from None
        elif self.type is float:
            try:
                value = float(text.strip())
            except ValueError:
                raise ValueError(self.expected) from None
            if not math.isfinite(value):
                raise ValueError("a finite number")
        else:
            try:
                value = orjson.loads(text)
            except orjson.JSONDecodeError:
                value = text
        if self.choices is not None and value not in self.choices:
            raise ValueError(self.expected)
        return value


def as_option(declared: Any) -> Option:
    """*declared* (an entry of a scorer's ``options``) as an :class:`Option`: itself, or a bare default whose
    Python type is the option's (``None``: ``"json"``)."""
    if isinstance(declared, Option):
        return declared
    kind = type(declared)
    return Option(declared, kind if kind in (str, bool, int, float) else "json")


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
        options: option name → :class:`Option` (default, type, help), or → a bare default value (its Python type is
            the option's type); :meth:`configure` refuses any other name.
        metrics: gateable metrics this scorer adds (name → :class:`MetricSpec`), registered with the gates.
        headline: The aggregate key ``runs list`` shows.
        lenient_json: Read JSONL lines leniently (:func:`goldeval.io.reading.decode_line`: NaN literals and lone
            surrogate escapes read with the standard library instead of failing the row). Default ``False``: every
            engine reads the rows as :func:`goldeval.io.reading.read_jsonl` does.
        ids_as_text: :meth:`id_of` gives every ASCII string id (no escape) as it is, or ``None`` when it is blank
            (as the default :meth:`id_of` does): the repeated-id pass may then read a JSONL file's ids in C
            (:func:`goldeval.io.ids.scan_jsonl_ids`). Default ``False``; a scorer that keeps the default
            :meth:`id_of` (or one with that rule) may set it.
    """

    name: ClassVar[str]
    version: ClassVar[str] = "1"
    options: ClassVar[Mapping[str, Any]] = {}
    metrics: ClassVar[Mapping[str, MetricSpec]] = {}
    headline: ClassVar[str | None] = None
    #: The aggregate keys the terminal's slice table shows, one column each (``--slice-by``); empty: ``n``,
    #: ``n_scored`` and :attr:`headline`. Every key is in ``results["slices"]`` either way.
    slice_columns: ClassVar[tuple[str, ...]] = ()
    lenient_json: ClassVar[bool] = False
    ids_as_text: ClassVar[bool] = False
    #: How the run store rebuilds ``per_example`` from the recorded cases when the entries were streamed, not kept:
    #: ``"scored"`` — the entries are the ``scored`` cases without ``status`` (the default :meth:`example_entry`);
    #: ``"all"`` — every recorded case, as :meth:`case_record` stored it, is an entry; ``None`` — the entries are
    #: not the cases (the store rebuilds them from the scored cases: each case's values of :attr:`per_example_keys`
    #: when that is set; else the whole records, with a note that they differ).
    per_example_from_cases: ClassVar[str | None] = "scored"
    #: With ``per_example_from_cases = None``: the keys of a ``per_example`` entry when :meth:`example_entry` of a
    #: ``scored`` record is the record's values of these keys, in this order (``None`` for a key it lacks). A
    #: streamed ``per_example`` is then rebuilt from the scored cases as those entries (``keep_keys`` of the run
    #: store's marker), not as the whole records; ``None``: the entries are not such a projection.
    per_example_keys: ClassVar[tuple[str, ...] | None] = None
    #: The report section that shows this scorer's results (:mod:`goldeval.report.model` lays out one per kind):
    #: ``"freetext"`` (per-case F1 and text), ``"labels"`` (confusion, per label), ``"answers"`` (verdicts and the
    #: rows judged) or ``"generic"`` (the aggregate table).
    report_kind: ClassVar[str] = "generic"
    #: Other ``results["scorer"]["name"]`` values whose results this scorer's hooks show (results a command wrote
    #: without a Scorer: ``goldeval llm-judge`` writes data-answer verdicts as ``llm_judge``).
    result_names: ClassVar[tuple[str, ...]] = ()
    #: The families of :data:`goldeval.gates.metrics.METRICS` this scorer's results hold (``labels``, ``free_text``,
    #: ``answers``): a gate on another family's metric is refused before the run. The registry registers them for
    #: :attr:`name` and each of :attr:`result_names`; a scorer's own :attr:`metrics` add the family named after it.
    gate_families: ClassVar[tuple[str, ...]] = ()
    #: The results names (:attr:`name` or one of :attr:`result_names`) whose ``inputs`` map each role to its sha256
    #: only, no path (``goldeval llm-judge --out``): the report then knows the inputs by their hash alone.
    inputs_as_hashes: ClassVar[tuple[str, ...]] = ()
    #: ``None``: the scorer scores the rows of one input file (``goldeval score FILE``, :func:`goldeval.evaluate`).
    #: Else the rows it scores are made by its own command from more than one file (the data-answer judge joins a
    #: case file with an answer file), and this says what to run instead: a one-file run is refused with it.
    one_file_hint: ClassVar[str | None] = None

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
        config = {k: (options[k] if options.get(k) is not None else as_option(v).default) for k, v in self.options.items()}
        config["source"] = source
        return config

    @classmethod
    def option_specs(cls) -> dict[str, Option]:
        """Every option this scorer takes, as an :class:`Option` (name → declared or inferred type), by name."""
        return {name: as_option(declared) for name, declared in sorted(cls.options.items())}

    def options_from_text(self, texts: Mapping[str, str]) -> dict[str, Any]:
        """*texts* (option name → the text of ``-O KEY=VALUE``) converted by this scorer's declared option types,
        ready for :meth:`configure`: ``-O positive=1`` is the label ``"1"`` for ``labels``, ``-O max_rows=10`` the
        integer 10 for ``answer_judge``.

        Args:
            texts: Option name (``-`` read as ``_``) → its value as text.

        Returns:
            Option name → converted value.

        Raises:
            InputError: a name this scorer does not take, or a value its type does not accept; the message names the
                scorer, the option, what was expected and what was given, and lists the options it takes.

        Example:
            >>> get_scorer("labels").options_from_text({"positive": "1", "require-positive": "false"})
            {'positive': '1', 'require_positive': False}
        """
        specs = self.option_specs()
        takes = ", ".join(f"{name} ({spec.expected})" for name, spec in specs.items()) or "none"
        out: dict[str, Any] = {}
        for key, text in texts.items():
            name = key.replace("-", "_")
            spec = specs.get(name)
            if spec is None:
                raise InputError(f"-O {key}={text}: scorer {self.name!r} has no option {name!r}; it takes: {takes}.")
            try:
                out[name] = spec.convert(text)
            except ValueError as exc:
                raise InputError(f"-O {key}={text}: scorer {self.name!r} option {name!r} expects {exc}, got {shorten(text)}. "
                                 f"Give a value of that type; the options it takes: {takes}.") from None
        return out

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

    def results_head(self, config: Mapping[str, Any]) -> dict[str, Any]:
        """The keys a results file holds before ``per_example`` (known before any row is scored). Default:
        ``{"scorer": {"name", "version"}}``."""
        return {"scorer": {"name": self.name, "version": self.version}}

    def render_summary(self, results: Mapping[str, Any], console: Any) -> None:
        """Print the summary of *results* on a rich *console*: what ``score`` shows after scoring and ``runs show``
        shows for a stored run. Default: the scalar aggregates as a table and the first failures
        (:func:`goldeval.scoring.render.render_scorer`)."""
        render_scorer(dict(results), console)

    def score_path(self, path: str, config: Mapping[str, Any], *, recorder: Any = None, keep_cases: bool = True,
                   on_examples: Any = None, on_example_lines: Any = None, on_total: Any = None,
                   progress: Any = None) -> dict[str, Any]:
        """The scorer's batch kernel: score the whole file at *path* in one pass, faster than row by row, with the
        same records and numbers as :meth:`score_batch` + :meth:`finish`. Optional: :attr:`has_batch_kernel` says
        whether a scorer has one; the pipeline uses it for one process on a local file.

        Args:
            path: The input file. config: What :meth:`configure` returned.
            recorder: The run's recorder (cases recorded as they are read; scored cases of a resumed run reused;
                ``finish`` called with the results). keep_cases: Keep ``per_example`` in the results.
            on_examples: Called with lists of ``per_example`` entries, in order.
            on_example_lines: Called with ``(body, n)``: the JSON of *n* entries, one a line, in order.
            on_total: Called once with the rows (or lines) the file holds, before the scoring pass (progress).
            progress: Called with the rows (lines) scored since its last call, as the pass goes (progress).

        Returns:
            The results dict.

        Raises:
            InputError: what the whole input shows to be wrong (no row could be scored, a column no row has…).
        """
        raise NotImplementedError(f"scorer {self.name!r} has no batch kernel (has_batch_kernel is False)")

    @property
    def has_batch_kernel(self) -> bool:
        """Whether this scorer implements :meth:`score_path`."""
        return type(self).score_path is not Scorer.score_path

    def slice_value(self, data: Mapping[str, Any], field: str) -> Any:
        """The value of the slice field *field* in one input row (``--slice-by``; :func:`goldeval.scoring.slices.sliced`),
        ``None`` when the row has none. Default: the row's own field. The data-answer judge reads the case.

        Args:
            data: The row as :meth:`score_batch` receives it (a decoded JSON object, a CSV row). field: The field.

        Returns:
            Any JSON value (:func:`goldeval.scoring.slices.slice_names` names its slices), or ``None``.
        """
        return data.get(field)

    def slice_config(self, config: Mapping[str, Any]) -> Mapping[str, Any]:
        """The configuration one slice's partial is finished under (``--slice-by``). Default: *config*. A labels
        slice may hold no positive at all, so the labels scorer does not require one there."""
        return config

    def check_run_config(self, config: Mapping[str, Any]) -> None:
        """Refuse, before anything is read or recorded, a configuration no run can score under (e.g. no positive
        label). Default: every configuration :meth:`configure` accepted runs.

        Raises:
            InputError: the configuration cannot score any row, with what to pass.
        """
        return None


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


#: The record key of a case's slice (``--slice-by``; :mod:`goldeval.scoring.slices`), kept on a repeated id's record.
SLICE_KEY = "slice"


def duplicate_record(source: str, line: int, rid: str, first: int, *, like: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The record of a row whose id repeats the row at line *first*: unscored, ``duplicate_of`` that line, never
    recorded under the id (the same record in every engine). It keeps the ``slice`` of *like* (the row's own
    record), so a sliced run counts it, unscored, in its slice as in the whole."""
    rec = {"id": rid, "line": line, "status": "unscored", "duplicate_of": first,
           "error": duplicate_error(source, line, rid, first)}
    if like is not None and SLICE_KEY in like:
        rec[SLICE_KEY] = like[SLICE_KEY]
    return rec


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
        return duplicate_record(self.source, line, rid, first, like=rec)


def failure_entry(rec: Mapping[str, Any]) -> dict[str, Any]:
    """The ``failures`` entry of an unscored record: ``{"line", "id", "error"}``."""
    return {"line": rec["line"], "id": rec.get("id"), "error": rec["error"]}


class Reused:
    """A row whose case the resumed run already holds: :meth:`Scorer.score_batch` yields ``record`` as it is.
    ``data`` is the row itself when the engine has it (a sliced run reads its slice field from it)."""

    __slots__ = ("data", "line", "record")

    def __init__(self, line: int, record: dict[str, Any], data: Mapping[str, Any] | None = None) -> None:
        self.line, self.record, self.data = line, record, data


def _reusing(rows: Iterable[Any], previous: Mapping[str, Mapping[str, Any]]) -> Iterator[Any]:
    if not previous:
        yield from rows
        return

    for item in numbered(rows):
        if type(item) is Row:
            rid = item.data.get("id")
            prev = previous.get(str(rid)) if rid is not None else None
            if prev is not None and prev.get("status") == "scored" and prev.get("line") == item.line:
                yield Reused(item.line, {**prev, "reused": True}, item.data)
                continue
        yield item


def counter_merge(a: Counter, b: Mapping[Any, int]) -> None:
    """Add *b*'s counts into *a* (``Counter.update`` without its mapping detour)."""
    for k, v in b.items():
        a[k] += v
