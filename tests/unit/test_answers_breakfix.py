"""Break-fix tests for the data-answer judge: inputs that crashed the run, became a verdict, or were dropped in
silence. Every expected value is worked out by hand in the comment beside it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from goldeval.pipeline.files import judge_file
from goldeval.answers.judge import judge_answer
from goldeval.errors import InputError


def _jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _golden(**extra: object) -> dict:
    return {"kind": "value", "columns": ["ward", "n"], "rows": [["a", 5], ["b", 4]], **extra}


# --- malformed golden options: unscored with the fix, never a crash, never a verdict -------------------------

@pytest.mark.parametrize("extra, message", [
    ({"top_n": "bad"}, r"'top_n' must be an object"),                         # crashed the run (AttributeError, exit 3)
    ({"top_n": {"n": 2, "by": "count"}}, r"top_n 'by' must name one of the golden columns \['ward', 'n'\], got 'count'"),
    ({"top_n": {"n": 2, "by": "n", "direction": "down"}}, r"'direction' must be 'desc' or 'asc'"),
    ({"top_n": {"n": 0, "by": "n"}}, r"top_n 'n' must be a positive integer"),
    ({"ordered": "no"}, r"'ordered' must be true or false"),                   # "no" is truthy: it was read as ordered
    ({"rate_columns": "n"}, r"'rate_columns' must be a list of column names"),
    ({"rate_columns": ["rate"]}, r"rate_columns \['rate'\] are not golden columns"),
    ({"gold_status": "bogus"}, r"'gold_status' must be one of"),
])
def test_malformed_golden_option_is_an_input_error(extra, message):
    pred = {"columns": ["ward", "n"], "rows": [["a", 5], ["b", 4]]}
    with pytest.raises(InputError, match=message):
        judge_answer("q", _golden(**extra), pred)


def test_top_n_by_unknown_column_was_a_no_match():
    # Before: top_n.by = "count" (not a golden column) made the exact golden answer a no_match ("not among the paired
    # golden columns"). A typo in the case must not fail the answer: it is the case that is broken.
    with pytest.raises(InputError, match="Name the column the top-N is ranked by"):
        judge_answer("q", _golden(top_n={"n": 2, "by": "count", "direction": "desc"}),
                     {"columns": ["ward", "n"], "rows": [["a", 5], ["b", 4]]})


def test_dict_rows_with_missing_or_unknown_keys_are_refused():
    # {"m": 1} under columns ["n"] used to read as n = NULL (r.get("n")), and an extra key was dropped in silence.
    g = {"kind": "value", "columns": ["n"], "rows": [[1]]}
    with pytest.raises(InputError, match=r"row 1 has keys \['m'\], expected exactly the columns \['n'\] \(missing \['n'\]\) \(not a column: \['m'\]\)"):
        judge_answer("q", g, {"columns": ["n"], "rows": [{"m": 1}]})
    with pytest.raises(InputError, match=r"not a column: \['extra'\]"):
        judge_answer("q", {"kind": "value", "columns": ["n"], "rows": [{"n": 1, "extra": 5}]}, {"rows": [[1]]})
    # Objects with exactly the columns are fine, in any key order.
    v = judge_answer("q", {"kind": "value", "columns": ["a", "b"], "rows": [[1, "x"]]},
                     {"columns": ["a", "b"], "rows": [{"b": "x", "a": 1}]})
    assert v.verdict == "match"


def test_batch_malformed_rows_are_unscored_and_the_run_finishes(tmp_path: Path):
    # One row per defect; before the fix the first (top_n "bad") stopped the whole run with exit 3.
    cases = _jsonl(tmp_path / "c.jsonl", [
        {"id": "bad_top", "question": "q", "golden": _golden(top_n="bad")},
        {"id": "mnu_str", "question": "q", "golden": _golden(), "must_not_use": "ssn"},  # was read as 's', 's', 'n'
        {"id": "rubric_str", "question": "q", "golden": _golden(), "rubric": "REQUIRED: x"},
        {"id": "ok", "question": "q", "golden": _golden()},
    ])
    rows = {"columns": ["ward", "n"], "rows": [["a", 5], ["b", 4]]}
    attempts = _jsonl(tmp_path / "a.jsonl", [{"id": i, **rows} for i in ("bad_top", "mnu_str", "rubric_str", "ok")])
    out = judge_file(cases, attempts)
    by_id = {c["id"]: c for c in out["per_example"]}
    assert [by_id[i]["status"] for i in ("bad_top", "mnu_str", "rubric_str", "ok")] == ["unscored"] * 3 + ["scored"]
    assert "'must_not_use' must be a list" in by_id["mnu_str"]["reason"] and "c.jsonl:2" in by_id["mnu_str"]["reason"]
    assert "'rubric' must be a list" in by_id["rubric_str"]["reason"]
    # 1 match, 0 no_match: pass rate 1/1; the three broken cases are counted as unscored beside it.
    assert (out["aggregate"]["match"], out["aggregate"]["unscored"], out["aggregate"]["pass_rate"]) == (1, 3, 1.0)


# --- the read-only executor: one step that builds a huge value ------------------------------------------------

@pytest.mark.parametrize("sql", [
    "SELECT length(randomblob(900000000))",            # ran 2.8 s past a 1 s limit and allocated ~900 MB
    "SELECT length(zeroblob(20000000))",                # 20 MB > the 16 MB value limit
])
def test_huge_value_is_stopped_by_the_value_limit(tmp_path: Path, sql: str):
    import sqlite3
    import time

    from goldeval.answers.sql import MAX_VALUE_BYTES, QueryError, ReadOnlyDatabase

    p = tmp_path / "t.sqlite"
    sqlite3.connect(p).execute("CREATE TABLE t (x)").connection.close()
    with ReadOnlyDatabase(p, timeout_s=1) as db:
        start = time.monotonic()
        with pytest.raises(QueryError, match=r"over 16,000,000 bytes \(the value limit\)"):
            db.execute(sql)
        assert time.monotonic() - start < 0.5  # refused at once: SQLite checks the length before it builds the value
        # A value under the limit still works: 1,000 bytes.
        assert db.execute("SELECT length(randomblob(1000))").rows == [(1000,)]
    assert MAX_VALUE_BYTES == 16_000_000


def test_fts3_tokenizer_pointer_is_refused(tmp_path: Path):
    import sqlite3

    from goldeval.answers.sql import QueryError, ReadOnlyDatabase

    p = tmp_path / "t.sqlite"
    sqlite3.connect(p).execute("CREATE TABLE t (x)").connection.close()
    with ReadOnlyDatabase(p) as db:
        # Before: returned the C address of the 'simple' tokenizer (8 bytes of process memory layout).
        # The refusal names the function (SQLite's own message says only "not authorized").
        with pytest.raises(QueryError, match=r"^refused: the function fts3_tokenizer\(\)"):
            db.execute("SELECT fts3_tokenizer('simple')")


# --- mustNotUse: uses the parser walk missed ------------------------------------------------------------------

SCHEMA = {"patients": ["id", "name", "ssn", "ward_id"], "people": ["ssn", "age"], "wards": ["id", "ward_name"]}


@pytest.mark.parametrize("sql, schema, where", [
    # JOIN … USING reads the key from both tables; sqlglot keeps it as an identifier, not a column.
    ("SELECT count(*) FROM patients a JOIN people b USING (ssn)", SCHEMA, "JOIN … USING (ssn)"),
    ("SELECT count(*) FROM patients a JOIN people b USING (ssn)", None, "JOIN … USING (ssn)"),
    # NATURAL JOIN joins on every shared column: patients and people both hold ssn.
    ("SELECT count(*) FROM patients NATURAL JOIN people", SCHEMA, "NATURAL JOIN over patients, people"),
    # Without the schema (no --db) a column read through SELECT * in a CTE / sub-query is still a read of ssn.
    ("WITH x AS (SELECT * FROM patients) SELECT count(ssn) FROM x", None, "ssn through SELECT * over patients"),
    ("SELECT t.ssn FROM (SELECT * FROM (SELECT p.* FROM patients p) u) t", None, "t.ssn through SELECT * over patients"),
])
def test_forbidden_uses_that_were_missed(sql, schema, where):
    from goldeval.answers.forbidden import check_forbidden

    r = check_forbidden(sql, ["ssn"], schema=schema)
    assert [h["entry"] for h in r.hits] == ["ssn"] and r.hits[0]["where"] == where


def test_table_qualified_entry_catches_select_star_without_schema():
    from goldeval.answers.forbidden import check_forbidden

    # The entry patients.ssn says patients holds ssn: SELECT * over patients reads it, schema or not.
    r = check_forbidden("SELECT * FROM patients", ["patients.ssn"], schema=None)
    assert r.hits == [{"entry": "patients.ssn", "where": "* over patients"}]
    # A bare entry without the schema cannot be settled: unsure, not a hit and not silently clean.
    r = check_forbidden("SELECT * FROM patients", ["ssn"], schema=None)
    assert r.hits == [] and r.unsure == [{"entry": "ssn", "where": "* over patients (its columns are unknown: run with --db)"}]
    # Not a use: the key is another column, the mention is a comment, a string, or an alias of the CTE's output.
    for sql in ("SELECT count(*) FROM patients a JOIN wards w USING (id)", "SELECT count(*) FROM patients -- ssn",
                "SELECT 'ssn' FROM patients", "WITH x AS (SELECT id AS ssn FROM patients) SELECT count(ssn) FROM x"):
        r = check_forbidden(sql, ["ssn"], schema=SCHEMA)
        assert r.hits == [] and r.unsure == [], sql


def test_unsure_select_star_keeps_a_match_from_being_final():
    # 3 rows, and the reported rows are right; the query is SELECT * over a table whose columns are unknown (no --db).
    g = {"kind": "value", "columns": ["id"], "rows": [[1], [2], [3]]}
    v = judge_answer("q", g, {"columns": ["id"], "rows": [[1], [2], [3]]}, must_not_use=["ssn"],
                     final_query="SELECT * FROM patients")
    assert v.verdict == "needs_human" and v.details["rule_verdict"]["verdict"] == "match"
    assert "may read the forbidden field ssn" in v.why


# --- prose: a text golden named in a hedge, after a negation, or in a list was a match --------------------------

WARD = {"kind": "value", "columns": ["ward"], "rows": [["Cardiology"]]}


@pytest.mark.parametrize("text, verdict", [
    ("Cardiology.", "match"),                                   # states the golden, nothing else
    ("The ward with the most admissions is Cardiology, with 40.", "match"),
    ("It is either Cardiology or Oncology.", "no_match"),       # was match: a hedge between two candidates
    ("Cardiology or Oncology", "no_match"),                     # was match
    ("Not Cardiology; it is Oncology.", "needs_human"),         # was match: the golden is excluded, not answered
    ("Oncology (not Cardiology).", "needs_human"),              # was match
    ("Maybe Cardiology.", "needs_human"),                       # was match: does it commit?
    ("Cardiology, Oncology and Surgery all tie.", "needs_human"),  # was match: one of a list
    ("It is Oncology, followed by Cardiology.", "needs_human"),    # was match: the answer names Oncology first
    ("The ward is Cardiology-East.", "needs_human"),            # was match: another ward's name
])
def test_text_golden_in_prose(text, verdict):
    assert judge_answer("Which ward had the most admissions?", WARD, {"text": text}).verdict == verdict


@pytest.mark.parametrize("text, golden, verdict", [
    ("79 thousand", 79, "no_match"),          # was match: read as 79; it states 79,000
    ("79k", 79, "no_match"),                  # was needs_human (no number read); 79,000 ≠ 79
    ("1.2 million", 1_200_000, "match"),      # was no_match: read as 1.2; 1.2 × 10^6 = 1,200,000
    ("3.5M patients", 3_500_000, "match"),    # 3.5 × 10^6
    ("2bn", 2_000_000_000, "match"),          # 2 × 10^9
    ("79 m", 79, "match"),                    # a lone "m" may be metres or minutes: 79 stays 79
])
def test_scale_words_in_prose(text, golden, verdict):
    g = {"kind": "value", "columns": ["n"], "rows": [[golden]]}
    assert judge_answer("How many?", g, {"text": text}).verdict == verdict


# --- Spider re-judge findings -----------------------------------------------------------------------------------

def test_repeated_golden_column_is_contained_once():
    # Spider dev-0541 (all three GPT-4 sets): gold SELECT student_id, first_name, …, count(*), student_id gives
    # (7, 'Frida', 'Aisha', 'Huel', 3, 7); the prediction (7, 'Frida', 'Aisha', 'Huel', 3) was no_match
    # ("student_id#2 has no counterpart"). Checked by hand on student_transcripts_tracking.sqlite.
    g = {"kind": "value", "columns": ["student_id", "first_name", "middle_name", "last_name", "count(*)", "student_id"],
         "rows": [[7, "Frida", "Aisha", "Huel", 3, 7]]}
    p = {"columns": ["student_id", "first_name", "middle_name", "last_name", "num_enrollments"], "rows": [[7, "Frida", "Aisha", "Huel", 3]]}
    v = judge_answer("Which student has enrolled for the most times?", g, p)
    assert v.verdict == "match" and v.column_pairing["student_id#2"] == "student_id"
    # Not a loophole: min_age and max_age share the value 30 but are two columns (different names).
    v = judge_answer("q", {"kind": "value", "columns": ["min_age", "max_age"], "rows": [[30, 30]]}, {"columns": ["min_age"], "rows": [[30]]})
    assert v.verdict == "no_match"


def test_key_column_under_other_labels_is_not_wrong_by_rule():
    # Spider dev-0816 (zero-shot): gold (Language, CountryCode, max%) per country; the prediction names each country
    # instead of giving its code — 233 of 233 rows differ in that column only, one-to-one ('ABW' ↔ 'Aruba'). Three
    # such rows (from world_1.sqlite) are enough to show the rule.
    g = {"kind": "value", "columns": ["Language", "CountryCode", "max(Percentage)"],
         "rows": [["Papiamento", "ABW", 76.7], ["Pashto", "AFG", 52.4], ["Ovimbundu", "AGO", 37.2]]}
    named = {"columns": ["Country", "Language", "Percentage"],
             "rows": [["Aruba", "Papiamento", 76.7], ["Afghanistan", "Pashto", 52.4], ["Angola", "Ovimbundu", 37.2]]}
    v = judge_answer("What is the language spoken by the largest percentage of people in each country?", g, named)
    assert v.verdict == "needs_human" and v.details["undecided_because"] == "relabelled key column"
    assert v.mismatch.startswith("one column relabelled: 'CountryCode'")
    # The golden's own codes shuffled across rows is a wrong assignment, not a relabelling: no_match.
    shuffled = {"columns": ["CountryCode", "Language", "Percentage"],
                "rows": [["AFG", "Papiamento", 76.7], ["AGO", "Pashto", 52.4], ["ABW", "Ovimbundu", 37.2]]}
    assert judge_answer("q", g, shuffled).verdict == "no_match"
    # Two rows are no evidence of a map: still a plain wrong value (no_match).
    g2 = {"kind": "value", "columns": ["ward", "n"], "rows": [["a", 1], ["b", 2]]}
    assert judge_answer("q", g2, {"columns": ["ward", "n"], "rows": [["x", 1], ["y", 2]]}).verdict == "no_match"


# --- many columns over the same small value set --------------------------------------------------------------

def _digit_tables(k: int, n: int, seed: int = 0):
    import numpy as np

    rng = np.random.default_rng(seed)
    rows = rng.integers(0, 10, size=(n, k)).tolist()
    perm = [int(j) for j in rng.permutation(k)]
    g = {"kind": "value", "columns": [f"c{i}" for i in range(k)], "rows": rows}
    p = {"columns": [f"x{j}" for j in perm], "rows": [[r[j] for j in perm] for r in rows]}
    return g, p, perm


def test_columns_of_the_same_digits_pair_by_how_often_each_value_occurs():
    # k = 6 columns of digits 0–9, 400 rows; the prediction is the golden with its columns permuted and renamed x…
    # (by construction a match). Every column *contains* every digit, so set containment scored all 36 pairs 1.0:
    # the pairing was "ambiguous", 30 alternative pairings were re-compared (81 s at 5 × 2,000) and the verdict was
    # needs_human. Each column's own partner holds the same multiset of digits; that now breaks the tie.
    g, p, perm = _digit_tables(6, 400)
    v = judge_answer("q", g, p)
    assert v.verdict == "match"
    assert v.column_pairing == {f"c{i}": f"x{i}" for i in range(6)}
    # Scramble one column within itself (same multiset, rows no longer intact): same pairing, rows wrong → no_match.
    import random

    rows = [list(r) for r in p["rows"]]
    col = [r[0] for r in rows]
    random.Random(1).shuffle(col)
    for r, c in zip(rows, col):
        r[0] = c
    assert judge_answer("q", g, {"columns": p["columns"], "rows": rows}).verdict == "no_match"


def test_multiset_share_by_hand():
    from goldeval.answers.pairing import multiset_share
    from goldeval.answers.values import make_column

    g = make_column("g", [1, 1, 2, 3])
    # [1, 2, 2, 3] meets 1, 2, 3 once each (the golden's second 1 has no partner): 3 of 4 golden cells.
    assert multiset_share(g, make_column("p", [1, 2, 2, 3])) == 0.75
    assert multiset_share(g, make_column("p", [3, 1, 2, 1])) == 1.0   # same multiset, any order
    assert multiset_share(g, make_column("p", [None, 1])) == 0.25      # one 1


def test_columns_with_the_same_multiset_are_told_apart_by_whole_rows():
    # k = 8 columns, each a permutation of 0…199 (every column-wise score ties: same values, same counts). The
    # prediction is the golden with columns permuted and renamed (a match by construction). Single swaps of one
    # arbitrary pairing cannot undo a longer cycle: this was needs_human ("ambiguous"); aligning rows by their
    # sorted cells shows which column is which.
    import numpy as np

    rng = np.random.default_rng(3)
    k, n = 8, 200
    rows = np.stack([rng.permutation(n) for _ in range(k)], axis=1).tolist()
    perm = [int(j) for j in rng.permutation(k)]
    g = {"kind": "value", "columns": [f"c{i}" for i in range(k)], "rows": rows}
    p = {"columns": [f"x{j}" for j in perm], "rows": [[r[j] for j in perm] for r in rows]}
    v = judge_answer("q", g, p)
    assert v.verdict == "match" and v.column_pairing == {f"c{i}": f"x{i}" for i in range(k)}
    # Rows scrambled across two columns (each column keeps its values): no pairing locates every row → not a match.
    bad = [list(r) for r in p["rows"]]
    for r in bad[:100]:
        r[0], r[1] = r[1], r[0]
    assert judge_answer("q", g, {"columns": p["columns"], "rows": bad}).verdict != "match"


def test_a_failing_query_is_located_in_the_attempt_file(tmp_path: Path):
    import sqlite3

    db = tmp_path / "w.sqlite"
    sqlite3.connect(db).execute("CREATE TABLE wards (name TEXT)").connection.close()
    cases = _jsonl(tmp_path / "cases.jsonl", [{"id": "q1", "question": "q", "golden": {"kind": "value", "columns": ["n"], "rows": [[1]]}}])
    attempts = _jsonl(tmp_path / "arm.jsonl", [{"id": "other", "text": "1"}, {"id": "q1", "final_query": "SELECT nope FROM wards"}])
    from goldeval.answers import AnswerConfig

    out = judge_file(cases, attempts, config=AnswerConfig(db=str(db)))
    reason = out["per_example"][0]["reason"]
    # The query is on line 2 of arm.jsonl (it used to say cases.jsonl:1, where there is no query to fix).
    assert reason.startswith("arm.jsonl:2 (id 'q1'): the final query failed: SQLite error: no such column: nope")


@pytest.mark.parametrize("name", ["n_rate_changes", "count_of_share_holders", "num_ratio_checks"])
def test_a_count_named_with_a_rate_word_never_accepts_x100(name):
    # 1200 for a golden count of 12 was a match ("rate read as ×100") because the name holds "rate"/"share"/"ratio";
    # the count word wins: a count never accepts a percentage reading.
    g = {"kind": "value", "columns": [name], "rows": [[12]]}
    assert judge_answer("How many?", g, {"columns": [name], "rows": [[1200]]}).verdict == "no_match"
    # Declared in rate_columns, the case says it is a rate after all: 12 (percent) for 0.12 would match.
    g = {"kind": "value", "columns": [name], "rows": [[0.12]], "rate_columns": [name]}
    assert judge_answer("q", g, {"columns": [name], "rows": [[12]]}).verdict == "match"


def test_computed_floats_have_no_display_precision():
    # AVG over {0, 1, 0, 1, 0, 1, 0, 0, 0, 0} = 0.3 exactly; the golden came from its canonical query. Read as
    # "written to one decimal" it accepted anything in [0.25, 0.35]: 0.33 was a match.
    g = {"kind": "value", "columns": ["avg_score"], "rows": [[0.3]], "rows_from": "canonical_query",
         "canonical_query": "SELECT AVG(score) FROM t"}
    assert judge_answer("q", g, {"columns": ["avg_score"], "rows": [[0.33]]}).verdict == "no_match"
    assert judge_answer("q", g, {"columns": ["avg_score"], "rows": [[0.3000000001]]}).verdict == "match"  # rel 3e-10 < 1e-6
    # A canonical query that rounds keeps the precision it rounded to: ROUND(x, 2) = 58.74 accepts 58.744924.
    g = {"kind": "value", "columns": ["pct"], "rows": [[58.74]], "rows_from": "canonical_query",
         "canonical_query": "SELECT ROUND(100.0 * SUM(x) / COUNT(*), 2) FROM t"}
    assert judge_answer("q", g, {"columns": ["pct"], "rows": [[58.744924]]}).verdict == "match"
    # A golden typed by hand keeps its written precision (pub-aj-06): 58.74 accepts 58.744924.
    g = {"kind": "value", "columns": ["pct"], "rows": [[58.74]]}
    assert judge_answer("q", g, {"columns": ["pct"], "rows": [[58.744924]]}).verdict == "match"


def test_rounds_reads_as_the_rounding_regex():
    # shapes._rounds looks for "(" and the words before running _ROUNDING (issue 15); on every text it must say what
    # the regex says. The texts: each Spider gold and predicted query of the three shipped files (the data the
    # shortcut was measured on), and hand-made edges: a word inside a longer one ("around(", "format_x("), a space
    # before "(", every case, a word without "(", non-ASCII text (the regex decides: IGNORECASE folds beyond ASCII).
    from goldeval.answers.shapes import _ROUNDING, _rounds

    texts = ["SELECT ROUND(x, 2) FROM t", "select round (x) from t", "SELECT around(x) FROM t", "SELECT x FROM t",
             "SELECT printf('%.2f', x)", "SELECT FORMAT(x)", "SELECT trunc(x)", "SELECT TRUNCATE(x, 1)",
             "SELECT to_char(d, 'YYYY')", "SELECT format_x(1)", "SELECT round FROM t", "SELECT rounded(x)",
             "SELECT (round)", "SELECT x_round(1)", "SELECT ROUND\t(x)", "SELECT ROUNDé(x)", "SELECT é, round(x)",
             "SELECT \u0130round(x)", "SELECT ſ FROM t", "", "(", "round", "round("]
    from conftest import SHARED

    data = SHARED / "data" / "spider"
    for f in sorted(data.glob("spider_*_cases.jsonl")):
        for line in f.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            texts += [row.get("gold_sql") or row.get("query") or "", row.get("pred_sql") or ""]
    assert len(texts) > 1000 or not data.is_dir()
    for t in texts:
        assert _rounds(t) == (_ROUNDING.search(t) is not None), t


def test_computed_floats_from_the_database(tmp_path: Path):
    import sqlite3

    from goldeval.answers import AnswerConfig

    db = tmp_path / "s.sqlite"
    con = sqlite3.connect(db)
    con.execute("CREATE TABLE t (score INTEGER)")
    con.executemany("INSERT INTO t VALUES (?)", [(x,) for x in (0, 1, 0, 1, 0, 1, 0, 0, 0, 0)])  # mean 3/10
    con.commit()
    con.close()
    cases = _jsonl(tmp_path / "c.jsonl", [{"id": "avg", "question": "Mean score?",
                                           "golden": {"kind": "value", "columns": ["avg_score"], "canonical_query": "SELECT AVG(score) FROM t"}}])
    attempts = _jsonl(tmp_path / "a.jsonl", [{"id": "avg", "columns": ["avg_score"], "rows": [[0.33]]}])
    out = judge_file(cases, attempts, config=AnswerConfig(db=str(db)))
    assert out["per_example"][0]["verdict"] == "no_match"  # 0.33 ≠ 0.3 (was a match at "one decimal")


@pytest.mark.parametrize("golden, pred, verdict", [
    (1_000_000, 1_000_001, "no_match"),               # two whole numbers: exact (1e-6 relative would allow ±1)
    (1_234_567_890_123, 1_234_567_890_999, "no_match"),  # an id 876 away: within 1e-6 relative (±1.2e6), not equal
    (1_000_000, 1_000_000.0000001, "match"),          # float noise on one side: the relative tolerance applies
    (58.74, 58.744924, "match"),                      # display precision unchanged (pub-aj-06)
])
def test_whole_numbers_meet_exactly(golden, pred, verdict):
    g = {"kind": "value", "columns": ["n"], "rows": [[golden]]}
    assert judge_answer("q", g, {"columns": ["n"], "rows": [[pred]]}).verdict == verdict


def test_must_not_use_veto_without_db(tmp_path: Path):
    # An attempt with only a final_query and no --db: its rows are unknown (unscored), but a forbidden field in the
    # query decides the case by itself — it was unscored "nothing to judge" (arm_b q11 without --db).
    cases = _jsonl(tmp_path / "c.jsonl", [
        {"id": "veto", "question": "q", "golden": {"kind": "value", "columns": ["n"], "rows": [[118]]}, "must_not_use": ["patients.ssn"]},
        {"id": "clean", "question": "q", "golden": {"kind": "value", "columns": ["n"], "rows": [[118]]}, "must_not_use": ["patients.ssn"]},
    ])
    attempts = _jsonl(tmp_path / "a.jsonl", [
        {"id": "veto", "final_query": "WITH p AS (SELECT ssn AS pid FROM patients) SELECT COUNT(DISTINCT pid) FROM p"},
        {"id": "clean", "final_query": "SELECT COUNT(*) FROM patients WHERE age > 65"},
    ])
    by_id = {c["id"]: c for c in judge_file(cases, attempts)["per_example"]}
    assert by_id["veto"]["verdict"] == "no_match" and by_id["veto"]["decided_by"] == "must_not_use"
    assert by_id["clean"]["status"] == "unscored" and by_id["clean"]["reason"].startswith("a.jsonl:2 (id 'clean'): the attempt gives nothing to judge")


@pytest.mark.parametrize("column, text, verdict", [
    ("n_patients", "20%", "no_match"),                    # was match: a percentage is never a count of 20
    ("n_patients", "20 percent", "no_match"),
    ("n_patients", "20 patients, 20% of all", "match"),   # 20 is also stated as a plain number
    ("value", "20%", "match"),                            # no count in the name: the percent rule does not apply
    ("share", "20%", "match"),                            # a rate: 20% for 20 (percent) as before
])
def test_a_percentage_in_prose_is_not_a_count(column, text, verdict):
    g = {"kind": "value", "columns": [column], "rows": [[20]]}
    assert judge_answer("q", g, {"text": text}).verdict == verdict


def test_two_count_columns_under_each_others_names_are_needs_human():
    # Golden n_admissions (1, 2, 3) and n_discharges (3, 1, 2); the prediction's n_discharges holds 1, 2, 3 and its
    # n_admissions 3, 1, 2: every golden row is there with the two labels swapped. Each named column holds the right
    # *set* of values, so the name pairing looked settled and the verdict was no_match; like a named column that
    # disagrees while another holds its values, this is "mislabelled or wrong", which rules cannot tell apart.
    g = {"kind": "value", "columns": ["n_admissions", "n_discharges"], "rows": [[1, 3], [2, 1], [3, 2]]}
    p = {"columns": ["n_discharges", "n_admissions"], "rows": [[1, 3], [2, 1], [3, 2]]}
    v = judge_answer("q", g, p)
    assert v.verdict == "needs_human" and v.details["undecided_because"] == "names and values disagree"
    # Names whose roles differ (a month is not a count) are not swapped: pub-aj-11's rule, still no_match.
    g = {"kind": "value", "columns": ["month", "n"], "rows": [[1, 3], [2, 1], [3, 2]]}
    assert judge_answer("q", g, {"columns": ["n", "month"], "rows": [[1, 3], [2, 1], [3, 2]]}).verdict == "no_match"


def test_top_n_boundary_ignores_nulls():
    # ORDER BY n ASC LIMIT 2 in SQLite puts NULL first: golden (a, NULL), (b, 1). The boundary is 1, and (c, 1) is a
    # valid tie-break for (b, 1). np.argmax picked the NULL as the boundary and this was no_match ("boundary nan").
    g = {"kind": "value", "columns": ["w", "n"], "rows": [["a", None], ["b", 1]], "top_n": {"n": 2, "by": "n", "direction": "asc"}}
    v = judge_answer("q", g, {"columns": ["w", "n"], "rows": [["a", None], ["c", 1]]})
    assert v.verdict == "match" and "boundary value 1" in v.why
    # Dropping the NULL row for (c, 2) is not a top 2: the boundary moves to 2.
    v = judge_answer("q", g, {"columns": ["w", "n"], "rows": [["b", 1], ["c", 2]]})
    assert v.verdict == "no_match" and "boundary value 2 instead of 1" in v.why


@pytest.mark.parametrize("text, verdict", [
    ("There is no data issue here: the answer is 42.", "needs_human"),   # was match: a refusal phrase beside an answer
    ("Cannot be sure, but it is 42.", "needs_human"),                    # was near_match
    ("O+ is the most common (the database does not record Rh factor separately).", "needs_human"),  # was match
    ("I cannot answer: the data has no blood type field.", "match"),     # declines, names what is missing
    ("It is not possible to answer: the database does not record blood type.", "match"),
    ("I cannot answer this.", "near_match"),                             # declines, generically
])
def test_refusal_phrase_beside_an_answer_is_not_a_refusal(text, verdict):
    q = "What is the most common blood type among cardiology patients?"
    assert judge_answer(q, {"kind": "unanswerable"}, {"text": text}).verdict == verdict


def test_refusal_phrase_beside_an_answer_against_a_value_golden():
    g = {"kind": "value", "columns": ["blood_type"], "rows": [["O+"]]}
    # Was no_match 9 ("the answer declines"): it answers O+ and only notes a limit of the data.
    v = judge_answer("q", g, {"text": "O+ is the most common (the database does not record Rh factor separately)."})
    assert v.verdict == "needs_human"
    # A plain refusal is still no_match (seed-aj-refusal-vs-value).
    assert judge_answer("q", g, {"text": "The model has no blood entity, so I cannot compute this."}).verdict == "no_match"
