"""The spend cap as a user runs it (issue 16): ``--max-calls`` / ``--max-cost`` (and ``$GOLDEVAL_JUDGE_MAX_COST``) on
``llm-judge`` and ``judge --llm``, ``--max-calls`` only on ``replay --llm``; call counts are the fake server's."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from fake_openai_server import FakeOpenAI, Reply

from goldeval.cli import main

pytest.importorskip("openai")

CASES = [{"id": f"k{i}", "question": "Why did churn rise?", "golden": {"kind": "criteria"}, "rubric": [f"REQUIRED: reason {i}"]}
         for i in range(3)]
ATTEMPTS = [{"id": f"k{i}", "text": "Prices rose in July."} for i in range(3)]


def write(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return str(path)


@pytest.fixture
def files(tmp_path, monkeypatch):
    monkeypatch.setenv("GOLDEVAL_HOME", str(tmp_path / "home"))
    return write(tmp_path / "cases.jsonl", CASES), write(tmp_path / "attempts.jsonl", ATTEMPTS), tmp_path


def run(args):
    return CliRunner().invoke(main, args, catch_exceptions=False)


def test_llm_judge_max_calls_across_repeat(files):
    # 3 cases × --repeat 2 = 6 calls wanted, --max-calls 3, one at a time: k0 gets 2, k1 1 (its second refused),
    # k2 none. 3 HTTP calls; k1 and k2 needs_human "spend cap reached", k2 not sent.
    cases, attempts, tmp = files
    with FakeOpenAI() as srv:
        res = run(["llm-judge", cases, attempts, "--llm", "judge-model", "--base-url", srv.base_url, "--no-store",
                   "--repeat", "2", "--max-calls", "3", "--max-concurrency", "1", "--out", str(tmp / "r.json")])
        assert res.exit_code == 0, res.output
        assert srv.calls == 3
    out = json.loads((tmp / "r.json").read_text())
    assert [(r["id"], r["verdict"], r.get("reason")) for r in out["per_example"]] == [
        ("k0", "match", None), ("k1", "needs_human", "spend cap reached"), ("k2", "needs_human", "spend cap reached")]
    agg = out["aggregate"]
    assert (agg["n_not_sent"], agg["n_capped"], agg["spend"]["calls"], agg["spend"]["max_calls"]) == (1, 2, 3, 3)
    assert "1 case(s) not sent, 2 needs_human: spend cap reached" in res.output
    assert "3 calls made (--max-calls 3)" in res.output


def test_max_cost_from_the_environment_with_prices(files, monkeypatch):
    # price_in 0, price_out $1/M, max_tokens 1000: each call reserves and (1000 completion tokens reported) spends
    # $0.001. Cap $0.0025 from the environment: 2 calls, $0.002 spent, 1 case not sent.
    cases, attempts, tmp = files
    monkeypatch.setenv("GOLDEVAL_JUDGE_MAX_COST", "0.0025")
    monkeypatch.setenv("GOLDEVAL_JUDGE_MAX_TOKENS", "1000")
    with FakeOpenAI(default=lambda req: Reply(completion_tokens=1000)) as srv:
        res = run(["llm-judge", cases, attempts, "--llm", "judge-model", "--base-url", srv.base_url, "--no-store",
                   "--price-in", "0", "--price-out", "1", "--max-concurrency", "1", "--out", str(tmp / "r.json")])
        assert res.exit_code == 0, res.output
        assert srv.calls == 2
    agg = json.loads((tmp / "r.json").read_text())["aggregate"]
    assert agg["n_not_sent"] == 1 and agg["spend_usd"] == pytest.approx(0.002, rel=1e-12) and agg["spend_basis"] == "usage"
    assert "$0.002000 spent over 2 calls (from the endpoint's usage)" in res.output


def test_a_cost_cap_without_prices_is_exit_2_unless_max_calls(files):
    cases, attempts, tmp = files
    with FakeOpenAI() as srv:
        base = ["llm-judge", cases, attempts, "--llm", "judge-model", "--base-url", srv.base_url, "--no-store"]
        res = run([*base, "--max-cost", "1"])
        assert res.exit_code == 2 and srv.calls == 0
        assert "a cost cap needs both prices" in res.output and "--max-calls N" in res.output
        res = run([*base, "--max-cost", "1", "--max-calls", "2", "--max-concurrency", "1", "--out", str(tmp / "r.json")])
        assert res.exit_code == 0, res.output
        assert srv.calls == 2
    assert "the cost cap $1 is not enforced" in json.loads((tmp / "r.json").read_text())["aggregate"]["spend"]["cost_cap_note"]


def test_dry_run_reports_what_the_cap_lets_through(files):
    cases, attempts, _ = files
    res = run(["llm-judge", cases, attempts, "--llm", "judge-model", "--base-url", "http://127.0.0.1:9/v1", "--no-store",
               "--dry-run", "--max-calls", "2"])
    assert res.exit_code == 0 and "3 would be sent; the cap lets 2 of 3 through" in res.output


def test_judge_llm_with_max_calls(tmp_path, monkeypatch):
    monkeypatch.setenv("GOLDEVAL_HOME", str(tmp_path / "home"))
    cases = write(tmp_path / "c.jsonl", CASES)
    attempts = write(tmp_path / "a.jsonl", ATTEMPTS)
    with FakeOpenAI() as srv:
        res = run(["judge", cases, attempts, "--llm", "judge-model", "--base-url", srv.base_url, "--no-store",
                   "--max-calls", "1", "--max-concurrency", "1", "--out", str(tmp_path / "r.json")])
        assert res.exit_code == 0, res.output
        assert srv.calls == 1
    out = json.loads((tmp_path / "r.json").read_text())
    assert [r.get("reason") for r in out["per_example"]] == [None, "spend cap reached", "spend cap reached"]
    assert out["aggregate"]["needs_human"] == 2 and out["aggregate"]["llm_judge"]["n_not_sent"] == 2
    assert "LLM judge spend: 1 calls; spend unknown" in res.output and "2 case(s) not sent" in res.output


def test_replay_takes_max_calls_only(tmp_path, monkeypatch):
    monkeypatch.setenv("GOLDEVAL_HOME", str(tmp_path / "home"))
    cases = write(tmp_path / "c.jsonl", CASES[:2])
    reg = write(tmp_path / "reg.jsonl", [{"id": c["id"], "answer": a, "verdict": "match", "reviewer": "ana"}
                                         for c, a in zip(CASES[:2], ATTEMPTS[:2])])
    with FakeOpenAI() as srv:
        args = ["replay", reg, "--cases", cases, "--llm", "judge-model", "--base-url", srv.base_url]
        res = run([*args, "--max-calls", "1", "--out", str(tmp_path / "r.json")])
        assert srv.calls == 1
    assert res.exit_code == 1, res.output  # one settled verdict could not be replayed
    out = json.loads((tmp_path / "r.json").read_text())
    assert out["same"] == ["k0"] and out["n_failed"] == 1 and "spend cap reached" in out["failures"][0]["error"]
    assert out["llm_spend"]["calls"] == 1 and "LLM judge calls: 1 of --max-calls 1; spend cap reached" in res.output
    bad = run([*args, "--max-cost", "1"])
    assert bad.exit_code == 2 and "No such option '--max-cost'" in bad.output


def test_a_gate_on_cases_left_unsent(tmp_path, monkeypatch):
    # judge --llm --max-calls 1 leaves 2 of the 3 criteria cases unsent (as above): n_not_sent = {max = 0} fails,
    # spend_usd is gateable on the merged results (1 call × 120 in / 30 out at $1 / $2 per M = $0.00018).
    monkeypatch.setenv("GOLDEVAL_HOME", str(tmp_path / "home"))
    cases, attempts = write(tmp_path / "c.jsonl", CASES), write(tmp_path / "a.jsonl", ATTEMPTS)
    (tmp_path / "dod.toml").write_text('agreed_by = "t"\nagreed_on = "2026-12-01"\n[gates]\nn_not_sent = { max = 0 }\n'
                                       'spend_usd = { max = 0.01 }\n')
    with FakeOpenAI() as srv:
        res = run(["judge", cases, attempts, "--llm", "judge-model", "--base-url", srv.base_url, "--no-store", "-q",
                   "--max-calls", "1", "--max-concurrency", "1", "--price-in", "1", "--price-out", "2",
                   "--gates", str(tmp_path / "dod.toml"), "--out", str(tmp_path / "r.json")])
    assert res.exit_code == 1, res.output
    agg = json.loads((tmp_path / "r.json").read_text())["aggregate"]
    assert agg["n_not_sent"] == 2 and agg["spend_usd"] == pytest.approx(0.00018, rel=1e-12)
    assert "n_not_sent 2 fails" in res.output


@pytest.mark.parametrize("command", ["judge", "replay"])
def test_a_cap_without_an_llm_judge_is_a_usage_error(files, command):
    cases, attempts, tmp = files
    args = ["judge", cases, attempts, "--no-store"] if command == "judge" else ["replay", attempts, "--cases", cases]
    res = run([*args, "--max-calls", "3"])
    assert res.exit_code == 2 and "give --llm MODEL" in res.output


def test_a_cost_cap_with_max_tokens_not_sent_is_refused(files, monkeypatch):
    cases, attempts, _ = files
    monkeypatch.setenv("GOLDEVAL_JUDGE_MAX_TOKENS", "0")  # 0 = max_tokens not sent: a completion is unbounded
    res = run(["llm-judge", cases, attempts, "--llm", "judge-model", "--base-url", "http://127.0.0.1:9/v1", "--no-store",
               "--price-in", "1", "--price-out", "1", "--max-cost", "0.5"])
    assert res.exit_code == 2 and "a cost cap needs max_tokens to bound each call's completion" in res.output
    assert "Set GOLDEVAL_JUDGE_MAX_TOKENS to a limit" in res.output
