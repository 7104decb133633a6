"""The Scorer of a score of two texts, whole note and per section: what the ROUGE and semantic similarity scorers
share (:class:`PairScorer`), and their mergeable aggregation.

A row is read as token F1 reads it (:func:`goldeval.freetext.scorer.read_pair`: the same fields, options and
messages). Its texts are scored in batches (a subclass's :meth:`PairScorer.score_texts` gets many pairs at once,
where a compiled implementation is fastest):

- **whole note**: two strings are one pair; two objects of sections are scored per section (every section named on
  either side, in the reference's order, then the prediction's extra ones; a missing or null section is empty text)
  and as a whole, each side's sections joined by newlines in that order; a row with one side sectioned and the other
  flat is scored as a whole only (the sectioned side joined by newlines), with a ``note`` that says so.
- **sections**: the section macro-average is taken over the sections with text on at least one side
  (``sections_empty_both`` lists the others), as token F1's.

Records: ``{"status": "scored", "id", "line", "whole_note": {value: float}, "empty"?: side, "sections"?,
"sections_empty_both"?, "section_macro"?, "note"?}`` plus a subclass's flags; unscored rows as token F1's. The
aggregation is exact (:class:`goldeval.scoring.sums.ExactSum`): any split of the rows gives the means
:func:`statistics.mean` gives, to the last digit.
"""

from __future__ import annotations

import abc
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, ClassVar

from goldeval.errors import InputError, shorten
from goldeval.freetext.overlap import section_texts
from goldeval.freetext.scorer import FreeTextConfig, id_text, read_pair
from goldeval.io.reading import Row, RowError
from goldeval.scoring.protocol import Option, Partial, RepeatedIds, Reused, Scorer, failure_entry
from goldeval.scoring.sums import ExactSum

__all__ = ["PairScorer", "PairPartial"]

#: Rows scored per batch: large enough for a compiled batch call to pay, small enough to stream.
CHUNK = 256
_MIXED = "one side has sections and the other is flat text: whole note only, sections not scored"


