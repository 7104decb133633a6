"""One data answer judged by rule: the order of decisions (mustNotUse, golden checks, the rule by the golden's
kind, the rubric clauses that hand a case to the LLM judge).

Source: ``DESIGN.md`` "Data answers", goldeval.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from goldeval.answers.doubt import QUESTION_DOUBTS, shape_doubt
from goldeval.answers.forbidden import check_forbidden
from goldeval.answers.gold import check_golden, worse_status
from goldeval.answers.prose import judge_prose_value, judge_unanswerable
from goldeval.answers.shapes import (
    check_golden_options,
    table_columns,
    computed_floats,
    golden_table,
    rubric_of,
    answer_table,
)
from goldeval.answers.table import judge_table
from goldeval.answers.text import read_prose
from goldeval.answers.values import REL_TOL
from goldeval.answers.verdicts import undecided_verdict, make_verdict
from goldeval.errors import InputError, shorten
from goldeval.verdict import Verdict

__all__ = ["judge_answer", "not_confident_against_doubt"]

def judge_answer(
    question: str,
    golden: Mapping[str, Any],
    prediction: Mapping[str, Any],
    *,
    must_not_use: Sequence[str] = (),
    final_query: str | None = None,
    rubric: Sequence[Any] = (),
    rel_tol: float = REL_TOL,
    schema: Mapping[str, Sequence[str]] | None = None,
    dialect: str | None = "sqlite",
    where: str = "case",
    attempt_where: str | None = None,
) -> Verdict:
    """Judge one data answer by rule.

    Args:
        question: The question asked (its numbers are not read as an answer's values).
        golden: ``{"kind": "value" | "unanswerable" | "criteria", "columns", "rows" | "value", "ordered"?,
            "top_n"?: {"n", "by", "direction"}, "rate_columns"?}``. A scalar ``value`` is a one-row table. Its
            ``alternatives`` are not read here (one answer against one golden): :func:`~goldeval.answers.case.
            judge_case` judges a case against its primary golden and each alternative.
        prediction: ``{"columns", "rows"}`` (rows ``(n, k)``, lists or objects) and/or ``{"text"}``. When both are
            given the rows are judged.
        must_not_use: Field entries (``field`` / ``table.field``) are a veto on ``final_query``; prose entries go to
            the LLM judge.
        final_query: The SQL the answer came from (for mustNotUse).
        rubric: Clauses, plain strings with an optional marker prefix (``"REQUIRED: …"``) or
            ``{"marker", "text"}``.
        rel_tol: Relative numeric tolerance (the golden's display precision applies as well).
        schema: ``{table: [columns]}`` for mustNotUse on ``SELECT *``.
        dialect: sqlglot dialect of ``final_query``.
        where: Prefix for error messages (``"cases.jsonl:4 (id q7)"``).
        attempt_where: Prefix for errors in the prediction (``"arm_a.jsonl:4 (id 'q7')"``: the attempt's own file
            and line); default *where*.

    Returns:
        A :class:`~goldeval.verdict.Verdict`; ``needs_human`` (with ``details["undecided_because"]``) when no rule
        decides.

    Raises:
        InputError: the golden or the prediction is malformed (the batch turns this into an unscored case).
    """
    if not isinstance(golden, Mapping):
        raise InputError(f"{where}: 'golden' must be an object, got {shorten(golden)}.")
    kind = golden.get("kind", "value")
    if kind not in ("value", "unanswerable", "criteria"):
        raise InputError(f"{where}: golden kind must be 'value', 'unanswerable' or 'criteria', got {shorten(kind)}.")
    if not isinstance(prediction, Mapping):
        raise InputError(f"{attempt_where or where}: the prediction must be an object with 'columns'/'rows' or 'text', got {shorten(prediction)}.")
    fc = check_forbidden(final_query, list(must_not_use or []), dialect=dialect, schema=schema)
    forbidden_details = {"checked": bool(final_query), "hits": fc.hits, "prose": fc.prose, "parsed": fc.parsed, "note": fc.note,
                         "unsure": fc.unsure}
    gold: tuple[str, str | None] = ("verified", None)
    table = golden_table(golden, where) if kind == "value" else None
    if kind == "value" and table is None:
        raise InputError(f"{where}: a 'value' golden needs 'rows' (with 'columns') or 'value'. Add them, or mark the golden 'unanswerable' / 'criteria'.")
    check_golden_options(golden, table[0] if table is not None else None, where)
    if isinstance(must_not_use, str) or isinstance(rubric, str):
        raise InputError(f"{where}: 'must_not_use' and 'rubric' must be lists, got {shorten(must_not_use if isinstance(must_not_use, str) else rubric)}. Wrap the entry in a list.")
    gcols = table_columns(*table) if table is not None else None
    if gcols is not None and computed_floats(golden):
        gcols = [c.exact() for c in gcols]
    if table is not None and gcols is not None:
        gold = check_golden(gcols, rate_columns=list(golden.get("rate_columns") or []))
        gold = worse_status(gold, shape_doubt(question, gcols))
    if "gold_status" in golden and golden["gold_status"] in ("suspect", "verified_wrong", "verified_benign"):
        gold = worse_status(gold, (golden["gold_status"], golden.get("gold_note")))
    if fc.hits:
        h = fc.hits[0]
        return make_verdict("no_match", 10, f"The final query reads the forbidden field {h['entry']} (as {h['where']}); mustNotUse is a hard veto.",
                        decided_by="must_not_use", gold_status=gold[0], gold_note=gold[1],
                        mismatch=f"uses forbidden field {h['entry']}", details={"must_not_use": forbidden_details})
    has_rows = prediction.get("rows") is not None
    text = prediction.get("text")
    if text is not None and not isinstance(text, str):
        raise InputError(f"{attempt_where or where}: prediction 'text' must be a string, got {shorten(text)}.")
    if kind == "criteria":
        v = undecided_verdict("A criteria golden: its rubric clauses are the whole key, which the LLM judge reads.", "criteria golden",
                       gold_status=gold[0], gold_note=gold[1])
    elif kind == "unanswerable":
        v = judge_unanswerable(question, prediction, gold=gold)
    elif has_rows:
        p_names, p_rows = answer_table(prediction, f"{attempt_where or where} prediction", columns_required=False)
        assert table is not None
        v = judge_table(question, golden, table[0], table[1], p_names, p_rows, rel_tol=rel_tol, gold=gold, gcols=gcols)
        if not p_rows and text and read_prose(text, question).refusal:
            v = make_verdict("no_match", 9, "The answer declines (no rows), but the golden has a value.", mismatch="refusal",
                         gold_status=gold[0], gold_note=gold[1], located=v.located, details=v.details)
    elif text is not None:
        assert table is not None
        v = judge_prose_value(question, golden, table[0], table[1], text, rel_tol=rel_tol, gold=gold)
    else:
        raise InputError(f"{attempt_where or where}: the attempt gives no answer to judge (no final_query result, no 'rows', no 'text').")
    v.details["must_not_use"] = forbidden_details
    # Rubric clauses and prose mustNotUse entries that could move the verdict: hand the case to the LLM judge.
    clauses = rubric_of(rubric)
    markers = {m for m, _ in clauses}
    if clauses:
        v.details["rubric"] = [{"marker": m, "text": t} for m, t in clauses]
    reasons = []
    if v.verdict == "match" and "REQUIRED" in markers:
        reasons.append("a REQUIRED rubric clause may be unmet")
    if v.verdict == "match" and v.mismatch and markers & {"DIVERGENT", "WRONG"}:
        reasons.append("a DIVERGENT/WRONG rubric clause may describe this answer's difference (" + v.mismatch + ")")
    if v.verdict in ("no_match", "near_match") and markers & {"ACCEPT", "PREFERRED", "DIVERGENT"} and v.decided_by == "rule":
        reasons.append("an ACCEPT/PREFERRED/DIVERGENT rubric clause may cover this answer")
    if v.verdict == "match" and fc.prose:
        reasons.append("a prose mustNotUse entry needs reading")
    if v.verdict == "match" and fc.unsure:
        u = fc.unsure[0]
        reasons.append(f"the query may read the forbidden field {u['entry']} ({u['where']})")
    if reasons and v.verdict != "needs_human":
        v.details["rule_verdict"] = {"verdict": v.verdict, "confidence": v.confidence, "why": v.why}
        v.details["undecided_because"] = "; ".join(reasons)
        v.verdict = "needs_human"
        v.confidence = None
        v.needs_human = True
        v.why = f"By rule: {v.why} Not final: {'; '.join(reasons)}."
    return not_confident_against_doubt(v, from_query=isinstance(golden.get("canonical_query"), str))


def not_confident_against_doubt(v: Verdict, *, from_query: bool = True) -> Verdict:
    """A rule verdict against a ``suspect`` golden is not final: a confident ``no_match`` (and any verdict when the
    golden's shape does not fit the question) becomes ``needs_human``, keeping the rule's verdict in
    ``details["rule_verdict"]`` and the doubt in ``gold_note``. Returns *v*, changed in place.

    The doubts that count are those about whether the golden answers its question (:data:`~goldeval.answers.doubt.
    QUESTION_DOUBTS`: its canonical query re-executed or failing, a literal that misses the data, a filter that
    filters nothing, another shape than the question, all cells NULL). The plausibility checks of
    :func:`~goldeval.answers.gold.check_golden` (a rate above 1, a total below a count column) mark the golden
    ``suspect`` but leave the verdict alone: they fire on ordinary tables (the seed's property tests). An all-NULL
    golden typed in by hand (no canonical query: *from_query* False) is a deliberate NULL and leaves it alone too.

    Source: goldeval issue 11, item 2 ("a doubted golden never yields a confident no_match").
    """
    if v.gold_status != "suspect" or v.verdict == "needs_human" or v.decided_by != "rule":
        return v
    notes = [n.strip() for n in (v.gold_note or "").split("; ")]
    if not any(n.startswith(QUESTION_DOUBTS) and (from_query or not n.startswith("every golden cell is NULL")) for n in notes):
        return v
    shape = "the question asks" in (v.gold_note or "")  # the notes of doubt.shape_doubt
    if v.verdict != "no_match" and not shape:
        return v
    v.details["rule_verdict"] = {"verdict": v.verdict, "confidence": v.confidence, "why": v.why}
    v.details["undecided_because"] = "doubted golden"
    v.verdict = "needs_human"
    v.confidence = None
    v.needs_human = True
    v.why = f"By rule: {v.why} Not final: the golden is doubted ({v.gold_note})."
    return v
