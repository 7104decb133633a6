"""``judge --calibration``, ``report --calibration`` and ``compare --calibration`` as a team runs them: the pass
rate corrected for the judge's measured error in the results file, the store, the terminal, the gates, the report
page and the comparison.

The figures are the hand-worked example of ``tests/unit/test_intervals.py``: the rule judge passes 80 of the 100
cases below (the attempts of c80…c99 are off by 1000); the regressions file says that on 40 answers a person passed
the judge passed 36, and on 20 a person failed it failed 15 (one near_match pair is not counted). Rogan–Gladen:
(0.8 + 0.75 − 1) / (0.9 + 0.75 − 1) = 11/13 = 0.846154; Lang–Reiczigel 95% interval 0.660877 to 1 (1.048034 clipped).
"""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from fake_openai_server import FakeOpenAI, Reply

from goldeval.answers.judge import JUDGE_VERSION
from goldeval.cli import main
from goldeval.runs.store import RunStore


def write(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return str(path)


def run(args):
    return CliRunner().invoke(main, args, catch_exceptions=False)


def regressions(n_pos_pass=36, n_pos=40, n_neg_fail=15, n_neg=20):
    rows = [{"id": f"k{i}", "verdict": "match", "judge_verdict": "match" if i < n_pos_pass else "no_match",
             "answer": {"rows": [[i]]}, "reviewer": "ana"} for i in range(n_pos)]
    rows += [{"id": f"f{i}", "verdict": "no_match", "judge_verdict": "no_match" if i < n_neg_fail else "match",
              "answer": {"rows": [[i]]}, "reviewer": "ana"} for i in range(n_neg)]
    rows.append({"id": "x0", "verdict": "near_match", "judge_verdict": "match", "answer": {"rows": [[0]]}, "reviewer": "ana"})
    return rows


@pytest.fixture()
def judged(tmp_path):
    cases = [{"id": f"c{i}", "question": f"How many for item {i}?", "golden": {"kind": "value", "columns": ["n"], "rows": [[i]]}}
             for i in range(100)]
    attempts = [{"id": f"c{i}", "columns": ["n"], "rows": [[i if i < 80 else i + 1000]]} for i in range(100)]
    return (tmp_path, write(tmp_path / "cases.jsonl", cases), write(tmp_path / "attempts.jsonl", attempts),
            write(tmp_path / "reg.jsonl", regressions()), str(tmp_path / "runs.db"))


def test_judge_with_a_calibration_reports_gates_and_records_the_corrected_rate(judged):
    tmp, cases, attempts, reg, store = judged
    dod = tmp / "dod.toml"
    dod.write_text("[gates]\npass_rate_corrected = { min = 0.8 }\npass_rate_corrected_low = { min = 0.6 }\n")
    res = run(["judge", cases, attempts, "--calibration", reg, "--gates", str(dod), "--store", store, "--out", str(tmp / "r.json")])
    assert res.exit_code == 0, res.output
    assert "pass rate corrected for the judge's error 84.6% (95% Lang–Reiczigel interval 66.1%–100.0%; clipped" in " ".join(res.output.split())
    out = json.loads((tmp / "r.json").read_text())
    agg = out["aggregate"]
    assert agg["pass_rate"] == 0.8 and agg["pass_rate_corrected"] == pytest.approx(11 / 13)
    assert agg["pass_rate_corrected_low"] == pytest.approx(0.660877, abs=1e-6) and agg["pass_rate_corrected_high"] == 1.0
    c = out["corrected_pass_rate"]
    assert (c["tp"], c["n_pos"], c["tn"], c["n_neg"], c["calibration"]["n_excluded"]) == (36, 40, 15, 20, 1)
    assert c["clipped"] and c["high_unclipped"] == pytest.approx(1.048034, abs=1e-6)
    assert [g["status"] for g in out["gates"]["gates"]] == ["pass", "pass"]
    # the run in the store holds it: the report shows it without --calibration
    res = run(["report", "latest", "--store", store, "--out", str(tmp / "page.html")])
    assert res.exit_code == 0, res.output
    page = (tmp / "page.html").read_text()
    assert 'id="corrected"' in page and "<strong>0.8462</strong>" in page and "[0.6609, 1.0000]" in page
    # a stricter line on the low end fails the run (exit 1)
    dod.write_text("[gates]\npass_rate_corrected_low = { min = 0.7 }\n")
    res = run(["judge", cases, attempts, "--calibration", reg, "--gates", str(dod), "--no-store", "-q",
               "--summary-md", str(tmp / "summary.md")])
    assert res.exit_code == 1 and "pass_rate_corrected_low 0.661 fails 0.7" in " ".join(res.output.split())
    md = (tmp / "summary.md").read_text()
    assert "| pass rate corrected for the judge's error | 0.8462 |" in md and "| its 95% interval, low end | 0.6609 |" in md


def test_a_calibration_too_small_or_absent_fails_the_gate(judged):
    tmp, cases, attempts, _, store = judged
    small = write(tmp / "small.jsonl", regressions(n_pos_pass=8, n_pos=9))
    dod = tmp / "dod.toml"
    dod.write_text("[gates]\npass_rate_corrected = { min = 0.5 }\n")
    res = run(["judge", cases, attempts, "--calibration", small, "--gates", str(dod), "--no-store", "--out", str(tmp / "r.json")])
    assert res.exit_code == 1, res.output
    out = json.loads((tmp / "r.json").read_text())
    assert out["aggregate"]["pass_rate_corrected"] is None
    assert "at least 10 of each" in out["aggregate"]["undefined"]["pass_rate_corrected"]
    assert "pass rate corrected for the judge's error: undefined (the calibration holds 9 human-pass" in " ".join(res.output.split())
    res = run(["judge", cases, attempts, "--gates", str(dod), "--no-store", "-q"])  # no --calibration at all
    assert res.exit_code == 1 and "pass_rate_corrected is absent from this results file" in " ".join(res.output.split())


def test_compare_and_report_correct_recorded_runs_with_a_calibration_and_refuse_bad_ones(judged):
    tmp, cases, attempts, reg, store = judged
    for arm in ("a", "b"):
        assert run(["judge", cases, attempts, "--store", store, "--arm", arm, "-q"]).exit_code == 0
    res = run(["compare", "latest~1", "latest", "--store", store, "--calibration", reg, "--out", str(tmp / "cmp.json")])
    assert res.exit_code == 0, res.output
    cmp = json.loads((tmp / "cmp.json").read_text())
    assert cmp["corrected_pass_rate"]["a"]["estimate"] == pytest.approx(11 / 13) == cmp["corrected_pass_rate"]["b"]["estimate"]
    assert "pass rate B corrected for the judge's error 84.6%" in " ".join(res.output.split())
    res = run(["report", "latest~1", "--compare", "latest", "--store", store, "--calibration", reg, "--out", str(tmp / "c.html")])
    assert res.exit_code == 0, res.output
    assert "pass rate A corrected for the judge&#39;s error 84.6%" in (tmp / "c.html").read_text()
    # a calibration that is neither a file nor a run of the store, and a results file of another scorer: exit 2
    res = run(["report", "latest", "--store", store, "--calibration", "no-such-run", "--out", str(tmp / "x.html")])
    assert res.exit_code == 2
    (tmp / "f1.json").write_text(json.dumps({"scorer": {"name": "token_f1"}, "aggregate": {}}))
    res = run(["judge", cases, attempts, "--calibration", str(tmp / "f1.json"), "--no-store", "-q"])
    assert res.exit_code == 2 and "not 'judge_calibration'" in " ".join(res.output.split())
    # the results file never replaces the calibration file
    res = run(["judge", cases, attempts, "--calibration", reg, "--no-store", "-q", "--out", reg])
    assert res.exit_code == 2 and json.loads(open(reg).readline())["id"] == "k0"


def test_a_reviewed_run_is_a_calibration(judged):
    tmp, cases, attempts, _, store = judged
    assert run(["judge", cases, attempts, "--store", store, "-q"]).exit_code == 0
    assert run(["review", "export", "latest", "--all", "--store", store, "--out", str(tmp / "review.jsonl")]).exit_code == 0
    rows = [json.loads(line) for line in (tmp / "review.jsonl").read_text().splitlines()]
    for r in rows:  # the person overrules the judge on c0…c7 (its passes) and c80…c83 (its fails)
        i = int(r["id"][1:])
        r.update(verdict=("no_match" if i < 8 else "match") if i < 80 else ("match" if i < 84 else "no_match"), reviewer="ana")
    write(tmp / "review.jsonl", rows)
    res = run(["review", "import", str(tmp / "review.jsonl"), "--store", store, "--regressions", str(tmp / "reg2.jsonl")])
    assert res.exit_code == 0, res.output
    run_id = rows[0]["run_id"]
    res = run(["judge", cases, attempts, "--calibration", run_id, "--store", store, "--arm", "b", "--out", str(tmp / "r.json")])
    assert res.exit_code == 0, res.output
    c = json.loads((tmp / "r.json").read_text())["corrected_pass_rate"]
    # human passes: c8…c79 (judge match, 72) and c80…c83 (judge no_match, 4); human fails: c0…c7 (judge match, 8)
    # and c84…c99 (judge no_match, 16). Se = 72/76, Sp = 16/24; (0.8 + 16/24 − 1) / (72/76 + 16/24 − 1)
    assert (c["tp"], c["n_pos"], c["tn"], c["n_neg"]) == (72, 76, 16, 24) and c["calibration"]["runs"] == [run_id]
    assert c["estimate"] == pytest.approx((0.8 + 16 / 24 - 1) / (72 / 76 + 16 / 24 - 1))
    # the calibrated run was judged by this judge: nothing to warn about
    assert c["calibration"]["judge_versions"] == [JUDGE_VERSION] and c["warnings"] == []


def test_gate_corrects_a_results_file_with_a_calibration(judged):
    tmp, cases, attempts, reg, _ = judged
    assert run(["judge", cases, attempts, "--no-store", "-q", "--out", str(tmp / "r.json")]).exit_code == 0
    dod = tmp / "dod.toml"
    dod.write_text("[gates]\npass_rate_corrected_low = { min = 0.6 }\n")
    res = run(["gate", str(tmp / "r.json"), "--gates", str(dod), "--calibration", reg, "--out", str(tmp / "gated.json")])
    assert res.exit_code == 0, res.output
    gated = json.loads((tmp / "gated.json").read_text())
    assert gated["aggregate"]["pass_rate_corrected_low"] == pytest.approx(0.660877, abs=1e-6)
    assert "pass_rate_corrected" not in json.loads((tmp / "r.json").read_text())["aggregate"]  # the input is untouched
    res = run(["gate", str(tmp / "r.json"), "--gates", str(dod)])  # without it: absent, so the gate fails
    assert res.exit_code == 1


def test_the_llm_judge_stage_is_corrected_too(tmp_path):
    pytest.importorskip("openai")

    cases = [{"id": f"q{i}", "question": f"Why did metric {i} rise?", "golden": {"kind": "criteria"},
              "rubric": [f"REQUIRED: names cause {i}"]} for i in range(10)]
    attempts = [{"id": f"q{i}", "text": f"Metric {i} rose."} for i in range(10)]

    def reply(req):  # the LLM judge passes q0…q7 and fails q8, q9: raw 8/10
        user = req["messages"][1]["content"]
        i = next(k for k in range(10) if f"metric {k} rise" in user)
        v = "match" if i < 8 else "no_match"
        return Reply(content=json.dumps({"verdict": v, "confidence": 8, "why": f"{v} by the fake judge"}))

    store = str(tmp_path / "runs.db")
    with FakeOpenAI(default=reply) as srv:
        res = run(["judge", write(tmp_path / "c.jsonl", cases), write(tmp_path / "a.jsonl", attempts), "--llm", "judge-model",
                   "--base-url", srv.base_url, "--calibration", write(tmp_path / "reg.jsonl", regressions()), "--store", store,
                   "--out", str(tmp_path / "r.json")])
    assert res.exit_code == 0, res.output
    c = json.loads((tmp_path / "r.json").read_text())["corrected_pass_rate"]
    # (0.8 + 0.75 − 1) / (0.9 + 0.75 − 1) = 11/13, as in the rule judge's run: the same raw rate and calibration
    assert (c["k"], c["n"]) == (8, 10) and c["estimate"] == pytest.approx(11 / 13)
    with RunStore.open_existing(store) as st:  # the run was finished with it (not on the rule verdicts alone)
        rec = st.get_run("latest")
        assert rec["status"] == "finished" and rec["results"]["aggregate"]["pass_rate_corrected"] == pytest.approx(11 / 13)
