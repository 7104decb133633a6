"""answers/golden_health.py: each golden health check fires on a hand-built bad golden on a small SQLite database
and stays silent on a healthy one (issue 26, item 6).

The database (``_db``), worked out by hand:

* ``person(name, age, birth_year, city)``: Ann 30 1996 'Paris' · Bob 45 1981 'paris ' (lower case, a trailing
  space) · Cid 20 2006 'Rome'. So ``city = 'Paris'`` holds 1 row exactly and 2 trimmed and case-folded;
  ``city = 'rome'`` holds 0 exactly and 1 folded; the youngest is Cid (20), the oldest Bob (45).
* ``n(v)``: the integers 1..150. ``v > (SELECT min(v) FROM n)`` keeps 149 of the 150 rows (all but one).
* ``ev("date", label)``: a column *named* date, which reads no clock.
"""

from __future__ import annotations

import sqlite3

import pytest

from goldeval.answers.case import judge_case
from goldeval.answers.config import AnswerConfig
from goldeval.answers.golden_health import (
    CHECKS,
    GoldenHealth,
    check_golden,
    check_goldens,
    summarize_health,
    volatile_calls,
)
from goldeval.answers.sql import open_database
from goldeval.gates import evaluate_gates, parse_gates


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    path = tmp_path_factory.mktemp("gh") / "t.sqlite"
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE person (name TEXT, age INTEGER, birth_year INTEGER, city TEXT)")
    con.executemany("INSERT INTO person VALUES (?, ?, ?, ?)",
                    [("Ann", 30, 1996, "Paris"), ("Bob", 45, 1981, "paris "), ("Cid", 20, 2006, "Rome")])
    con.execute("CREATE TABLE n (v INTEGER)")
    con.executemany("INSERT INTO n VALUES (?)", [(i,) for i in range(1, 151)])
    con.execute('CREATE TABLE ev ("date" TEXT, label TEXT)')
    con.execute("INSERT INTO ev VALUES ('2020-01-01', 'launch')")
    con.commit()
    con.close()
    database = open_database(path)
    yield database
    database.close()


def _case(query=None, *, question="", **golden):
    g = {"kind": "value", **golden}
    if query is not None:
        g["canonical_query"] = query
    return {"id": "c", "question": question, "golden": g}


def _checks(h: GoldenHealth) -> dict[str, str]:
    return {f.check: f.status for f in h.findings}


HEALTHY = _case("SELECT name FROM person WHERE age > 25 ORDER BY name", question="Who is older than 25?")


def test_a_healthy_golden_has_no_finding_and_every_check_ran(db):
    h = check_golden(HEALTHY, db)
    assert h.status == "healthy" and h.findings == [] and h.rows == 2  # Ann (30), Bob (45)
    # every check that applies to a canonical query on a database ran (not 'database': that is check_goldens')
    assert set(h.checks_run) >= set(CHECKS) - {"database", "rows_equal"}
    assert h.to_dict()["check"] is None and h.to_dict()["note"] is None


# --- golden, query_runs, database: broken ---------------------------------------------------------------------

@pytest.mark.parametrize("case, says", [
    ({"id": "c", "golden": "SELECT 1"}, "'golden' must be an object"),
    (_case(), "no 'rows', no 'value' and no 'canonical_query'"),
    (_case("SELECT name, age FROM person", top_n={"n": 1, "by": "salary"}), "top_n 'by' must name one of the golden columns"),
    (_case(columns=["x"], rows=[[1, 2]]), "row 1 has 2 cells, expected 1"),
])
def test_a_malformed_golden_is_broken_with_the_judges_message(db, case, says):
    h = check_golden(case, db)
    assert h.status == "broken" and _checks(h) == {"golden": "broken"}
    assert says in h.findings[0].note


def test_a_canonical_query_that_fails_is_broken_with_the_databases_message(db):
    h = check_golden(_case("SELECT salary FROM person"), db)
    assert h.status == "broken" and _checks(h) == {"query_runs": "broken"}
    assert "the canonical query failed" in h.findings[0].note and "salary" in h.findings[0].note
    assert check_golden(_case("SELECT count(*) FROM person"), db).status == "healthy"


