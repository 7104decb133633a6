"""The LLM judge's doctrine, whole (issue 16): each of the eight rules the hard cases need is in the system prompt
(checked by a marker), and a case that needs the rule reaches the judge with the materials that carry it.

Each fake-server test builds its case the way a user's run does — the real rule judge (``judge_case``) decides what
it can, and its ``llm_materials`` become the prompt (``from_answer_materials``) — then reads the request the
loopback endpoint received: the system message holds the rule, the user message holds the case materials the rule
acts on (the coverage label, the breakdown's located and missing rows, the rubric clause, the prose mustNotUse).
"""

from __future__ import annotations

import json

import pytest
from fake_openai_server import FakeOpenAI, Reply

from goldeval.answers.judge import judge_case
from goldeval.llm.cache import JudgeCache, cache_key
from goldeval.llm.client import JudgeConfig
from goldeval.llm.prompt import JUDGE_VERSION, SYSTEM_PROMPT
from goldeval.llm.run import judge_cases
from goldeval.llm.wiring import from_answer_materials

pytest.importorskip("openai")

#: One marker per doctrine rule of issue 16 (a line of SYSTEM_PROMPT that only that rule writes).
MARKERS = {
    "near_match test": "would a reader who acted on this figure be wrong? If yes, it is",
    "confidence": "a wrong confident verdict is worse than an abstention.",
    "grain": "10. Grain: when the question names no grain",
    "data not insight": "11. Score the data, not the insight:",
    "large row sets": "12. Large row sets: say in \"why\" how many golden rows were located",
    "criteria goldens": "13. Criteria goldens (kind \"criteria\"): grade the rubric clauses and nothing else.",
    "coverage": "14. Coverage: a case may carry coverage \"derivable\"",
    "prose mustNotUse": "15. Prose mustNotUse: apply the prose entries as the rubric's own clauses.",
}


@pytest.mark.parametrize("rule", list(MARKERS))
def test_each_doctrine_rule_is_in_the_system_prompt(rule):
    assert MARKERS[rule] in SYSTEM_PROMPT


def test_the_rules_say_what_the_issue_asks():
    # The load-bearing sentences of each rule (issue 16, "What to add to the doctrine"), so a rewording that drops
    # one fails here, not in a customer's verdicts.
    flat = " ".join(SYSTEM_PROMPT.split())
    for sentence in [
        "near_match is a third outcome, neither a soft pass nor a soft fail.",
        "A rubric clause cannot make a wrong value defensible",
        "was overridden, so that the clause gets fixed",
        "Confidence runs from 1 to 10; 5 or lower means the case needs a human. Do not inflate confidence",
        '"match" when it states its grain and the figures are right at it; "near_match" when it leaves its grain unstated; '
        '"no_match" only when the figures are wrong at the grain it claims. The golden\'s grain is preferred, not the only one.',
        "unless the rubric marks it REQUIRED with a criterion that resolves from the data alone. Exact data with a "
        'different reading of it is "match".',
        "(uniformly scaled, off in one column, a different population). \"I checked all 76\" without that breakdown is "
        "not a comparison.",
        "Do not manufacture a figure to check against. A criteria golden is complete, not a missing value. Report "
        '"gold_status" on the criteria.',
        'A derived answer that matches the golden is "match", and the absence of a named measure is no deduction. '
        'When the answer states what it built, say so in "why".',
        "Do not soften a verdict because a veto might have caught it, and do not invent a veto the rubric did not ask for.",
    ]:
        assert sentence in flat, sentence


# --- the case materials that carry each rule, as the endpoint receives them ------------------------------------


@pytest.fixture(scope="module")
def server():
    with FakeOpenAI() as srv:
        yield srv


def _cfg(srv) -> JudgeConfig:
    return JudgeConfig(model="judge-model", base_url=srv.base_url, timeout=5.0, backoff_base=0.01, max_concurrency=2)


def _send(srv, case: dict, attempt: dict, reply: str, *, send: str = "undecided") -> tuple[dict, str, str]:
    """Judge one case as `goldeval judge --llm` does; return its record and the system and user messages sent."""
    res = judge_case(case, attempt)
    materials = from_answer_materials(res.materials)
    srv.script.append(Reply(content=reply))
    before = len(srv.requests)
    out = judge_cases([materials], config=_cfg(srv), send=send)
    assert len(srv.requests) == before + 1, "the case must be sent to the judge exactly once"
    messages = srv.requests[-1]["messages"]
    assert [m["role"] for m in messages] == ["system", "user"]
    return out["per_example"][0], messages[0]["content"], messages[1]["content"]


