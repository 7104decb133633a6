"""`goldeval check-goldens CASES --db/--db-dir`: the golden health table, --out JSON / JSONL, the gateable
--results file, gates (exit 1), bad input (exit 2), and no output over an input (issue 26, item 6).

The fixture, by hand: ``pet(kind)`` holds 'Dog', 'Dog', 'Cat'. Four cases:

* ``ok``     ``SELECT count(*) FROM pet WHERE kind = 'Dog'`` → 2: healthy;
* ``wrong``  ``… WHERE kind = 'dog'`` → 0, and 'dog' holds 2 rows case-folded: verified_wrong (literal);
* ``empty``  ``SELECT kind FROM pet WHERE kind = 'Bird'`` → no row: suspect (empty);
* ``broken`` ``SELECT colour FROM pet`` → no such column: broken (query_runs).

So n_cases 4, n_healthy 1, n_suspect 1, n_verified_wrong 1, n_broken 1, share_healthy 0.25.
"""

from __future__ import annotations

import json
import sqlite3

import pytest
from click.testing import CliRunner
from conftest import REPO, SHARED

from goldeval.cli import main

SPIDER = SHARED / "data" / "spider"


@pytest.fixture
def ex(tmp_path):
    db = tmp_path / "pets.sqlite"
    con = sqlite3.connect(db)
    con.execute("CREATE TABLE pet (kind TEXT)")
    con.executemany("INSERT INTO pet VALUES (?)", [("Dog",), ("Dog",), ("Cat",)])
    con.commit()
    con.close()
    queries = {"ok": "SELECT count(*) FROM pet WHERE kind = 'Dog'", "wrong": "SELECT count(*) FROM pet WHERE kind = 'dog'",
               "empty": "SELECT kind FROM pet WHERE kind = 'Bird'", "broken": "SELECT colour FROM pet"}
    questions = {"ok": "How many dogs?", "wrong": "How many dogs?", "empty": "Which pets are birds?", "broken": "What colours?"}
    cases = tmp_path / "cases.jsonl"
    cases.write_text("".join(json.dumps({"id": k, "question": questions[k], "golden": {"kind": "value", "canonical_query": q}}) + "\n"
                             for k, q in queries.items()))
    return tmp_path


def run(*args):
    return CliRunner().invoke(main, ["check-goldens", *map(str, args)])


def test_the_table_lists_each_doubted_case_with_its_check_and_the_summary_line(ex):
    r = run(ex / "cases.jsonl", "--db", ex / "pets.sqlite")
    assert r.exit_code == 0, r.output
    rows = {line.split()[0]: line.split()[1:3] for line in r.output.splitlines()
            if len(line.split()) > 2 and line.split()[0] in ("ok", "wrong", "empty", "broken")
            and line.split()[1] in ("healthy", "suspect", "verified_wrong", "broken")}
    assert rows == {"wrong": ["verified_wrong", "literal"], "empty": ["suspect", "empty"], "broken": ["broken", "query_runs"]}
    summary = " ".join(r.output.split())
    assert ("share healthy 25.0% = 1 healthy / 4 cases · suspect 1 · verified_wrong 1 · broken 1" in summary), r.output


@pytest.mark.parametrize("name", ["health.json", "health.jsonl"])
def test_out_is_json_or_jsonl_by_its_extension(ex, name):
    out = ex / name
    r = run(ex / "cases.jsonl", "--db", ex / "pets.sqlite", "-q", "--out", out)
    assert r.exit_code == 0 and r.output == "", r.output
    if name.endswith(".jsonl"):
        lines = [json.loads(x) for x in out.read_text().splitlines()]
        per, rest = lines[:-1], lines[-1]
    else:
        doc = json.loads(out.read_text())
        per, rest = doc["per_example"], doc
    assert [(c["id"], c["status"], c["check"]) for c in per] == [
        ("ok", "healthy", None), ("wrong", "verified_wrong", "literal"), ("empty", "suspect", "empty"),
        ("broken", "broken", "query_runs")]
    assert "no such column: colour" in per[3]["note"]
    assert rest["aggregate"]["share_healthy"] == 0.25 and rest["scorer"]["name"] == "golden_health"


def test_an_out_without_json_or_jsonl_extension_is_bad_input(ex):
    r = run(ex / "cases.jsonl", "--db", ex / "pets.sqlite", "--out", ex / "health.txt")
    assert r.exit_code == 2 and ".json or .jsonl" in r.output
    assert not (ex / "health.txt").exists()