class PairScorer(Scorer):
    """A scorer of (prediction, reference) text pairs: whole note, sections, macro means. Subclass it.

    Class attributes (besides :class:`~goldeval.scoring.protocol.Scorer`'s):
        values: The keys of one pair's scores (``("precision", "recall", "f1")``; ``("similarity",)``).
        report_kind: ``"freetext"`` when :attr:`values` holds ``f1`` (the report's free-text view reads
            ``whole_note.f1``).

    A subclass implements :meth:`score_texts`, :meth:`has_text` and :meth:`aggregate_key`, and may add flags to a
    record (:meth:`flags`) and keys to the results (:meth:`results_head`).
    """

    values: ClassVar[tuple[str, ...]] = ()
    lenient_json = True  # rows are read as token F1 reads them (goldeval.io.reading.decode_line)
    options: ClassVar[Mapping[str, Any]] = {
        "prediction_field": Option("prediction", str, "field or column with the prediction (text or sections)"),
        "reference_field": Option("reference", str, "field or column with the reference (text or sections)"),
        "id_field": Option("id", str, "field or column with the stable row id"),
    }

    # -- what a subclass says ------------------------------------------------------------------------------------

    @abc.abstractmethod
    def score_texts(self, predictions: list[str], references: list[str], config: Mapping[str, Any]) -> list[dict[str, float]]:
        """The scores of each pair (``{value: float}`` for every name in :attr:`values`), in order."""

    @abc.abstractmethod
    def has_text(self, text: str, config: Mapping[str, Any]) -> bool:
        """Whether *text* holds anything this scorer reads (a section without it on both sides is left out of the
        section macro-average; a side without it is flagged ``empty``)."""

    @abc.abstractmethod
    def aggregate_key(self, value: str, *, section: bool = False) -> str:
        """The ``aggregate`` key of the macro mean of *value* (of the section macro when *section*)."""

    def flags(self, prediction: str, reference: str, config: Mapping[str, Any]) -> dict[str, Any]:
        """Extra keys of a scored record for the whole-note pair (default: none)."""
        return {}

    # -- the Scorer ----------------------------------------------------------------------------------------------

    id_of = staticmethod(id_text)
    ids_as_text = True  # (id_text keeps an ASCII id as it is, blank ones refused: the first pass reads them in C)

    def score_batch(self, rows: Iterable[Any], config: Mapping[str, Any]) -> Iterator[dict[str, Any]]:
        cfg = FreeTextConfig(config["prediction_field"], config["reference_field"], config["id_field"])
        src = config.get("source") or "rows"
        check = RepeatedIds(src).check
        buffer: list[Any] = []
        for i, item in enumerate(rows, start=1):
            kind = type(item)
            if kind is Row:
                buffer.append(self._read(item.data, item.line, cfg, src))
            elif kind is RowError:
                buffer.append({"id": item.id, "line": item.line, "status": "unscored", "error": item.error})
            elif kind is Reused:
                buffer.append(item.record)
            elif isinstance(item, dict):
                buffer.append(self._read(item, i, cfg, src))
            else:
                buffer.append({"id": None, "line": i, "status": "unscored", "error": f"{src}:{i}: expected an object, got {shorten(item)}."})
            if len(buffer) >= CHUNK:
                yield from map(check, self._flush(buffer, config))
                buffer = []
        if buffer:
            yield from map(check, self._flush(buffer, config))

    def _read(self, data: dict[str, Any], line: int, cfg: FreeTextConfig, src: str) -> Any:
        """A pending pair ``(id, line, where, pred, ref)`` or the row's unscored record."""
        read = read_pair(data, line, cfg, src)
        if isinstance(read, dict):
            return read
        rid, pred, ref = read
        return (rid, line, f"{src}:{line}", pred, ref)

    def _flush(self, buffer: list[Any], config: Mapping[str, Any]) -> list[dict[str, Any]]:
        """The records of *buffer* (pending pairs scored in one call of :meth:`score_texts`), in order."""
        preds: list[str] = []
        refs: list[str] = []
        plans: list[Any] = []  # per item: a record, or (rid, line, whole index, [(name, index)] | None, note)
        for item in buffer:
            if isinstance(item, dict):
                plans.append(item)
                continue
            rid, line, where, pred, ref = item
            try:
                sections = None
                note = None
                if isinstance(pred, dict) and isinstance(ref, dict):
                    p, r = section_texts(pred, "prediction"), section_texts(ref, "reference")
                    names = list(r) + [n for n in p if n not in r]
                    sections = []
                    for name in names:
                        sections.append((name, len(preds)))
                        preds.append(p.get(name, ""))
                        refs.append(r.get(name, ""))
                    whole_p = "\n".join(p.get(n, "") for n in names)
                    whole_r = "\n".join(r.get(n, "") for n in names)
                else:
                    whole_p = pred if isinstance(pred, str) else "\n".join(section_texts(pred, "prediction").values())
                    whole_r = ref if isinstance(ref, str) else "\n".join(section_texts(ref, "reference").values())
                    if not (isinstance(pred, str) and isinstance(ref, str)):
                        note = _MIXED
            except InputError as exc:
                plans.append({"id": rid, "line": line, "status": "unscored", "error": f"{where}: {exc}"})
                continue
            plans.append((rid, line, len(preds), sections, note))
            preds.append(whole_p)
            refs.append(whole_r)
        scores = self.score_texts(preds, refs, config) if preds else []
        out: list[dict[str, Any]] = []
        for plan in plans:
            if isinstance(plan, dict):
                out.append(plan)
                continue
            rid, line, w, sections, note = plan
            rec: dict[str, Any] = {"status": "scored", "id": rid, "line": line, "whole_note": scores[w]}
            has_p, has_r = self.has_text(preds[w], config), self.has_text(refs[w], config)
            if not (has_p and has_r):
                rec["empty"] = "both" if not (has_p or has_r) else ("prediction" if not has_p else "reference")
            rec.update(self.flags(preds[w], refs[w], config))
            if sections is not None:
                per = {name: scores[k] for name, k in sections}
                empty_both = [name for name, k in sections
                              if not self.has_text(preds[k], config) and not self.has_text(refs[k], config)]
                scored = [name for name, _ in sections if name not in empty_both]
                rec["sections"] = per
                rec["sections_empty_both"] = empty_both
                rec["section_macro"] = ({v: ExactSum(per[n][v] for n in scored).mean() for v in self.values}
                                        if scored else None)
            if note is not None:
                rec["note"] = note
            out.append(rec)
        return out

    def new_partial(self, config: Mapping[str, Any], *, keep_cases: bool = True) -> Partial:
        return PairPartial(self.values, keep_cases)

    def finish(self, partial: Partial, config: Mapping[str, Any]) -> dict[str, Any]:
        assert isinstance(partial, PairPartial)
        p = partial
        first = self.values[0]
        n = p.sums[first].count
        agg: dict[str, Any] = {"n": n, "n_scored": n, "n_failed": len(p.failures), "n_rows": p.n_rows, "elapsed_sec": p.elapsed}
        for v in self.values:
            agg[self.aggregate_key(v)] = p.sums[v].mean()
        agg["headline"] = self.headline
        agg["n_with_empty_text"] = p.n_empty
        agg.update(p.extra_counts)
        agg["undefined"] = {}
        if not n:
            reason = "no row could be scored" if p.n_rows else "the file has no rows"
            for v in self.values:
                agg["undefined"][self.aggregate_key(v)] = reason
        if p.n_sectioned:
            agg["n_sectioned"] = p.n_sectioned
            agg["n_section_scored"] = p.macro[first].count
            for v in self.values:
                key = self.aggregate_key(v, section=True)
                agg[key] = p.macro[v].mean()
                if not p.macro[first].count:
                    agg["undefined"][key] = "no example has text in any section"
            agg["sections"] = {
                s: {"n": sums[first].count, "n_empty_both": p.n_sectioned - sums[first].count,
                    **{f"{v}_mean": sums[v].mean() for v in self.values}}
                for s, sums in sorted(p.sections.items(), key=lambda kv: p.section_first[kv[0]])
            }
        return {
            **self.results_head(config),
            "aggregate": agg,
            "per_example": p.per_example,
            "failures": sorted(p.failures, key=lambda f: f["line"]),
        }

    def results_head(self, config: Mapping[str, Any]) -> dict[str, Any]:
        """``scorer`` and ``config`` (the options as resolved): the first keys of the results."""
        return {"scorer": {"name": self.name, "version": self.version}, "config": {k: config[k] for k in self.options}}


