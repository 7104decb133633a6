"""goldeval.answers.direction: a golden whose MAX/MIN or ORDER BY direction runs against its question's
superlative is ``suspect`` (and the verdict ``needs_human``, never a confident ``no_match``) when the prediction
took the other direction; a golden that agrees with its question is never doubted.

Expected values are worked out by hand from the small tables built here: singers aged 52, 32, 29, 41 (born 1974,
1994, 1997, 1985: the youngest is Justin, 29, born 1997; the oldest Joe, 52, born 1974); products priced 9.5,
3.25, 12.0 (the cheapest is the pen); museums visited 3, 1 and 2 times (the most visited is the Louvre). The
Spider cases use the shipped concert_singer database (examples/spider/regressions/databases), whose six singers
are aged 52, 32, 29, 41, 43, 25 (the youngest: Tribal King, 25, song 'Love', 2016; the oldest: Joe Sharp, 52).

Source: goldeval issue 26, item 3.
"""

from __future__ import annotations

import json
import sqlite3
import sys

import pytest
from conftest import REPO, SHARED

from goldeval.answers import AnswerConfig, judge_case
from goldeval.answers import direction
from goldeval.answers.direction import (INVERTED, ROLE_TOKENS, SUPERLATIVES, golden_direction_conflicts, query_measures,
                                        question_superlatives, reversed_query)
from goldeval.answers.sql import ReadOnlyDatabase

SPIDER_DBS = REPO / "examples" / "spider" / "regressions" / "databases"


@pytest.fixture
def db(tmp_path):
    path = tmp_path / "d.sqlite"
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE singer (name TEXT, age INTEGER, birth_year INTEGER, song TEXT)")
    con.executemany("INSERT INTO singer VALUES (?, ?, ?, ?)", [
        ("Joe", 52, 1974, "You"), ("Tim", 32, 1994, "Dangerous"), ("Justin", 29, 1997, "Hey Oh"), ("Rose", 41, 1985, "Sun")])
    con.execute("CREATE TABLE product (name TEXT, price REAL)")
    con.executemany("INSERT INTO product VALUES (?, ?)", [("book", 9.5), ("pen", 3.25), ("lamp", 12.0)])
    con.execute("CREATE TABLE visit (museum TEXT, visitor TEXT)")
    con.executemany("INSERT INTO visit VALUES (?, ?)", [("Louvre", "a"), ("Louvre", "b"), ("Louvre", "c"), ("Prado", "a"),
                                                        ("Tate", "a"), ("Tate", "b")])
    con.commit()
    con.close()
    d = ReadOnlyDatabase(path)
    yield d
    d.close()


# --- the word table --------------------------------------------------------------------------------------------

def test_the_word_table_is_data_with_a_direction_and_a_role_for_every_word():
    assert SUPERLATIVES["youngest"] == ("min", "age") and SUPERLATIVES["oldest"] == ("max", "age")
    assert SUPERLATIVES["cheapest"] == ("min", "price") and SUPERLATIVES["earliest"] == ("min", "time")
    assert all(d in ("max", "min") for d, _ in SUPERLATIVES.values())
    roles = {r for _, r in SUPERLATIVES.values()}
    assert roles - {"any"} <= set(ROLE_TOKENS)
    assert INVERTED["age"] == {"birth", "time"}  # the oldest: the greatest age, the least birth year
    for pair in [("youngest", "oldest"), ("most", "least"), ("highest", "lowest"), ("earliest", "latest"),
                 ("first", "last"), ("cheapest", "dearest"), ("largest", "smallest")]:
        assert {SUPERLATIVES[w][0] for w in pair} == {"max", "min"}, pair


@pytest.mark.parametrize("question, words", [
    ("Show the name of the youngest singer.", [("youngest", "min", False)]),
    ("List the singers from the oldest to the youngest.", [("oldest", "max", True)]),  # the phrase's end is dropped
    ("Which product is the most expensive?", [("most expensive", "max", False)]),
    ("Which students have at least 2 pets?", []),
    ("What are the first names and last names of the students?", []),
    ("Which people joined in the last year?", []),
    ("Which museum had the fewest visitors, and the most?", [("fewest", "min", False), ("most", "max", False)]),
])
def test_question_superlatives(question, words):
    assert [(w.word, w.direction, w.ordering) for w in question_superlatives(question)] == words