def test_a_case_whose_database_cannot_be_found_is_broken():
    (h,) = check_goldens([{"id": "c", "db": "nowhere", "golden": {"canonical_query": "SELECT 1"}}])
    assert h.status == "broken" and _checks(h) == {"database": "broken"} and "no --db-dir" in h.findings[0].note


# --- rows_equal ------------------------------------------------------------------------------------------------

def test_stored_rows_that_the_query_does_not_give_are_suspect_as_the_judge_says(db):
    bad = _case("SELECT count(*) FROM person", columns=["n"], rows=[[4]])  # the query gives 3
    h = check_golden(bad, db)
    assert _checks(h) == {"rows_equal": "suspect"} and h.findings[0].note.startswith("the canonical query, re-executed, gives other rows")
    # the judge's own check says the same of this golden
    r = judge_case(bad, {"id": "c", "rows": [[4]], "columns": ["n"]}, db=db)
    assert "the canonical query, re-executed, gives other rows" in r.outcome.verdict.gold_note
    # 3.0 is 3 to the judge (numbers typed), and a golden's own column name need not be the query's
    for rows in ([[3]], [[3.0]], [["3"]]):
        assert check_golden(_case("SELECT count(*) FROM person", columns=["n"], rows=rows), db).findings == [], rows


# --- clock_random ----------------------------------------------------------------------------------------------

def test_a_golden_that_reads_a_random_source_or_the_clock_is_suspect(db):
    h = check_golden(_case("SELECT name FROM person ORDER BY random() LIMIT 1"), db)
    assert _checks(h) == {"clock_random": "suspect"} and "RANDOM()" in h.findings[0].note
    h = check_golden(_case("SELECT name FROM person WHERE birth_year < strftime('%Y', 'now') - 18"), db)
    assert _checks(h) == {"clock_random": "suspect"} and "STRFTIME('%Y', 'now')" in h.findings[0].note
    # a column named date, and a date function of a column, read no clock
    assert check_golden(_case('SELECT "date", date("date") FROM ev'), db).findings == []


@pytest.mark.parametrize("sql, dialect, found", [
    ("SELECT name FROM t WHERE born < date('now', '-18 years') ORDER BY random()", "sqlite",
     ["DATE('now', '-18 years')", "RANDOM()"]),
    ("SELECT CURRENT_TIMESTAMP, current_date", "sqlite", ["CURRENT_TIMESTAMP", "CURRENT_DATE"]),
    ("SELECT date(), julianday(x) - julianday() FROM t", "sqlite", ["DATE()", "JULIANDAY()"]),
    ("SELECT randomblob(4), unixepoch()", "sqlite", ["RANDOMBLOB(4)", "UNIXEPOCH()"]),
    ("SELECT now(), clock_timestamp(), 'today'::date", "postgres", ["CURRENT_TIMESTAMP", "CLOCK_TIMESTAMP()", "CAST('today' AS DATE)"]),
    ("SELECT today(), uuid()", "duckdb", ["CURRENT_DATE", "UUID()"]),
    # silent: a text 'now' compared or printed, date functions of columns, names that hold the letters
    ("SELECT * FROM t WHERE status = 'now' AND lower('now') = 'now'", "sqlite", []),
    ("SELECT date(d), strftime('%Y', d), random_seed, \"date\", current FROM t", "sqlite", []),
    ("SELECT nowhere FROM t -- random()", "sqlite", []),
])
def test_volatile_calls_are_read_from_the_parsed_query(sql, dialect, found):
    assert volatile_calls(sql, dialect) == found


# --- empty -----------------------------------------------------------------------------------------------------

def test_an_empty_or_all_null_golden_is_suspect(db):
    h = check_golden(_case("SELECT name FROM person WHERE age > 100"), db)
    assert _checks(h) == {"empty": "suspect"} and "no row" in h.findings[0].note and h.rows == 0
    h = check_golden(_case("SELECT max(age) FROM person WHERE age > 100"), db)
    assert _checks(h) == {"empty": "suspect"} and "every golden cell is NULL" in h.findings[0].note
    assert check_golden(_case("SELECT max(age) FROM person"), db).findings == []  # 45