def test_the_results_file_holds_the_gateable_counts_and_goldeval_gate_reads_it(ex):
    res = ex / "res.json"
    r = run(ex / "cases.jsonl", "--db", ex / "pets.sqlite", "-q", "--results", res)
    assert r.exit_code == 0, r.output
    doc = json.loads(res.read_text())
    agg = doc["aggregate"]
    assert {k: agg[k] for k in ("n_cases", "n_healthy", "n_suspect", "n_verified_wrong", "n_broken", "share_healthy")} == {
        "n_cases": 4, "n_healthy": 1, "n_suspect": 1, "n_verified_wrong": 1, "n_broken": 1, "share_healthy": 0.25}
    assert doc["scorer"] == {"name": "golden_health", "version": doc["scorer"]["version"]}
    assert [c["status"] for c in doc["per_example"]] == ["healthy", "verified_wrong", "suspect", "broken"]
    assert CliRunner().invoke(main, ["report", "--results", str(res), "--out", str(ex / "rep.html")]).exit_code == 0
    dod = ex / "dod.toml"
    dod.write_text("[gates]\nshare_healthy = { min = 0.25 }\nn_broken = { max = 1 }\n")  # inclusive: both pass
    assert CliRunner().invoke(main, ["gate", str(res), "--gates", str(dod), "-q"]).exit_code == 0
    dod.write_text("[gates]\nn_verified_wrong = { max = 0 }\n")
    assert CliRunner().invoke(main, ["gate", str(res), "--gates", str(dod), "-q"]).exit_code == 1


def test_a_failing_gate_exits_1_and_a_passing_one_0(ex):
    r = run(ex / "cases.jsonl", "--db", ex / "pets.sqlite", "-q", "--gate", "share_healthy>=0.95")
    assert r.exit_code == 1 and "FAIL: share_healthy 0.250 fails 0.95" in " ".join(r.output.split()), r.output
    assert run(ex / "cases.jsonl", "--db", ex / "pets.sqlite", "-q", "--gate", "share_healthy>=0.25",
               "--gate", "n_suspect<=1").exit_code == 0
    dod = ex / "dod.toml"
    dod.write_text("[gates]\nn_verified_wrong = { max = 0 }\n")
    res = ex / "res.json"
    r = run(ex / "cases.jsonl", "--db", ex / "pets.sqlite", "-q", "--gates", dod, "--results", res)
    assert r.exit_code == 1 and json.loads(res.read_text())["gates"]["passed"] is False


def test_a_slice_gate_is_refused_before_any_golden_is_checked(ex):
    # check-goldens has no --slice-by: a [gates.slices.NAME] gate ran every check, then failed (exit 1) with "score it
    # with --slice-by FIELD", a flag it does not have. It is bad input (exit 2), as on a scoring command without
    # --slice-by, and nothing is written
    dod = ex / "dod.toml"
    dod.write_text("[gates]\nshare_healthy = { min = 0.2 }\n[gates.slices.hard]\nshare_healthy = { min = 0.5 }\n")
    res = ex / "res.json"
    r = run(ex / "cases.jsonl", "--db", ex / "pets.sqlite", "-q", "--gates", dod, "--results", res)
    assert r.exit_code == 2 and "dod.toml:4: gate on 'share_healthy' of slice 'hard'" in " ".join(r.output.split()), r.output
    assert not res.exists()
    # healthy: the whole-run gate alone is applied (1 healthy of 4 by the fixture: 0.25 >= 0.2)
    dod.write_text("[gates]\nshare_healthy = { min = 0.2 }\n")
    assert run(ex / "cases.jsonl", "--db", ex / "pets.sqlite", "-q", "--gates", dod).exit_code == 0


@pytest.mark.parametrize("text", ["", "\n\n"])
def test_a_case_file_without_a_case_passes_no_gate(ex, text):
    # An empty case file is bad input (exit 2) and leaves no results file for a later `goldeval gate` to pass; the
    # library's own empty denominator is undefined and fails every gate on share_healthy
    # (tests/unit/test_golden_health.py::test_no_case_gives_an_undefined_share_that_no_gate_passes).
    blank = ex / "blank.jsonl"
    blank.write_text(text)
    res = ex / "res.json"
    r = run(blank, "--db", ex / "pets.sqlite", "--gate", "share_healthy>=0", "--results", res)
    assert r.exit_code == 2 and "blank.jsonl" in r.output, r.output
    assert not res.exists()
    assert CliRunner().invoke(main, ["gate", str(res), "--gates", str(_dod(ex))]).exit_code == 2


