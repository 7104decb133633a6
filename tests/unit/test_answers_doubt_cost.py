"""The probes of issue 26's golden doubts (a literal that misses the data, a data-fragile golden, a direction that
runs against the question) cost nothing on a match beyond the column gate (one statement per table for its compared
text columns, each column read once per database and shared with the doubts): they run when golden and prediction disagree, when
both found nothing, or on a match whose compared column is dirty (a reproduced fragile golden is not a plain
pass), and a disagreeing case still gets every doubt. Every SQL statement SQLite runs is seen through
``sqlite3.Connection.set_trace_callback``. The small database is made here; every count is read off its rows.
"""

from __future__ import annotations

import sqlite3

import pytest

from goldeval.answers import AnswerConfig, ReadOnlyDatabase, judge_case


@pytest.fixture
def db(tmp_path):
    # 'Asia' stored twice as written and once lower-case with a trailing space; singers aged 19, 25 and 41.
    path = tmp_path / "w.sqlite"
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE country (name TEXT, continent TEXT)")
    con.executemany("INSERT INTO country VALUES (?, ?)", [
        ("Afghanistan", "Asia"), ("China", "Asia"), ("Japan", "asia "), ("France", "Europe")])
    con.execute("CREATE TABLE singer (name TEXT, age INTEGER)")
    con.executemany("INSERT INTO singer VALUES (?, ?)", [("Ann", 19), ("Bo", 25), ("Cy", 41)])
    con.commit()
    con.close()
    d = ReadOnlyDatabase(path)
    yield d
    d.close()


def _schema_read(sql):
    """A statement that reads the schema, not the data: ``sqlite_master``, ``PRAGMA table_info``, ``SELECT * … LIMIT 0``."""
    return (sql.startswith(("PRAGMA table_info", "SELECT name FROM sqlite_master"))
            or sql.startswith("SELECT * FROM") and sql.endswith("LIMIT 0"))


def _judged(db, question, canonical, final_query):
    """The verdict of one case, and every statement SQLite ran for it (the connection's trace callback: it sees the
    golden's query, the answer's, and any probe, whichever code path sends it)."""
    ran: list[str] = []
    # The schema reads (table names, each table's columns, their declared types: once per database, for the gate's
    # token read of which columns a query compares) are left out: no probe of the data.
    db._conn.set_trace_callback(lambda s: None if _schema_read(s) else ran.append(s))  # the open sqlite3 connection: the one place every statement passes
    try:
        case = {"id": "c", "question": question, "golden": {"kind": "value", "canonical_query": canonical}}
        v = judge_case(case, {"id": "c", "final_query": final_query}, db=db, config=AnswerConfig()).outcome.verdict
    finally:
        db._conn.set_trace_callback(None)
    return v, ran


# The golden compares continent = 'Asia' (Afghanistan, China); folded it keeps Japan ('asia ') too: a fragile golden.
ASIA = "SELECT name FROM country WHERE continent = 'Asia'"
# "youngest" asks for the least age; the golden takes MAX: a direction against the question.
YOUNGEST = ("How old is the youngest singer?", "SELECT max(age) FROM singer")


def _made(tmp_path, name, continents, *, collate=""):
    """A database of one table, country(name, continent), the continents given in order (names c0, c1, …)."""
    path = tmp_path / name
    con = sqlite3.connect(path)
    con.execute(f"CREATE TABLE country (name TEXT, continent TEXT {collate})")
    con.executemany("INSERT INTO country VALUES (?, ?)", [(f"c{i}", c) for i, c in enumerate(continents)])
    con.commit()
    con.close()
    return ReadOnlyDatabase(path)


def _gates(ran):
    """The column gate's statements among those SQLite ran: the read of the compared columns' distinct text values
    (``json_group_array``, shared with the data doubts), or an aggregate (``COUNT(DISTINCT …)``) for a column past
    the read's bounds."""
    return [s for s in ran if "COUNT(DISTINCT" in s or "json_group_array" in s]


