"""Judging many cases with the LLM judge: routing, concurrency, cache, repeats, accounting.

A case goes to the LLM only when the rules could not decide it (no rule outcome, or a rule verdict of
``needs_human`` / flagged ``needs_human``); a ``mustNotUse`` hit decided by rule is final and never sent, and where
a caller sends it anyway the rule still wins. With ``send="all"`` the rule-decided cases are judged too, the
rule verdict stays final, and the LLM verdict is kept beside it so their agreement can be measured.

Each case is judged ``repeat`` times (fresh prompt, fresh nonce each time, one cache entry per sample). A case is
*stable* when every sample gave the same verdict; a flickering case is ``needs_human`` (``details["flickering"]``)
with its per-sample verdicts kept. A failed call is not a flicker: a case whose answered samples agree but some
calls failed is *incomplete* (``stable: None``, ``needs_human`` with ``details["incomplete"]``). A call that fails (time-out, retries exhausted, malformed response) yields a
``needs_human`` verdict for that sample with the error kept; the run goes on.

Results follow the project's results-file conventions (``scorer``, ``aggregate`` with ``n``/``n_scored``/
``n_failed``/``undefined``, ``per_example``, ``failures``), plus ``judge`` (model, parameters, versions, prompt hash).

Source: ``DESIGN.md`` ("Data answers", "The LLM judge"), issue #6.
"""

from __future__ import annotations

import re
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable
from concurrent.futures import Future, as_completed, wait
from typing import Any, Literal

from goldeval.errors import InputError, JudgeError, shorten
from goldeval.llm.accounting import SCORER_NAME, CallTally
from goldeval.llm.accounting import dry_run_cap as _dry_run_cap
from goldeval.llm.accounting import results as _results
from goldeval.llm.budget import CAP_REACHED, SpendMeter
from goldeval.llm.cache import JudgeCache, cache_key
from goldeval.llm.client import CallResult, JudgeClient, JudgeConfig
from goldeval.llm.parse import answer_strings, parse_judge_output
from goldeval.llm.pool import DaemonPool
from goldeval.llm.prompt import (
    JUDGE_VERSION,
    SYSTEM_PROMPT,
    SYSTEM_PROMPT_SHA256,
    USER_PROMPT_LAYOUT,
    build_user_prompt,
    rubric_hash,
)
from goldeval.verdict import Verdict

__all__ = ["judge_cases", "route", "same_model", "SCORER_NAME"]

_DECIDED = ("match", "near_match", "no_match")


def _rule_dict(rule: Any) -> dict[str, Any] | None:
    if rule is None:
        return None
    if hasattr(rule, "to_dict"):
        return rule.to_dict()
    if isinstance(rule, dict):
        return rule
    raise InputError(f"case materials: 'rule' must be a verdict object or dict, got {shorten(rule)}.")


def route(materials: dict[str, Any], *, send: Literal["undecided", "all"] = "undecided") -> tuple[bool, str]:
    """Whether one case goes to the LLM judge, and why.

    Args:
        materials: Case materials; ``materials["rule"]`` is the rule-based outcome (a ``Verdict`` / ``CaseOutcome``
            dict) or absent.
        send: ``"undecided"`` (default): only cases no rule decided. ``"all"``: every case except a mustNotUse veto
            and an unscored case (to measure agreement; the rule verdict stays final where it decided).

    Returns:
        ``(goes_to_llm, reason)``.
    """
    rule = _rule_dict(materials.get("rule"))
    if rule is None:
        return True, "no rule-based outcome"
    if rule.get("decided_by") == "must_not_use":
        return False, "mustNotUse hit decided by rule (final)"
    if rule.get("status") == "unscored":
        return False, "unscored by the rules: " + str(rule.get("reason") or "no reason given")
    undecided = rule.get("verdict") not in _DECIDED or bool(rule.get("needs_human"))
    if undecided:
        return True, "the rules could not decide"
    if send == "all":
        return True, "rule decided; judged for agreement only"
    return False, "decided by rule"


_DATE_SUFFIX = re.compile(r"(-\d{4}-\d{2}-\d{2}|[-@]\d{8}|-\d{3,4}|[-:@]latest)$")


def _norm_model(name: str) -> str:
    name = name.strip().lower().rsplit("/", 1)[-1]
    return _DATE_SUFFIX.sub("", name)