# --- the golden against its question (parsing only) ------------------------------------------------------------

#: (question, a canonical query that agrees with it, the same query taken the other way, the direction asked)
KINDS = [
    ("Name the youngest singer.", "SELECT name FROM singer ORDER BY age ASC LIMIT 1",
     "SELECT name FROM singer ORDER BY age DESC LIMIT 1", "min"),
    ("Name the oldest singer.", "SELECT name FROM singer WHERE age = (SELECT max(age) FROM singer)",
     "SELECT name FROM singer WHERE age = (SELECT min(age) FROM singer)", "max"),
    # a birth year measures age the other way round: the oldest is born first
    ("Name the oldest singer.", "SELECT name FROM singer ORDER BY birth_year LIMIT 1",
     "SELECT name FROM singer ORDER BY birth_year DESC LIMIT 1", "min"),
    ("Who is the youngest singer?", "SELECT name FROM singer WHERE birth_year = (SELECT max(birth_year) FROM singer)",
     "SELECT name FROM singer WHERE birth_year = (SELECT min(birth_year) FROM singer)", "max"),
    ("What is the cheapest product?", "SELECT name FROM product ORDER BY price LIMIT 1",
     "SELECT name FROM product ORDER BY price DESC LIMIT 1", "min"),
    ("What did the dearest product cost?", "SELECT max(price) FROM product", "SELECT min(price) FROM product", "max"),
    ("Which museum has the most visits?", "SELECT museum FROM visit GROUP BY museum ORDER BY count(*) DESC LIMIT 1",
     "SELECT museum FROM visit GROUP BY museum ORDER BY count(*) ASC LIMIT 1", "max"),
    ("Which museum has the fewest visits?", "SELECT museum, count(*) AS n FROM visit GROUP BY museum ORDER BY n LIMIT 1",
     "SELECT museum, count(*) AS n FROM visit GROUP BY museum ORDER BY n DESC LIMIT 1", "min"),
    ("What is the earliest release date?", "SELECT min(release_date) FROM album", "SELECT max(release_date) FROM album", "min"),
    ("Which album came out last (latest release year)?", "SELECT title FROM album ORDER BY release_year DESC LIMIT 1",
     "SELECT title FROM album ORDER BY release_year ASC LIMIT 1", "max"),
    ("Which country has the largest population?", "SELECT name FROM country ORDER BY population DESC LIMIT 1",
     "SELECT name FROM country ORDER BY population LIMIT 1", "max"),
    ("Find the lowest score of each team.", "SELECT team, min(score) FROM game GROUP BY team",
     "SELECT team, max(score) FROM game GROUP BY team", "min"),
    ("List the singers' names from the oldest to the youngest.", "SELECT name FROM singer ORDER BY age DESC",
     "SELECT name FROM singer ORDER BY age ASC", "max"),
    # two words, two measures: each word is read against the measure it names
    ("Of the three countries with the smallest area, which has the largest population?",
     "SELECT name FROM (SELECT * FROM country ORDER BY area ASC LIMIT 3) ORDER BY population DESC LIMIT 1",
     "SELECT name FROM (SELECT * FROM country ORDER BY area DESC LIMIT 3) ORDER BY population DESC LIMIT 1", "min"),
]


@pytest.mark.parametrize("question, agrees, disagrees, asked", KINDS)
def test_a_golden_that_agrees_with_its_question_is_never_doubted_and_one_that_runs_against_it_is_found(
        question, agrees, disagrees, asked):
    assert golden_direction_conflicts(question, agrees) == ()
    (c,) = golden_direction_conflicts(question, disagrees)
    assert c.expected == asked and c.measure.direction != asked


@pytest.mark.parametrize("question, canonical", [
    ("What is the maximum and the minimum age of the singers?", "SELECT max(age), min(age) FROM singer"),
    ("Show the names of all singers.", "SELECT name FROM singer ORDER BY age DESC LIMIT 3"),  # no word: nothing to read
    ("Which singers are older than 30, oldest first?", "SELECT name FROM singer WHERE age > 30"),  # no measure
    # "first name" is not an ordering word; the ORDER BY here is a choice the question does not name
    ("What is the first name of the singer with the highest age?", "SELECT first_name FROM singer ORDER BY age DESC LIMIT 1"),
    # a superlative about another measure: the largest population says nothing of the ORDER BY on area
    ("Of the three countries with the smallest area, which has the largest population?",
     "SELECT name FROM (SELECT * FROM country ORDER BY area ASC LIMIT 3) ORDER BY population DESC LIMIT 1"),
])
def test_goldens_that_agree_or_say_nothing_are_left_alone(question, canonical):
    assert golden_direction_conflicts(question, canonical) == ()