def test_a_match_on_clean_data_runs_no_probe_beyond_the_column_gate_asked_once_per_column(tmp_path):
    # Every continent typed one way: no value differs from its TRIM, no two distinct values fold alike.
    d = _made(tmp_path, "clean.sqlite", ["Asia", "Asia", "Europe"])
    try:
        asia = "SELECT name FROM country WHERE continent = 'Asia'"
        v, ran = _judged(d, "Which countries are in Asia?", asia, "SELECT c.name FROM country AS c WHERE c.continent = 'Asia'")
        assert v.verdict == "match" and v.gold_status == "verified" and not v.needs_human
        # The golden's query, the answer's, and one gate statement for country.continent (the read of its distinct
        # text values, which the doubts would share): no literal count, no re-run of a folded query.
        assert len(_gates(ran)) == 1 and '"continent"' in _gates(ran)[0]
        assert [s for s in ran if s not in _gates(ran)] == [asia, "SELECT c.name FROM country AS c WHERE c.continent = 'Asia'"]
        # Another golden on the same column of the same database, matched: the gate is remembered, not asked again.
        europe = "SELECT name FROM country WHERE continent = 'Europe'"
        v2, ran2 = _judged(d, "Which countries are in Europe?", europe, "SELECT name FROM country WHERE 'Europe' = continent")
        assert v2.verdict == "match" and v2.gold_status == "verified"
        assert ran2 == [europe, "SELECT name FROM country WHERE 'Europe' = continent"]
    finally:
        d.close()


def test_a_match_on_a_clean_table_runs_one_gate_statement_for_the_table(tmp_path):
    # The golden compares two text columns of one table (continent = 'Asia', name = 'c1'); both are typed one way.
    # One statement reads the table's two columns (one query a column before: two here), and a second golden on
    # them asks nothing.
    d = _made(tmp_path, "clean2.sqlite", ["Asia", "Asia", "Europe"])
    try:
        two = "SELECT name FROM country WHERE continent = 'Asia' AND name = 'c1'"
        answer = "SELECT name FROM country WHERE name = 'c1' AND continent = 'Asia'"
        v, ran = _judged(d, "Is c1 in Asia?", two, answer)
        assert v.verdict == "match" and v.gold_status == "verified"
        assert ran[:2] == [two, answer] and len(ran) == 3 and _gates(ran) == ran[2:]
        assert '"continent"' in ran[2] and '"name"' in ran[2]
        again = "SELECT count(*) FROM country WHERE name = 'c0' OR continent = 'Europe'"
        v2, ran2 = _judged(d, "How many?", again, "SELECT count(name) FROM country WHERE continent = 'Europe' OR name = 'c0'")
        assert v2.verdict == "match" and len(ran2) == 2 and not _gates(ran2)
    finally:
        d.close()


@pytest.mark.parametrize("continents, dirty", [
    (["Asia", "Asia", "asia", "Europe"], True),    # 'Asia' and 'asia' fold alike: dirty
    (["Asia", "Asia", "Europe"], False),           # typed one way: clean
])
def test_a_column_past_the_reads_bounds_is_gated_by_its_aggregate(tmp_path, monkeypatch, continents, dirty):
    # With room for no column's values (the database's character bound at 1), the gate cannot read
    # country.continent: it asks the column's aggregate instead, and a reproduced fragile golden on dirty data is
    # still not a plain pass (continent = 'Asia' keeps c0, c1; folded, c2 too), while clean data stay a match.
    from goldeval.answers import literals

    monkeypatch.setattr(literals, "_DATABASE_CHARS", 1)
    d = _made(tmp_path, "bound.sqlite", continents)
    try:
        v, ran = _judged(d, "Which countries are in Asia?", ASIA, "SELECT name FROM country WHERE 'Asia' = continent")
        assert [s for s in ran if "COUNT(DISTINCT" in s] and '"continent"' in [s for s in ran if "COUNT(DISTINCT" in s][0]
        if dirty:
            assert v.verdict == "needs_human" and v.details["rule_verdict"]["verdict"] == "match"
        else:
            assert v.verdict == "match" and v.gold_status == "verified" and len(_gates(ran)) == 2  # the read tried, the aggregate
    finally:
        d.close()


