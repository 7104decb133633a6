"""Glue between the data-answer files / the rule-based judge and the LLM judge, kept to plain dicts.

:func:`case_materials` builds the LLM judge's input for one case from a case-file row, an attempt-file row and the
rule-based outcome; :func:`merge_llm` folds an LLM judge run back into a rule-based results dict so that each case
keeps both outcomes (``rule`` and ``llm``) and the aggregate gains the LLM judge's accounting. Neither depends on
the rule-based judge's internals: they read the documented file formats (``DESIGN.md`` "Data formats") and the
results-file conventions.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from goldeval.llm.accounting import CallTally
from goldeval.llm.budget import CAP_REACHED, SpendMeter
from goldeval.llm.client import JudgeClient
from goldeval.llm.run import judge_cases
from goldeval.verdict import pass_rate

__all__ = ["case_materials", "from_answer_materials", "merge_llm", "with_llm"]

_RULE_KEYS = (
    "verdict", "confidence", "needs_human", "why", "column_pairing", "gold_status", "gold_note", "decided_by",
    "located", "mismatch", "status", "reason",
)


def case_materials(
    case: dict[str, Any],
    attempt: dict[str, Any] | None,
    rule: dict[str, Any] | None = None,
    *,
    columns: list[str] | None = None,
    rows: list[list[Any]] | None = None,
) -> dict[str, Any]:
    """The LLM judge's materials for one case.

    Args:
        case: A case-file row: ``id``, ``question``, ``golden``, ``rubric``?, ``must_not_use``?, ``coverage``?.
        attempt: The attempt-file row for the same id (``final_query``?, ``columns``?, ``rows``?, ``text``?,
            ``model``?), or ``None`` when the model gave no answer.
        rule: The rule-based outcome for this case (a per-example record or ``Verdict.to_dict()``), or ``None``.
            Only its verdict fields are passed on (large ``details`` stay out of the prompt, except
            ``details["breakdown"]`` when the rule judge puts one there).
        columns, rows: The re-executed result of ``final_query`` (when a database was given); they replace the
            attempt's own ``columns`` / ``rows``.

    Returns:
        A dict for :func:`goldeval.llm.run.judge_cases`.
    """
    attempt = attempt or {}
    m: dict[str, Any] = {
        "id": str(case.get("id")),
        "question": case.get("question"),
        "golden": case.get("golden"),
    }
    for key in ("rubric", "must_not_use", "coverage"):
        if case.get(key):
            m[key] = case[key]
    for key in ("text", "final_query", "queries"):
        if attempt.get(key) not in (None, "", []):
            m[key] = attempt[key]
    m["columns"] = columns if columns is not None else attempt.get("columns")
    m["rows"] = rows if rows is not None else attempt.get("rows")
    if m["columns"] is None and m["rows"] is None:
        del m["columns"], m["rows"]
    if not attempt:
        m["text"] = "(no answer: the attempt file has no row for this case)"
    model = attempt.get("model") or attempt.get("answer_model")
    if model:
        m["answer_model"] = model
    if rule is not None:
        brief = {k: rule[k] for k in _RULE_KEYS if k in rule}
        details = rule.get("details") or {}
        if isinstance(details, dict) and details.get("breakdown") is not None:
            brief["breakdown"] = details["breakdown"]
        m["rule"] = brief
    return m


def from_answer_materials(m: dict[str, Any], *, answer_model: str | None = None) -> dict[str, Any]:
    """Convert one item of the rule-based judge's ``llm_materials`` (``goldeval.answers.judge``) to our materials.

    Their item: ``{"id", "rule", "question", "golden", "prediction": {"columns", "rows" (first 200), "row_count",
    "rows_truncated", "source"}, "text", "final_query", "rubric", "must_not_use_prose", "breakdown", "coverage"?}``. The rule
    outcome is cut to its verdict fields plus the breakdown (the prompt shows it as the rule-based breakdown).
    """
    pred = m.get("prediction") or {}
    out: dict[str, Any] = {"id": str(m["id"]), "question": m.get("question"), "golden": m.get("golden")}
    for key in ("rubric", "text", "final_query", "coverage"):
        if m.get(key) not in (None, "", []):
            out[key] = m[key]
    if m.get("must_not_use_prose"):
        out["must_not_use"] = m["must_not_use_prose"]
    if pred.get("columns") is not None or pred.get("rows") is not None:
        out["columns"], out["rows"] = pred.get("columns"), pred.get("rows")
    rule = m.get("rule")
    if isinstance(rule, dict):
        brief = {k: rule[k] for k in _RULE_KEYS if k in rule}
        breakdown = m.get("breakdown")
        if breakdown:
            brief["breakdown"] = breakdown
        if pred.get("rows_truncated"):
            brief["rows_shown"] = f"first {len(pred.get('rows') or [])} of {pred.get('row_count')} answer rows"
        if pred.get("source"):
            brief["prediction_source"] = pred["source"]
        out["rule"] = brief
    if answer_model:
        out["answer_model"] = answer_model
    return out


def merge_llm(rule_results: dict[str, Any], llm_results: dict[str, Any]) -> dict[str, Any]:
    """Fold an LLM judge run into rule-based results (same case ids), in place, and return them.

    For each case the LLM judged, the per-example record takes the final verdict fields from the LLM run (a
    decided rule verdict and a mustNotUse veto are never replaced: :func:`judge_cases` already keeps them final),
    keeps the rule outcome under ``rule`` and the LLM's under ``llm``, and gains ``agreement``. The aggregate's pass
    rate and counts are recomputed over the merged cases (the one accounting, :func:`goldeval.verdict.pass_rate`),
    and the LLM judge's accounting is added under ``aggregate["llm_judge"]`` and ``results["llm_judge"]`` (the
    judge's model, versions and prompt hash).
    """
    judged = {r["id"]: r for r in llm_results.get("per_example", [])}
    merged = []
    for rec in rule_results.get("per_example", []):
        new = judged.get(str(rec.get("id")))
        if new is None:
            merged.append(rec)
            continue
        out = {**rec}
        for key in ("verdict", "confidence", "needs_human", "why", "column_pairing", "gold_status", "gold_note", "decided_by", "details"):
            if key in new:
                out[key] = new[key]
        out["status"] = new.get("status", rec.get("status"))
        if new.get("raw") is not None:
            out["raw"] = new["raw"]
        out.update(rule=new.get("rule"), llm=new.get("llm"), agreement=new.get("agreement"),
                   sent_to_llm=new.get("sent_to_llm"), routing=new.get("routing"))
        if new.get("capped"):  # the spend cap left it unjudged: needs_human, "spend cap reached" (issue 16)
            out.update(capped=True, not_sent=new.get("not_sent"))
            if new.get("reason"):
                out["reason"] = new["reason"]
        merged.append(out)
    rule_results["per_example"] = merged
    agg = rule_results.setdefault("aggregate", {})
    pr = pass_rate([r for r in merged if "verdict" in r or r.get("status") == "unscored"])
    agg["pass_rate"] = pr.rate
    counts = {k: v for k, v in pr.to_dict().items() if k not in ("rate", "undefined", "n")}
    if all(k in agg for k in counts):  # the rule judge's flat layout: pass_rate, match, no_match, decided, ...
        agg.update(counts)
    else:
        agg["counts"] = counts
    undefined = agg.setdefault("undefined", {})
    if pr.undefined:
        undefined["pass_rate"] = "no case was decided match or no_match"
    else:
        undefined.pop("pass_rate", None)
    lagg = {k: v for k, v in llm_results.get("aggregate", {}).items() if k not in ("counts", "pass_rate", "n", "n_scored", "n_failed")}
    agg["llm_judge"] = lagg
    # The spend and what the cap left unsent are the run's own figures too (gateable on a `judge --llm` run).
    for key in ("spend_usd", "n_not_sent"):
        if key in lagg:
            agg[key] = lagg[key]
    if "spend_usd" in (lagg.get("undefined") or {}):
        undefined["spend_usd"] = lagg["undefined"]["spend_usd"]
    rule_results["llm_judge"] = llm_results.get("judge")
    return rule_results


def with_llm(rule_judge: Callable[[dict[str, Any], dict[str, Any]], Any], *, config: Any, cache: Any = None,
             client: Any = None, budget: Any = None) -> Callable[[dict[str, Any], dict[str, Any]], dict[str, Any]]:
    """Wrap a one-case judge ``judge(case, answer)`` so that the LLM decides what the rules left undecided.

    For replaying human-settled verdicts (``goldeval.runs.regressions.replay`` takes such a callable): the rule
    judge runs first; when it is undecided the case goes to the LLM judge (through the cache, so a replay of an
    unchanged judge costs no call). Returns the per-case record of :func:`goldeval.llm.run.judge_cases`
    (``verdict``, ``why``, ``rule``, ``llm``…).

    Args:
        rule_judge: ``(case row, answer row) -> Verdict | CaseOutcome | dict``.
        config: :class:`goldeval.llm.JudgeConfig`.
        cache: :class:`goldeval.llm.JudgeCache` or ``None``.
        client: A shared :class:`goldeval.llm.JudgeClient` (one connection pool for the whole replay).
        budget: A shared :class:`goldeval.llm.budget.SpendMeter` (one cap for the whole replay); default one
            from *config* (``max_calls``). A case the cap leaves unjudged raises ``ValueError("spend cap reached
            …")``, so the replay lists it as not replayed rather than as a changed verdict.

    The returned callable carries ``budget`` (the meter) and ``tally``: the running
    :class:`~goldeval.llm.accounting.CallTally` of the cases sent to the LLM (``sent`` stays 0: how many will be is
    not known in advance), for a progress display.
    """

    shared = client or JudgeClient(config)
    meter = budget if budget is not None else SpendMeter.from_config(config)
    tally = CallTally()

    def judge(case: dict[str, Any], answer: dict[str, Any]) -> dict[str, Any]:
        rule = rule_judge(case, answer)
        rd = rule.to_dict() if hasattr(rule, "to_dict") else dict(rule)
        res = judge_cases([case_materials(case, answer, rd)], config=config, cache=cache, client=shared, budget=meter)
        if res["failures"]:
            raise ValueError(res["failures"][0]["error"])
        rec = res["per_example"][0]
        if rec.get("sent_to_llm"):
            tally.add(rec)
            tally.spend_usd = meter.summary()["spent_usd"]
        if rec.get("capped"):
            raise ValueError(f"{CAP_REACHED} ({meter.summary()['reached']}): the LLM judge was not asked; raise --max-calls "
                             "to replay it")
        return rec

    judge.budget = meter  # type: ignore[attr-defined]
    judge.tally = tally  # type: ignore[attr-defined]
    return judge