# --- literal (item 1) and fragile (item 2) ------------------------------------------------------------------------

def test_a_literal_that_misses_the_data_is_verified_wrong_when_the_golden_is_empty_by_it(db):
    case = _case("SELECT count(*) FROM person WHERE city = 'rome'")  # 0 rows; 'Rome' folded: 1
    h = check_golden(case, db)
    assert h.status == "verified_wrong"
    assert _checks(h) == {"literal": "verified_wrong", "fragile": "suspect"}
    assert "'rome' holds 0 rows of person.city, 1 trimmed and case-folded" in h.findings[0].note
    # the judge's gold_status for the same golden (an answer that reproduces it) is the same
    r = judge_case(case, {"id": "c", "final_query": "SELECT count(*) FROM person WHERE city = 'rome'"}, db=db)
    assert r.outcome.verdict.gold_status == "verified_wrong"


def test_a_literal_the_database_holds_by_type_affinity_is_not_doubted(db):
    # birth_year is INTEGER: '1996' holds Ann's 1996 by SQLite's affinity (Python equality would say no)
    h = check_golden(_case("SELECT name FROM person WHERE birth_year = '1996'"), db)
    assert h.findings == [] and h.rows == 1


def test_a_result_that_changes_trimmed_and_case_folded_is_fragile(db):
    # 'Paris' holds Ann exactly (so no literal misses the data); folded it holds Bob's 'paris ' too: 1 row -> 2
    h = check_golden(_case("SELECT name FROM person WHERE city = 'Paris'"), db)
    assert _checks(h) == {"fragile": "suspect"}
    assert "gives 1 row as the data are typed, 2 rows with its text comparisons trimmed and case-folded" in h.findings[0].note
    assert check_golden(_case("SELECT name FROM person WHERE city = 'Rome'"), db).findings == []


# --- direction (item 3) ----------------------------------------------------------------------------------------

def test_a_golden_whose_direction_runs_against_its_question_is_suspect_with_the_other_reading(db):
    h = check_golden(_case("SELECT name FROM person ORDER BY age DESC LIMIT 1", question="Who is the youngest person?"), db)
    assert _checks(h) == {"direction": "suspect"}
    note = h.findings[0].note
    assert "ORDER BY age DESC LIMIT 1" in note and "'youngest'" in note
    assert "it gives 1 row, the first ['Cid']" in note  # the reversed query: the youngest is Cid (20)
    h = check_golden(_case("SELECT max(birth_year) FROM person", question="What is the birth year of the oldest person?"), db)
    assert _checks(h) == {"direction": "suspect"}  # the oldest has the least birth year (1981)


@pytest.mark.parametrize("query, question", [
    ("SELECT name FROM person ORDER BY age ASC LIMIT 1", "Who is the youngest person?"),
    ("SELECT min(birth_year) FROM person", "What is the birth year of the oldest person?"),
    ("SELECT name FROM person ORDER BY age DESC LIMIT 1", "Who is the oldest person?"),
])
def test_a_golden_that_agrees_with_its_question_is_never_doubted_for_direction(db, query, question):
    assert check_golden(_case(query, question=question), db).findings == []


# --- filter, shape, plausibility, declared -------------------------------------------------------------------------

def test_a_filter_that_keeps_all_but_one_row_is_suspect(db):
    h = check_golden(_case("SELECT count(*) FROM n WHERE v > (SELECT min(v) FROM n)"), db)
    assert _checks(h) == {"filter": "suspect"} and "keeps 149 of the 150 rows" in h.findings[0].note
    assert check_golden(_case("SELECT count(*) FROM n WHERE v > (SELECT avg(v) FROM n)"), db).findings == []


def test_a_golden_of_another_shape_than_its_question_is_suspect(db):
    h = check_golden(_case("SELECT count(*) FROM person WHERE city = 'Rome'", question="Which people live in Rome?"), db)
    assert _checks(h) == {"shape": "suspect"} and "single count" in h.findings[0].note
    assert check_golden(_case("SELECT name FROM person WHERE city = 'Rome'", question="Which people live in Rome?"), db).findings == []


