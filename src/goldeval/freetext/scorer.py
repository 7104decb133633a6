"""Token F1 of free text, one row at a time, behind the one Scorer interface (:class:`TokenF1`).

:func:`score_row` scores one decoded row (whole note, sections, or a mixed row) into a per-case record;
:class:`TokenF1` is the :class:`goldeval.scoring.protocol.Scorer` every engine runs (the local engine behind
``goldeval score`` and :func:`goldeval.pipeline.files.score_file`, and Spark). Its partial is the one aggregation of free
text: exact running sums (:class:`goldeval.scoring.sums.ExactSum`), so the means equal :func:`statistics.mean` of the
per-row values to the last digit (PriMock57 ``whole_note_f1_mean`` 0.27861937781204515), however the rows are split.

Source: output keys of Open-Scribe ``eval/run_eval.py``; scores as :func:`goldeval.token_f1`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import asdict, dataclass
from typing import Any

from goldeval.errors import InputError, given, row_fields, shorten
from goldeval.freetext.overlap import (
    overlap_of_texts,
    refuse_unreadable,
    section_f1,
    section_texts,
)
from goldeval.freetext.render import render_freetext
from goldeval.freetext.tokens import Tokenizer, get_tokenizer, split_word
from goldeval.io.reading import BigInt, Row, RowError
from goldeval.scoring.protocol import Option, Partial, RepeatedIds, Reused, Scorer, failure_entry
from goldeval.scoring.sums import ExactSum

try:  # the optional C reader-scorer of plain rows (see _fast.c); score_row stays the definition and the fallback
    from goldeval._fast import f1_lines as _fast_f1_lines
except ImportError:  # pragma: no cover - the extension is optional
    _fast_f1_lines = None

__all__ = ["FreeTextConfig", "TokenF1", "id_text", "read_pair", "results_head", "score_row", "SCORER_NAME", "SCORER_VERSION"]

SCORER_NAME = "token_f1"
SCORER_VERSION = "1"
_M = ("f1", "precision", "recall")


@dataclass(frozen=True, slots=True)
class FreeTextConfig:
    """What to read and how to tokenize.

    Attributes:
        prediction_field: Field holding the prediction (a string, or an object of sections). Default ``prediction``.
        reference_field: Field holding the reference, same shapes. Default ``reference``.
        id_field: Field holding the stable row id. Default ``id``.
        tokenizer: Token rule name (``openscribe`` default, or ``unicode``).
    """

    prediction_field: str = "prediction"
    reference_field: str = "reference"
    id_field: str = "id"
    tokenizer: str = "openscribe"

    def to_dict(self) -> dict[str, str]:
        return asdict(self)


def results_head(tokenizer: str | Tokenizer = "openscribe", **fields: str) -> dict[str, Any]:
    """The first keys of a free-text results dict, known before any row is scored: ``{"scorer", "tokenizer",
    "config"}`` (what a streaming writer puts before ``per_example``). *fields*: ``prediction_field``,
    ``reference_field``, ``id_field`` as for :func:`goldeval.pipeline.files.score_file`.

    Raises:
        InputError: unknown tokenizer, or a keyword :func:`goldeval.pipeline.files.score_file` does not take.
    """
    tok = get_tokenizer(tokenizer)
    try:
        cfg = FreeTextConfig(**fields, tokenizer=tok.name)
    except TypeError as exc:
        raise InputError(f"results_head: {exc}; it takes prediction_field, reference_field and id_field.") from None
    return {
        "scorer": {"name": SCORER_NAME, "version": SCORER_VERSION},
        "tokenizer": {"name": tok.name, "version": tok.version, "description": tok.description},
        "config": cfg.to_dict(),
    }


# ---------------------------------------------------------------------------------------------------------------
# One row


def _scores(ov) -> dict[str, float]:
    return {"precision": ov.precision, "recall": ov.recall, "f1": ov.f1}


def read_pair(data: dict[str, Any], line: int, cfg: FreeTextConfig, src: str) -> tuple[str, str | dict, str | dict] | dict[str, Any]:
    """The id, prediction and reference of one decoded free-text row, or its ``unscored`` record.

    The checks every free-text scorer makes before it scores (token F1, ROUGE, semantic similarity), with the same
    messages: a usable id, both fields present, not null, a string or an object of sections, section names that
    JSON can hold (when both sides have sections).

    Args:
        data: The row (a JSON object). line: Its 1-based line (row index), for messages. cfg: The fields to read
            (``tokenizer`` is not used here). src: The input's name in messages.

    Returns:
        ``(id, prediction, reference)`` (each side a ``str`` or a ``dict`` of sections), or the unscored record
        ``{"id", "line", "status": "unscored", "error"}`` (where, what was expected, what was given, what to do).
    """
    where = f"{src}:{line}"
    raw_id = data.get(cfg.id_field)
    if isinstance(raw_id, bool) or not isinstance(raw_id, (str, int)) or (isinstance(raw_id, str) and not raw_id.strip()):
        got = given(data, cfg.id_field)
        return _failure(
            line, None,
            f"{where}: field '{cfg.id_field}' must be a non-empty string (or an integer), {got}. Give every row a stable id, "
            "or name the id field with --id-field.",
        )
    rid = str(raw_id)
    bad = _lone_surrogate(rid)
    if bad is not None:  # read by the standard library's parser (see goldeval.io.reading.decode_line): no JSON output could hold this id
        return _failure(
            line, None,
            f"{where}: field '{cfg.id_field}' must be Unicode text, got {shorten(raw_id)} (the lone surrogate escape {bad} "
            "has no UTF-8 form, so no result could name the row). Fix the id.",
        )
    values = []
    for field, side in ((cfg.prediction_field, "prediction"), (cfg.reference_field, "reference")):
        if field not in data:
            return _failure(
                line, rid,
                f"{where}: field '{field}' is missing ({row_fields(data)}). Add it, or name the {side} field with --{side}-field"
                + (". A row of 'gold' and 'pred' labels is scored by goldeval labels FILE --positive LABEL (or score "
                   "--scorer labels)." if "gold" in data and "pred" in data else "."),
            )
        value = data[field]
        if value is None:
            upstream = data.get("error")
            note = ""
            if isinstance(upstream, str):
                note = f" (the row's error says: \"{upstream[:117] + '...' if len(upstream) > 120 else upstream}\")"
            return _failure(line, rid, f"{where}: field '{field}' is null{note}; a row without a {side} cannot be scored and is counted in n_failed.")
        if not isinstance(value, (str, dict)) or type(value) is BigInt:  # an integer past 64 bits is not a text
            return _failure(
                line, rid,
                f"{where}: field '{field}' must be a string or an object of sections, got {shorten(value)}. "
                f"Fix the row or pass --{side}-field.",
            )
        values.append(value)
    pred, ref = values
    if isinstance(pred, dict) and isinstance(ref, dict):
        for field, sections in ((cfg.prediction_field, pred), (cfg.reference_field, ref)):
            for name in sections:
                bad = _lone_surrogate(name) if isinstance(name, str) else None
                if bad is not None:  # section names are keys of the results: they must be writable as JSON
                    return _failure(
                        line, rid,
                        f"{where}: field '{field}' has a section name that is not Unicode text, {shorten(name)} (the "
                        f"lone surrogate escape {bad} has no UTF-8 form, so no result could name the section). Fix the name.",
                    )
    return rid, pred, ref


def score_row(data: dict[str, Any], line: int, cfg: FreeTextConfig, tok: Tokenizer, src: str) -> dict[str, Any]:
    """Token F1 of one decoded row: its per-case record (see :class:`TokenF1`).

    Args:
        data: The row (a JSON object). line: Its 1-based line (row index), for messages. cfg: Fields and tokenizer.
        tok: The tokenizer object of ``cfg.tokenizer``. src: The input's name in messages.

    Returns:
        A scored record (status first, then ``id``, ``line``, ``whole_note`` {precision, recall, f1}, ``tokens``
        {prediction, reference, overlap}; ``unreadable`` / ``split_word`` flags; ``sections``,
        ``sections_empty_both``, ``section_macro`` for sectioned rows; ``note`` for a mixed row), or an unscored
        one ``{"id", "line", "status": "unscored", "error"}`` with the reason (where, what was expected, what was
        given, what to do).
    """
    where = f"{src}:{line}"
    read = read_pair(data, line, cfg, src)
    if isinstance(read, dict):
        return read
    rid, pred, ref = read
    try:
        if isinstance(pred, str) and isinstance(ref, str):
            ov = overlap_of_texts(pred, ref, tok)
            if ov.both_empty:
                refuse_unreadable(tok, {"prediction": pred, "reference": ref})
            rec = {"status": "scored", "id": rid, "line": line, "whole_note": _scores(ov), "tokens": _counts(ov)}
            for side, text in (("prediction", pred), ("reference", ref)):
                ch = tok.unreadable(text)
                if ch is not None:  # scored on the tokens the rule can read; say that some text was not read
                    rec["unreadable"] = {"side": side, "char": ch}
                    break
            if "unreadable" in rec and tok.name == "openscribe":  # only then can a word be split at a non-ASCII letter
                for side, text in (("prediction", pred), ("reference", ref)):
                    word = split_word(text)
                    if word is not None:
                        rec["split_word"] = {"side": side, "word": word}
                        break
            return rec
        if isinstance(pred, dict) and isinstance(ref, dict):
            so = section_f1(pred, ref, tokenizer=tok)
            return {
                "status": "scored",
                "id": rid,
                "line": line,
                "whole_note": _scores(so.whole_text),
                "tokens": _counts(so.whole_text),
                "sections": {name: _scores(ov) for name, ov in so.per_section.items()},
                "sections_empty_both": [n for n, ov in so.per_section.items() if ov.both_empty],
                "section_macro": None
                if so.macro_f1 is None
                else {"precision": so.macro_precision, "recall": so.macro_recall, "f1": so.macro_f1},
            }
        # one side sectioned, the other flat: score the whole note on the pooled text (sections checked as usual)
        pred_text = pred if isinstance(pred, str) else "\n".join(section_texts(pred, "prediction").values())
        ref_text = ref if isinstance(ref, str) else "\n".join(section_texts(ref, "reference").values())
        ov = overlap_of_texts(pred_text, ref_text, tok)
        if ov.both_empty:
            refuse_unreadable(tok, {"prediction": pred_text, "reference": ref_text})
        return {"status": "scored", "id": rid, "line": line, "whole_note": _scores(ov), "tokens": _counts(ov),
                "note": "one side has sections and the other is flat text: whole note only, sections not scored"}
    except InputError as exc:  # includes UnreadableTextError
        return _failure(line, rid, f"{where}: {exc}")


def _lone_surrogate(text: str) -> str | None:
    """The first lone surrogate in *text* as an escape (``\\ud800``), or ``None`` when the text is Unicode that
    UTF-8 can encode. The standard library's JSON parser reads ``"\\ud800"`` escapes that orjson refuses."""
    if text.isascii():
        return None
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        return f"\\u{ord(text[exc.start]):04x}"
    return None