def test_a_limit_python_reads_and_toml_does_not_is_read_as_the_number_it_is(ex):
    # --gate 'share_healthy>=.95' was refused (exit 2) with "--gate: not valid TOML: Invalid value (at line 2, column
    # 25)", about a TOML text the user never wrote; .95 is 0.95 (the fixture: 1 healthy of 4, 0.25 fails it)
    r = run(ex / "cases.jsonl", "--db", ex / "pets.sqlite", "-q", "--gate", "share_healthy>=.95")
    assert r.exit_code == 1 and "FAIL: share_healthy 0.250 fails 0.95" in " ".join(r.output.split()), r.output
    assert run(ex / "cases.jsonl", "--db", ex / "pets.sqlite", "-q", "--gate", "share_healthy>=.25").exit_code == 0


def _dod(ex):
    dod = ex / "dod.toml"
    dod.write_text("[gates]\nshare_healthy = { min = 0.0 }\n")
    return dod


@pytest.mark.parametrize("args, says", [
    ([], "give --db"),
    (["--db", "pets.sqlite", "--gate", "share_healthy>0.9"], "expected METRIC>=NUMBER"),
    (["--db", "pets.sqlite", "--gate", "share_healthy>=high"], "is not a number"),
    (["--db", "pets.sqlite", "--gate", "pass_rate>=0.9"], "never produces it"),
    (["--db", "pets.sqlite", "--gate", "share_helthy>=0.9"], "share_helthy"),
    # numbers Python reads and TOML does not: the limit's own message, not "--gate: not valid TOML ... column 25"
    (["--db", "pets.sqlite", "--gate", "share_healthy>=95."], "min = 95.0 is outside the metric's range [0, 1]"),
    (["--db", "pets.sqlite", "--gate", "share_healthy>=NaN"], "min must be a finite number, got nan"),
    (["--db", "missing.sqlite"], "missing.sqlite"),
])
def test_bad_input_exits_2_with_a_message(ex, args, says):
    r = run(ex / "cases.jsonl", *[str(ex / a) if a.endswith(".sqlite") else a for a in args])
    assert r.exit_code == 2, r.output
    assert says in r.output


def test_a_missing_case_file_exits_2(ex):
    r = run(ex / "nope.jsonl", "--db", ex / "pets.sqlite")
    assert r.exit_code == 2 and "no such file" in r.output


@pytest.mark.parametrize("flag", ["--out", "--results"])
def test_no_output_overwrites_the_case_file_or_the_database(ex, flag):
    before = (ex / "cases.jsonl").read_bytes()
    r = run(ex / "cases.jsonl", "--db", ex / "pets.sqlite", flag, ex / "cases.jsonl")
    assert r.exit_code == 2 and "CASES" in r.output, r.output
    assert (ex / "cases.jsonl").read_bytes() == before
    r = run(ex / "cases.jsonl", "--db", ex / "pets.sqlite", "--out", ex / "h.json", "--results", ex / "h.json")
    assert r.exit_code == 2


def test_db_dir_checks_each_case_on_the_database_it_names(ex):
    dbs = ex / "dbs"
    (dbs / "pets").mkdir(parents=True)
    (ex / "pets.sqlite").rename(dbs / "pets" / "pets.sqlite")  # Spider's layout
    cases = ex / "named.jsonl"
    cases.write_text(json.dumps({"id": "a", "db": "pets", "golden": {"canonical_query": "SELECT count(*) FROM pet"}}) + "\n"
                     + json.dumps({"id": "b", "db": "zoo", "golden": {"canonical_query": "SELECT 1"}}) + "\n")
    out = ex / "h.jsonl"
    r = run(cases, "--db-dir", dbs, "-q", "--out", out)
    assert r.exit_code == 0, r.output
    per = [json.loads(x) for x in out.read_text().splitlines()][:-1]
    assert [(c["id"], c["status"], c["check"]) for c in per] == [("a", "healthy", None), ("b", "broken", "database")]
    assert "'zoo' is not under --db-dir" in per[1]["note"]


def test_the_query_guard_the_time_limit_and_allow_function_apply_as_in_judge(ex):
    cases = ex / "guarded.jsonl"
    queries = {"slow": "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c",
               "write": "DELETE FROM pet", "option": "SELECT sqlite_compileoption_used('THREADSAFE')"}
    cases.write_text("".join(json.dumps({"id": k, "golden": {"canonical_query": q}}) + "\n" for k, q in queries.items()))
    out = ex / "g.json"
    assert run(cases, "--db", ex / "pets.sqlite", "--timeout", "0.5", "-q", "--out", out).exit_code == 0
    per = {c["id"]: c for c in json.loads(out.read_text())["per_example"]}
    assert {k: (c["status"], c["check"]) for k, c in per.items()} == {
        "slow": ("broken", "query_runs"), "write": ("broken", "query_runs"), "option": ("broken", "query_runs")}
    assert "past the 0.5 s time limit" in per["slow"]["note"]
    assert "sqlite_compileoption_used() is not on goldeval's list" in per["option"]["note"]
    # --allow-function lets it run; the pet table is still whole (3 rows: nothing was written)
    assert run(cases, "--db", ex / "pets.sqlite", "--timeout", "0.5", "-q", "--out", out, "--allow-function", "sqlite_compileoption_used").exit_code == 0
    assert [c["status"] for c in json.loads(out.read_text())["per_example"]] == ["broken", "broken", "healthy"]
    assert sqlite3.connect(ex / "pets.sqlite").execute("SELECT count(*) FROM pet").fetchone() == (3,)


