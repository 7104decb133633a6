"""goldeval.answers.relabel: a golden column of codes answered by a column of names (or the reverse), any number
of them, pairs when the database shows the mapping one-to-one on these rows (``match``, the why naming the table);
when only the rows show a bijection, ``needs_human``; else the verdict stands.

The database built here, worked by hand: countries ABW Aruba, AFG Afghanistan, AGO Angola, COD Congo, COG Congo
(two countries named Congo); cities (population): Oranjestad 29,034 in ABW, Kabul 1,780,000 and Herat 186,800 in
AFG, Luanda 2,022,000 in AGO, Kinshasa 5,064,000 in COD, Brazzaville 950,000 in COG; languages (code → name) pap
Papiamento, pus Pashto, por Portuguese, lin Lingala; spoken (country, language, percentage): ABW pap 76.7, AFG pus
52.4, AGO por 31.5; semesters 1 spring 2010, 2 fall 2018; singers (id, name, song): 1 Joe / You,
2 Tim / Dangerous, 3 Rose / Sun.

Source: goldeval issue 26, item 4.
"""

from __future__ import annotations

import sqlite3

import pytest
from conftest import REPO

from goldeval.answers import AnswerConfig, judge_case
from goldeval.answers.relabel import database_mappings, rows_bijection
from goldeval.answers.sql import ReadOnlyDatabase


@pytest.fixture
def db(tmp_path):
    path = tmp_path / "w.sqlite"
    con = sqlite3.connect(path)
    con.executescript("""
        CREATE TABLE country (code TEXT PRIMARY KEY, name TEXT);
        CREATE TABLE city (name TEXT, country_code TEXT REFERENCES country(code), population INTEGER);
        CREATE TABLE language (code TEXT PRIMARY KEY, name TEXT);
        CREATE TABLE spoken (country_code TEXT REFERENCES country(code), language_code TEXT REFERENCES language(code),
                             percentage REAL);
        CREATE TABLE semester (semester_id INTEGER PRIMARY KEY, semester_name TEXT);
        CREATE TABLE enrolment (student TEXT, semester_id INTEGER REFERENCES semester(semester_id));
        CREATE TABLE singer (singer_id INTEGER PRIMARY KEY, name TEXT, song TEXT);
        INSERT INTO country VALUES ('ABW', 'Aruba'), ('AFG', 'Afghanistan'), ('AGO', 'Angola'), ('COD', 'Congo'),
                                   ('COG', 'Congo');
        INSERT INTO city VALUES ('Oranjestad', 'ABW', 29034), ('Kabul', 'AFG', 1780000), ('Herat', 'AFG', 186800),
                                ('Luanda', 'AGO', 2022000), ('Kinshasa', 'COD', 5064000), ('Brazzaville', 'COG', 950000);
        INSERT INTO language VALUES ('pap', 'Papiamento'), ('pus', 'Pashto'), ('por', 'Portuguese'), ('lin', 'Lingala');
        INSERT INTO spoken VALUES ('ABW', 'pap', 76.7), ('AFG', 'pus', 52.4), ('AGO', 'por', 31.5);
        INSERT INTO semester VALUES (1, 'spring 2010'), (2, 'fall 2018');
        INSERT INTO enrolment VALUES ('ann', 2), ('bob', 2), ('cy', 1);
        INSERT INTO singer VALUES (1, 'Joe', 'You'), (2, 'Tim', 'Dangerous'), (3, 'Rose', 'Sun');
    """)
    con.commit()
    con.close()
    d = ReadOnlyDatabase(path)
    yield d
    d.close()


def _judge(db, question, canonical, final_query=None, rows=None, columns=None, use_db=True):
    case = {"id": "c", "question": question, "golden": {"kind": "value", "canonical_query": canonical}}
    if not use_db:  # the golden's rows as the canonical query gives them, the prediction's as reported
        res = db.execute(canonical)
        case["golden"] = {"kind": "value", "columns": res.columns, "rows": [list(r) for r in res.rows]}
    att = {"id": "c", "final_query": final_query} if final_query else {"id": "c", "columns": columns, "rows": rows}
    return judge_case(case, att, db=db if use_db else None, config=AnswerConfig()).outcome.verdict


POP = "What is the population of the cities of each of Aruba, Afghanistan and Angola, by country?"
POP_GOLD = "SELECT country_code, sum(population) FROM city WHERE country_code IN ('ABW', 'AFG', 'AGO') GROUP BY country_code"
POP_NAMES = ("SELECT country.name, sum(city.population) FROM city JOIN country ON city.country_code = country.code "
             "WHERE country.code IN ('ABW', 'AFG', 'AGO') GROUP BY country.name")