def test_the_measures_of_a_query_and_its_reversal():
    ms = query_measures("SELECT museum, count(*) AS n FROM visit GROUP BY museum ORDER BY n DESC LIMIT 1")
    assert [(m.sql, m.is_count, m.direction, m.kind, m.how) for m in ms] == [
        ("COUNT(*)", True, "max", "limit", "ORDER BY COUNT(*) DESC LIMIT 1")]
    assert reversed_query("SELECT museum, count(*) AS n FROM visit GROUP BY museum ORDER BY n DESC LIMIT 1", ms[0]) == \
        "SELECT museum, COUNT(*) AS n FROM visit GROUP BY museum ORDER BY n ASC LIMIT 1"
    (m,) = query_measures("SELECT name FROM singer WHERE age = (SELECT min(age) FROM singer)")
    assert reversed_query("SELECT name FROM singer WHERE age = (SELECT min(age) FROM singer)", m) == \
        "SELECT name FROM singer WHERE age = (SELECT MAX(age) FROM singer)"
    assert query_measures("SELECT FROM WHERE") is None


# --- against a prediction, on a database ------------------------------------------------------------------------

def _judge(db, question, canonical, final_query=None, rows=None, **golden):
    case = {"id": "c", "question": question, "golden": {"kind": "value", "canonical_query": canonical, **golden}}
    att = {"id": "c", "final_query": final_query} if final_query else {"id": "c", "columns": ["name"], "rows": rows}
    return judge_case(case, att, db=db, config=AnswerConfig()).outcome.verdict


YOUNGEST = "Show the name of the youngest singer."
WRONG_WAY = "SELECT name FROM singer ORDER BY age DESC LIMIT 1"   # Joe, 52: the oldest
RIGHT_WAY = "SELECT name FROM singer ORDER BY age ASC LIMIT 1"    # Justin, 29


def test_a_prediction_that_took_the_question_s_direction_makes_the_wrong_way_golden_suspect(db):
    v = _judge(db, YOUNGEST, WRONG_WAY, "SELECT name FROM singer ORDER BY age LIMIT 1")
    assert v.verdict == "needs_human" and v.gold_status == "suspect"
    assert v.details["rule_verdict"]["verdict"] == "no_match"  # Justin is not Joe, by rule
    assert v.gold_note.startswith("the canonical query takes ORDER BY age DESC LIMIT 1 (the greatest age) where the "
                                  "question asks for the 'youngest' (the least age), and the prediction took the other "
                                  "direction (its query takes ORDER BY age ASC LIMIT 1)")
    d = v.details["direction"]
    assert (d["question_reading"], d["golden_reading"]) == ("the least age", "ORDER BY age DESC LIMIT 1: the greatest age")
    assert d["reversed_query"] == "SELECT name FROM singer ORDER BY age ASC LIMIT 1"
    assert d["reversed_rows"] == [["Justin"]] and d["prediction_equals_reversed"] is True


@pytest.mark.parametrize("final_query", [
    "SELECT name FROM singer WHERE age = (SELECT min(age) FROM singer)",       # the same measure, another form
    "SELECT name FROM singer ORDER BY birth_year DESC LIMIT 1",                # another measure: read from the rows
])
def test_other_forms_of_the_other_direction_are_recognised(db, final_query):
    v = _judge(db, YOUNGEST, WRONG_WAY, final_query)
    assert v.verdict == "needs_human" and v.gold_status == "suspect" and "direction" in v.details


def test_reported_rows_that_are_the_reversed_query_s_make_it_suspect(db):
    v = _judge(db, YOUNGEST, WRONG_WAY, rows=[["Justin"]])
    assert v.verdict == "needs_human" and v.gold_status == "suspect"
    assert v.details["direction"]["prediction_reading"] == "its rows are the reversed query's"