def _fence(user: str, name: str) -> str:
    nonce = user.split("Fence nonce: ", 1)[1].split("\n", 1)[0]
    return user.split(f"<<<{name}-{nonce}\n", 1)[1].split(f"\n{name}-{nonce}>>>", 1)[0]


def test_near_match_test_case_carries_the_value_and_the_rubric_clause(server):
    # Golden 2.1 %, the answer 4.2 % with its method explained, a rubric clause calling that method DIVERGENT:
    # the rules find the value wrong but may not overrule the clause, so the judge gets the value, the clause and
    # the answer's explanation, and the near_match test decides (no_match, the clause overridden).
    case = {"id": "conv", "question": "What was the conversion rate of the spring campaign?",
            "golden": {"kind": "value", "columns": ["conversion_rate"], "rows": [[0.021]]},
            "rubric": ["DIVERGENT: conversions divided by clicks instead of visits"]}
    attempt = {"id": "conv", "columns": ["conversion_rate"], "rows": [[0.042]],
               "text": "4.2%: I divided conversions by clicks, since visits are not tracked per ad."}
    reply = json.dumps({"verdict": "no_match", "confidence": 8, "gold_status": "verified",
                        "why": "A reader acting on 4.2% would be wrong (golden 2.1%); rubric clause 'DIVERGENT: conversions "
                               "divided by clicks instead of visits' was overridden."})
    rec, system, user = _send(server, case, attempt, reply)
    assert MARKERS["near_match test"] in system
    assert "## Rubric\n- DIVERGENT: conversions divided by clicks instead of visits" in user
    assert '"rows": [[0.021]]' in user.split("## Rubric")[0]  # the golden value, trusted
    answer = json.loads(_fence(user, "ANSWER"))
    assert answer["result"]["rows"] == [[0.042]] and "divided conversions by clicks" in answer["text"]
    rule = json.loads(_fence(user, "RULE"))
    assert rule["breakdown"]["rule_verdict"]["verdict"] == "no_match"
    assert "rubric clause may cover this answer" in rule["breakdown"]["undecided_because"]
    # The judge's override is final and its why names the clause.
    assert (rec["verdict"], rec["decided_by"]) == ("no_match", "llm") and "was overridden" in rec["why"]


def test_confidence_5_or_lower_needs_a_human(server):
    case = {"id": "cr1", "question": "Why did signups drop in March?", "golden": {"kind": "criteria"},
            "rubric": ["REQUIRED: names the checkout outage of 12 March"]}
    reply = '{"verdict": "match", "confidence": 5, "why": "Probably names the outage.", "gold_status": "verified"}'
    rec, system, _ = _send(server, case, {"id": "cr1", "text": "Signups fell after the checkout problems."}, reply)
    assert MARKERS["confidence"] in system and "5 or lower = needs a human" in system
    # The judge said match at confidence 5: flagged for a human, never counted as a pass.
    assert rec["verdict"] == "match" and rec["needs_human"] is True and rec["confidence"] == 5


def test_grain_case_carries_the_answer_stating_its_grain(server):
    # No grain in the question; the golden is a campaign total per medium, the answer weekly per medium, and it says
    # so. The rules see a different grain and cannot judge it; the judge gets both tables and the stated grain.
    golden_rows = [["email", 300], ["search", 500]]
    weekly = [["email", "W1", 100], ["email", "W2", 200], ["search", "W1", 250], ["search", "W2", 250]]
    case = {"id": "grain", "question": "What did we spend by medium on the spring campaign?",
            "golden": {"kind": "value", "columns": ["medium", "spend"], "rows": golden_rows}}
    attempt = {"id": "grain", "columns": ["medium", "week", "spend"], "rows": weekly,
               "text": "Weekly spend per medium (grain: one row per medium and week)."}
    reply = '{"verdict": "match", "confidence": 8, "why": "Stated weekly grain; weeks sum to the golden totals.", "gold_status": "verified"}'
    rec, system, user = _send(server, case, attempt, reply)
    assert MARKERS["grain"] in system
    answer = json.loads(_fence(user, "ANSWER"))
    assert answer["result"] == {"columns": ["medium", "week", "spend"], "rows": weekly}
    assert "grain: one row per medium and week" in answer["text"]
    assert json.dumps(golden_rows) in user.split("## Answer")[0]
    assert rec["verdict"] == "match" and rec["decided_by"] == "llm"


