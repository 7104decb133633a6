"""What CI reads: JUnit XML (checked with junitparser, a JUnit reader), the Markdown step summary (and
$GITHUB_STEP_SUMMARY), and the top-level "run" block of every results file, with the hint to open its report."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from junitparser import Error, Failure, JUnitXml, Properties, Skipped

from goldeval.cli import main

REPO = Path(__file__).resolve().parents[2]
PRIMOCK = REPO / "examples" / "data" / "openscribe_primock57_predictions.jsonl"
LABELS = REPO / "examples" / "labels"
SQL = REPO / "examples" / "sql"


def run(*args, code: int = 0, env=None):
    result = CliRunner(env=env).invoke(main, [str(a) for a in args], catch_exceptions=False)
    assert result.exit_code == code, (args, result.output)
    return result


def suite_of(path: Path):
    xml = JUnitXml.fromfile(str(path))
    suites = list(xml)
    assert len(suites) == 1, "one testsuite per run"
    return suites[0]


def props(case) -> dict[str, str]:
    p = case.child(Properties)
    return {} if p is None else {x.name: x.value for x in p}


def outcome(case) -> str:
    res = case.result
    if not res:
        return "pass"
    kind = type(res[0])
    return {Failure: "failure", Error: "error", Skipped: "skipped"}[kind]


def test_labels_junit_one_testcase_per_gate_and_per_case(tmp_path):
    junit, md, out = tmp_path / "j.xml", tmp_path / "s.md", tmp_path / "r.json"
    res = run("labels", LABELS / "pilot_claims.jsonl", "--gates", LABELS / "dod.toml", "--store", tmp_path / "g.db",
              "--junit", junit, "--junit-cases", "--summary-md", md, "--out", out, code=1)
    results = json.loads(out.read_text())
    # every results file names its run; the CLI says how to open its report
    assert set(results["run"]) == {"id", "arm", "store"} and results["run"]["store"] == str(tmp_path / "g.db")
    assert f"goldeval report {results['run']['id']} --store {tmp_path / 'g.db'} --out report.html" in res.stderr
    suite = suite_of(junit)
    cases = list(suite)
    gates = [c for c in cases if c.classname == "goldeval.gates"]
    per_case = [c for c in cases if c.classname == "goldeval.cases"]
    assert len(gates) == 2 and len(per_case) == 200
    missed, precision = gates
    # README: 4 escalations missed (10.0 per 100) against the agreed 2 per 100 -> FAIL; precision 0.857 passes 0.80
    assert outcome(missed) == "failure" and outcome(precision) == "pass"
    assert missed.result[0].message == results["gates"]["gates"][0]["sentence"]
    assert missed.result[0].message.startswith("4 escalations missed (10.0 per 100) against the agreed 2 per 100")
    assert props(missed)["value"] == "10.0" and props(missed)["bound"] == "2.0" and props(missed)["op"] == "max"
    # tp 36, fp 6, fn 4, tn 154 (README): the 6 false positives and 4 missed positives fail
    assert sum(outcome(c) == "failure" for c in per_case) == 10
    assert suite.failures == 11 and suite.tests == 202
    sprops = {p.name: p.value for p in suite.properties()}
    assert sprops["run"] == results["run"]["id"] and sprops["decision"] == results["gates"]["summary"]
    text = md.read_text()
    assert "goldeval labels: FAIL" in text and results["gates"]["summary"] in text
    # the interval column (issue 29): Wilson of 4 missed in 40 gold escalations, per 100 (statsmodels: 4.0–23.1)
    assert "| missed\\_per\\_100 | ≤ 2 | 10.0 | 4.0–23.1 (95% Wilson) | **FAIL** |" in text
    # JUnit: each gate carries its interval; the passing precision gate its warning (36/42: Wilson low end 0.722)
    assert props(precision)["interval_method"] == "wilson" and float(props(precision)["ci_low"]) == pytest.approx(0.72159, abs=1e-5)
    assert "whose low end is 0.722" in props(precision)["interval_warning"]


def test_score_without_gates_one_testcase_that_fails_only_when_nothing_scored(tmp_path):
    junit, out = tmp_path / "j.xml", tmp_path / "r.json"
    run("score", PRIMOCK, "--no-store", "--junit", junit, "--junit-cases", "--junit-min-f1", "0.2", "--out", out, "-q")
    results = json.loads(out.read_text())
    assert "run" not in results  # --no-store: no run to name
    suite = suite_of(junit)
    scored = [c for c in suite if c.name == "scored"]
    assert len(scored) == 1 and outcome(scored[0]) == "pass"
    below = {e["id"] for e in results["per_example"] if e["whole_note"]["f1"] < 0.2}
    failed = {c.name for c in suite if c.classname == "goldeval.cases" and outcome(c) == "failure"}
    assert failed == below and below  # some PriMock57 notes score below 0.2
    # nothing could be scored: the testcase fails, the file is still written, the exit code stays 2
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "a", "prediction": 1, "reference": "x"}\n')
    run("score", bad, "--no-store", "--junit", junit, "-q", code=2)
    only = list(suite_of(junit))
    assert len(only) == 1 and outcome(only[0]) == "failure" and "nothing could be scored" in only[0].result[0].message


def test_judge_and_gate_junit_and_the_step_summary(tmp_path):
    junit, step = tmp_path / "j.xml", tmp_path / "step.md"
    step.write_text("earlier step\n")
    out = tmp_path / "b.json"
    run("judge", SQL / "cases.jsonl", SQL / "arm_b.jsonl", "--db", SQL / "clinic.sqlite", "--gates", SQL / "dod.toml",
        "--no-store", "--junit", junit, "--junit-cases", "--out", out, "-q", code=1, env={"GITHUB_STEP_SUMMARY": str(step)})
    results = json.loads(out.read_text())
    suite = suite_of(junit)
    gates = [c for c in suite if c.classname == "goldeval.gates"]
    assert [outcome(g) for g in gates] == ["failure", "failure"]  # pass_rate 0.000 < 0.90; n_scored 19 < 20
    per = {c.name: outcome(c) for c in suite if c.classname == "goldeval.cases"}
    want = {e["id"]: ("error" if e["status"] != "scored" else "skipped" if e.get("gold_status") == "verified_wrong"
                      else "failure" if e["verdict"] == "no_match" else "pass" if e["verdict"] == "match" else "skipped")
            for e in results["per_example"]}
    assert per == want
    # the step summary is appended to, never replaced
    text = step.read_text()
    assert text.startswith("earlier step\n") and "goldeval answer_judge: FAIL" in text
    # gate on the results file writes the same gate testcases
    junit2 = tmp_path / "g.xml"
    run("gate", out, "--gates", SQL / "dod.toml", "--junit", junit2, code=1)
    assert [c.result[0].message for c in suite_of(junit2)] == [g.result[0].message for g in gates]
    # a --junit onto the results file it reads is refused, nothing written
    before = out.read_bytes()
    assert "--junit" in run("gate", out, "--gates", SQL / "dod.toml", "--junit", out, code=2).output
    assert out.read_bytes() == before


def test_compare_and_replay_take_junit(tmp_path):
    store = tmp_path / "g.db"
    for arm in ("arm_a", "arm_b"):
        run("judge", SQL / "cases.jsonl", SQL / f"{arm}.jsonl", "--db", SQL / "clinic.sqlite", "--store", store, "--arm", arm, "-q")
    cmp = json.loads(run("compare", "latest~1", "latest", "--store", store, "--out", "-", "-q").stdout)
    junit = tmp_path / "c.xml"
    run("compare", "latest~1", "latest", "--store", store, "--fail-on-regression", "--junit", junit, "-q", code=1)
    suite = suite_of(junit)
    p2f = [c for c in suite if c.classname == "goldeval.compare.pass_to_fail"]
    assert [c.name for c in p2f] == [f["id"] for f in cmp["verdicts"]["flips"]["pass_to_fail"]] and p2f
    assert all(outcome(c) == "failure" for c in p2f)
    # an F1 comparison has no flips: --junit is refused as --fail-on-regression is
    run("score", PRIMOCK, "--store", store, "-q")
    run("score", PRIMOCK, "--store", store, "-q", "--tokenizer", "unicode")
    assert "--junit: runs" in run("compare", "latest~1", "latest", "--store", store, "--junit", junit, code=2).output


def test_compare_junit_fails_on_a_run_that_did_not_finish(tmp_path):
    # B judged q1 (a pass, as in A) and was interrupted before q2 (a pass in A): no flip, one case decided in both,
    # yet q2 is no evidence. The JUnit a CI reads fails as --fail-on-regression exits 1; finished, neither does.
    from goldeval.runs.store import RunMeta, RunStore

    store, junit = tmp_path / "g.db", tmp_path / "c.xml"
    def case(cid: str, seq: int) -> tuple:
        return (cid, seq, "scored", "match", None, None, None, json.dumps({"id": cid, "status": "scored", "verdict": "match"}))
    with RunStore(store) as st:
        a = st.create_run(RunMeta(run_key="a", scorer_name="answer_judge", scorer_version="1", dataset_hash="d"))
        st.write_cases(a, [case("q1", 0), case("q2", 1)])
        st.finish_run(a, {"aggregate": {"n": 2}})
        b = st.create_run(RunMeta(run_key="b", scorer_name="answer_judge", scorer_version="1", dataset_hash="d"))
        st.write_cases(b, [case("q1", 0)])
        st.set_status(b, "interrupted")
    run("compare", a, b, "--store", store, "--fail-on-regression", "--junit", junit, "-q", code=1)
    cases = {c.name: outcome(c) for c in suite_of(junit)}
    assert cases == {"run B finished": "failure", "decided in both runs": "pass"}
    with RunStore(store) as st:
        st.write_cases(b, [case("q2", 1)])
        st.finish_run(b, {"aggregate": {"n": 2}})
    run("compare", a, b, "--store", store, "--fail-on-regression", "--junit", junit, "-q", code=0)
    assert {c.name: outcome(c) for c in suite_of(junit)} == {"decided in both runs": "pass"}


@pytest.mark.parametrize("args", [["--junit-cases"], ["--junit-min-f1", "0.3"]])
def test_junit_shaping_options_need_junit(tmp_path, args):
    assert "--junit" in run("score", PRIMOCK, "--no-store", *args, code=2).output


def test_replay_junit_one_failure_per_changed_settled_verdict(tmp_path):
    out = tmp_path / "a.json"
    run("judge", SQL / "cases.jsonl", SQL / "arm_a.jsonl", "--db", SQL / "clinic.sqlite", "--no-store", "--out", out, "-q")
    judged = [e for e in json.loads(out.read_text())["per_example"] if e.get("verdict") == "match" and not e.get("needs_human")]
    attempts = {json.loads(x)["id"]: json.loads(x) for x in (SQL / "arm_a.jsonl").read_text().splitlines() if x.strip()}
    agreed, flipped = judged[0], judged[1]
    reg = tmp_path / "regressions.jsonl"
    # a person settled `flipped` as no_match: the judge (match) now differs from it; `agreed` stays the same
    reg.write_text(json.dumps({"id": agreed["id"], "answer": attempts[agreed["id"]], "verdict": "match", "reviewer": "ana"}) + "\n"
                   + json.dumps({"id": flipped["id"], "answer": attempts[flipped["id"]], "verdict": "no_match", "reviewer": "bo"}) + "\n")
    junit = tmp_path / "replay.xml"
    run("replay", reg, "--cases", SQL / "cases.jsonl", "--db", SQL / "clinic.sqlite", "--junit", junit, code=1)
    cases = list(suite_of(junit))
    changed = [c for c in cases if c.classname == "goldeval.replay.changed"]
    assert [c.name for c in changed] == [flipped["id"]] and outcome(changed[0]) == "failure"
    assert changed[0].result[0].message.startswith("settled no_match (by bo) -> now match")
    summary = [c for c in cases if c.name == "settled verdicts unchanged"]
    assert len(summary) == 1 and outcome(summary[0]) == "failure"
