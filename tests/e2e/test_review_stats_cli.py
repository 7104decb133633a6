"""``goldeval review stats`` (issue 11 item 7) as a team runs it: judge a set (rules, then the LLM judge on the
loopback server), export every case for review, import the people's verdicts, and read the judge's agreement and
Cohen's kappa against them, by decided_by; then gate the results file.

Expected figures, worked out by hand from the verdicts below (kappa = (n·agreed − S) / (n² − S), S = Σ_k
judge_k · human_k; Cohen 1960):

* by rule, 6 cases: judge m m m n n n (a1 a2 a9 a3 a4 a5), people m m n n n near_match. agreed 4 of 6;
  judge marginals m 3, n 3; human m 2, n 3, near 1; S = 3·2 + 3·3 = 15; kappa = (24 − 15) / (36 − 15) = 3/7.
* by the LLM judge: a6 match (people: match), a8 no_match (people: match), a7 match at confidence 4 (needs_human:
  left to a person, not counted); agreed 1 of 2; judge m 1, n 1; human m 2; S = 2; kappa = (2 − 2)/(4 − 2) = 0.
* all 8 counted: agreed 5; judge m 4, n 4; human m 4, n 3, near 1; S = 16 + 12 = 28; kappa = (40 − 28)/(64 − 28) = 1/3.
* a10: ana says match, bo no_match, never settled: listed under unsettled, counted nowhere.
"""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from fake_openai_server import FakeOpenAI, Reply

from goldeval.cli import main

pytest.importorskip("openai")

CASES = [
    {"id": "a1", "question": "Admissions per ward?", "golden": {"kind": "value", "columns": ["ward", "n"], "rows": [["A", 1], ["B", 2]]}},
    {"id": "a2", "question": "Admissions per ward in May?", "golden": {"kind": "value", "columns": ["ward", "n"], "rows": [["A", 3], ["B", 4]]}},
    {"id": "a3", "question": "Revenue in 2024, completed orders only?", "golden": {"kind": "value", "columns": ["revenue"], "rows": [[1200000]]}},
    {"id": "a4", "question": "Revenue in 2023?", "golden": {"kind": "value", "columns": ["revenue"], "rows": [[500]]}},
    {"id": "a5", "question": "Revenue in 2022?", "golden": {"kind": "value", "columns": ["revenue"], "rows": [[700]]}},
    {"id": "a6", "question": "Why did churn rise?", "golden": {"kind": "criteria"}, "rubric": ["REQUIRED: names the price rise"]},
    {"id": "a7", "question": "Why did signups fall?", "golden": {"kind": "criteria"}, "rubric": ["REQUIRED: names the outage"]},
    {"id": "a8", "question": "Why did costs rise?", "golden": {"kind": "criteria"}, "rubric": ["REQUIRED: names the new contract"]},
    {"id": "a9", "question": "Admissions in June?", "golden": {"kind": "value", "columns": ["n"], "rows": [[9]]}},
    {"id": "a10", "question": "Why did returns rise?", "golden": {"kind": "criteria"}, "rubric": ["REQUIRED: names the sizing change"]},
]
ATTEMPTS = [
    {"id": "a1", "columns": ["ward", "n"], "rows": [["B", 2], ["A", 1]]},
    {"id": "a2", "columns": ["ward", "n"], "rows": [["A", 3], ["B", 4]]},
    {"id": "a3", "columns": ["revenue"], "rows": [[1900000]]},
    {"id": "a4", "columns": ["revenue"], "rows": [[900]]},
    {"id": "a5", "columns": ["revenue"], "rows": [[800]]},
    {"id": "a6", "text": "Churn rose after the price rise."},
    {"id": "a7", "text": "Signups fell."},
    {"id": "a8", "text": "Costs rose after the new contract."},
    {"id": "a9", "columns": ["n"], "rows": [[9]]},
    {"id": "a10", "text": "Returns rose."},
]
#: The LLM judge's answers, by question.
LLM = {
    "Why did churn rise?": '{"verdict": "match", "confidence": 8, "why": "Names the price rise."}',
    "Why did signups fall?": '{"verdict": "match", "confidence": 4, "why": "Maybe the outage."}',
    "Why did costs rise?": '{"verdict": "no_match", "confidence": 8, "why": "The contract is not named as new."}',
    "Why did returns rise?": '{"verdict": "match", "confidence": 7, "why": "Returns rose."}',
}
#: The people's verdicts (ana reviews every case; a5 she calls near_match, a9 no_match, a8 match).
HUMAN = {"a1": "match", "a2": "match", "a3": "no_match", "a4": "no_match", "a5": "near_match", "a6": "match",
         "a7": "match", "a8": "match", "a9": "no_match", "a10": "match"}