def test_an_impossible_value_is_found_by_the_static_checks_without_a_query():
    h = check_golden(_case(columns=["count"], rows=[[-1]], question="How many?"), None)
    assert h.status == "verified_wrong" and _checks(h) == {"plausibility": "verified_wrong"}
    assert "never negative" in h.findings[0].note
    assert check_golden(_case(columns=["count"], rows=[[1]], question="How many?"), None).findings == []


def test_a_golden_the_case_marks_is_reported_as_declared(db):
    h = check_golden(_case("SELECT count(*) FROM person", gold_status="verified_wrong", gold_note="audit 3"), db)
    assert _checks(h) == {"declared": "verified_wrong"} and h.findings[0].note.endswith("audit 3")


def test_the_worst_finding_decides_the_status():
    h = GoldenHealth("x")
    h.add("fragile", "suspect", "a")
    h.add("literal", "verified_wrong", "b")
    h.add("shape", "suspect", "c")
    assert h.status == "verified_wrong" and h.worst.check == "literal" and h.to_dict()["note"] == "b"


def test_without_the_canonical_query_run_the_query_checks_are_skipped(db):
    h = check_golden(_case("SELECT salary FROM person"), db, config=AnswerConfig(check_canonical=False))
    assert h.status == "healthy" and "query_runs" not in h.checks_run and "literal" not in h.checks_run


# --- a file, and the counts -----------------------------------------------------------------------------------------

def test_a_case_file_gives_one_health_a_row_and_an_unusable_row_is_broken(db, tmp_path):
    import json

    path = tmp_path / "cases.jsonl"
    path.write_text(json.dumps(HEALTHY | {"id": "ok"}) + "\n" + "{not json\n"
                    + json.dumps(HEALTHY | {"id": "ok"}) + "\n")  # line 3 repeats the id of line 1
    got = list(check_goldens(path, db=db))
    assert [(h.id, h.status, h.line) for h in got] == [("ok", "healthy", 1), ("cases.jsonl:2", "broken", 2),
                                                       ("ok", "broken", 3)]
    assert "repeats line 1" in got[2].findings[0].note


def test_summarize_counts_each_status_and_the_share_healthy():
    hs = [GoldenHealth("a"), GoldenHealth("b"), GoldenHealth("c"), GoldenHealth("d")]
    hs[1].add("literal", "verified_wrong", "x")
    hs[2].add("empty", "suspect", "y")
    hs[2].add("literal", "suspect", "z")
    agg = summarize_health(hs)
    # by hand: a and d healthy (2 of 4), b verified_wrong, c suspect (two checks, one case); literal fired on b and c
    assert agg == {"n_cases": 4, "n_healthy": 2, "n_suspect": 1, "n_verified_wrong": 1, "n_broken": 0,
                   "share_healthy": 0.5, "by_check": {"empty": 1, "literal": 2}, "undefined": {}}


def test_no_case_gives_an_undefined_share_that_no_gate_passes():
    agg = summarize_health([])
    assert agg["n_cases"] == 0 and agg["share_healthy"] == 0.0 and "share_healthy" in agg["undefined"]
    dod = parse_gates("[gates]\nshare_healthy = { min = 0.0 }\n")
    report = evaluate_gates({"scorer": {"name": "golden_health"}, "aggregate": agg}, dod)
    assert report.passed is False and "no case was checked" in report.results[0].reason


@pytest.mark.parametrize("rows", [[["Ann"], ["Bob"]], ["Ann", "Bob"], [{"name": "Ann"}, {"name": "Bob"}]])
def test_stored_rows_in_any_shape_the_judge_reads_are_checked_as_it_reads_them(db, rows):
    # lists, bare cells of a one-column golden, objects keyed by column: the same two rows (Ann 30, Bob 45 > 25)
    h = check_golden(_case("SELECT name FROM person WHERE age > 25", columns=["name"], rows=rows), db)
    assert h.findings == [] and h.rows == 2 and "rows_equal" in h.checks_run
    h = check_golden(_case("SELECT name FROM person WHERE age > 25", columns=["name"], rows=rows[:1]), db)
    assert _checks(h) == {"rows_equal": "suspect"}  # Bob missing from the stored golden