def test_a_match_of_a_golden_that_compares_no_text_runs_no_gate(db):
    # MAX(age) compares nothing: no column to gate, only the two queries run.
    canonical, final_query = YOUNGEST[1], "SELECT max(s.age) FROM singer AS s"
    v, ran = _judged(db, "How old is the oldest singer?", canonical, final_query)
    assert v.verdict == "match" and v.gold_status == "verified"
    assert ran == [canonical, final_query]


@pytest.mark.parametrize("continents, why", [
    (["Asia", "Asia", "Asia ", "Europe"], "stray space"),   # c2 'Asia ' differs from its TRIM
    (["Asia", "Asia", "asia", "Europe"], "case variant"),   # 'Asia' and 'asia': two distinct values, one folded
])
def test_a_match_that_reproduces_a_fragile_golden_on_dirty_data_is_not_a_plain_pass(tmp_path, continents, why):
    # continent = 'Asia' keeps c0, c1 as typed; trimmed and case-folded it keeps c2 too (3 rows). The answer
    # reproduces the golden's two rows: the gate finds the column dirty, the doubts run, and the golden is suspect.
    d = _made(tmp_path, "dirty.sqlite", continents)
    try:
        v, ran = _judged(d, "Which countries are in Asia?", ASIA, "SELECT name FROM country WHERE continent = 'Asia'")
        assert v.verdict == "needs_human" and v.needs_human and v.gold_status in ("suspect", "verified_wrong"), why
        assert v.details["rule_verdict"]["verdict"] == "match"
        assert "2 rows as the data are typed, 3 rows with its text comparisons trimmed and case-folded" in v.gold_note
        assert len(_gates(ran)) == 1
    finally:
        d.close()


def test_a_healthy_golden_on_a_dirty_column_stays_a_confident_match(tmp_path):
    # 'Asia ' and 'asia' make continent dirty, but 'Europe' is typed one way: continent = 'Europe' keeps c3, c4
    # as typed and folded alike. The doubts run (the gate fires) and find nothing: a confident match.
    d = _made(tmp_path, "dirty.sqlite", ["Asia", "Asia ", "asia", "Europe", "Europe"])
    try:
        europe = "SELECT name FROM country WHERE continent = 'Europe'"
        v, ran = _judged(d, "Which countries are in Europe?", europe, "SELECT name FROM country WHERE continent = 'Europe'")
        assert v.verdict == "match" and v.gold_status == "verified" and not v.needs_human and v.confidence is not None
        assert len(_gates(ran)) == 1
    finally:
        d.close()


def test_case_variants_in_a_nocase_column_are_not_dirty(tmp_path):
    # COLLATE NOCASE already compares 'Asia' and 'asia' equal (continent = 'Asia' keeps c0, c1, c2): folding case
    # changes nothing, so the gate calls the column clean and the match runs no doubt.
    d = _made(tmp_path, "nocase.sqlite", ["Asia", "Asia", "asia", "Europe"], collate="COLLATE NOCASE")
    try:
        v, ran = _judged(d, "Which countries are in Asia?", ASIA, "SELECT name FROM country WHERE 'Asia' = continent")
        assert v.verdict == "match" and v.gold_status == "verified"
        assert len(ran) == 3 and len(_gates(ran)) == 1
    finally:
        d.close()


def test_a_disagreeing_case_with_a_bad_literal_still_gets_its_doubt(db):
    # 'asia' holds 0 rows as typed (the golden is empty), 3 trimmed and case-folded (Afghanistan, China, Japan); the
    # answer's 'Asia' gives Afghanistan and China: no_match by rule, so the probes run. Folded, the golden gives
    # three countries, not the answer's two: the golden is verified_wrong (its literal empties it) and a no_match
    # against it is not final.
    canonical = "SELECT name FROM country WHERE continent = 'asia'"
    v, ran = _judged(db, "Which countries are in Asia?", canonical, ASIA)
    assert v.verdict == "needs_human" and v.details["rule_verdict"]["verdict"] == "no_match"
    assert v.gold_status == "verified_wrong"
    assert "'asia' holds 0 rows of country.continent, 3 trimmed and case-folded" in v.gold_note
    assert len(ran) > 2  # the probes ran besides the two queries
    # The same golden again, with another disagreeing answer: the doubts are remembered for this database.
    v2, ran2 = _judged(db, "Asian countries?", canonical, "SELECT name FROM country WHERE continent = 'Europe'")
    assert v2.gold_status == "verified_wrong" and v2.gold_note == v.gold_note
    assert ran2 == ["SELECT name FROM country WHERE continent = 'Europe'"]


