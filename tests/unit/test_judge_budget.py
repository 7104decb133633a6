"""The judge's spend cap (issue 16) against the loopback endpoint: every figure below is worked out by hand from the
rule in ``goldeval.llm.budget`` — reserve ``(ceil(prompt chars / 4) · price_in + max_tokens · price_out) / 1e6``
USD before each HTTP attempt, settle at the reported usage (or the reservation when none is reported) — and from
what the fake server received (its request count, the characters of the messages it was sent)."""

from __future__ import annotations

import json
import math

import pytest
from fake_openai_server import FakeOpenAI, Reply, completion_body

from conftest import FakeRecorder
from goldeval.errors import InputError
from goldeval.llm.budget import CAP_REACHED, SpendMeter, check_cap, estimate_prompt_tokens
from goldeval.llm.cache import JudgeCache
from goldeval.llm.client import JudgeConfig
from goldeval.llm.run import judge_cases
from goldeval.llm.wiring import with_llm

pytest.importorskip("openai")

UNDECIDED = {"verdict": "needs_human", "confidence": None, "needs_human": True, "why": "criteria", "decided_by": "rule"}


def case(i: int) -> dict:
    # Same length for every i < 10: one reservation fits all of them.
    return {"id": f"c{i}", "question": "Why did churn rise in Q3?", "golden": {"kind": "criteria"},
            "rubric": [f"REQUIRED: names cause {i}"], "text": "Prices rose in July.", "rule": UNDECIDED}


def cfg(srv, **kw) -> JudgeConfig:
    opts = dict(model="judge-model", base_url=srv.base_url, timeout=5.0, backoff_base=0.01, max_concurrency=1)
    opts.update(kw)
    return JudgeConfig(**opts)


def chars(request: dict) -> int:
    return sum(len(m["content"]) for m in request["messages"])


def no_usage(content: str = '{"verdict": "match", "confidence": 8, "why": "Named.", "gold_status": "verified"}') -> Reply:
    body = completion_body(content, "judge-model")
    del body["usage"]
    return Reply(body=json.dumps(body).encode())


def test_estimate_is_characters_over_four_rounded_up():
    assert [estimate_prompt_tokens(n) for n in (0, 1, 4, 5, 8, 4001)] == [0, 1, 1, 2, 2, 1001]
    meter = SpendMeter(price_in=2.0, price_out=8.0, max_tokens=500)
    # 4001 chars -> 1001 tokens · $2/M + 500 · $8/M = 0.002002 + 0.004 = 0.006002
    assert meter.estimate_usd(4001) == pytest.approx(0.006002, rel=1e-12)