def same_model(a: str | None, b: str | None) -> bool:
    """True when two model ids name the same model: equal after case folding, dropping a provider prefix
    (``openai/gpt-4o``) and a snapshot suffix (``-2024-08-06``, ``-20241022``, ``@20241022``, ``-0613``,
    ``-2407``, ``-002``, ``:latest``, ``-latest``)."""
    if not a or not b:
        return False
    return _norm_model(a) == _norm_model(b)


def _answer_model(m: dict[str, Any]) -> str | None:
    for key in ("answer_model", "model"):
        val = m.get(key)
        if isinstance(val, str) and val.strip():
            return val
    return None


def _call_record(sample: int, call: CallResult | None, cached: dict[str, Any] | None, verdict: Verdict,
                 user_prompt: str, nonce: str | None, config: JudgeConfig) -> dict[str, Any]:
    if cached is not None:
        return {
            "sample": sample, "cached": True, "latency_s": cached.get("latency_s"), "attempts": 0, "waits": [],
            "status": None, "prompt_tokens": cached.get("prompt_tokens"),
            "completion_tokens": cached.get("completion_tokens"),
            "cost_usd": config.cost(cached.get("prompt_tokens"), cached.get("completion_tokens")),
            "error": None, "finish_reason": cached.get("finish_reason"), "response_model": cached.get("response_model"),
            "user_prompt": cached["user_prompt"], "raw": cached["response"], "verdict": _brief(verdict),
            "capped": False, "spend_usd": 0.0 if config.price_in is not None and config.price_out is not None else None,
            "response_format": cached.get("response_format"), "response_format_refused": [],
        }
    assert call is not None
    return {
        "sample": sample, "cached": False, "latency_s": call.latency_s, "attempts": call.attempts,
        "waits": call.waits, "status": call.status, "prompt_tokens": call.prompt_tokens,
        "completion_tokens": call.completion_tokens, "cost_usd": config.cost(call.prompt_tokens, call.completion_tokens),
        "error": call.error, "finish_reason": call.finish_reason, "response_model": call.response_model,
        "nonce": nonce, "user_prompt": user_prompt, "raw": call.text, "verdict": _brief(verdict),
        "capped": call.capped, "spend_usd": call.spend_usd, "spend_estimated_attempts": call.spend_estimated,
        "response_format": call.response_format, "response_format_refused": call.refused_formats,
    }


def _brief(v: Verdict) -> dict[str, Any]:
    out = {"verdict": v.verdict, "confidence": v.confidence, "needs_human": v.needs_human, "why": v.why}
    for key in ("parse_error", "self_contradicting", "error", "injection", "truncated", "doubted_golden"):
        if key in v.details:
            out[key] = v.details[key]
    return out


def _without_raw(v: Verdict) -> dict[str, Any]:
    """The verdict dict without ``details["raw"]`` (the raw text is kept once per call and once per case)."""
    d = v.to_dict()
    d["details"] = {k: val for k, val in d["details"].items() if k != "raw"}
    return d


class _Stopped(Exception):
    """A queued call skipped because another call already hit a configuration error (that error is raised)."""


#: ``finish_reason`` values that say the endpoint cut the answer, and what to do about it.
_CUT = {
    "length": "the endpoint stopped the answer at max_tokens (finish_reason=length); raise GOLDEVAL_JUDGE_MAX_TOKENS",
    "content_filter": "the endpoint's content filter cut the answer (finish_reason=content_filter); a person must judge it",
}


def _read_answer(text: str, finish_reason: str | None, untrusted: list[str]) -> Verdict:
    """The verdict of one completion. An answer the endpoint cut (``finish_reason`` ``"length"``: at ``max_tokens``;
    ``"content_filter"``) is ``needs_human`` whatever it holds: the judge did not finish, so an object in it may be a
    draft it was about to revise (the doctrine asks for the verdict object last, with nothing after it)."""
    v = parse_judge_output(text, untrusted=untrusted)
    if finish_reason not in _CUT:
        return v
    reason = _CUT[finish_reason]
    return Verdict(
        verdict="needs_human", confidence=None, needs_human=True, why=f"The judge's answer could not be used: {reason}.",
        decided_by="parse",
        details={"raw": text, "parse_error": reason, "truncated": True,
                 **({"judge_verdict": v.verdict} if v.verdict != "needs_human" else {})},
    )