def _counts(ov) -> dict[str, int]:
    return {"prediction": ov.n_prediction, "reference": ov.n_reference, "overlap": ov.n_overlap}


def _failure(line: int, rid: str | None, error: str) -> dict[str, Any]:
    return {"id": rid, "line": line, "status": "unscored", "error": error}




def id_text(raw: Any) -> str | None:
    """The id :func:`score_row` gives a row whose id field holds *raw*: its text when usable, else ``None``
    (the id rule of the repeated-id pass, so both passes agree on every row's id)."""
    if isinstance(raw, bool) or not isinstance(raw, (str, int)) or (isinstance(raw, str) and not raw.strip()):
        return None
    rid = str(raw)
    return None if _lone_surrogate(rid) is not None else rid


# ---------------------------------------------------------------------------------------------------------------
# the Scorer


class TokenF1(Scorer):
    """Token F1 of free text (whole note and sections) behind the Scorer interface.

    Records: what :func:`score_row` returns (``status`` ``scored`` or ``unscored``), or a repeated id's
    ``{"id", "line", "status": "unscored", "duplicate_of", "error"}``. A ``per_example`` entry is a scored record
    without ``status``. Results: those of :func:`goldeval.pipeline.files.score_file` (without ``input``, which the engine
    adds). JSONL is read leniently (:func:`goldeval.io.reading.decode_line`: NaN literals and lone surrogates in other
    fields do not fail a row).
    """

    name = SCORER_NAME
    version = SCORER_VERSION
    options = {
        "prediction_field": Option("prediction", str, "field or column with the prediction (text or sections)"),
        "reference_field": Option("reference", str, "field or column with the reference (text or sections)"),
        "id_field": Option("id", str, "field or column with the stable row id"),
        "tokenizer": Option("openscribe", str, "token rule: openscribe (reproduces the published figures) or unicode"),
    }
    headline = "whole_note_f1_mean"
    slice_columns = ("n", "n_failed", "whole_note_f1_mean", "whole_note_precision_mean", "whole_note_recall_mean")
    lenient_json = True
    report_kind = "freetext"
    gate_families = ("free_text",)

    def configure(self, **options: Any) -> dict[str, Any]:
        config = super().configure(**options)
        config["tokenizer"] = get_tokenizer(config["tokenizer"]).name  # an unknown name fails here (InputError)
        return config

    def render_summary(self, results: Mapping[str, Any], console: Any) -> None:
        """Whole-note (and section) F1, precision and recall, the tokenizer, the first failures."""
        render_freetext(dict(results), console)

    def results_head(self, config: Mapping[str, Any]) -> dict[str, Any]:
        """``scorer``, ``tokenizer`` and ``config``: the first keys of a free-text results file."""
        return results_head(config["tokenizer"], prediction_field=config["prediction_field"],
                            reference_field=config["reference_field"], id_field=config["id_field"])

    id_of = staticmethod(id_text)  # (the function itself: the first pass calls it once a row)
    ids_as_text = True  # (id_text keeps an ASCII id as it is, blank ones refused: the first pass reads them in C)

    def score_batch(self, rows: Iterable[Any], config: Mapping[str, Any]) -> Iterator[dict[str, Any]]:
        cfg = FreeTextConfig(config["prediction_field"], config["reference_field"], config["id_field"], config["tokenizer"])
        tok = get_tokenizer(cfg.tokenizer)
        src = config.get("source") or "rows"
        check = RepeatedIds(src).check
        for i, item in enumerate(rows, start=1):  # (what numbered() does, inline: this loop is the hot one)
            kind = type(item)
            if kind is Row:
                rec = score_row(item.data, item.line, cfg, tok, src)
            elif kind is RowError:
                rec = _failure(item.line, item.id, item.error)
            elif kind is Reused:
                rec = item.record
            elif isinstance(item, dict):
                rec = score_row(item, i, cfg, tok, src)
            else:
                rec = _failure(i, None, f"{src}:{i}: expected an object, got {shorten(item)}.")
            yield check(rec)

    def line_kernel(self, config: Mapping[str, Any]) -> Callable[[bytes, int, int, int], tuple[Any, ...]] | None:
        """The compiled reader-scorer of plain JSONL lines for *config*, or ``None`` where there is none (the C
        extension is not built, the tokenizer is not ``openscribe``, or a subclass scores rows its own way).

        The engine (:mod:`goldeval.engines.local`) calls it as ``kernel(block, pos, line, emit)`` on a chunk of
        a file with no repeated id (*block*: bytes of whole lines, a byte-order mark removed; *line*: the number
        of the line at *pos*), and gets ``(pos, line, n, body, records, ids, sums)``: the lines from the *pos*
        given up to the *pos* returned are *n* plain rows (every one scored; see ``f1_lines`` in ``_fast.c``) and
        blank lines (skipped); the line at the returned *pos* (number *line*), when ``pos < len(block)``, is one the
        kernel leaves to :meth:`score_batch`. Their records are not made: *body* holds their ``per_example`` entries' JSON
        each followed by a newline (``emit`` bit 1; exactly ``orjson.dumps`` of what :meth:`example_entry` gives),
        *records* their run-store records' JSON, newline-separated (bit 2; ``orjson.dumps`` of the record), *ids*
        their ids' JSON comma-separated, and *sums* the ``(f1, precision, recall)`` exact sums for
        :meth:`_TokenF1Partial.add_lines`. Only for a partial without ``keep_cases``. A plain row is scored exactly
        as :func:`score_row` scores it (tests/unit/test_freetext_lines.py compares the two byte for byte).
        """
        if _fast_f1_lines is None or config.get("tokenizer") != "openscribe" or type(self).score_batch is not TokenF1.score_batch:
            return None
        keys = tuple(config[k].encode("utf-8", "surrogatepass") for k in ("id_field", "prediction_field", "reference_field"))
        kernel = _fast_f1_lines

        def lines_kernel(block: bytes, pos: int, line: int, emit: int) -> tuple[Any, ...]:
            return kernel(block, pos, line, *keys, emit)

        return lines_kernel

    def new_partial(self, config: Mapping[str, Any], *, keep_cases: bool = True) -> Partial:
        return _TokenF1Partial(keep_cases)

    def finish(self, partial: Partial, config: Mapping[str, Any]) -> dict[str, Any]:
        assert isinstance(partial, _TokenF1Partial)
        p = partial
        tok = get_tokenizer(config["tokenizer"])
        n = p.sums["f1"].count
        # Means of exact sums rounded once: equal to statistics.mean (correctly rounded), with which upstream
        # run_eval.py computed the published figures, to the last digit.
        agg: dict[str, Any] = {
            "n": n, "n_scored": n, "n_failed": len(p.failures), "n_rows": p.n_rows, "elapsed_sec": p.elapsed,
            # upstream run_eval.py writes null for a mean over no row; goldeval also says why under "undefined"
            "whole_note_f1_mean": p.sums["f1"].mean(),
            "whole_note_precision_mean": p.sums["precision"].mean(),
            "whole_note_recall_mean": p.sums["recall"].mean(),
            "tokenizer": tok.name, "tokenizer_version": tok.version, "n_with_unreadable_text": p.n_unreadable,
            "undefined": {},
        }
        if p.first_unreadable is not None:
            agg["first_unreadable"] = {k: v for k, v in p.first_unreadable.items() if k != "line"}
        if tok.name == "openscribe":  # rows where a word was split at a non-ASCII letter ("Café" -> caf), as upstream
            agg["n_with_split_words"] = p.n_split
            if p.first_split is not None:
                agg["first_split_word"] = {k: v for k, v in p.first_split.items() if k != "line"}
        if not n:
            reason = "no row could be scored" if p.n_rows else "the file has no rows"
            for k in ("whole_note_f1_mean", "whole_note_precision_mean", "whole_note_recall_mean"):
                agg["undefined"][k] = reason
        if p.n_sectioned:
            agg["n_sectioned"] = p.n_sectioned
            agg["n_section_scored"] = p.macro["f1"].count
            for m in _M:
                agg[f"section_{m}_mean"] = p.macro[m].mean()
                if not p.macro["f1"].count:
                    agg["undefined"][f"section_{m}_mean"] = "no example has text in any section"
            agg["sections"] = {
                s: {"n": sums["f1"].count, "n_empty_both": p.n_sectioned - sums["f1"].count,
                    **{f"{m}_mean": sums[m].mean() for m in _M}}
                for s, sums in sorted(p.sections.items(), key=lambda kv: p.section_first[kv[0]])
            }
        return {
            "scorer": {"name": self.name, "version": self.version},
            "tokenizer": {"name": tok.name, "version": tok.version, "description": tok.description},
            "config": {k: config[k] for k in self.options},
            "aggregate": agg,
            "per_example": p.per_example,
            "failures": sorted(p.failures, key=lambda f: f["line"]),
        }