def test_a_disagreeing_case_whose_answer_is_the_folded_reading_matches_it(db):
    # The answer trims and folds: Afghanistan, China, Japan, the folded golden's rows (ASIA gives two).
    v, _ = _judged(db, "Which countries are in Asia?", ASIA,
                   "SELECT name FROM country WHERE lower(trim(continent)) = 'asia'")
    assert v.verdict == "match" and v.gold_status == "verified_wrong"
    assert v.details["rule_verdict"]["verdict"] == "no_match"


def test_a_disagreeing_case_with_a_healthy_golden_is_not_doubted(db):
    # 'Europe' is stored once, as written (France); the answer's 'Asia' disagrees. The probes run and find nothing:
    # a confident no_match against a verified golden.
    v, ran = _judged(db, "Which countries are in Europe?", "SELECT name FROM country WHERE continent = 'Europe'", ASIA)
    assert v.verdict == "no_match" and v.gold_status == "verified" and not v.needs_human
    assert len(ran) > 2


def test_a_disagreeing_answer_that_took_the_question_direction_doubts_the_golden(db):
    # MAX(age) = 41 for "youngest"; the answer takes MIN (19): the golden is suspect, the verdict needs_human, and the
    # reversed canonical query ran.
    v, ran = _judged(db, *YOUNGEST, "SELECT min(age) FROM singer")
    assert v.verdict == "needs_human" and v.gold_status == "suspect" and "direction" in v.details
    assert len(ran) > 2


def test_the_column_gate_on_duckdb_asks_through_sqlglot(tmp_path):
    # DuckDB compares case-sensitively: continent holds 'Asia' and 'Asia ' (a stray space), name 'France' and
    # 'france' (case only), code 'AF', 'CN' (clean). A reproduced fragile golden on the dirty column is needs_human;
    # a match on the clean one stays a match.
    duckdb = pytest.importorskip("duckdb")
    from goldeval.answers.comparisons import Stored
    from goldeval.answers.literals import column_dirty

    path = tmp_path / "g.duckdb"
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE country (code VARCHAR, name VARCHAR, continent VARCHAR)")
    con.execute("INSERT INTO country VALUES ('AF', 'Afghanistan', 'Asia'), ('CN', 'China', 'Asia '), "
                "('FR', 'France', 'Europe'), ('FX', 'france', 'Europe')")
    con.close()
    with ReadOnlyDatabase(path) as d:
        assert column_dirty(d, Stored("country", "continent"), "duckdb") is True
        assert column_dirty(d, Stored("country", "name"), "duckdb") is True
        assert column_dirty(d, Stored("country", "code"), "duckdb") is False
        case = {"id": "k", "question": "Asian countries?", "golden": {"kind": "value", "canonical_query": ASIA}}
        v = judge_case(case, {"id": "k", "final_query": "SELECT name FROM country WHERE 'Asia' = continent"}, db=d,
                       config=AnswerConfig()).outcome.verdict
        assert v.verdict == "needs_human" and v.gold_status == "suspect" and v.details["rule_verdict"]["verdict"] == "match"
        case = {"id": "m", "question": "Code AF?", "golden": {"kind": "value", "canonical_query": "SELECT name FROM country WHERE code = 'AF'"}}
        v = judge_case(case, {"id": "m", "final_query": "SELECT name FROM country WHERE 'AF' = code"}, db=d,
                       config=AnswerConfig()).outcome.verdict
        assert v.verdict == "match" and v.gold_status == "verified"