def _call_failed(call: CallResult) -> Verdict:
    if call.capped:
        sent = f" after {call.attempts} attempt(s)" if call.attempts else ""
        return Verdict(
            verdict="needs_human", confidence=None, needs_human=True, decided_by="llm",
            why=f"Not judged by the LLM: {CAP_REACHED}{sent}.",
            details={"error": call.error, "raw": call.text, "capped": True, "reason": CAP_REACHED},
        )
    return Verdict(
        verdict="needs_human", confidence=None, needs_human=True,
        why=f"The judge call failed: {call.error}.", decided_by="llm",
        details={"error": call.error, "raw": call.text},
    )


def _combine(samples: list[Verdict]) -> tuple[Verdict, dict[str, Any]]:
    """One verdict from the samples of one case, and the stability record."""
    labels = [v.verdict for v in samples]
    counts = Counter(labels)
    modal, modal_n = counts.most_common(1)[0]
    # A sample whose call failed (time-out, retries exhausted) says nothing about the judge's stability: stable is
    # True/False over the answered samples, and None ("incomplete") when they agree but some calls failed.
    failed = [v for v in samples if "error" in v.details]
    answered = Counter(v.verdict for v in samples if "error" not in v.details)
    stable = False if len(answered) > 1 else (None if failed else True)
    stability = {
        "samples": len(samples),
        "verdicts": labels,
        "modal": modal,
        "agreement": modal_n / len(samples),
        "stable": stable,
        "failed_calls": len(failed),
    }
    if len(samples) == 1:
        return samples[0], stability
    if failed and len(answered) == 1:
        (said,) = answered
        first = failed[0]
        return Verdict(
            verdict="needs_human", confidence=None, needs_human=True, decided_by="llm",
            why=f"{len(failed)} of {len(samples)} judge calls failed ({first.details['error']}); the others said {said}.",
            details={"incomplete": True, "failed_samples": len(failed), "repeat": len(samples),
                     "error": first.details["error"], "raw": next((v.details.get("raw") for v in samples if "error" not in v.details), None)},
        ), stability
    if len(counts) == 1 and modal == "needs_human":  # no sample decided: keep the first one's reason
        first = samples[0]
        return Verdict(
            verdict="needs_human", confidence=None, needs_human=True, why=first.why, decided_by=first.decided_by,
            details={**first.details, "repeat": len(samples)},
        ), stability
    if len(counts) == 1:
        first = samples[0]
        confs = [v.confidence for v in samples if v.confidence is not None]
        v = Verdict(
            verdict=first.verdict, confidence=min(confs) if confs else None,
            needs_human=any(s.needs_human for s in samples), why=first.why, column_pairing=first.column_pairing,
            gold_status=first.gold_status, gold_note=first.gold_note, decided_by="llm",
            details={**first.details, "repeat": len(samples)},
        )
        return v, stability
    tally = ", ".join(f"{k} ×{n}" for k, n in counts.most_common())
    v = Verdict(
        verdict="needs_human", confidence=None, needs_human=True,
        why=f"The judge gave different verdicts over {len(samples)} samples ({tally}).", decided_by="llm",
        details={"flickering": True, "repeat": len(samples), "raw": samples[0].details.get("raw")},
    )
    return v, stability


def _final(rule: dict[str, Any] | None, llm: Verdict | None) -> tuple[dict[str, Any], str]:
    """The case's final verdict fields and who decided: a decided rule verdict wins, then the LLM's."""
    if rule is not None and (rule.get("decided_by") == "must_not_use" or (rule.get("verdict") in _DECIDED and not rule.get("needs_human"))):
        fields = {k: v for k, v in rule.items() if k not in ("id", "status", "reason", "raw")}
        return fields, "rule"
    if llm is not None:
        return llm.to_dict(), "llm"
    if rule is not None:
        return {k: v for k, v in rule.items() if k not in ("id", "status", "reason", "raw")}, "rule"
    v = Verdict(verdict="needs_human", confidence=None, needs_human=True, why="No rule decided this case and no LLM judge ran.", decided_by="rule")
    return v.to_dict(), "none"


def _agreement(rule: dict[str, Any] | None, llm: Verdict | None) -> bool | None:
    if rule is None or llm is None:
        return None
    if rule.get("verdict") not in _DECIDED or rule.get("needs_human") or llm.verdict not in _DECIDED or llm.needs_human:
        return None
    return rule["verdict"] == llm.verdict