def test_a_prediction_that_took_the_golden_s_direction_leaves_a_wrong_way_golden_alone(db):
    # The golden runs against its question, but the prediction is wrong in its own way (the same direction, another
    # column's value): nothing says the question was read the other way, so the rule's no_match stands.
    v = _judge(db, YOUNGEST, WRONG_WAY, "SELECT song FROM singer ORDER BY age DESC LIMIT 1")
    assert v.verdict == "no_match" and v.gold_status == "verified" and "direction" not in v.details
    v = _judge(db, YOUNGEST, WRONG_WAY, rows=[["Rose"]])  # neither reading's row
    assert v.verdict == "no_match" and v.gold_status == "verified"


def test_a_golden_that_agrees_with_its_question_is_not_doubted_whatever_the_prediction_does(db):
    v = _judge(db, YOUNGEST, RIGHT_WAY, WRONG_WAY)  # the prediction took the wrong way
    assert v.verdict == "no_match" and v.confidence >= 7 and v.gold_status == "verified"


@pytest.mark.parametrize("question, golden, prediction, settled_rows", [
    ("Which product is the cheapest?", "SELECT name FROM product ORDER BY price DESC LIMIT 1",
     "SELECT name FROM product WHERE price = (SELECT min(price) FROM product)", [["pen"]]),
    ("Which museum had the most visits?", "SELECT museum FROM visit GROUP BY museum ORDER BY count(*) LIMIT 1",
     "SELECT museum FROM visit GROUP BY museum ORDER BY count(*) DESC LIMIT 1", [["Louvre"]]),
    ("Name the oldest singer.", "SELECT name FROM singer ORDER BY birth_year DESC LIMIT 1",
     "SELECT name FROM singer ORDER BY birth_year LIMIT 1", [["Joe"]]),
])
def test_the_whole_kind_on_other_measures(db, question, golden, prediction, settled_rows):
    v = _judge(db, question, golden, prediction)
    assert v.verdict == "needs_human" and v.gold_status == "suspect"
    assert v.details["direction"]["reversed_rows"] == settled_rows
    # and the same golden written the question's way is a plain match
    right = reversed_query(golden, query_measures(golden)[0])
    assert _judge(db, question, right, prediction).verdict == "match"


def test_the_direction_check_runs_only_when_golden_and_prediction_disagree(db, monkeypatch):
    import goldeval.answers.case as case_mod

    def never(*a, **k):
        raise AssertionError("the direction check ran on a match")

    monkeypatch.setattr(case_mod, "direction_doubt", never)
    assert _judge(db, YOUNGEST, RIGHT_WAY, "SELECT name FROM singer WHERE age = (SELECT min(age) FROM singer)").verdict == "match"


def test_both_readings_reach_the_llm_judge_s_prompt(db):
    from goldeval.llm.prompt import build_user_prompt
    from goldeval.llm.wiring import from_answer_materials

    case = {"id": "c", "question": YOUNGEST, "golden": {"kind": "value", "canonical_query": WRONG_WAY}}
    res = judge_case(case, {"id": "c", "final_query": RIGHT_WAY}, db=db, config=AnswerConfig())
    assert res.outcome.verdict.verdict == "needs_human"
    prompt, _ = build_user_prompt(from_answer_materials(res.materials), nonce="0123456789abcdef")
    for reading in ('"question_reading": "the least age"', '"golden_reading": "ORDER BY age DESC LIMIT 1: the greatest age"',
                    '"reversed_rows": [["Justin"]]', "the golden's direction runs against its question"):
        assert reading in prompt, reading


# --- the shipped Spider database --------------------------------------------------------------------------------

@pytest.fixture
def concert():
    d = ReadOnlyDatabase(SPIDER_DBS / "concert_singer" / "concert_singer.sqlite")
    yield d
    d.close()