def test_insight_case_carries_the_exact_data_and_the_required_clause(server):
    rows = [[w, n] for w, n in [(1, 40), (2, 55), (3, 61), (4, 62), (5, 62)]]
    case = {"id": "flat", "question": "Weekly signups; when did they flatten out?",
            "golden": {"kind": "value", "columns": ["week", "signups"], "rows": rows},
            "rubric": ["REQUIRED: gives the weekly signup counts"]}
    attempt = {"id": "flat", "columns": ["week", "signups"], "rows": rows, "text": "Growth slowed from week 3 on."}
    reply = '{"verdict": "match", "confidence": 9, "why": "Exact weekly data; the reading of it is not scored.", "gold_status": "verified"}'
    rec, system, user = _send(server, case, attempt, reply)
    assert MARKERS["data not insight"] in system
    assert "## Rubric\n- REQUIRED: gives the weekly signup counts" in user
    answer = json.loads(_fence(user, "ANSWER"))
    assert answer["result"]["rows"] == rows and answer["text"] == "Growth slowed from week 3 on."
    assert "REQUIRED rubric clause may be unmet" in json.loads(_fence(user, "RULE"))["breakdown"]["undecided_because"]


def test_large_row_set_case_carries_the_located_and_missing_rows(server):
    # 76 golden weeks; the answer doubles 3 of them (weeks 11 and 41 of 2024, 19 of 2025 - rows 10, 40 and 70,
    # 0-based, of the list built below). The prompt shows the first 60 rows of each table; the rule breakdown
    # computed over all 76 says 73 located and names the 3 missing, and how they differ.
    weeks = [f"2024-W{i:02d}" if i <= 52 else f"2025-W{i - 52:02d}" for i in range(1, 77)]
    golden = [[w, 1000 + 7 * i] for i, w in enumerate(weeks, start=1)]
    answer_rows = [list(r) for r in golden]
    for i in (10, 40, 70):
        answer_rows[i][1] *= 2
    case = {"id": "big", "question": "Weekly visits for every week of the campaign?",
            "golden": {"kind": "value", "columns": ["week", "visits"], "rows": golden},
            "rubric": ["ACCEPT: visits counted per session rather than per user"]}
    reply = json.dumps({"verdict": "no_match", "confidence": 8, "gold_status": "verified",
                        "why": "73 of 76 golden rows located; 2024-W11, 2024-W41, 2025-W19 missing: visits doubled in those rows only."})
    rec, system, user = _send(server, case, {"id": "big", "columns": ["week", "visits"], "rows": answer_rows}, reply)
    assert MARKERS["large row sets"] in system
    shown = json.loads(_fence(user, "ANSWER"))["result"]
    assert len(shown["rows"]) == 60 and shown["rows_not_shown"] == 16
    rule = json.loads(_fence(user, "RULE"))
    assert {k: rule["located"][k] for k in ("golden_rows", "found", "extra")} == {"golden_rows": 76, "found": 73, "extra": 3}
    assert rule["located"]["missing"] == [{"week": "2024-W11", "visits": 1077}, {"week": "2024-W41", "visits": 1287},
                                          {"week": "2025-W19", "visits": 1497}]  # 1000 + 7·11, 7·41, 7·71
    assert "one column off: 'visits'" in rule["mismatch"]
    assert rec["verdict"] == "no_match" and "73 of 76" in rec["why"]


def test_criteria_golden_case_carries_the_clauses_and_no_figure(server):
    case = {"id": "crit", "question": "Summarize what drove churn in Q3.", "golden": {"kind": "criteria"},
            "rubric": ["REQUIRED: names the price change of July", "CREDITED: mentions the support backlog"]}
    reply = '{"verdict": "match", "confidence": 8, "why": "The REQUIRED clause is met.", "gold_status": "verified"}'
    rec, system, user = _send(server, case, {"id": "crit", "text": "Churn rose after the July price change."}, reply)
    assert MARKERS["criteria goldens"] in system
    head = user.split("## Answer")[0]
    assert '## Golden\n{"kind": "criteria"}\n' in head  # complete as it is: no figure, no rows
    assert "- REQUIRED: names the price change of July\n- CREDITED: mentions the support backlog" in head
    assert "criteria golden" in json.loads(_fence(user, "RULE"))["why"]
    assert rec["gold_status"] == "verified"


def test_coverage_label_reaches_the_judge_and_the_rule_judge_says_so(server):
    case = {"id": "cov", "question": "What share of customers are repeat customers?", "coverage": "derivable",
            "golden": {"kind": "value", "columns": ["share"], "rows": [[0.31]]}}
    query = "SELECT 1.0 * SUM(n >= 2) / COUNT(*) AS repeat_share FROM (SELECT customer, COUNT(*) AS n FROM orders GROUP BY customer)"
    attempt = {"id": "cov", "columns": ["repeat_share"], "rows": [[0.31]], "final_query": query,
               "text": "Built as customers with two or more orders over all customers."}
    reply = '{"verdict": "match", "confidence": 9, "why": "Derived share; the answer states it built customers with 2+ orders over all.", "gold_status": "verified"}'
    # The rules decide this one (match); --llm-send all sends it for agreement, which shows the label in the prompt.
    rec, system, user = _send(server, case, attempt, reply, send="all")
    assert MARKERS["coverage"] in system
    head = user.split("## Answer")[0]
    assert "## Coverage\nderivable: no column or measure names the concept" in head
    rule = json.loads(_fence(user, "RULE"))
    assert rule["verdict"] == "match" and "Coverage derivable: the answer derived the measure from parts" in rule["why"]
    assert "SUM(n >= 2)" in rule["why"]  # what it built
    assert rec["agreement"] is True