def judge_cases(
    materials: Iterable[dict[str, Any]],
    *,
    config: JudgeConfig,
    cache: JudgeCache | None = None,
    repeat: int = 1,
    dry_run: bool = False,
    send: Literal["undecided", "all"] = "undecided",
    refresh: bool = False,
    recorder: Any = None,
    client: JudgeClient | None = None,
    max_rows: int = 60,
    on_case: Callable[[dict[str, Any]], None] | None = None,
    budget: SpendMeter | None = None,
    progress: Callable[[CallTally], None] | None = None,
) -> dict[str, Any]:
    """Judge a batch of cases with the LLM where the rules could not decide.

    Args:
        materials: One dict per case: ``id`` (str, required), ``question``, ``golden``, ``rubric``, ``must_not_use``,
            ``rule`` (the rule-based outcome dict, or absent), and the answer: ``text``, ``final_query``, ``columns``,
            ``rows`` (re-executed), ``model`` / ``answer_model`` (the model that produced the answer, if known).
        config: Endpoint, model and call parameters (:class:`JudgeConfig`).
        cache: Call cache; ``None`` = no cache (every call goes out).
        repeat: Samples per case, ≥ 1; > 1 reports per-case stability.
        dry_run: Count the calls the run would make (cache hits excluded) and make none.
        send: ``"undecided"`` (default) or ``"all"``; see :func:`route`.
        refresh: Ignore cache hits (the new answers replace the cached ones).
        recorder: Run-store recorder (``previous()``, ``record(case)``, ``finish(results)``) or ``None``.
        client: A ready :class:`JudgeClient` (tests); default one is built from *config*.
        max_rows: Rows of a table shown in the prompt.
        on_case: Called with each finished per-case record (progress display).
        budget: The spend meter and cap (:class:`goldeval.llm.budget.SpendMeter`), shared when several batches
            draw on one cap (a replay); default: one from *config* (``max_cost``, ``max_calls``, prices). Every HTTP
            attempt — each sample of *repeat*, each retry — is reserved before it is made; cache hits are free.
            A case whose call the cap refused is ``needs_human`` with ``reason`` ``"spend cap reached"``
            (``capped: True``; a resumed run judges it again).
        progress: Called with the running :class:`~goldeval.llm.accounting.CallTally` (the same object each time:
            read it, do not keep it) once before the first call (``sent`` set, nothing done) and after each case
            sent to the LLM is finished, from the calling thread; not called by a dry run.

    Returns:
        The results dict. ``per_example`` items: ``id``, ``status``, the final verdict's fields, ``decided_by``,
        ``routing`` (why it was or was not sent), ``rule`` (the rule outcome or ``None``), ``llm`` (``None`` or
        ``{"verdict": the LLM's verdict dict, "calls": [per-call record: sample, cached, latency_s, attempts, waits,
        status, prompt_tokens, completion_tokens, cost_usd, error, user_prompt, raw, verdict…], "stability"}``),
        ``agreement`` (True/False when both decided, else ``None``). ``aggregate``: ``n``, ``n_scored``,
        ``n_failed``, ``pass_rate`` and its counts, ``n_sent``, ``n_calls``, ``n_http_calls``, ``n_cached``,
        ``n_call_errors``, tokens and ``cost_usd`` spent (HTTP calls only: cached answers cost nothing), latency
        mean/p50/p95/max (seconds, HTTP calls only),
        ``n_stable``/``n_flickering``/``n_incomplete``, agreement counts, ``elapsed_sec``, ``undefined``. With ``dry_run`` the
        result is ``{"dry_run": True, "cases", "sent", "calls", "cached", "http_calls", "judge"}``.

    Raises:
        InputError: ``repeat`` < 1, or the judge model is the model that produced an answer it would judge.
        JudgeError: the endpoint refuses the key or does not know the model (every call would fail).
    """
    if not isinstance(repeat, int) or repeat < 1:
        raise InputError(f"--repeat: expected an integer ≥ 1, got {shorten(repeat)}.")
    t0 = time.perf_counter()
    params = config.answer_params()
    judge_info = {
        "judge_version": JUDGE_VERSION, "layout": USER_PROMPT_LAYOUT, "system_prompt_sha256": SYSTEM_PROMPT_SHA256,
        **params, "repeat": repeat, "max_concurrency": config.max_concurrency, "timeout": config.timeout,
        "price_in": config.price_in, "price_out": config.price_out, "send": send,
        "response_format": config.response_format,
    }
    failures: list[dict[str, Any]] = []
    cases: list[dict[str, Any]] = []
    seen: set[str] = set()
    for i, m in enumerate(materials, start=1):
        cid = m.get("id") if isinstance(m, dict) else None
        if not isinstance(cid, (str, int)) or isinstance(cid, bool) or cid == "" or str(cid) in seen:
            why = "a repeated id" if cid is not None and str(cid) in seen else f"no usable 'id' (got {shorten(cid)})"
            failures.append({"line": i, "id": None if cid is None else str(cid), "error": f"case {i}: {why}. Give every case a unique id."})
            continue
        seen.add(str(cid))
        case = {**m, "id": str(cid)}
        if "rule" in case:  # a Verdict / CaseOutcome becomes its dict (stable in the cache key and the record)
            case["rule"] = _rule_dict(case["rule"])
        cases.append(case)

    previous = recorder.previous() if recorder is not None else {}
    # A case the spend cap left unjudged is judged again when the run is resumed (with a higher cap).
    previous = {k: v for k, v in previous.items() if not (isinstance(v, dict) and v.get("capped"))}
    meter = budget if budget is not None else SpendMeter.from_config(config)
    plan: list[tuple[dict[str, Any], bool, str]] = []
    for m in cases:
        goes, why = route(m, send=send)
        plan.append((m, goes, why))
    same = [m["id"] for m, goes, _ in plan if goes and m["id"] not in previous and same_model(_answer_model(m), config.model)]
    if same:
        raise InputError(
            f"judge model {config.model!r} produced the answers it would judge (cases {', '.join(same[:5])}"
            f"{'…' if len(same) > 5 else ''}: the attempt file names {_answer_model(next(m for m, _, _ in plan if m['id'] == same[0]))!r}). "
            "A model never judges its own answers: choose another judge model with --llm."
        )

    keys: dict[str, list[str]] = {m["id"]: [cache_key(m, params, s, max_rows=max_rows) for s in range(repeat)] for m, goes, _ in plan if goes and m["id"] not in previous}
    if dry_run:
        hits = sum(1 for ks in keys.values() for k in ks if cache is not None and not refresh and cache.get(k) is not None)
        total = sum(len(ks) for ks in keys.values())
        return {
            "dry_run": True, "cases": len(cases), "sent": len(keys), "calls": total, "cached": hits,
            "http_calls": total - hits, "resumed": sum(1 for m in cases if m["id"] in previous),
            "judge": judge_info, "failures": failures,
            **_dry_run_cap(plan, keys, previous, cache, refresh, meter, max_rows),
        }

    records: dict[str, dict[str, Any]] = {}
    order = [m["id"] for m in cases]

    def finish_case(rec: dict[str, Any]) -> None:
        records[rec["id"]] = rec
        if recorder is not None:
            recorder.record(rec)
        if on_case is not None:
            on_case(rec)

    # 1. resumed and rule-decided cases: no call.
    for m, goes, why in plan:
        if m["id"] in previous:
            records[m["id"]] = {**previous[m["id"]], "resumed": True}
            continue
        if not goes:
            rule = _rule_dict(m.get("rule"))
            status = "unscored" if rule is not None and rule.get("status") == "unscored" else "scored"
            fields, _ = _final(rule, None)
            rec = {"id": m["id"], "status": status, **fields, "routing": why, "sent_to_llm": False, "rule": rule,
                   "llm": None, "agreement": None}
            if status == "unscored" and rule is not None:  # (only a rule outcome is unscored)
                rec["reason"] = rule.get("reason")
            finish_case(rec)

    # 2. the LLM calls, bounded concurrency; cache hits answered without a call.
    judged = [m for m, goes, _ in plan if goes and m["id"] not in previous]
    tally = CallTally(sent=len(judged), spend_usd=meter.summary()["spent_usd"])
    if progress is not None:
        progress(tally)
    routing = {m["id"]: why for m, _, why in plan}
    own_client = client or JudgeClient(config)
    samples: dict[str, list[tuple[Verdict, dict[str, Any]] | None]] = {m["id"]: [None] * repeat for m in judged}
    pending_count = {m["id"]: repeat for m in judged}
    by_id = {m["id"]: m for m in judged}

    def one_call(m: dict[str, Any], s: int) -> tuple[str, int, Verdict, dict[str, Any]]:
        key = keys[m["id"]][s]
        cached = None if (cache is None or refresh) else cache.get(key)
        if stop.is_set():  # another call hit a configuration error: do not spend more calls
            raise _Stopped()
        if cached is not None:
            v = _read_answer(cached["response"], cached.get("finish_reason"), answer_strings(m))
            return m["id"], s, v, _call_record(s, None, cached, v, cached["user_prompt"], None, config)
        user, nonce = build_user_prompt(m, max_rows=max_rows)
        try:
            call = own_client.complete([{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": user}],
                                       budget=meter)
        except JudgeError:
            stop.set()
            raise
        if call.text is None or call.error is not None:
            v = _call_failed(call)
        else:
            v = _read_answer(call.text, call.finish_reason, answer_strings(m))
            if cache is not None:
                cache.put(key, case_id=m["id"], sample=s, params=params, rubric_sha256=rubric_hash(m.get("rubric")),
                          user_prompt=user, response=call.text, prompt_tokens=call.prompt_tokens,
                          completion_tokens=call.completion_tokens, latency_s=call.latency_s,
                          finish_reason=call.finish_reason, response_model=call.response_model,
                          response_format=call.response_format)
        return m["id"], s, v, _call_record(s, call, None, v, user, nonce, config)

    def case_done(cid: str) -> None:
        m = by_id[cid]
        got = [x for x in samples[cid] if x is not None]
        verdicts = [v for v, _ in got]
        llm_v, stab = _combine(verdicts)
        capped = [c for _, c in got if c.get("capped")]
        if capped:  # the cap stopped some of this case's calls: no verdict from the LLM, whatever the others said
            made = sum(1 for _, c in got if c.get("cached") or c.get("attempts"))  # calls answered or sent
            llm_v = Verdict(
                verdict="needs_human", confidence=None, needs_human=True, decided_by="llm",
                why=(f"Not sent to the LLM judge: {CAP_REACHED}." if not made else
                     f"Not judged: {CAP_REACHED} after {made} of {len(got)} calls."),
                details={"capped": True, "reason": CAP_REACHED, "calls_made": made, "repeat": len(got)},
            )
        rule = _rule_dict(m.get("rule"))
        fields, decided_by = _final(rule, llm_v)
        rec = {
            "id": cid, "status": "scored", **fields, "routing": routing[cid], "sent_to_llm": True, "rule": rule,
            "llm": {"verdict": _without_raw(llm_v), "calls": [c for _, c in got], "stability": stab,
                    "rubric_sha256": rubric_hash(m.get("rubric"))},
            "agreement": _agreement(rule, llm_v), "raw": llm_v.details.get("raw"),
        }
        if capped:
            rec["capped"] = True
            rec["not_sent"] = not any(c.get("cached") or c.get("attempts") for _, c in got)
            if decided_by == "llm":
                rec["reason"] = CAP_REACHED
        finish_case(rec)
        if progress is not None:
            tally.add(rec)
            tally.spend_usd = meter.summary()["spent_usd"]
            progress(tally)

    stop = threading.Event()
    if judged:
        # daemon threads: a Ctrl-C abandons the calls in flight instead of waiting for them (see judge.pool)
        pool = DaemonPool(config.max_concurrency, thread_name_prefix="goldeval-judge")
        interrupted = True
        try:
            futures: list[Future] = [pool.submit(one_call, m, s) for m in judged for s in range(repeat)]
            # each call as it completes (a case is recorded, and shown done, as soon as its last sample is in)
            for f in as_completed(futures):
                error = f.exception()
                if error is not None:
                    others = [other for other in futures if other is not f]
                    for other in others:
                        other.cancel()
                    # The calls still in flight finish (they cannot be interrupted); one of them may hold the
                    # configuration error that made the others stop.
                    rest = wait(others)[0]
                    errors = [error] + [e for o in rest if not o.cancelled() and (e := o.exception()) is not None]
                    raise next((e for e in errors if not isinstance(e, _Stopped)), errors[0])
                cid, s, v, crec = f.result()
                samples[cid][s] = (v, crec)
                pending_count[cid] -= 1
                if pending_count[cid] == 0:
                    case_done(cid)
            interrupted = False
        except Exception:
            interrupted = False  # a configuration error: the calls in flight were waited for above
            raise
        finally:
            # Ctrl-C / SIGTERM (KeyboardInterrupt): stop now; the cases in flight get no verdict
            pool.shutdown(wait=not interrupted, cancel_futures=True)
            if client is None:
                own_client.close()

    per_example = [records[cid] for cid in order if cid in records]
    results = _results(per_example, failures, judge_info, config, repeat, time.perf_counter() - t0, meter)
    if recorder is not None:
        recorder.finish(results)
    return results
