"""The accounting of an LLM judge run: the results dict's ``aggregate`` (calls, tokens, cost, spend, latency,
stability, agreement, what the spend cap left unsent) and the dry run's worst case.

Split from :mod:`goldeval.llm.run` (which routes and makes the calls); the keys are documented in
:func:`goldeval.llm.run.judge_cases`.
"""

from __future__ import annotations

import statistics
from dataclasses import asdict, dataclass
from typing import Any

from goldeval.llm.budget import SpendMeter
from goldeval.llm.cache import JudgeCache
from goldeval.llm.client import JudgeConfig
from goldeval.llm.prompt import SYSTEM_PROMPT, build_user_prompt
from goldeval.verdict import pass_rate

__all__ = ["SCORER_NAME", "CallTally", "dry_run_cap", "pct", "results"]

SCORER_NAME = "llm_judge"


@dataclass(slots=True)
class CallTally:
    """The running tally of an LLM judge run, for a progress display (the final figures are in ``aggregate``).

    Attributes:
        sent: Cases that go to the LLM in this run (resumed and rule-decided cases excluded).
        cases: Of those, cases finished (every sample answered, failed or stopped by the spend cap).
        calls: Calls answered so far, over HTTP or from the cache (a call the spend cap refused before its first
            attempt is not counted), as ``aggregate["n_calls"]`` counts them.
        cached: Of those, answered from the cache. failed: Of those, failed (time-out, retries exhausted;
            ``aggregate["n_call_errors"]``).
        spend_usd: Spent so far (USD; the endpoint's usage, else the reserved estimate), ``None`` without prices.

    Example:
        >>> t = CallTally(sent=2)
        >>> t.add({"llm": {"calls": [{"cached": True, "error": None}, {"cached": False, "error": "timed out"}]}})
        >>> (t.cases, t.calls, t.cached, t.failed)
        (1, 2, 1, 1)
    """

    sent: int = 0
    cases: int = 0
    calls: int = 0
    cached: int = 0
    failed: int = 0
    spend_usd: float | None = None

    def add(self, record: dict[str, Any]) -> None:
        """Count one finished case's record (its ``llm["calls"]``) as :func:`results` counts calls."""
        self.cases += 1
        for c in (record.get("llm") or {}).get("calls") or []:
            if c.get("capped") and not c.get("attempts") and not c.get("cached"):
                continue  # never went out
            self.calls += 1
            self.cached += 1 if c.get("cached") else 0
            self.failed += 1 if c.get("error") and not c.get("capped") else 0

    def to_dict(self) -> dict[str, Any]:
        """The fields as a dict (``sent``, ``cases``, ``calls``, ``cached``, ``failed``, ``spend_usd``)."""
        return asdict(self)