def test_prose_must_not_use_reaches_the_judge_as_a_clause(server):
    case = {"id": "mnu", "question": "Revenue in March?", "golden": {"kind": "value", "columns": ["revenue"], "rows": [[5000]]},
            "must_not_use": ["refunded orders counted as revenue", "orders.total_gross"]}
    attempt = {"id": "mnu", "columns": ["revenue"], "rows": [[5000]], "final_query": "SELECT SUM(net) AS revenue FROM orders"}
    reply = '{"verdict": "match", "confidence": 9, "why": "Net revenue; no refunded orders counted.", "gold_status": "verified"}'
    rec, system, user = _send(server, case, attempt, reply)
    assert MARKERS["prose mustNotUse"] in system
    head = user.split("## Answer")[0]
    # Only the prose entry is the judge's; the bare field name was checked by rule on the parsed query (no hit).
    assert "## mustNotUse\n- refunded orders counted as revenue\n" in head and "orders.total_gross" not in head
    rule = json.loads(_fence(user, "RULE"))
    assert "prose mustNotUse entry needs reading" in rule["breakdown"]["undecided_because"]
    assert rec["verdict"] == "match" and rec["decided_by"] == "llm"


# --- the doctrine change re-judges ------------------------------------------------------------------------------

#: The released /2 doctrine (tests/unit/test_judge_prompt.py RELEASED), as a run recorded before this change has it.
V2 = ("goldeval-llm-judge/2", "02b372bd7ec77a26b276ba885415f890b740e86c0fe6a3a112fcfd050d190fbe")


def _as_v2(monkeypatch):
    import goldeval.llm.cache as cache_mod
    import goldeval.llm.run as run_mod

    for mod in (cache_mod, run_mod):
        monkeypatch.setattr(mod, "JUDGE_VERSION", V2[0])
        monkeypatch.setattr(mod, "SYSTEM_PROMPT_SHA256", V2[1])


def test_the_cache_key_changes_with_the_doctrine(monkeypatch):
    params = JudgeConfig(model="judge-model").answer_params()
    m = {"id": "q", "question": "q", "golden": {"kind": "criteria"}}
    now = cache_key(m, params)
    _as_v2(monkeypatch)
    assert cache_key(m, params) != now
    assert JUDGE_VERSION == "goldeval-llm-judge/3"


def test_a_run_judged_under_the_old_doctrine_is_rejudged_not_served_from_the_cache(tmp_path, monkeypatch):
    materials = [{"id": f"c{i}", "question": "q", "golden": {"kind": "criteria"}, "rubric": [f"REQUIRED: clause {i}"],
                  "text": "answer", "rule": {"verdict": "needs_human", "needs_human": True, "decided_by": "rule"}}
                 for i in range(3)]
    with FakeOpenAI() as srv:
        cache = JudgeCache(tmp_path / "cache.db")
        _as_v2(monkeypatch)
        old = judge_cases(materials, config=_cfg(srv), cache=cache)
        assert srv.calls == 3 and old["judge"]["judge_version"] == V2[0]
        assert judge_cases(materials, config=_cfg(srv), cache=cache)["aggregate"]["n_cached"] == 3 and srv.calls == 3
        monkeypatch.undo()  # the /3 doctrine
        new = judge_cases(materials, config=_cfg(srv), cache=cache)
        assert srv.calls == 6, "every case is judged again under the new doctrine"
        assert (new["aggregate"]["n_http_calls"], new["aggregate"]["n_cached"]) == (3, 0)
        assert new["judge"]["judge_version"] == JUDGE_VERSION
        assert all(MARKERS["coverage"] in r["messages"][0]["content"] for r in srv.requests[3:])
        cache.close()


def test_a_coverage_label_that_is_not_text_is_an_input_error_naming_the_fix():
    res = judge_case({"id": "x", "question": "q", "coverage": ["derivable"], "golden": {"kind": "value", "columns": ["n"], "rows": [[1]]}},
                     {"id": "x", "columns": ["n"], "rows": [[1]]})
    assert res.outcome.status == "unscored"
    assert "'coverage' must be a string such as \"derivable\", got ['derivable']. Fix the case row." in res.outcome.reason