def test_max_calls_counts_every_repeat_and_every_retry():
    # 4 cases × --repeat 2 = 8 calls wanted; --max-calls 5; one call at a time, in case order.
    # Attempt 1 (c0 sample 0) gets a 429 and is retried: attempts 1-2 are c0 s0, 3 c0 s1, 4 c1 s0, 5 c1 s1.
    # Attempt 6 (c2 s0) is refused, and from then on every call: c2 and c3 are not sent.
    with FakeOpenAI() as srv:
        srv.script.append(Reply(status=429, headers={"Retry-After": "0"}))
        res = judge_cases([case(i) for i in range(4)], config=cfg(srv, max_calls=5, price_in=2.5, price_out=10.0), repeat=2)
        assert srv.calls == 5
        first_chars = chars(srv.requests[0])
    agg, by_id = res["aggregate"], {r["id"]: r for r in res["per_example"]}
    assert [by_id[c]["verdict"] for c in ("c0", "c1")] == ["match", "match"]
    for cid in ("c2", "c3"):
        r = by_id[cid]
        assert (r["verdict"], r["needs_human"], r["reason"], r["capped"], r["not_sent"]) == ("needs_human", True, CAP_REACHED, True, True)
        assert r["why"] == "Not sent to the LLM judge: spend cap reached."
    assert (agg["n_not_sent"], agg["n_capped"], agg["n_calls_not_made"]) == (2, 2, 4)
    assert agg["n_http_calls"] == 4 and agg["http_attempts"] == 5 and agg["n_call_errors"] == 0
    # Spend: 4 answered attempts with usage 120 in / 30 out at $2.5 / $10 per M = 0.0006 each = 0.0024; the 429
    # reported no usage, so it is its reservation: ceil(chars/4) · 2.5 + 1024 · 10, per million.
    est_429 = (math.ceil(first_chars / 4) * 2.5 + 1024 * 10.0) / 1e6
    spend = agg["spend"]
    assert spend["calls"] == 5 and spend["calls_from_usage"] == 4 and spend["calls_estimated"] == 1
    assert spend["from_usage_usd"] == pytest.approx(0.0024, rel=1e-12)
    assert spend["estimated_usd"] == pytest.approx(est_429, rel=1e-12)
    assert agg["spend_usd"] == pytest.approx(0.0024 + est_429, rel=1e-12) and agg["spend_basis"] == "usage and estimate"
    assert spend["reached"] == "5 calls made (--max-calls 5)"
    assert agg["cost_usd"] == pytest.approx(0.0024, rel=1e-12)  # the usage-billed figure, as before


def test_a_refused_retry_stops_the_call_and_says_after_how_many_attempts():
    # --max-calls 1: the first attempt gets a 503; its retry would be call 2: refused. The case is needs_human,
    # capped, but not "not sent" (one attempt went out).
    with FakeOpenAI() as srv:
        srv.script.append(Reply(status=503, headers={"Retry-After": "0"}))
        res = judge_cases([case(0)], config=cfg(srv, max_calls=1))
        assert srv.calls == 1
    (r,) = res["per_example"]
    assert r["capped"] is True and r["not_sent"] is False and r["reason"] == CAP_REACHED
    assert r["why"] == "Not judged: spend cap reached after 1 of 1 calls."
    (call,) = r["llm"]["calls"]
    assert (call["attempts"], call["error"]) == (1, "spend cap reached (after 1 attempts)")
    assert (res["aggregate"]["n_not_sent"], res["aggregate"]["n_capped"], res["aggregate"]["spend"]["spent_usd"]) == (0, 1, None)


def test_cost_cap_with_usage_reported():
    # price_in 0, price_out $1/M, max_tokens 1000: each reservation is exactly 1000 · 1 / 1e6 = $0.001, and the
    # server reports 1000 completion tokens, so each call settles at $0.001 too. Cap $0.0025: calls 1 and 2 fit
    # (0.001, 0.002), call 3 would reach 0.003 > 0.0025: refused. 5 cases: 2 judged, 3 not sent, $0.002 spent.
    with FakeOpenAI(default=lambda req: Reply(completion_tokens=1000)) as srv:
        res = judge_cases([case(i) for i in range(5)],
                          config=cfg(srv, max_cost=0.0025, price_in=0.0, price_out=1.0, max_tokens=1000))
        assert srv.calls == 2
    agg = res["aggregate"]
    assert [r.get("reason") for r in res["per_example"]] == [None, None, CAP_REACHED, CAP_REACHED, CAP_REACHED]
    assert agg["n_not_sent"] == 3 and agg["spend_usd"] == pytest.approx(0.002, rel=1e-12) and agg["spend_basis"] == "usage"
    assert "would take the spend to $0.003000, past the cap $0.0025" in agg["spend"]["reached"]