# --- golden.alternatives: each alternative checked as the primary is ------------------------------------------------

def _with_alternatives(case, *alternatives):
    return case | {"golden": case["golden"] | {"alternatives": list(alternatives)}}


# (question, a healthy primary query, an alternative that fires a check, what fires): each bad golden is one of the
# tests above, moved into golden.alternatives under a primary that the same question leaves healthy.
ALTERNATIVE_KINDS = [
    ("", "SELECT count(*) FROM person", {"canonical_query": "SELECT salary FROM person"}, {"query_runs": "broken"}),
    ("", "SELECT count(*) FROM person", {"canonical_query": "SELECT count(*) FROM person", "columns": ["n"], "rows": [[4]]},
     {"rows_equal": "suspect"}),  # the query gives 3
    ("", "SELECT count(*) FROM person", {"canonical_query": "SELECT name FROM person ORDER BY random() LIMIT 1"},
     {"clock_random": "suspect"}),
    ("", "SELECT count(*) FROM person", {"canonical_query": "SELECT name FROM person WHERE age > 100"}, {"empty": "suspect"}),
    ("", "SELECT count(*) FROM person WHERE city = 'Rome'", {"canonical_query": "SELECT count(*) FROM person WHERE city = 'rome'"},
     {"literal": "verified_wrong", "fragile": "suspect"}),  # 'rome': 0 rows exactly, 1 folded
    ("", "SELECT name FROM person WHERE city = 'Rome'", {"canonical_query": "SELECT name FROM person WHERE city = 'Paris'"},
     {"fragile": "suspect"}),  # 1 row as typed, 2 folded
    ("Who is the youngest person?", "SELECT name FROM person ORDER BY age ASC LIMIT 1",
     {"canonical_query": "SELECT name FROM person ORDER BY age DESC LIMIT 1"}, {"direction": "suspect"}),
    ("", "SELECT count(*) FROM n WHERE v > (SELECT avg(v) FROM n)",
     {"canonical_query": "SELECT count(*) FROM n WHERE v > (SELECT min(v) FROM n)"}, {"filter": "suspect"}),  # 149 of 150
    ("Which people live in Rome?", "SELECT name FROM person WHERE city = 'Rome'",
     {"canonical_query": "SELECT count(*) FROM person WHERE city = 'Rome'"}, {"shape": "suspect"}),
    ("How many?", "SELECT count(*) FROM person", {"columns": ["count"], "rows": [[-1]]}, {"plausibility": "verified_wrong"}),
    ("", "SELECT count(*) FROM person", {"canonical_query": "SELECT count(*) FROM person", "gold_status": "suspect",
                                         "gold_note": "audit 3"}, {"declared": "suspect"}),
]


@pytest.mark.parametrize("question, primary, alternative, fires", ALTERNATIVE_KINDS,
                         ids=[next(iter(k[3])) for k in ALTERNATIVE_KINDS])
def test_each_check_fires_on_an_alternative_as_on_the_primary_and_names_it(db, question, primary, alternative, fires):
    base = _case(primary, question=question)
    assert check_golden(base, db).findings == []  # the primary alone: silent
    h = check_golden(_with_alternatives(base, {"canonical_query": primary}, alternative), db)
    assert _checks(h) == fires
    worst = max(fires.values(), key=["suspect", "verified_wrong", "broken"].index)
    assert h.status == worst  # the case: the worst over its goldens
    assert {f.golden for f in h.findings} == {"alternatives[1]"}
    # the same golden as the primary finds the same, its notes without the field path
    alone = check_golden(_case(question=question, **alternative), db)
    assert [(f.check, f.status, f"golden.alternatives[1]: {f.note}") for f in alone.findings] == [
        (f.check, f.status, f.note) for f in h.findings]
    assert [(g["golden"], g["status"]) for g in h.to_dict()["goldens"]] == [
        ("primary", "healthy"), ("alternatives[0]", "healthy"), ("alternatives[1]", worst)]
    assert h.to_dict()["findings"][0]["golden"] == "alternatives[1]"