def test_one_column_of_names_for_codes_through_a_lookup_table_is_a_match(db):
    v = _judge(db, POP, POP_GOLD, POP_NAMES)
    assert v.verdict == "match" and v.confidence == 9
    assert v.details["relabel"] == [{"golden": "country_code", "prediction": "name", "table": "country",
                                     "via": "a foreign key country_code → country.code"}]
    assert "'name' for golden 'country_code' through table country" in v.why
    assert v.column_pairing["country_code"] == "name"


def test_two_relabelled_columns_pair_by_the_same_rule(db):
    # ABW/pap 76.7 as Aruba/Papiamento 76.7, and so on: two columns of names for two columns of codes.
    q = "Which language is spoken in each country, and by what percentage?"
    gold = "SELECT country_code, language_code, percentage FROM spoken"
    names = ("SELECT country.name, language.name AS language, percentage FROM spoken JOIN country ON "
             "spoken.country_code = country.code JOIN language ON spoken.language_code = language.code")
    v = _judge(db, q, gold, names)
    assert v.verdict == "match"
    assert [(r["golden"], r["prediction"], r["table"]) for r in v.details["relabel"]] == [
        ("country_code", "name", "country"), ("language_code", "language", "language")]
    # Without the database only the rows show it: the percentages line the rows up, and each column is a
    # bijection onto labels the golden never uses: needs_human (a name where a code was given may not answer).
    rows = [["Aruba", "Papiamento", 76.7], ["Afghanistan", "Pashto", 52.4], ["Angola", "Portuguese", 31.5]]
    v = _judge(db, q, gold, rows=rows, columns=["name", "language", "percentage"], use_db=False)
    assert v.verdict == "needs_human" and v.details["undecided_because"] == "relabelled columns"
    assert v.details["rule_verdict"]["verdict"] == "no_match"
    assert v.mismatch == "relabelled columns: 'name' for golden 'country_code', 'language' for golden 'language_code'"


def test_the_same_row_of_a_table_its_key_and_its_label(db):
    q = "In which semester did Ann and Bob enrol?"
    v = _judge(db, q, "SELECT DISTINCT semester_id FROM enrolment WHERE student IN ('ann', 'bob')",
               "SELECT DISTINCT semester.semester_name FROM semester JOIN enrolment USING (semester_id) "
               "WHERE student IN ('ann', 'bob')")
    assert v.verdict == "match" and v.details["relabel"][0]["table"] == "semester"
    (m,) = database_mappings(db, "semester_id", [2], "semester_name", ["fall 2018"])
    assert (m.table, dict(m.to_golden)) == ("semester", {"fall 2018": 2})


def test_the_reverse_codes_for_names(db):
    # Kabul (1,780,000) and Luanda (2,022,000): Afghanistan and Angola, answered as AFG and AGO.
    q = "Which countries have a city of one to three million people?"
    v = _judge(db, q, "SELECT country.name FROM country JOIN city ON city.country_code = country.code "
                      "WHERE city.population BETWEEN 1000000 AND 3000000",
               "SELECT country_code FROM city WHERE population BETWEEN 1000000 AND 3000000")
    assert v.verdict == "match" and v.details["relabel"][0]["prediction"] == "country_code"


def test_two_attributes_of_one_row_are_not_a_relabel(db):
    # The singers' names where their songs were asked: one row each, one-to-one, but neither column is the
    # table's key: not a code and its label. Spider dev-0006 (DAIL-SQL, zero-shot) is this kind.
    v = _judge(db, "What songs do the singers sing?", "SELECT song FROM singer", "SELECT name FROM singer")
    assert v.verdict == "no_match" and "relabel" not in v.details


def test_a_mapping_that_is_not_one_to_one_on_these_rows_is_no_mapping(db):
    # COD and COG are both 'Congo': the names cannot be read back as codes.
    assert database_mappings(db, "country_code", ["COD", "COG"], "name", ["Congo"]) == []
    v = _judge(db, "What is the population of the cities of each Congo?",
               "SELECT country_code, sum(population) FROM city WHERE country_code IN ('COD', 'COG') GROUP BY country_code",
               "SELECT country.name, sum(city.population) FROM city JOIN country ON city.country_code = country.code "
               "WHERE country.code IN ('COD', 'COG') GROUP BY country.code")
    assert v.verdict != "match" and "relabel" not in v.details


def test_wrong_names_stay_wrong(db):
    # Angola for Aruba: the names read back as codes give AGO where the golden has ABW.
    wrong = POP_NAMES.replace("'ABW', 'AFG', 'AGO'", "'AFG', 'AGO', 'COD'")
    v = _judge(db, POP, POP_GOLD, wrong)
    assert v.verdict == "no_match" and "relabel" not in v.details