def test_cost_cap_settles_at_usage_so_a_brief_judge_fits_more_calls():
    # Reservation $0.001 (as above) but the judge answers in 30 completion tokens: each call settles at
    # 30 · 1 / 1e6 = $0.00003. Cap $0.0015: before call k the spend is (k-1) · 0.00003 and the reservation 0.001;
    # all 5 fit (largest: 4 · 0.00003 + 0.001 = 0.00112 ≤ 0.0015). Spent 5 · 0.00003 = $0.00015.
    with FakeOpenAI() as srv:
        res = judge_cases([case(i) for i in range(5)],
                          config=cfg(srv, max_cost=0.0015, price_in=0.0, price_out=1.0, max_tokens=1000))
        assert srv.calls == 5
    assert res["aggregate"]["n_not_sent"] == 0 and res["aggregate"]["spend_usd"] == pytest.approx(0.00015, rel=1e-12)


def test_cost_cap_without_usage_spends_the_reserved_estimate():
    # No usage in the answers: each call's spend is its reservation r = (ceil(chars/4) · $1 + 100 · $2) / 1e6,
    # the same r for every case (same prompt length). Cap 2.5 r: 2 calls, spent 2 r, basis "estimate".
    with FakeOpenAI(default=lambda req: no_usage()) as srv:
        probe = judge_cases([case(9)], config=cfg(srv, price_in=1.0, price_out=2.0, max_tokens=100))
        r = (math.ceil(chars(srv.requests[0]) / 4) * 1.0 + 100 * 2.0) / 1e6
        assert probe["aggregate"]["spend_usd"] == pytest.approx(r, rel=1e-12)
        res = judge_cases([case(i) for i in range(4)],
                          config=cfg(srv, max_cost=2.5 * r, price_in=1.0, price_out=2.0, max_tokens=100))
        assert srv.calls == 1 + 2
        assert {chars(q) for q in srv.requests} == {chars(srv.requests[0])}  # one prompt length, as assumed
    agg = res["aggregate"]
    assert agg["n_not_sent"] == 2 and agg["spend_usd"] == pytest.approx(2 * r, rel=1e-12) and agg["spend_basis"] == "estimate"
    assert "cost_usd" in agg["undefined"]  # the usage-billed figure stays undefined: no usage was reported


def test_cache_hits_are_free_and_do_not_count(tmp_path):
    cache = JudgeCache(tmp_path / "c.db")
    with FakeOpenAI() as srv:
        judge_cases([case(i) for i in range(3)], config=cfg(srv), cache=cache)
        assert srv.calls == 3
        # --max-calls 0 with everything cached: nothing is refused, nothing is sent, nothing is spent.
        res = judge_cases([case(i) for i in range(3)], config=cfg(srv, max_calls=0, price_in=1.0, price_out=1.0), cache=cache)
        assert srv.calls == 3
        assert res["aggregate"]["n_cached"] == 3 and res["aggregate"]["n_capped"] == 0
        assert (res["aggregate"]["spend"]["calls"], res["aggregate"]["spend_usd"], res["aggregate"]["spend_basis"]) == (0, 0.0, "none")
        # A fourth, uncached case is the only call wanted: refused by --max-calls 0.
        res = judge_cases([case(i) for i in range(4)], config=cfg(srv, max_calls=0), cache=cache)
        assert srv.calls == 3 and [r["id"] for r in res["per_example"] if r.get("capped")] == ["c3"]
        assert len(cache) == 3  # the refused call was not cached: a later run with a higher cap sends it
    cache.close()


def test_a_resumed_run_judges_the_cases_the_cap_left():
    with FakeOpenAI() as srv:
        rec = FakeRecorder()
        judge_cases([case(i) for i in range(3)], config=cfg(srv, max_calls=1), recorder=rec)
        assert srv.calls == 1
        previous = {r["id"]: r for r in rec.records}
        assert sorted(cid for cid, r in previous.items() if r.get("capped")) == ["c1", "c2"]
        res = judge_cases([case(i) for i in range(3)], config=cfg(srv), recorder=FakeRecorder(previous=previous))
        assert srv.calls == 3  # c1 and c2 judged now; c0 reused from the run
    assert [(r["id"], bool(r.get("resumed")), r["verdict"]) for r in res["per_example"]] == [
        ("c0", True, "match"), ("c1", False, "match"), ("c2", False, "match")]