class PairPartial(Partial):
    """Running exact sums of the whole-note, section-macro and per-section scores, counts, failures;
    ``per_example`` only with ``keep_cases``. Counts of the records' flags (``empty``, and a subclass's flags whose
    value is a mapping: ``n_with_<flag>``, with the first by line as ``first_<flag>``)."""

    def __init__(self, values: tuple[str, ...], keep_cases: bool) -> None:
        self.values = values
        self.keep = keep_cases
        self.per_example: list[dict[str, Any]] = []
        self.failures: list[dict[str, Any]] = []
        self.n_rows = 0
        self.n_empty = 0
        self.n_sectioned = 0
        self.elapsed = 0.0
        self.sums = {v: ExactSum() for v in values}
        self.macro = {v: ExactSum() for v in values}
        self.sections: dict[str, dict[str, ExactSum]] = {}
        self.section_first: dict[str, int] = {}
        self.flag_counts: dict[str, int] = {}
        self.flag_first: dict[str, dict[str, Any]] = {}

    @property
    def extra_counts(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for flag, count in sorted(self.flag_counts.items()):
            out[f"n_with_{flag}_text" if flag == "unreadable" else f"n_with_{flag}"] = count
            first = self.flag_first.get(flag)
            if first is not None:
                out[f"first_{flag}"] = {k: v for k, v in first.items() if k != "line"}
        return out

    def add(self, rec: Mapping[str, Any]) -> None:
        self.n_rows += 1
        if rec["status"] != "scored":
            self.failures.append(failure_entry(rec))
            return
        wn = rec["whole_note"]
        for v in self.values:
            self.sums[v].add_float(wn[v])
        if "empty" in rec:
            self.n_empty += 1
        for flag, value in rec.items():
            if isinstance(value, Mapping) and flag not in ("whole_note", "sections", "section_macro"):
                self.flag_counts[flag] = self.flag_counts.get(flag, 0) + 1
                first = self.flag_first.get(flag)
                if first is None or rec["line"] < first["line"]:
                    self.flag_first[flag] = {"id": rec["id"], **value, "line": rec["line"]}
        if self.keep:
            self.per_example.append({k: v for k, v in rec.items() if k != "status" and k != "reused"})
        sections = rec.get("sections")
        if sections is not None:
            self.n_sectioned += 1
            macro = rec.get("section_macro")
            if macro is not None:
                for v in self.values:
                    self.macro[v].add_float(macro[v])
            empty = rec.get("sections_empty_both") or ()
            for name, scores in sections.items():
                acc = self.sections.get(name)
                if acc is None:
                    acc = self.sections[name] = {v: ExactSum() for v in self.values}
                    self.section_first[name] = rec["line"]
                if name not in empty:
                    for v in self.values:
                        acc[v].add_float(scores[v])

    def merge(self, other: Partial) -> None:
        assert isinstance(other, PairPartial)
        self.per_example.extend(other.per_example)
        self.failures.extend(other.failures)
        self.n_rows += other.n_rows
        self.n_empty += other.n_empty
        self.n_sectioned += other.n_sectioned
        self.elapsed += other.elapsed
        for v in self.values:
            self.sums[v].merge(other.sums[v])
            self.macro[v].merge(other.macro[v])
        for flag, count in other.flag_counts.items():
            self.flag_counts[flag] = self.flag_counts.get(flag, 0) + count
        for flag, first in other.flag_first.items():
            mine = self.flag_first.get(flag)
            if mine is None or first["line"] < mine["line"]:
                self.flag_first[flag] = first
        for name, line in other.section_first.items():
            if name not in self.section_first or line < self.section_first[name]:
                self.section_first[name] = line
        for name, sums in other.sections.items():
            mine_s = self.sections.setdefault(name, {v: ExactSum() for v in self.values})
            for v in self.values:
                mine_s[v].merge(sums[v])