def pct(values: list[float], q: float) -> float:
    s = sorted(values)
    if not s:
        return 0.0
    # nearest-rank percentile (no interpolation): the smallest value with at least q of the data at or below it.
    k = max(0, min(len(s) - 1, -(-int(q * 100) * len(s) // 100) - 1))
    return s[k]


def dry_run_cap(plan: list[tuple[dict[str, Any], bool, str]], keys: dict[str, list[str]], previous: dict[str, Any],
                 cache: JudgeCache | None, refresh: bool, meter: SpendMeter, max_rows: int) -> dict[str, Any]:
    """What a dry run adds about spend: the worst case of the calls it would send (the reservation of each, one
    attempt per call: retries would add to it) and how many of them the cap lets through, in order."""
    if meter.max_cost_usd is None and meter.max_calls is None and not meter.priced:
        return {}
    worst: list[float | None] = []
    for m, goes, _ in plan:
        if not goes or m["id"] in previous:
            continue
        prompt_chars = len(SYSTEM_PROMPT) + len(build_user_prompt(m, max_rows=max_rows)[0])
        for k in keys[m["id"]]:
            if cache is not None and not refresh and cache.get(k) is not None:
                continue
            worst.append(meter.estimate_usd(prompt_chars))
    within = len(worst) if meter.max_calls is None else min(len(worst), meter.max_calls)
    if meter.cost_cap_enforced:
        total, n = 0.0, 0
        for est in worst[:within]:
            assert est is not None and meter.max_cost_usd is not None
            if total + est > meter.max_cost_usd * (1 + 1e-9) + 1e-15:
                break
            total, n = total + est, n + 1
        within = n
    known = [w for w in worst if w is not None]
    return {"worst_case_usd": sum(known) if meter.priced else None, "within_cap": within,
            "cap": {"max_cost_usd": meter.max_cost_usd, "max_calls": meter.max_calls, "cost_cap_note": meter.cost_cap_note}}


def results(per_example: list[dict[str, Any]], failures: list[dict[str, Any]], judge_info: dict[str, Any],
             config: JudgeConfig, repeat: int, elapsed: float, meter: SpendMeter | None = None) -> dict[str, Any]:
    calls = [c for r in per_example if r.get("llm") and not r.get("resumed") for c in r["llm"]["calls"]]
    # A call the spend cap refused before its first attempt never went out: it is neither an HTTP call nor an error.
    unsent = [c for c in calls if c.get("capped") and not c.get("attempts")]
    calls = [c for c in calls if not (c.get("capped") and not c.get("attempts"))]
    http = [c for c in calls if not c["cached"]]
    lat = [c["latency_s"] for c in http if c["latency_s"] is not None]
    # Tokens and cost are what this run spent: calls answered from the cache cost nothing.
    pin = [c["prompt_tokens"] for c in http if c["prompt_tokens"] is not None]
    pout = [c["completion_tokens"] for c in http if c["completion_tokens"] is not None]
    costs = [c["cost_usd"] for c in http if c["cost_usd"] is not None]
    sent = [r for r in per_example if r.get("sent_to_llm")]
    stab = [r["llm"]["stability"] for r in sent if r.get("llm")]
    agree = [r["agreement"] for r in per_example if r.get("agreement") is not None]
    pr = pass_rate(per_example)
    undefined: dict[str, str] = {}
    if pr.undefined:
        undefined["pass_rate"] = "no case was decided match or no_match"
    if not lat:
        for key in ("latency_mean_s", "latency_p50_s", "latency_p95_s", "latency_max_s"):
            undefined[key] = "no HTTP call was made (all cached, or nothing sent to the judge)"
    answered = [c for c in http if c["raw"] is not None]  # a timed-out or refused call returned no usage to bill
    if config.price_in is None and config.price_out is None:
        undefined["cost_usd"] = "no price configured (--price-in / --price-out, USD per million tokens)"
    elif config.price_in is None or config.price_out is None:
        given, missing = ("--price-in", "--price-out") if config.price_out is None else ("--price-out", "--price-in")
        undefined["cost_usd"] = f"only {given} was given; {missing} is needed too (USD per million tokens)"
    elif len(costs) < len(answered):
        undefined["cost_usd"] = f"the endpoint did not report token usage for {len(answered) - len(costs)} of {len(answered)} answered calls"
    if not agree:
        undefined["agreement_rate"] = "no case had both a decided rule verdict and a decided LLM verdict"
    n_failed = len(failures) + sum(1 for r in per_example if r.get("status") != "scored")
    aggregate = {
        "n": len(per_example) + len(failures),
        "n_scored": sum(1 for r in per_example if r.get("status") == "scored"),
        "n_failed": n_failed,
        "pass_rate": pr.rate,
        "counts": {k: v for k, v in pr.to_dict().items() if k not in ("rate", "undefined")},
        "n_sent": len(sent),
        "n_rule_decided": sum(1 for r in per_example if not r.get("sent_to_llm")),
        "n_resumed": sum(1 for r in per_example if r.get("resumed")),
        "n_calls": len(calls),
        "n_http_calls": len(http),
        "http_attempts": sum(c["attempts"] for c in http),
        "n_cached": len(calls) - len(http),
        "n_call_errors": sum(1 for c in calls if c["error"] and not c.get("capped")),
        "n_unparseable": sum(1 for c in calls if "parse_error" in c["verdict"]),
        "prompt_tokens": sum(pin),
        "completion_tokens": sum(pout),
        "cost_usd": sum(costs) if costs else 0.0,
        "latency_mean_s": statistics.fmean(lat) if lat else 0.0,
        "latency_p50_s": pct(lat, 0.50),
        "latency_p95_s": pct(lat, 0.95),
        "latency_max_s": max(lat) if lat else 0.0,
        "repeat": repeat,
        "n_stable": sum(1 for s in stab if s["stable"] is True),
        "n_flickering": sum(1 for s in stab if s["stable"] is False),
        "n_incomplete": sum(1 for s in stab if s["stable"] is None),
        "agreement_n": len(agree),
        "agreement_agree": sum(agree),
        "agreement_rate": sum(agree) / len(agree) if agree else 0.0,
        "elapsed_sec": elapsed,
        "undefined": undefined,
    }
    # The spend cap (issue 16): what was spent, on what basis, and what the cap left unsent.
    spend = meter.summary() if meter is not None else None
    capped = [r for r in per_example if r.get("capped") and not r.get("resumed")]
    aggregate.update({
        "n_not_sent": sum(1 for r in capped if r.get("not_sent")),
        "n_capped": len(capped),
        "n_calls_not_made": len(unsent) + sum(1 for c in calls if c.get("capped")),
        "spend_usd": spend["spent_usd"] if spend and spend["spent_usd"] is not None else 0.0,
        "spend_basis": spend["basis"] if spend else None,
        "spend": spend,
    })
    if not spend or spend["spent_usd"] is None:
        undefined["spend_usd"] = "no price configured (--price-in / --price-out, USD per million tokens)"
    return {
        "scorer": {"name": SCORER_NAME, "version": judge_info["judge_version"]},
        "judge": judge_info,
        "aggregate": aggregate,
        "per_example": per_example,
        "failures": failures,
    }