def test_dry_run_says_what_the_cap_lets_through():
    with FakeOpenAI() as srv:
        res = judge_cases([case(i) for i in range(4)], dry_run=True,
                          config=cfg(srv, max_cost=0.0025, price_in=0.0, price_out=1.0, max_tokens=1000), repeat=2)
        assert srv.calls == 0
    # 8 calls, $0.001 worst case each: $0.008 in all, 2 fit under $0.0025.
    assert (res["http_calls"], res["within_cap"]) == (8, 2) and res["worst_case_usd"] == pytest.approx(0.008, rel=1e-12)


@pytest.mark.parametrize("opts, message", [
    (dict(max_cost=1.0), "a cost cap needs both prices to estimate each call's worst case, but --price-in and --price-out are not given"),
    (dict(max_cost=1.0, price_in=1.0), "but --price-out is not given"),
    (dict(max_cost=1.0, price_in=1.0, price_out=1.0, max_tokens=None), "a cost cap needs max_tokens to bound each call's completion"),
    (dict(max_cost=-1.0, price_in=1.0, price_out=1.0), "expected a finite number of USD ≥ 0, got -1.0"),
    (dict(max_cost=float("nan"), price_in=1.0, price_out=1.0), "expected a finite number of USD ≥ 0, got nan"),
    (dict(max_calls=-1), "expected an integer ≥ 0, got -1"),
])
def test_a_cap_that_cannot_be_enforced_is_an_input_error(opts, message):
    with pytest.raises(InputError, match=message.replace("(", r"\(").replace(")", r"\)")):
        JudgeConfig(model="judge-model", **opts)


def test_a_cost_cap_without_prices_is_accepted_with_max_calls_and_says_it_is_not_enforced():
    c = JudgeConfig(model="judge-model", max_cost=1.0, max_calls=3)
    meter = SpendMeter.from_config(c)
    assert not meter.cost_cap_enforced
    assert meter.cost_cap_note == ("the cost cap $1 is not enforced: no --price-in/--price-out to estimate a call's cost; "
                                   "only the cap of 3 calls applies")
    assert check_cap(max_cost=None, max_calls=None, price_in=None, price_out=None, max_tokens=None) is None


def test_the_cost_cap_comes_from_the_environment():
    c = JudgeConfig.from_env({"GOLDEVAL_JUDGE_MAX_COST": "0.5", "GOLDEVAL_JUDGE_PRICE_IN": "1", "GOLDEVAL_JUDGE_PRICE_OUT": "2"},
                             model="judge-model")
    assert (c.max_cost, c.price_in, c.price_out) == (0.5, 1.0, 2.0)
    with pytest.raises(InputError, match=r"\$GOLDEVAL_JUDGE_MAX_COST: expected float, got 'lots'"):
        JudgeConfig.from_env({"GOLDEVAL_JUDGE_MAX_COST": "lots"}, model="judge-model")
    with pytest.raises(InputError, match="a cost cap needs both prices"):
        JudgeConfig.from_env({"GOLDEVAL_JUDGE_MAX_COST": "0.5"}, model="judge-model")


def test_one_cap_across_a_replay():
    # with_llm shares one meter over every case it judges: --max-calls 1 lets the first undecided case through and
    # the second raises "spend cap reached" (the replay lists it as not replayed, not as a changed verdict).
    def rule_judge(c, a):
        return dict(UNDECIDED)

    with FakeOpenAI() as srv:
        judge = with_llm(rule_judge, config=cfg(srv, max_calls=1))
        assert judge(case(0), {"id": "c0", "text": "x"})["verdict"] == "match"
        with pytest.raises(ValueError, match="spend cap reached"):
            judge(case(1), {"id": "c1", "text": "y"})
        assert srv.calls == 1 and judge.budget.summary()["calls"] == 1


