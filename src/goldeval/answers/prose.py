"""The prose rules: a prose answer against a one-cell golden (the value it states), and any answer against an
``unanswerable`` golden (a refusal that names what is missing).

Source: ``DESIGN.md`` "Data answers" (refusals and hedges read from prose), goldeval.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from goldeval.answers.numbers import DECIMAL_RESOLUTION, numbers_close, tolerances
from goldeval.answers.text import read_prose
from goldeval.answers.values import (
    canonical_text,
    is_rate_name,
    make_column,
    name_tokens,
    role_tags,
)
from goldeval.answers.verdicts import fmt_value, undecided_verdict, make_verdict
from goldeval.verdict import Verdict


def judge_prose_value(question: str, golden: Mapping[str, Any], g_names: list[str], g_rows: list[list[Any]],
                       text: str, *, rel_tol: float, gold: tuple[str, str | None]) -> Verdict:
    prose = read_prose(text, question)
    common = dict(gold_status=gold[0], gold_note=gold[1])
    details: dict[str, Any] = {"prose": {"numbers": list(prose.numbers), "refusal": prose.refusal, "hedged": prose.hedged,
                                         "grader_text_ignored": prose.injected or None}}
    inj = " Text aimed at the grader was ignored (it is data)." if prose.injected else ""
    if prose.refusal and not prose.numbers and _ASSERTS.search(prose.answer_text):
        return undecided_verdict("The answer has a refusal phrase but also asserts an answer ('O+ is the most common (Rh is not "
                          "recorded)'): whether it declines is a prose question." + inj, "prose grain", details=details, **common)
    if prose.refusal and not prose.numbers:
        return make_verdict("no_match", 9, "The answer declines, but the golden has a value: a refusal passes only against an unanswerable golden." + inj,
                        mismatch="refusal", details=details, **common)
    if len(g_rows) != 1 or len(g_names) != 1:
        return undecided_verdict(f"A prose answer against a {len(g_rows)}×{len(g_names)} golden table: the rules cannot read a table out of prose." + inj,
                          "prose grain", details=details, **common)
    gcol = make_column(g_names[0], [g_rows[0][0]])
    if not gcol.numeric:
        want = canonical_text(str(g_rows[0][0]))
        body = canonical_text(prose.answer_text)
        # The golden as a whole word: "Cardiology-East" or "Cardiology_2" is another name, not the golden.
        found = [m for m in re.finditer(r"(?<![\w-])" + re.escape(want) + r"(?![\w-])", body)] if want else []
        if found:
            alt = re.escape(want)
            neg = re.compile(r"(?:\bnot|n't|\bnever|\bno longer|\brather than|\binstead of|\bother than|\bexcept|\bexcluding|\bunlike|\bbesides)"
                             r"(?:\s+\w+){0,2}\s+[\"'(]?$")
            if re.search(r"\beither\b[^.;]*\b" + alt + r"\b|\b" + alt + r"[\"')]?\s*,?\s+or\s+\w|\w[\"')]?\s+or\s+[\"'(]?" + alt + r"\b", body):
                details["prose"]["hedged"] = True
                return make_verdict("no_match", 7, f"The answer hedges between the golden {fmt_value(g_rows[0][0])} and another candidate: "
                                "offering several candidates does not contain the golden." + inj,
                                mismatch="hedge: several candidate values", details=details, **common)
            if any(neg.search(body[: m.start()]) for m in found):
                return undecided_verdict(f"The answer mentions the golden {fmt_value(g_rows[0][0])} after a negation ('not …', 'rather than …'): "
                                  "the rules cannot tell an answer from an exclusion." + inj, "prose grain", details=details, **common)
            if _in_enumeration(prose.answer_text, str(g_rows[0][0])):
                return undecided_verdict(f"The answer names the golden {fmt_value(g_rows[0][0])} in a list of several names: whether it is the "
                                  "answer or one of several candidates is a prose question." + inj, "prose grain", details=details, **common)
            if prose.hedged or re.search(r"\b(?:maybe|perhaps|possibly|might be|could be)\b", body):
                return undecided_verdict(f"The answer states the golden {fmt_value(g_rows[0][0])} with a hedge ('maybe', 'possibly'): "
                                  "whether it commits to it is a prose question." + inj, "prose grain", details=details, **common)
            return make_verdict("match", 7, f"The answer states the golden value {fmt_value(g_rows[0][0])}." + inj, details=details, **common)
        return undecided_verdict("A prose answer that does not state the golden text verbatim: the rules cannot tell a paraphrase from a miss." + inj,
                          "prose grain", details=details, **common)
    if prose.refusal:
        return undecided_verdict("The answer both declines and states numbers." + inj, "prose grain", details=details, **common)
    g = float(gcol.nums[0])
    half = tolerances(gcol)
    if gcol.decimal:  # a Decimal golden against numbers stated in text (exact digits): numbers.pair_rel_tol's rule
        rel_tol = min(rel_tol, DECIMAL_RESOLUTION)
    rate = is_rate_name(g_names[0], golden.get("rate_columns") or [])
    scales = (1.0, 0.01, 100.0) if rate else (1.0,)
    count = not rate and "count" in role_tags(name_tokens(g_names[0]))

    def close(x: float) -> bool:
        if count and prose.plain is not None and x not in prose.plain:
            return False  # stated only as "20%": a percentage, never a count of 20
        return any(bool(numbers_close(gcol.nums, gcol.nums * 0 + x * s, half, rel_tol=rel_tol)[0]) for s in scales)

    distinct = sorted(set(prose.numbers))
    if not distinct:
        return undecided_verdict("The answer states no value to compare with the golden." + inj, "no stated value", details=details, **common)
    hits = [x for x in distinct if close(x)]
    if len(distinct) == 1:
        if hits:
            return make_verdict("match", 8, f"The answer states {fmt_value(distinct[0])}, the golden value {fmt_value(g)}." + inj, details=details, **common)
        if count and prose.plain is not None and distinct[0] not in prose.plain and distinct[0] == g:
            return make_verdict("no_match", 7, f"The answer states {fmt_value(distinct[0])}%, a percentage; the golden {g_names[0]!r} is a "
                            f"count ({fmt_value(g)}), and a count is never a percentage." + inj, mismatch="a percentage where a count was asked",
                            details=details, **common)
        return make_verdict("no_match", 8, f"The answer states {fmt_value(distinct[0])}; the golden is {fmt_value(g)}." + inj,
                        mismatch=f"different value: {fmt_value(distinct[0])} instead of {fmt_value(g)}", details=details, **common)
    if prose.hedged:
        return make_verdict("no_match", 7, f"The answer hedges between {', '.join(map(fmt_value, distinct))}: offering several candidates does not contain the golden {fmt_value(g)}." + inj,
                        mismatch="hedge: several candidate values", details=details, **common)
    if not hits:
        return make_verdict("no_match", 7, f"None of the values the answer states ({', '.join(map(fmt_value, distinct))}) is the golden {fmt_value(g)}." + inj,
                        mismatch="different value", details=details, **common)
    return undecided_verdict(f"The answer states several numbers ({', '.join(map(fmt_value, distinct))}), one of them the golden: which one answers is a prose question." + inj,
                      "prose grain", details=details, **common)


_LIST_SEP = r"(?:\s*(?:,|;|/|&|\band\b|\bfollowed by\b|\bthen\b|\bvs\.?))+\s*"
_LIST_BEFORE = re.compile(r"[A-Z][\w'-]*[\"')]?" + _LIST_SEP + r"[\"'(]?$")
_LIST_AFTER = re.compile(r"^[\"')]?" + _LIST_SEP + r"[\"'(]?[A-Z]")


def _in_enumeration(text: str, golden: str) -> bool:
    """True when a mention of *golden* in *text* sits in a list of names ("Cardiology, Oncology and Surgery",
    "Oncology, followed by Cardiology"): another capitalised name right before or after it, joined by a comma,
    ``and``, ``then``, ``/``…"""
    if not golden.strip():
        return False
    for m in re.finditer(r"(?<![\w-])" + re.escape(golden.strip()) + r"(?![\w-])", text, re.IGNORECASE):
        if _LIST_BEFORE.search(text[: m.start()]) or _LIST_AFTER.match(text[m.end():]):
            return True
    return False


#: Phrases that assert an answer ("the answer is", "X is the most common", "it is A+").
_ASSERTS = re.compile(
    r"\b(?:the|my) answer is\b|\bis the (?:most|least|largest|smallest|highest|lowest|top|biggest)\b"
    r"|\b(?:it|that) (?:is|was|'s)\s+(?!not\b|impossible\b|unclear\b|unknown\b|possible\b|not possible\b)[\w+-]",
    re.IGNORECASE,
)


def judge_unanswerable(question: str, prediction: Mapping[str, Any], *, gold: tuple[str, str | None]) -> Verdict:
    text = prediction.get("text") or ""
    rows = prediction.get("rows")
    prose = read_prose(text, question)
    common = dict(gold_status=gold[0], gold_note=gold[1])
    details: dict[str, Any] = {"prose": {"numbers": list(prose.numbers), "refusal": prose.refusal, "names_missing": prose.names_missing,
                                         "grader_text_ignored": prose.injected or None}}
    has_rows = isinstance(rows, list) and len(rows) > 0
    answers = bool(prose.numbers) or bool(_ASSERTS.search(prose.answer_text))
    if prose.refusal and not has_rows and answers:
        # "There is no data issue: the answer is 42", "O+ is the most common (the database does not record Rh)":
        # a refusal phrase beside an answer is not a refusal (both were match).
        details["prose"]["also_answers"] = True
        return undecided_verdict("The golden is unanswerable; the answer has a refusal phrase but also states an answer: whether it "
                          "declines is a prose question.", "prose grain", details=details, **common)
    if prose.refusal and not has_rows:
        if prose.names_missing:
            return make_verdict("match", 8, "The golden is unanswerable and the answer declines, naming what the data lacks.", details=details, **common)
        return make_verdict("near_match", 7, "The golden is unanswerable and the answer declines, but without naming what is missing.", details=details, **common)
    if has_rows and not prose.refusal:
        return make_verdict("no_match", 8, f"The golden says the data cannot answer this; the prediction returns {len(rows or ())} row(s) as an answer.",
                        mismatch="answered an unanswerable question", details=details, **common)
    if text and not prose.refusal and prose.numbers:
        return make_verdict("no_match", 7, "The golden says the data cannot answer this; the answer states values instead of declining.",
                        mismatch="answered an unanswerable question", details=details, **common)
    return undecided_verdict("Unanswerable golden; the answer neither clearly declines nor clearly answers.", "prose grain", details=details, **common)