def test_rows_bijection_needs_keys_three_values_and_new_labels():
    g = [["ABW", 1], ["AFG", 2], ["AGO", 3]]
    assert rows_bijection(g, [["Aruba", 1], ["Afghanistan", 2], ["Angola", 3]], [1], [1], 0, 0)
    assert not rows_bijection(g[:2], [["Aruba", 1], ["Afghanistan", 2]], [1], [1], 0, 0)  # 2 values: no evidence
    assert not rows_bijection(g, [["AFG", 1], ["AGO", 2], ["ABW", 3]], [1], [1], 0, 0)  # the golden's own labels
    assert not rows_bijection(g, [["Aruba", 1], ["Aruba", 2], ["Angola", 3]], [1], [1], 0, 0)  # not one-to-one
    assert not rows_bijection(g, [["Aruba", 1], ["Afghanistan", 2], ["Angola", 3]], [], [], 0, 0)  # nothing lines up


def test_the_relabel_rule_runs_only_when_golden_and_prediction_disagree(db, monkeypatch):
    import goldeval.answers.case as case_mod

    def never(*a, **k):
        raise AssertionError("the relabel rule ran on a match")

    monkeypatch.setattr(case_mod, "relabel_verdict", never)
    assert _judge(db, POP, POP_GOLD, POP_GOLD).verdict == "match"


# --- the shipped Spider databases ------------------------------------------------------------------------------

SPIDER_DBS = REPO / "examples" / "spider" / "regressions" / "databases"


def test_spider_dev_0575_the_semester_s_name_for_its_id():
    # dev-0575 (DIN-SQL): the golden gives semester_id 13, the answer its name 'fall 2018'; semesters maps one to
    # the other (student_enrolment.semester_id → semesters.semester_id). Settled match by the reviewer.
    db = ReadOnlyDatabase(SPIDER_DBS / "student_transcripts_tracking" / "student_transcripts_tracking.sqlite")
    try:
        case = {"id": "spider-dev-0575", "question": "Find the semester when both Master students and Bachelor students got enrolled in.",
                "golden": {"kind": "value", "canonical_query":
                           "SELECT DISTINCT T2.semester_id FROM Degree_Programs AS T1 JOIN Student_Enrolment AS T2 ON "
                           "T1.degree_program_id  =  T2.degree_program_id WHERE degree_summary_name  =  'Master' INTERSECT "
                           "SELECT DISTINCT T2.semester_id FROM Degree_Programs AS T1 JOIN Student_Enrolment AS T2 ON "
                           "T1.degree_program_id  =  T2.degree_program_id WHERE degree_summary_name  =  'Bachelor'"}}
        att = {"id": "spider-dev-0575", "final_query":
               "SELECT semester_name FROM Semesters WHERE semester_id IN (SELECT T1.semester_id FROM Student_Enrolment AS T1 "
               "JOIN Degree_Programs AS T2 ON T1.degree_program_id  =  T2.degree_program_id WHERE T2.degree_summary_name  =  "
               "'Master') AND semester_id IN (SELECT T1.semester_id FROM Student_Enrolment AS T1 JOIN Degree_Programs AS T2 ON "
               "T1.degree_program_id  =  T2.degree_program_id WHERE T2.degree_summary_name  =  'Bachelor')"}
        v = judge_case(case, att, db=db, config=AnswerConfig()).outcome.verdict
        assert v.verdict == "match"
        assert v.details["relabel"] == [{"golden": "semester_id", "prediction": "semester_name", "table": "semesters",
                                         "via": "a foreign key semester_id → semesters.semester_id"}]
    finally:
        db.close()


def test_spider_dev_0006_a_singer_s_name_for_a_song_stays_wrong():
    db = ReadOnlyDatabase(SPIDER_DBS / "concert_singer" / "concert_singer.sqlite")
    try:
        case = {"id": "spider-dev-0006", "question": "Show the name and the release year of the song by the youngest singer.",
                "golden": {"kind": "value", "canonical_query": "SELECT song_name ,  song_release_year FROM singer ORDER BY age LIMIT 1"}}
        att = {"id": "spider-dev-0006", "final_query": "SELECT Name, Song_release_year FROM singer WHERE Age = (SELECT MIN(Age) FROM singer)"}
        v = judge_case(case, att, db=db, config=AnswerConfig()).outcome.verdict
        assert v.verdict == "no_match" and "relabel" not in v.details
    finally:
        db.close()