def odd_usage(prompt_tokens, completion_tokens) -> Reply:
    body = completion_body('{"verdict": "match", "confidence": 8, "why": "Named.", "gold_status": "verified"}', "judge-model")
    body["usage"] = {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens}
    return Reply(body=json.dumps(body).encode())


def test_negative_usage_from_the_endpoint_never_lets_the_cost_cap_pass():
    # A server reports prompt_tokens -1,000,000: taken as given, each call "cost" 30 · $2/M − $1 < 0, the spend went
    # down and the cap admitted every call (5 of 5 sent under a cap of 2.5 reservations). A count that is not a whole
    # number ≥ 0 is no usage: the call is billed its reservation r, as a call that reported none (the case above),
    # so the cap stops at 2 calls, as it does there.
    with FakeOpenAI(default=lambda req: odd_usage(-1_000_000, 30)) as srv:
        probe = judge_cases([case(9)], config=cfg(srv, price_in=1.0, price_out=2.0, max_tokens=100))
        r = (math.ceil(chars(srv.requests[0]) / 4) * 1.0 + 100 * 2.0) / 1e6
        res = judge_cases([case(i) for i in range(5)],
                          config=cfg(srv, max_cost=2.5 * r, price_in=1.0, price_out=2.0, max_tokens=100))
        assert srv.calls == 1 + 2
    assert probe["aggregate"]["spend_usd"] == pytest.approx(r, rel=1e-12)
    agg = res["aggregate"]
    assert agg["n_not_sent"] == 3 and agg["spend_usd"] == pytest.approx(2 * r, rel=1e-12) and agg["spend_basis"] == "estimate"
    assert agg["cost_usd"] == 0.0 and "cost_usd" in agg["undefined"] and agg["prompt_tokens"] == 0
    assert [c["prompt_tokens"] for x in res["per_example"][:2] for c in x["llm"]["calls"]] == [None, None]


@pytest.mark.parametrize("prompt_tokens, completion_tokens", [("120", "30"), (12.5, 30), (True, 30), ({"n": 1}, 30)])
def test_usage_that_is_not_a_token_count_is_no_usage(prompt_tokens, completion_tokens):
    # The openai client does not validate a response's types: usage {"prompt_tokens": "120"} reached the spend
    # meter as a str and "120" * 1.0 raised TypeError out of the run. Such a count is not reported usage: the call
    # is answered and judged, its spend is the reservation r (basis "estimate").
    with FakeOpenAI(default=lambda req: odd_usage(prompt_tokens, completion_tokens)) as srv:
        res = judge_cases([case(0)], config=cfg(srv, price_in=1.0, price_out=2.0, max_tokens=100))
        r = (math.ceil(chars(srv.requests[0]) / 4) * 1.0 + 100 * 2.0) / 1e6
    (rec,) = res["per_example"]
    assert rec["verdict"] == "match"
    (call,) = rec["llm"]["calls"]
    assert (call["prompt_tokens"], call["cost_usd"]) == (None, None)
    assert res["aggregate"]["spend_usd"] == pytest.approx(r, rel=1e-12) and res["aggregate"]["spend_basis"] == "estimate"


def test_whole_token_counts_written_as_floats_are_usage():
    # 120.0 and 30.0 are the counts 120 and 30 (some servers serialize every number as a float): billed at usage,
    # 120 · $1/M + 30 · $2/M = $0.00018.
    with FakeOpenAI(default=lambda req: odd_usage(120.0, 30.0)) as srv:
        res = judge_cases([case(0)], config=cfg(srv, price_in=1.0, price_out=2.0, max_tokens=100))
    (call,) = res["per_example"][0]["llm"]["calls"]
    assert (call["prompt_tokens"], call["completion_tokens"]) == (120, 30)
    assert res["aggregate"]["spend_usd"] == pytest.approx(0.00018, rel=1e-12) and res["aggregate"]["spend_basis"] == "usage"