def test_an_alternative_golden_is_checked_and_its_findings_name_it(ex):
    # 'Dog' holds 2 pets; the alternative asks for 'dog': 0 rows exactly, 2 case-folded (verified_wrong, as 'wrong')
    cases = ex / "alts.jsonl"
    cases.write_text(json.dumps({"id": "alt", "question": "How many dogs?", "golden": {
        "canonical_query": "SELECT count(*) FROM pet WHERE kind = 'Dog'",
        "alternatives": [{"canonical_query": "SELECT count(*) FROM pet WHERE kind = 'dog'"}]}}) + "\n")
    out = ex / "alts.json"
    r = run(cases, "--db", ex / "pets.sqlite", "--out", out)
    assert r.exit_code == 0, r.output
    table = " ".join(r.output.split())
    assert "alt verified_wrong literal golden.alternatives[0]: the canonical query compares kind = 'dog'" in table, r.output
    assert "(also: fragile (alternatives[0]))" in table and "fired: literal 1, fragile 1" in table
    doc = json.loads(out.read_text())
    (case,) = doc["per_example"]
    assert [(f["golden"], f["check"], f["status"]) for f in case["findings"]] == [
        ("alternatives[0]", "literal", "verified_wrong"), ("alternatives[0]", "fragile", "suspect")]
    assert [(g["golden"], g["status"]) for g in case["goldens"]] == [("primary", "healthy"), ("alternatives[0]", "verified_wrong")]
    assert doc["aggregate"]["n_verified_wrong"] == 1 and doc["aggregate"]["by_check"] == {"literal": 1, "fragile": 1}


# --- the shipped Spider databases -----------------------------------------------------------------------------------

def test_the_shipped_spider_regression_cases_hold_two_goldens_a_literal_empties(tmp_path):
    reg = REPO / "examples" / "spider" / "regressions"
    out = tmp_path / "h.jsonl"
    r = run(reg / "cases.jsonl", "--db-dir", reg / "databases", "-q", "--out", out)
    assert r.exit_code == 0, r.output
    per = [json.loads(x) for x in out.read_text().splitlines()][:-1]
    doubted = {c["id"]: [f["check"] for f in c["findings"]] for c in per if c["status"] != "healthy"}
    # dev-0554 asks for 'timmothy' (the data: 'Timmothy'); dev-0786 for 'chinese', "asia" and 't' (the data: 'Chinese',
    # 'Asia', 'T'): each golden is empty because of it (README "check-goldens over the three files")
    assert doubted == {"spider-dev-0554": ["empty", "literal", "fragile"], "spider-dev-0786": ["empty", "literal", "fragile"]}
    assert {c["id"]: c["status"] for c in per if c["id"] in doubted} == {"spider-dev-0554": "verified_wrong",
                                                                          "spider-dev-0786": "verified_wrong"}
    assert len(per) == 31


@pytest.mark.skipif(not (SPIDER / "spider_dinsql-gpt4_cases.jsonl").is_file(), reason="the Spider data are not at hand")
def test_the_spider_dev_goldens_give_the_counts_in_the_spider_readme(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(REPO / "examples" / "spider"))
    from to_cli import convert

    rows = [json.loads(x) for x in (SPIDER / "spider_dinsql-gpt4_cases.jsonl").read_text().splitlines() if x.strip()]
    cases, _ = convert(rows)
    path = tmp_path / "cases.jsonl"
    path.write_text("".join(json.dumps(c) + "\n" for c in cases))
    res = tmp_path / "res.json"
    r = run(path, "--db-dir", SPIDER / "database", "--timeout", "10", "-q", "--results", res, "--gate", "share_healthy>=0.95")
    assert r.exit_code == 1  # 321 / 343 = 0.936
    agg = json.loads(res.read_text())["aggregate"]
    assert {k: agg[k] for k in ("n_cases", "n_healthy", "n_suspect", "n_verified_wrong", "n_broken")} == {
        "n_cases": 343, "n_healthy": 321, "n_suspect": 17, "n_verified_wrong": 5, "n_broken": 0}
    assert agg["by_check"] == {"empty": 15, "literal": 7, "fragile": 7, "filter": 2, "shape": 3}
