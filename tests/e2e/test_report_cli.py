"""``goldeval report`` as a user runs it: from the store, from a results file, compare, and its usage errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from goldeval.cli import main

REPO = Path(__file__).resolve().parents[2]
PRIMOCK = REPO / "examples" / "data" / "openscribe_primock57_predictions.jsonl"
LABELS = REPO / "examples" / "labels"


def run(*args, code: int = 0):
    result = CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)
    assert result.exit_code == code, (args, result.output)
    return result


def _data(html: str) -> dict:
    start = html.index('<script type="application/json" id="goldeval-data">') + len('<script type="application/json" id="goldeval-data">')
    return json.loads(html[start:html.index("</script>", start)])


def test_labels_report_from_the_store_shows_the_decision_and_every_case(tmp_path):
    store = tmp_path / "g.db"
    run("labels", LABELS / "pilot_claims.jsonl", "--gates", LABELS / "dod.toml", "--store", store, code=1)
    out = tmp_path / "r.html"
    res = run("report", "latest", "--store", store, "--out", out)
    assert "report written to" in res.stderr and "FAIL, 200 case(s) embedded" in res.stderr
    html = out.read_text(encoding="utf-8")
    d = _data(html)
    assert d["kind"] == "labels" and d["decision"]["status"] == "FAIL"
    # the gate line the CLI prints (README: 4 escalations missed against 2 per 100, 0 allowed on these 40)
    assert d["decision"]["summary"].startswith("FAIL: 4 escalations missed (10.0 per 100) against the agreed 2 per 100")
    assert [g["passed"] for g in d["decision"]["gates"]] == [False, True]
    outcomes = [c["outcome"] for c in d["cases"]]
    assert (outcomes.count("tp"), outcomes.count("fp"), outcomes.count("fn"), outcomes.count("tn")) == (36, 6, 4, 154)
    assert sum(c["bucket"] == "fail" for c in d["cases"]) == 10  # a false positive or a missed positive fails
    assert "confusion matrix" in html and "agreed_by" in html


def test_report_from_a_results_file_and_usage_errors(tmp_path):
    res_path = tmp_path / "r.json"
    run("score", PRIMOCK, "--no-store", "--out", res_path, "-q")
    out = tmp_path / "r.html"
    run("report", "--results", res_path, "--out", out)
    d = _data(out.read_text(encoding="utf-8"))
    assert len(d["cases"]) == 57 and d["cases"][0]["prediction"]
    assert "neither" in run("report", "--out", out, code=2).output
    assert "not both" in run("report", "latest", "--results", res_path, "--out", out, code=2).output
    # an --out that is the results file it reads is refused before anything is written
    before = res_path.read_bytes()
    assert "is the --results input" in run("report", "--results", res_path, "--out", res_path, code=2).output
    assert res_path.read_bytes() == before


def test_report_refuses_to_write_over_the_store(tmp_path):
    store = tmp_path / "g.db"
    run("score", PRIMOCK, "--store", store, "-q")
    before = store.read_bytes()
    assert "is the --store input" in run("report", "latest", "--store", store, "--out", store, code=2).output
    assert store.read_bytes() == before


def test_report_of_an_unknown_run_says_how_to_list_the_runs(tmp_path):
    store = tmp_path / "g.db"
    run("score", PRIMOCK, "--store", store, "-q")
    out = run("report", "nosuchrun", "--store", store, "--out", tmp_path / "x.html", code=2).output
    assert "no run 'nosuchrun'" in out and "goldeval runs list" in out
    assert not (tmp_path / "x.html").exists()


def test_report_refuses_to_write_over_an_input_file_of_the_run(tmp_path):
    # Found by a new user's try: `goldeval report latest --out preds.jsonl` replaced the run's own input file (the
    # file the page reads the case texts back from) with HTML, exit 0. Expected: refused like any other output
    # onto an input (issue 10 item 1: exit 2, nothing written), in every mode that reads the run's inputs.
    store = tmp_path / "g.db"
    preds = tmp_path / "preds.jsonl"
    preds.write_bytes(PRIMOCK.read_bytes())
    run("score", preds, "--store", store, "-q", "--out", tmp_path / "res.json")
    before = preds.read_bytes()
    out = run("report", "latest", "--store", store, "--out", preds, code=2).output
    assert "is the run's predictions input" in out and "Choose another path for --out" in out
    assert preds.read_bytes() == before
    # compare mode: either run's inputs
    run("score", preds, "--store", store, "-q", "--tokenizer", "unicode")
    assert "is the run's predictions input" in run("report", "latest~1", "--compare", "latest", "--store", store,
                                                   "--out", preds, code=2).output
    # a results file names its input too (a link to it is the same file)
    link = tmp_path / "link.jsonl"
    link.symlink_to(preds)
    assert "predictions input" in run("report", "--results", tmp_path / "res.json", "--out", link, code=2).output
    # --redact reads no text, but the file is still the run's input and is not replaced
    assert "predictions input" in run("report", "latest", "--redact", "--store", store, "--out", preds, code=2).output
    assert preds.read_bytes() == before
    # the judge's cases, attempts and database
    sql = REPO / "examples" / "sql"
    for name in ("cases.jsonl", "arm_a.jsonl", "clinic.sqlite"):
        (tmp_path / name).write_bytes((sql / name).read_bytes())
    run("judge", tmp_path / "cases.jsonl", tmp_path / "arm_a.jsonl", "--db", tmp_path / "clinic.sqlite", "--store", store, "-q")
    for name, role in (("cases.jsonl", "cases"), ("arm_a.jsonl", "attempts"), ("clinic.sqlite", "db")):
        before = (tmp_path / name).read_bytes()
        assert f"is the run's {role} input" in run("report", "latest", "--store", store, "--out", tmp_path / name, code=2).output
        assert (tmp_path / name).read_bytes() == before


def test_a_judge_run_with_llm_calls_shows_each_call_with_its_raw_answer(tmp_path, monkeypatch):
    # Reuses the cases of test_judge_llm_cli: j4 (prose against a table) goes to the LLM judge, which answers match.
    pytest.importorskip("openai")
    from fake_openai_server import FakeOpenAI, Reply
    from test_judge_llm_cli import ATTEMPTS, CASES, write

    monkeypatch.setenv("GOLDEVAL_HOME", str(tmp_path / "home"))
    cases, attempts = write(tmp_path / "cases.jsonl", CASES), write(tmp_path / "attempts.jsonl", ATTEMPTS)
    raw = '{"verdict": "match", "confidence": 8, "why": "The prose states all three counts."}'
    store = tmp_path / "g.db"
    with FakeOpenAI(default=lambda req: Reply(content=raw)) as srv:
        run("judge", cases, attempts, "--llm", "judge-model", "--base-url", srv.base_url, "--store", store, "-q")
    out = tmp_path / "r.html"
    run("report", "latest", "--store", store, "--out", out)
    d = _data(out.read_text(encoding="utf-8"))
    j4 = next(c for c in d["cases"] if c["id"] == "j4")
    assert j4["decided_by"] == "llm" and j4["rule"]["verdict"] == "needs_human"
    assert [c["raw"] for c in j4["llm_calls"]] == [raw] and j4["llm_calls"][0]["verdict"]["verdict"] == "match"
    assert j4["text"] == "Cardiology had 12, Oncology 7 and Surgery 9 admissions."  # the answer, read back from ATTEMPTS
    assert "judge-model" in json.dumps(d["header"])
    # --redact keeps the verdicts and drops the judge's text
    run("report", "latest", "--store", store, "--out", out, "--redact")
    red = out.read_text(encoding="utf-8")
    assert "The prose states all three counts" not in red and "Surgery 9" not in red and '"j4"' in red


def test_an_llm_judge_run_is_reported_as_data_answers_with_its_calls(tmp_path, monkeypatch):
    # `goldeval llm-judge` (scorer llm_judge) records the same per-case records as `judge --llm`: the page shows its
    # verdicts, each call's prompt, model, raw answer and parsed verdict, and the texts read back from the stored
    # run's inputs. Its --out names each input by sha256 only, so a report of that file says where to get the texts.
    pytest.importorskip("openai")
    from fake_openai_server import FakeOpenAI, Reply
    from test_llm_judge_cli import ATTEMPTS, CASES, write

    monkeypatch.setenv("GOLDEVAL_HOME", str(tmp_path / "home"))
    cases, attempts = write(tmp_path / "cases.jsonl", CASES), write(tmp_path / "attempts.jsonl", ATTEMPTS)
    raw = '{"verdict": "no_match", "confidence": 8, "why": "Wrong population."}'
    store, results = tmp_path / "g.db", tmp_path / "r.json"
    with FakeOpenAI(default=lambda req: Reply(content=raw)) as srv:
        run("llm-judge", cases, attempts, "--llm", "judge-model", "--base-url", srv.base_url, "--store", store,
            "--out", results, "-q")
        prompts = [r["messages"][1]["content"] for r in srv.requests]
    out = tmp_path / "r.html"
    run("report", "latest", "--store", store, "--out", out)
    d = _data(out.read_text(encoding="utf-8"))
    assert d["kind"] == "answers" and d["llm"]["model"] == "judge-model"
    a3 = next(c for c in d["cases"] if c["id"] == "a3")
    assert a3["verdict"] == "no_match" and a3["question"] == "Revenue in 2024?"  # read back from cases.jsonl
    (call,) = a3["llm_calls"]
    assert call["raw"] == raw and call["verdict"]["verdict"] == "no_match" and call["verdict"]["confidence"] == 8
    assert call["user_prompt"] in prompts and "1900000" in call["user_prompt"]  # the prompt as sent, a3's answer in it
    assert call["response_model"] == "judge-model"  # the fake endpoint answers as the model asked
    run("report", "--results", results, "--out", out)
    page = out.read_text(encoding="utf-8")
    d = _data(page)
    assert d["kind"] == "answers" and "question" not in next(c for c in d["cases"] if c["id"] == "a3")
    assert any("records its inputs' sha256, not their paths" in n for n in d["notes"])
    # --redact: each call's numbers and verdict, no prompt, raw answer or why
    run("report", "latest", "--store", store, "--out", out, "--redact")
    d = _data(out.read_text(encoding="utf-8"))
    (call,) = next(c for c in d["cases"] if c["id"] == "a3")["llm_calls"]
    assert call["verdict"] == {"verdict": "no_match", "confidence": 8, "needs_human": False}
    assert not {"raw", "user_prompt", "nonce"} & set(call) and "Wrong population" not in out.read_text(encoding="utf-8")


def test_the_verdict_chart_counts_each_case_as_the_summary_does(tmp_path):
    # newcomer F5: on the clinic's arm B the chart said no_match 16 and the summary 15. q19's golden is
    # verified_wrong (README: "verified_wrong 1"); its verdict is no_match, but the pass rate counts it only under
    # verified_wrong. The README's arm B line: 0 / 15 decided, near_match 1, needs_human 2, unscored 3 (q16, q17,
    # q22); n 22 = 0 + 15 + 1 + 2 + 3 + 1.
    sql = REPO / "examples" / "sql"
    res = tmp_path / "b.json"
    run("judge", sql / "cases.jsonl", sql / "arm_b.jsonl", "--db", sql / "clinic.sqlite", "--no-store", "--out", res, "-q")
    out = tmp_path / "b.html"
    run("report", "--results", res, "--out", out)
    d = _data(out.read_text(encoding="utf-8"))
    html = out.read_text(encoding="utf-8")
    expected = {"match": 0, "no_match": 15, "near_match": 1, "needs_human": 2, "unscored": 3, "verified_wrong": 1}
    summary = dict(d["summary"]["items"])
    assert {k: summary[k] for k in expected} == expected
    assert "counted there (out of the pass rate) whatever its verdict" in html
    q19 = next(c for c in d["cases"] if c["id"] == "q19")
    assert (q19["verdict"], q19["gold_status"], q19["bucket"]) == ("no_match", "verified_wrong", "verified_wrong")
    from goldeval.report.build import read_results_file
    from goldeval.report.model import build_model

    assert build_model(read_results_file(str(res)))["charts"][0]["counts"] == expected  # the bars drawn



def test_report_compares_two_results_files(tmp_path):
    # PriMock57 under openscribe (A) and under unicode (B): the same published predictions, two tokenizers. The
    # README's compare of these two runs: 57 in both, 0 up, 2 down (day4_consultation01 and 05, -0.0010 each).
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    run("score", PRIMOCK, "--no-store", "--out", a, "-q")
    run("score", PRIMOCK, "--no-store", "--tokenizer", "unicode", "--out", b, "-q")
    out = tmp_path / "cmp.html"
    run("report", "--results", a, "--compare", b, "--out", out)
    d = _data(out.read_text(encoding="utf-8"))
    c = d["compare"]
    # the cases and the F1 means are the verdict's (said once, at the top of the page), the note among the lines
    verdict = dict(c["verdict"]["items"])
    assert verdict["cases"] == "57 in both · 0 added in B · 0 removed from A"
    assert verdict["F1 over the cases scored in both"] == "A 0.2786 → B 0.2786 over 57 case(s) · 0 up, 2 down, 55 unchanged"
    assert c["verdict"]["status"] == "NO VERDICTS" and c["verdict"]["decision"]["applies"] is False
    assert any(ln.startswith("note: the runs were measured differently (") and "tokenizer: openscribe → unicode" in ln
               for ln in c["stat_lines"])
    assert [m["id"] for m in c["movers"]] == ["day4_consultation01", "day4_consultation05"]
    assert sorted(r["id"] for r in d["cases"] if r["changed"]) == ["day4_consultation01", "day4_consultation05"]
    assert all(r["prediction"] for r in d["cases"])  # B's texts, read back from the input it names
    assert [row[1] for row in d["header_a"] if row[0] == "tokenizer"][0].startswith("openscribe@1")
    # --out onto B, or onto an input B names, is refused before anything is written
    before = b.read_bytes()
    assert "is the --compare input" in run("report", "--results", a, "--compare", b, "--out", b, code=2).output
    assert b.read_bytes() == before
    assert "no such file" in run("report", "--results", a, "--compare", tmp_path / "nope.json", "--out", out, code=2).output


def test_report_compares_two_judge_results_files_as_compare_does_two_runs(tmp_path):
    # arm A then arm B of the clinic example (examples/sql/README.md's table). B's 15 no_match are every case but
    # q9 (near_match), q13, q14 (needs_human), q16, q17, q22 (unscored) and q19 (verified_wrong); A matched all of
    # them except q11, which A left to a human (prose mustNotUse). So 14 pass -> fail, 0 fail -> pass, and McNemar's
    # exact two-sided p is 2 * 0.5**14 = 1.22e-04. The same flips as `goldeval compare` on the two recorded runs.
    sql = REPO / "examples" / "sql"
    store = tmp_path / "g.db"
    files = {}
    for arm in ("arm_a", "arm_b"):
        files[arm] = tmp_path / f"{arm}.json"
        run("judge", sql / "cases.jsonl", sql / f"{arm}.jsonl", "--db", sql / "clinic.sqlite", "--store", store,
            "--arm", arm, "--out", files[arm], "-q")
    out = tmp_path / "cmp.html"
    run("report", "--results", files["arm_a"], "--compare", files["arm_b"], "--out", out)
    d = _data(out.read_text(encoding="utf-8"))
    flips = d["compare"]["flips"]
    assert [f["id"] for f in flips["pass_to_fail"]] == ["q01", "q02", "q03", "q04", "q05", "q06", "q07", "q08", "q10",
                                                        "q12", "q15", "q18", "q20", "q21"]
    assert flips["fail_to_pass"] == []
    assert d["compare"]["mcnemar"]["b"] == 14 and d["compare"]["mcnemar"]["c"] == 0
    assert abs(d["compare"]["mcnemar"]["p_value"] - 2 * 0.5 ** 14) < 1e-12
    stored = json.loads(run("compare", "latest~1", "latest", "--store", store, "--out", "-", "-q").stdout)
    assert [f["id"] for f in flips["pass_to_fail"]] == [f["id"] for f in stored["verdicts"]["flips"]["pass_to_fail"]]
    # the run block names each run, so the page names them as the store would
    assert d["compare"]["runs"]["a"]["arm"] == "arm_a" and d["compare"]["runs"]["b"]["arm"] == "arm_b"
    # a verdict run and an F1 run cannot be compared case by case
    f1 = tmp_path / "f1.json"
    run("score", PRIMOCK, "--no-store", "--out", f1, "-q")
    assert "cannot be compared case by case" in run("report", "--results", files["arm_a"], "--compare", f1, "--out", out, code=2).output


def test_report_compares_two_results_files_as_it_compares_the_two_recorded_runs(tmp_path):
    # break-fix (hH, 2026-12-05): two score runs whose unscored rows differ (A: c0..c5 with c1 unscored, its
    # prediction a number; B: c2..c7 with c4 unscored). `report RUN --compare RUN_B` (the store, which records an
    # unscored case) said "4 in both · 2 added in B · 2 removed from A" and c4 "scored in one run only"; `report
    # --results a.json --compare b.json` read per_example alone, so an unscored case was no case of its run: "3 in
    # both · 2 added in B · 2 removed from A", c4 among the removed though B holds it, c1 nowhere. Expected, by hand:
    # in both c2, c3, c4, c5; added c6, c7; removed c0, c1; scored in one only c4 (c1 is in A only); the page's
    # comparison the same from the files as from the store, apart from what names and dates the runs.
    def rows(ids, unscored):
        return "".join(json.dumps({"id": f"c{i}", "prediction": 42 if i == unscored else f"bp {i} stable",
                                   "reference": f"bp {i % 3} stable"}) + "\n" for i in ids)

    store = tmp_path / "g.db"
    for name, ids, unscored in (("a", range(0, 6), 1), ("b", range(2, 8), 4)):
        (tmp_path / f"{name}.jsonl").write_text(rows(ids, unscored))
        run("score", tmp_path / f"{name}.jsonl", "--store", store, "--out", tmp_path / f"{name}.json", "-q")
    run("report", "--results", tmp_path / "a.json", "--compare", tmp_path / "b.json", "--out", tmp_path / "f.html")
    run("report", "latest~1", "--compare", "latest", "--store", store, "--out", tmp_path / "s.html")
    files, stored = (_data((tmp_path / f"{n}.html").read_text(encoding="utf-8"))["compare"] for n in ("f", "s"))
    assert dict(files["verdict"]["items"])["cases"] == "4 in both · 2 added in B · 2 removed from A"
    assert (files["added"], files["removed"], files["n_common"]) == (["c6", "c7"], ["c0", "c1"], 4)
    assert files["stat_lines"] == ["scored in one run only: 1"]
    for k in stored.keys() - {"runs", "verdict", "text"}:  # (those name the runs, and the store's their dates too)
        assert files[k] == stored[k], k
    assert files["verdict"]["items"] == stored["verdict"]["items"]


def test_report_refuses_to_replace_an_existing_file_that_is_no_page(tmp_path):
    # a newcomer typed a shipped example's path after --out (a file no input of this run): the report replaced it.
    # An existing file is replaced only when its name says it is a page; a new path of any name is written.
    res_path = tmp_path / "r.json"
    run("score", PRIMOCK, "--no-store", "--out", res_path, "-q")
    data = tmp_path / "other_preds.jsonl"
    data.write_text('{"id": "a", "prediction": "x", "reference": "x"}\n', encoding="utf-8")
    before = data.read_bytes()
    assert "not an .html page" in run("report", "--results", res_path, "--out", data, code=2).output
    assert data.read_bytes() == before
    old_page = tmp_path / "old.HTML"
    old_page.write_text("<p>last week's page</p>", encoding="utf-8")
    run("report", "--results", res_path, "--out", old_page)  # a page is replaced, as --out always does
    assert "<!doctype html>" in old_page.read_text(encoding="utf-8").lower()
    run("report", "--results", res_path, "--out", tmp_path / "new.page")  # a new file may have any name
    assert (tmp_path / "new.page").stat().st_size > 0


def test_a_run_made_with_a_relative_path_reports_its_texts_from_another_folder(tmp_path, monkeypatch):
    # A run records each input as typed (a relative path, shown as such) and, beside it, the absolute path it had
    # when the run was made: `goldeval report` from another folder found no texts before ("not found from ...").
    work, elsewhere = tmp_path / "work", tmp_path / "elsewhere"
    (work / "data").mkdir(parents=True)
    elsewhere.mkdir()
    (work / "data" / "p.jsonl").write_bytes(PRIMOCK.read_bytes())
    store = tmp_path / "g.db"
    monkeypatch.chdir(work)
    run("score", "data/p.jsonl", "--store", store, "-q")
    monkeypatch.chdir(elsewhere)
    from goldeval.runs.store import RunStore

    with RunStore(store) as s:
        recorded = s.list_runs()[0]["inputs"]["predictions"]
    assert recorded["path"] == "data/p.jsonl" and recorded["abspath"] == str(work / "data" / "p.jsonl")
    out = elsewhere / "r.html"
    res = run("report", "latest", "--store", store, "--out", out)
    html = out.read_text(encoding="utf-8")
    assert "is not found from" not in html + res.stderr
    first = json.loads(PRIMOCK.read_text(encoding="utf-8").splitlines()[0])
    text = next(v for k, v in first.items() if k not in ("id",) and isinstance(v, str) and len(v) > 40)
    assert json.dumps(text[:30])[1:-1] in html  # the prediction or reference text is embedded


def test_runs_page_from_the_cli_and_its_usage_errors(tmp_path):
    # issue 29 item 4: `goldeval report --runs [--arm A] [--since DATE] --out runs.html`
    store = tmp_path / "g.db"
    run("score", PRIMOCK, "--store", store, "--arm", "openscribe", "-q")
    run("score", PRIMOCK, "--store", store, "--arm", "unicode", "--tokenizer", "unicode", "-q")
    out = tmp_path / "runs.html"
    res = run("report", "--runs", "--store", store, "--out", out)
    assert "runs page written to" in res.stderr and "2 run(s), 2 chart(s)" in res.stderr
    html = out.read_text(encoding="utf-8")
    assert html.count('<tr class="run ') == 2 and "default-src &#39;none&#39;" in html
    res = run("report", "--runs", "--arm", "unicode", "--since", "2000-01-01", "--store", store, "--out", out)
    assert "1 run(s), 1 chart(s)" in res.stderr
    assert out.read_text(encoding="utf-8").count('<tr class="run ') == 1
    # usage errors (exit 2), each before anything is written
    assert "no run in store" in run("report", "--runs", "--arm", "nobody", "--store", store, "--out", out, code=2).output
    assert "--since 'May 3rd': expected a date" in run("report", "--runs", "--since", "May 3rd", "--store", store, "--out", out, code=2).output
    assert "takes no RUN" in run("report", "latest", "--runs", "--store", store, "--out", out, code=2).output
    assert "pass --runs too" in run("report", "latest", "--arm", "unicode", "--store", store, "--out", out, code=2).output
    assert "--tag chooses the runs" in run("report", "latest", "--tag", "x", "--store", store, "--out", out, code=2).output
    # --tag: the runs that carry it
    run("runs", "tag", "latest", "baseline/main", "--store", store)
    res = run("report", "--runs", "--tag", "baseline/main", "--store", store, "--out", out)
    assert "1 run(s)" in res.stderr and "baseline/main" in out.read_text(encoding="utf-8")
    before = store.read_bytes()
    assert "is the --store" in run("report", "--runs", "--store", store, "--out", store, code=2).output
    assert store.read_bytes() == before