def test_an_alternative_with_a_literal_that_misses_the_data_is_flagged_named_and_counted(db):
    # The primary 'Rome' holds Cid (1 row); the alternative asks for 'rome', 0 rows exactly, 1 trimmed and case-folded.
    case = _with_alternatives(_case("SELECT count(*) FROM person WHERE city = 'Rome'", question="How many people live in Rome?"),
                              {"canonical_query": "SELECT count(*) FROM person WHERE city = 'rome'"})
    h = check_golden(case, db)
    d = h.to_dict()
    assert d["status"] == "verified_wrong" and d["check"] == "literal"
    assert d["note"].startswith("golden.alternatives[0]: the canonical query compares city = 'rome'")
    assert "'rome' holds 0 rows of person.city, 1 trimmed and case-folded" in d["note"]
    assert [(f["golden"], f["check"]) for f in d["findings"]] == [("alternatives[0]", "literal"), ("alternatives[0]", "fragile")]
    assert d["rows"] == 1  # the primary's rows
    # by_check counts goldens: the same literal on the primary too fires twice in one case
    both = _with_alternatives(_case("SELECT count(*) FROM person WHERE city = 'rome'"),
                              {"canonical_query": "SELECT count(*) FROM person WHERE city = 'rome' AND age > 0"})
    agg = summarize_health([h, check_golden(both, db), check_golden(HEALTHY, db)])
    # by hand: case 1 literal+fragile on alternatives[0]; case 2 literal+fragile on primary and alternatives[0]
    assert agg["by_check"] == {"literal": 3, "fragile": 3}
    assert (agg["n_cases"], agg["n_verified_wrong"], agg["n_healthy"]) == (3, 2, 1)
    # a finding without a 'golden' key (a results file written before alternatives were checked) is the primary's
    assert summarize_health([{"status": "suspect", "findings": [{"check": "empty"}, {"check": "empty"}]}])["by_check"] == {"empty": 1}


def test_a_case_whose_alternatives_are_all_healthy_stays_healthy_and_each_was_checked(db):
    # "older than 30" read strictly (Bob) or as 30 and over (Ann, Bob): both right, both healthy
    case = _with_alternatives(_case("SELECT name FROM person WHERE age > 30", question="Who is older than 30?"),
                              {"canonical_query": "SELECT name FROM person WHERE age >= 30"},
                              {"columns": ["name"], "rows": [["Bob"]]})
    h = check_golden(case, db)
    assert h.status == "healthy" and h.findings == [] and h.rows == 1
    goldens = h.to_dict()["goldens"]
    assert [(g["golden"], g["status"], g["rows"]) for g in goldens] == [
        ("primary", "healthy", 1), ("alternatives[0]", "healthy", 2), ("alternatives[1]", "healthy", 1)]
    assert set(goldens[1]["checks_run"]) >= set(CHECKS) - {"database", "rows_equal"}
    # an empty list is no alternative: the case reads as it did without one
    plain = check_golden(_with_alternatives(HEALTHY), db).to_dict()
    assert plain == check_golden(HEALTHY, db).to_dict() and "goldens" not in plain


@pytest.mark.parametrize("alternatives, path, says", [
    ("SELECT 1", "golden.alternatives", "must be a list of goldens"),
    ([{"columns": ["n"], "rows": [[1]]}, {"rows": "x", "columns": ["n"]}], "golden.alternatives[1].rows", "must be a list of rows"),
    ([{"kind": "text", "value": 1}], "golden.alternatives[0].kind", "an alternative golden is a 'value' golden"),
    ([{"value": 1, "alternatives": []}], "golden.alternatives[0].alternatives", "holds no alternatives of its own"),
    ([{"columns": ["n"]}], "golden.alternatives[0]", "needs 'rows' (with 'columns'), a 'value' or a 'canonical_query'"),
    ([{"columns": ["n"], "rows": [[1, 2]]}], "golden.alternatives[0]", "row 1 has 2 cells, expected 1"),
    ([{"value": 3, "top_n": {"n": 1, "by": "x"}}], "golden.alternatives[0]", "top_n 'by' must name one of the golden columns"),
])
def test_a_malformed_alternative_is_broken_with_its_field_path_as_the_judge_says(db, alternatives, path, says):
    case = _case("SELECT count(*) FROM person")
    case["golden"]["alternatives"] = alternatives
    h = check_golden(case, db, where="cases.jsonl:4 (id 'c')")
    assert h.status == "broken" and _checks(h) == {"golden": "broken"}
    (f,) = h.findings
    assert f.note.startswith(f"cases.jsonl:4 (id 'c') {path}") and says in f.note
    assert f.golden == ("alternatives" if path == "golden.alternatives" else path.split(".")[1])
    # the judge leaves the case unscored with the same message
    r = judge_case(case, {"id": "c", "rows": [[3]], "columns": ["n"]}, db=db, where="cases.jsonl:4 (id 'c')")
    assert r.outcome.status == "unscored" and r.outcome.reason == f.note