def test_spider_dev_0006_agrees_with_its_question_and_is_never_doubted(concert):
    # dev-0006, "the song by the youngest singer": gold ORDER BY age LIMIT 1 (Love, 2016); the zero-shot answer gives
    # the singer's name instead of the song (Tribal King): wrong, and the golden is not to blame.
    case = {"id": "spider-dev-0006", "question": "Show the name and the release year of the song by the youngest singer.",
            "golden": {"kind": "value", "canonical_query": "SELECT song_name ,  song_release_year FROM singer ORDER BY age LIMIT 1"}}
    att = {"id": "spider-dev-0006", "final_query": "SELECT Name, Song_release_year FROM singer WHERE Age = (SELECT MIN(Age) FROM singer);"}
    v = judge_case(case, att, db=concert, config=AnswerConfig()).outcome.verdict
    assert v.verdict == "no_match" and v.gold_status == "verified"


def test_a_spider_golden_taken_the_other_way_is_doubted(concert):
    # dev-0006's question with its gold query reversed (the oldest singer's song: You, 1992); the prediction takes
    # the youngest (Love, 2016), as the question asks.
    case = {"id": "flipped", "question": "Show the name and the release year of the song by the youngest singer.",
            "golden": {"kind": "value", "canonical_query": "SELECT song_name, song_release_year FROM singer ORDER BY age DESC LIMIT 1"}}
    att = {"id": "flipped", "final_query": "SELECT Song_Name, Song_release_year FROM singer WHERE Age = (SELECT MIN(Age) FROM singer)"}
    v = judge_case(case, att, db=concert, config=AnswerConfig()).outcome.verdict
    assert v.verdict == "needs_human" and v.gold_status == "suspect"
    assert v.details["direction"]["reversed_rows"] == [["Love", "2016"]]


def test_every_spider_superlative_golden_taken_the_other_way_is_doubted_and_never_when_healthy():
    # The whole kind on real data: each Spider dev question (DIN-SQL's file: the 343 on the six shipped databases)
    # whose gold query takes a measure its superlative names, the question's way. (1) Its gold query reversed
    # (reversed_query) as the golden, the gold query as the prediction: never a confident no_match. (2) The gold
    # query as the golden, the reversed query as the prediction: never doubted for its direction (a plain fail).
    # 93 such questions: the 96 with a superlative word but dev-0508, 0534 and 0536 ('first and second line', 'first,
    # middle, and last names': no measure, no direction). Two are left confident: dev-0832/0833 ask for "the maximum and minimum
    # share"; reversing MAX(share) leaves MIN(share) twice, which "maximum" and "minimum" both name, one agreeing:
    # the words alone cannot say which of two MIN(share) the question's "maximum" meant.
    path = SHARED / "data" / "spider" / "spider_dinsql-gpt4_cases.jsonl"
    if not path.exists():
        pytest.skip(f"the bundled Spider data is not at {path}")
    sys.path.insert(0, str(REPO / "examples" / "spider"))
    from judge_spider import golden_spec

    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    dbs: dict[str, ReadOnlyDatabase] = {}
    confident, doubted_healthy, n = [], [], 0
    try:
        for r in rows:
            words = question_superlatives(r["question"])
            measures = query_measures(r["gold_sql"]) or ()
            agreeing = [m for m in measures if any(direction._fits(w, m, words, measures) == m.direction for w in words)]
            if not agreeing:
                continue
            n += 1
            db = dbs.get(r["db_id"]) or dbs.setdefault(r["db_id"], ReadOnlyDatabase(SPIDER_DBS / r["db_id"] / f"{r['db_id']}.sqlite"))
            other = reversed_query(r["gold_sql"], agreeing[0])
            golden = golden_spec(r)
            flipped = dict(golden, canonical_query=other)
            if "top_n" in golden:
                flipped["top_n"] = dict(golden["top_n"], direction="asc" if golden["top_n"]["direction"] == "desc" else "desc")
            v = judge_case({"id": r["id"], "question": r["question"], "golden": flipped},
                           {"id": r["id"], "final_query": r["gold_sql"]}, db=db, config=AnswerConfig()).outcome.verdict
            if v is not None and v.verdict == "no_match":
                confident.append(r["id"])
            v = judge_case({"id": r["id"], "question": r["question"], "golden": golden},
                           {"id": r["id"], "final_query": other}, db=db, config=AnswerConfig()).outcome.verdict
            if v is not None and "direction" in v.details:
                doubted_healthy.append(r["id"])
    finally:
        for d in dbs.values():
            d.close()
    assert n == 93
    assert confident == ["spider-dev-0832", "spider-dev-0833"]
    assert doubted_healthy == []