class _TokenF1Partial(Partial):
    """Running sums of the whole-note, section-macro and per-section scores, counts, the first flagged rows (by
    line), failures; ``per_example`` only with ``keep_cases``. Bounded apart from those two lists."""

    def __init__(self, keep_cases: bool) -> None:
        self.keep = keep_cases
        self.per_example: list[dict[str, Any]] = []
        self.failures: list[dict[str, Any]] = []
        self.n_rows = 0
        self.n_unreadable = 0
        self.first_unreadable: dict[str, Any] | None = None
        self.n_split = 0
        self.first_split: dict[str, Any] | None = None
        self.n_sectioned = 0
        self.elapsed = 0.0
        self.sums = {m: ExactSum() for m in _M}
        self.macro = {m: ExactSum() for m in _M}
        self.sections: dict[str, dict[str, ExactSum]] = {}
        self.section_first: dict[str, int] = {}  # name -> the first line it appears on (the order of the results)

    def add(self, rec: Mapping[str, Any]) -> None:
        self.n_rows += 1
        if rec["status"] != "scored":
            self.failures.append(failure_entry(rec))
            return
        wn = rec["whole_note"]
        sums = self.sums
        sums["f1"].add_float(wn["f1"])
        sums["precision"].add_float(wn["precision"])
        sums["recall"].add_float(wn["recall"])
        if "unreadable" in rec:
            self.n_unreadable += 1
            if self.first_unreadable is None or rec["line"] < self.first_unreadable["line"]:
                self.first_unreadable = {"id": rec["id"], **rec["unreadable"], "line": rec["line"]}
        if "split_word" in rec:
            self.n_split += 1
            if self.first_split is None or rec["line"] < self.first_split["line"]:
                self.first_split = {"id": rec["id"], **rec["split_word"], "line": rec["line"]}
        if self.keep:
            self.per_example.append({k: v for k, v in rec.items() if k != "status" and k != "reused"})
        sections = rec.get("sections")
        if sections is not None:
            self.n_sectioned += 1
            macro = rec.get("section_macro")
            if macro is not None:
                for m in _M:
                    self.macro[m].add_float(macro[m])
            empty = rec.get("sections_empty_both") or ()
            for name, scores in sections.items():
                acc = self.sections.get(name)
                if acc is None:
                    acc = self.sections[name] = {m: ExactSum() for m in _M}
                    self.section_first[name] = rec["line"]
                if name not in empty:
                    for m in _M:
                        acc[m].add_float(scores[m])

    def add_lines(self, n: int, sums: tuple[Any, Any, Any]) -> None:
        """Fold *n* plain scored rows that :meth:`TokenF1.line_kernel` scored (no flags, no sections, no entries
        kept): what :meth:`add` does for each of their records. *sums*: the kernel's exact sums of f1, precision
        and recall, ``[(denominator, numerator), ...]`` each."""
        assert not self.keep, "add_lines: the kernel's rows have no per_example dicts"
        self.n_rows += n
        for m, ratios in zip(("f1", "precision", "recall"), sums, strict=True):
            self.sums[m].add_ratios(n, ratios)

    def merge(self, other: Partial) -> None:
        assert isinstance(other, _TokenF1Partial)
        self.per_example.extend(other.per_example)
        self.failures.extend(other.failures)
        self.n_rows += other.n_rows
        self.n_unreadable += other.n_unreadable
        self.n_split += other.n_split
        for attr in ("first_unreadable", "first_split"):
            mine, theirs = getattr(self, attr), getattr(other, attr)
            if theirs is not None and (mine is None or theirs["line"] < mine["line"]):
                setattr(self, attr, theirs)
        self.n_sectioned += other.n_sectioned
        self.elapsed += other.elapsed
        for m in _M:
            self.sums[m].merge(other.sums[m])
            self.macro[m].merge(other.macro[m])
        for name, line in other.section_first.items():
            if name not in self.section_first or line < self.section_first[name]:
                self.section_first[name] = line
        for name, sums in other.sections.items():
            mine = self.sections.setdefault(name, {m: ExactSum() for m in _M})
            for m in _M:
                mine[m].merge(sums[m])