def test_spider_dev_0816_country_names_for_codes_in_233_rows():
    # dev-0816 (zero-shot): the language spoken by the largest percentage in each country; the answer names the 233
    # countries where the golden gives their codes (an alias, Country, for country.Name): country maps Code to Name
    # one-to-one on these rows. Judge 1.5.0: needs_human (one relabelled column, shown by the rows only).
    db = ReadOnlyDatabase(SPIDER_DBS / "world_1" / "world_1.sqlite")
    try:
        case = {"id": "spider-dev-0816", "question": "What is the language spoken by the largest percentage of people in each country?",
                "golden": {"kind": "value", "canonical_query":
                           "SELECT LANGUAGE ,  CountryCode ,  max(Percentage) FROM countrylanguage GROUP BY CountryCode"}}
        att = {"id": "spider-dev-0816", "final_query":
               "SELECT country.Name AS Country, countrylanguage.Language AS Language, MAX(countrylanguage.Percentage) AS "
               "Percentage FROM country JOIN countrylanguage ON country.Code = countrylanguage.CountryCode GROUP BY "
               "country.Name ORDER BY country.Name;"}
        v = judge_case(case, att, db=db, config=AnswerConfig()).outcome.verdict
        assert v.verdict == "match" and v.located["golden_rows"] == v.located["found"] == 233
        assert v.details["relabel"] == [{"golden": "CountryCode", "prediction": "Country", "table": "country",
                                         "via": "a foreign key countrycode → country.code"}]
        assert v.details["rule_verdict_before_relabel"]["verdict"] == "needs_human"
    finally:
        db.close()


def test_one_relabelled_column_without_the_database_is_needs_human_and_with_it_match(db):
    # The populations line the rows up (29,034 / 1,966,800 / 2,022,000); the country column is a bijection onto
    # names the golden never uses. No database: needs_human (judge 1.5.0: no_match, "no counterpart"); with it: match.
    rows = [["Aruba", 29034], ["Afghanistan", 1966800], ["Angola", 2022000]]
    v = _judge(db, POP, POP_GOLD, rows=rows, columns=["name", "population"], use_db=False)
    assert v.verdict == "needs_human" and v.mismatch == "relabelled columns: 'name' for golden 'country_code'"
    assert v.details["rule_verdict"]["verdict"] == "no_match"
    assert _judge(db, POP, POP_GOLD, rows=rows, columns=["name", "population"]).verdict == "match"


def test_a_measure_scaled_one_to_one_is_not_a_relabel(db):
    # The populations ×100 (cents-for-dollars kind): each golden total maps one-to-one onto a value the golden never
    # uses, keyed by the country codes, but both sides are numbers: one measure transformed, not codes answered by
    # names. The rule verdict stands (no_match, "uniformly scaled"), never needs_human. (examples/sql q12 of arm_b
    # is the same kind: total cost in cents.)
    rows = [["ABW", 2903400], ["AFG", 196680000], ["AGO", 202200000]]
    v = _judge(db, POP, POP_GOLD, rows=rows, columns=["country_code", "population"], use_db=False)
    assert v.verdict == "no_match" and "relabelled" not in (v.mismatch or "")
    # the same rows with the codes relabelled as names (text) and the populations right: still the relabel rule
    named = [["Aruba", 29034], ["Afghanistan", 1966800], ["Angola", 2022000]]
    assert _judge(db, POP, POP_GOLD, rows=named, columns=["name", "population"], use_db=False).verdict == "needs_human"


def test_a_lookup_literal_is_the_text_sqlglot_prints(db):
    # relabel._literal writes a string cell as SQLite text itself (issue 31 item 5: sqlglot's generator, a call a
    # value, was a quarter of a Spider file's judge time); sqlglot's SQLite print of exp.Literal.string stays the
    # definition: the same text on hand-made strings (quotes, backslashes, control characters, non-ASCII, astral
    # code points) and 20,000 random ones, and the lookup finds the same pairs as with sqlglot's texts.
    import random

    from sqlglot import exp

    from goldeval.answers import relabel

    hand = ["", "a", "O'Brien", "''", "'", "\\", "\\'", "a\\nb", "a\nb", "a\r\nb", "\t", "\x00", "\x1b", "\x7f", "é",
            "ß", "İ", "\u2028", "😀", "$$", "[x]", '"q"', "--", "/*", "%_"]
    rng = random.Random(5)
    pool = [(0, 127), (128, 0x2FFF), (0xE000, 0x10FFFF)]
    rand = ["".join(chr(rng.randint(*rng.choice(pool))) for _ in range(rng.randint(0, 8))) for _ in range(20_000)]
    for v in hand + rand:
        assert relabel._literal(v) == exp.Literal.string(v).sql(dialect="sqlite"), repr(v)
    assert [relabel._literal(v) for v in (None, True, 13.0, 2.5, 7, b"x")] == [None, None, "13", "2.5", "7", None]
    # The lookup itself (country codes answered by names, one with a quote): the same pairs either way.
    names = ["Aruba", "Afghanistan", "O'Hare"]
    got = relabel._pairs(db, "country", "code", "name", ["ABW", "AFG"], names)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(relabel, "_literal", lambda v: exp.Literal.string(v).sql(dialect="sqlite") if isinstance(v, str) else None)
        assert relabel._pairs(db, "country", "code", "name", ["ABW", "AFG"], names) == got
    assert sorted(got) == [("ABW", "Aruba"), ("AFG", "Afghanistan")]