def test_every_malformed_alternative_is_named_and_the_well_formed_ones_are_still_checked(db):
    case = _with_alternatives(_case("SELECT count(*) FROM person WHERE city = 'Rome'"),
                              {"rows": "x", "columns": ["n"]},
                              {"canonical_query": "SELECT count(*) FROM person WHERE city = 'rome'"},
                              {"columns": ["n"], "rows": [[1, 2]]})
    h = check_golden(case, db)
    assert [(f.golden, f.check, f.status) for f in h.findings] == [
        ("alternatives[0]", "golden", "broken"), ("alternatives[1]", "literal", "verified_wrong"),
        ("alternatives[1]", "fragile", "suspect"), ("alternatives[2]", "golden", "broken")]
    assert h.status == "broken"
    # the judge names the first; alternatives[2] gets the message the judge gives it once alternatives[0] is fixed
    r = judge_case(case, {"id": "c", "rows": [[1]], "columns": ["n"]}, db=db)
    assert r.outcome.reason == h.findings[0].note
    fixed = _with_alternatives(_case("SELECT count(*) FROM person WHERE city = 'Rome'"), {"value": 1},
                               {"canonical_query": "SELECT 1"}, {"columns": ["n"], "rows": [[1, 2]]})
    r = judge_case(fixed, {"id": "c", "rows": [[1]], "columns": ["n"]}, db=db)
    assert r.outcome.reason == h.findings[3].note == "case 'c' golden.alternatives[2]: row 1 has 2 cells, expected 1 cells (one per column). Fix the row."


def test_an_alternative_whose_canonical_query_fails_is_broken_as_the_judge_leaves_it_unscored(db):
    case = _with_alternatives(_case("SELECT count(*) FROM person"), {"canonical_query": "SELECT salary FROM person"})
    h = check_golden(case, db)
    assert h.status == "broken" and _checks(h) == {"query_runs": "broken"}
    note = h.findings[0].note
    assert note.startswith("golden.alternatives[0]: the canonical query failed") and "no such column: salary" in note
    r = judge_case(case, {"id": "c", "final_query": "SELECT count(*) FROM person"}, db=db)
    assert r.outcome.status == "unscored"
    assert r.outcome.reason.startswith("case 'c' golden.alternatives[0]: the golden's canonical_query failed")
    assert "no such column: salary" in r.outcome.reason
    # the same alternative fixed: the judge scores the case and the health check finds nothing
    ok = _with_alternatives(_case("SELECT count(*) FROM person"), {"canonical_query": "SELECT count(name) FROM person"})
    assert check_golden(ok, db).findings == []
    assert judge_case(ok, {"id": "c", "final_query": "SELECT count(*) FROM person"}, db=db).outcome.status == "scored"


def test_alternatives_of_a_golden_that_is_not_a_value_golden_are_broken(db):
    case = {"id": "c", "golden": {"kind": "unanswerable", "alternatives": [{"value": 1}]}}
    h = check_golden(case, db)
    assert h.status == "broken" and [(f.golden, f.check) for f in h.findings] == [("alternatives", "golden")]
    assert "this golden's kind is 'unanswerable'" in h.findings[0].note
    assert check_golden({"id": "c", "golden": {"kind": "unanswerable"}}, db).status == "healthy"