def write(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return str(path)


def run(args):
    return CliRunner().invoke(main, args, catch_exceptions=False)


def reply(req):
    user = req["messages"][1]["content"]
    return Reply(content=next(v for q, v in LLM.items() if q in user))


@pytest.fixture(scope="module")
def reviewed(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("stats")
    store = str(tmp / "runs.db")
    cases, attempts = write(tmp / "cases.jsonl", CASES), write(tmp / "attempts.jsonl", ATTEMPTS)
    with FakeOpenAI(default=reply) as srv:
        res = run(["judge", cases, attempts, "--llm", "judge-model", "--base-url", srv.base_url, "--store", store, "-q"])
        assert res.exit_code == 0, res.output
        assert srv.calls == 4  # a6, a7, a8, a10: the criteria goldens no rule decides
    res = run(["review", "export", "latest", "--all", "--store", store, "--out", str(tmp / "review.jsonl")])
    assert res.exit_code == 0 and "10 scored case(s) exported" in res.output
    rows = [json.loads(line) for line in (tmp / "review.jsonl").read_text().splitlines()]
    for r in rows:
        r.update(verdict=HUMAN[r["id"]], reviewer="ana", note=f"ana on {r['id']}")
    write(tmp / "review.jsonl", rows)
    res = run(["review", "import", str(tmp / "review.jsonl"), "--store", store, "--regressions", str(tmp / "reg.jsonl")])
    assert res.exit_code == 0, res.output
    # bo disagrees with ana on a10 and nobody settles it
    from goldeval.runs.store import RunStore

    with RunStore(store) as st:
        st.add_review(rows[0]["run_id"], "a10", verdict="no_match", reviewer="bo", reviewed_at="2026-12-01T10:00:00+00:00",
                      judge_verdict="match", note="bo: the sizing change is not named")
    return tmp, store, rows[0]["run_id"]


def test_review_stats_by_decided_by(reviewed):
    tmp, store, run_id = reviewed
    res = run(["review", "stats", "--store", store, "--out", str(tmp / "stats.json")])
    assert res.exit_code == 0, res.output
    out = json.loads((tmp / "stats.json").read_text())
    agg, by = out["aggregate"], out["by_decided_by"]
    assert out["scorer"]["name"] == "judge_calibration" and out["runs"] == [run_id]
    assert (agg["n"], agg["n_scored"], agg["n_abstained"], agg["n_unsettled"], agg["n_failed"]) == (9, 8, 1, 1, 0)
    assert agg["judge_agreement_rule"] == 4 / 6 and agg["judge_kappa_rule"] == 3 / 7
    assert agg["judge_agreement_llm"] == 1 / 2 and agg["judge_kappa_llm"] == 0.0
    assert agg["judge_agreement"] == 5 / 8 and agg["judge_kappa"] == 1 / 3
    assert (agg["n_rule"], agg["n_llm"]) == (6, 2) and agg["undefined"] == {}
    assert by["rule"]["matrix"]["match"] == {"match": 2, "near_match": 0, "no_match": 1}
    assert by["rule"]["matrix"]["no_match"] == {"match": 0, "near_match": 1, "no_match": 2}
    assert by["llm"]["matrix"]["needs_human"] == {"match": 1, "near_match": 0, "no_match": 0}  # a7: shown, not counted
    assert sorted((d["id"], d["decided_by"], d["judge"], d["human"]) for d in out["disagreements"]) == [
        ("a5", "rule", "no_match", "near_match"), ("a8", "llm", "no_match", "match"), ("a9", "rule", "match", "no_match")]
    a8 = next(d for d in out["disagreements"] if d["id"] == "a8")
    assert a8["judge_why"] == "The contract is not named as new." and a8["human_why"] == "ana on a8"
    (c,) = out["unsettled"]
    assert c["case_id"] == "a10" and [(v["verdict"], v["reviewer"]) for v in c["verdicts"]] == [("match", "ana"), ("no_match", "bo")]
    # the console shows both whys of every disagreement and the unsettled conflict
    assert "human no_match (ana): ana on a9" in res.output and "unsettled a10" in res.output
    assert "judge_agreement_rule 0.667, judge_kappa_rule 0.429 over 6 case(s)" in res.output


def test_the_stats_file_gates(reviewed):
    tmp, store, _ = reviewed
    run(["review", "stats", "--store", store, "--out", str(tmp / "stats.json"), "-q"])
    (tmp / "dod.toml").write_text('agreed_by = "team"\nagreed_on = "2026-12-01"\n[gates]\njudge_kappa = { min = 0.3 }\n'
                                  'judge_agreement_rule = { min = 0.6 }\n')
    res = run(["gate", str(tmp / "stats.json"), "--gates", str(tmp / "dod.toml")])
    assert res.exit_code == 0, res.output
    (tmp / "dod2.toml").write_text('agreed_by = "team"\nagreed_on = "2026-12-01"\n[gates]\njudge_kappa_llm = { min = 0.2 }\n')
    res = run(["gate", str(tmp / "stats.json"), "--gates", str(tmp / "dod2.toml")])
    assert res.exit_code == 1 and "judge_kappa_llm" in res.output


def test_regressions_file_alone_and_no_evidence_never_passes(reviewed, tmp_path):
    tmp, store, run_id = reviewed
    # The regression file review import wrote holds ana's 10 verdicts with the judge's verdict at export; without
    # the store, decided_by is unknown: the 10 pairs land under "unknown" (a7's judge_verdict is match, flagged
    # needs_human only in the store, so here it counts), and a10 (ana alone in the file) is settled.
    res = run(["review", "stats", "--regressions", str(tmp / "reg.jsonl"), "--store", str(tmp_path / "none.db"),
               "--out", str(tmp_path / "s.json"), "-q"])
    assert res.exit_code == 0, res.output
    out = json.loads((tmp_path / "s.json").read_text())
    assert out["by_decided_by"]["unknown"]["n"] == 10 and out["aggregate"]["n_unsettled"] == 0
    # Both counted groups are empty: their figures are undefined, and a gate on them fails.
    assert out["aggregate"]["undefined"]["judge_kappa_rule"].startswith("no case had both a decided judge verdict decided by the rules")
    (tmp_path / "dod.toml").write_text('agreed_by = "t"\nagreed_on = "2026-12-01"\n[gates]\njudge_kappa_llm = { min = 0 }\n')
    res = run(["gate", str(tmp_path / "s.json"), "--gates", str(tmp_path / "dod.toml")])
    assert res.exit_code == 1 and "judge_kappa_llm undefined" in res.output


def test_no_human_verdict_is_exit_2(tmp_path):
    write(tmp_path / "c.jsonl", CASES[:1])
    write(tmp_path / "a.jsonl", ATTEMPTS[:1])
    store = str(tmp_path / "s.db")
    assert run(["judge", str(tmp_path / "c.jsonl"), str(tmp_path / "a.jsonl"), "--store", store, "-q"]).exit_code == 0
    res = run(["review", "stats", "--store", store])
    assert res.exit_code == 2 and "no human verdicts in the store" in res.output and "review import" in res.output
