"""The tie pool's query written by cutting the canonical text at its tokens (issue 15: the copy and the print of the
whole tree were the tie pool's largest cost) is the query sqlglot prints from the changed tree: the same rows, in
the same order, on made-up tables and on every Spider query with ORDER BY and LIMIT (gold and predicted, the three
files, when ../shared/data/spider is beside the clone); the texts whose places the tokens do not show plainly are
left to sqlglot. No timing here.
"""

from __future__ import annotations

import json
import sqlite3

import pytest
from sqlglot import exp

from goldeval.answers import ReadOnlyDatabase
from goldeval.answers.canonical import hidden_tie_pool, _spliced
from goldeval.answers.doubt import parsed_select


def _keys(tree):
    """The order keys as hidden_tie_pool reads them: a position or an alias is its column."""
    projections = list(tree.expressions)
    aliases = {p.alias.lower(): p for p in projections if p.alias}
    keys = []
    for o in tree.args["order"].expressions:
        e = o.this
        if isinstance(e, exp.Literal) and e.is_int and 1 <= int(e.this) <= len(projections):
            e = projections[int(e.this) - 1]
        elif isinstance(e, exp.Column) and not e.table and e.name.lower() in aliases:
            e = aliases[e.name.lower()]
        keys.append(e.unalias())
    return keys


def _printed(sql: str, dialect: str = "sqlite") -> tuple[str, list[str]]:
    """The general way (what hidden_tie_pool did before): the tree copied, its LIMIT dropped, the order keys
    added as columns, printed by sqlglot; and the key columns as the splice is given them."""
    tree = parsed_select(sql, dialect)
    keys = _keys(tree)
    full = tree.copy()
    full.set("limit", None)
    full = full.select(*[exp.alias_(k, f"__goldeval_k{i}") for i, k in enumerate(keys)], append=True, copy=False)
    return full.sql(dialect=dialect), [exp.alias_(k, f"__goldeval_k{i}").sql(dialect=dialect) for i, k in enumerate(keys)]


def _rows(db: ReadOnlyDatabase, sql: str):
    res = db.execute(sql)
    return len(res.columns), res.rows


@pytest.fixture()
def db(tmp_path):
    path = tmp_path / "c.sqlite"
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE country (name TEXT, continent TEXT, population INTEGER)")
    con.executemany("INSERT INTO country VALUES (?, ?, ?)",
                    [("Bouvet", "Antarctica", 0), ("Heard", "Antarctica", 0), ("Nauru", "Oceania", 12000),
                     ("Tuvalu", "Oceania", 12000), ("Malta", "Europe", 380000)])
    con.commit()
    con.close()
    with ReadOnlyDatabase(path) as d:
        yield d


SPLICED = [
    "SELECT name FROM country ORDER BY population LIMIT 1",
    "SELECT name FROM country ORDER BY population DESC LIMIT 2;",
    "SELECT name -- the name\nFROM country ORDER BY population LIMIT 1",
    "SELECT name FROM country ORDER BY population -- fewest\nLIMIT 1 -- one",
    "SELECT name /* x */ FROM country ORDER BY population, name LIMIT 3",
    "WITH small AS (SELECT * FROM country ORDER BY population LIMIT 4) SELECT name FROM small ORDER BY population LIMIT 1",
    "SELECT continent, count(*) AS n FROM country WHERE population < (SELECT max(population) FROM country) "
    "GROUP BY continent ORDER BY n DESC LIMIT 1",
    "SELECT name, (SELECT count(*) FROM country AS c2 WHERE c2.continent = c1.continent LIMIT 1) FROM country AS c1 "
    "ORDER BY 2 DESC LIMIT 1",
    "select name from country order by population limit 1",
]
NOT_SPLICED = [
    "SELECT name FROM country ORDER BY population LIMIT 1 OFFSET 1",  # an offset (the pool refuses it anyway)
    "SELECT name FROM country ORDER BY population LIMIT 1, 2",
    "SELECT 'x' ORDER BY 1 LIMIT 1",  # no FROM to put the key columns before
    # a FROM token in the select list ("IS DISTINCT FROM", SQLite 3.39+): the columns must not go before it
    "SELECT name, population IS DISTINCT FROM 0 AS d FROM country ORDER BY population LIMIT 1",
    "SELECT name FROM country WHERE population IS NOT DISTINCT FROM 0 ORDER BY name LIMIT 1",
]


@pytest.mark.parametrize("sql", SPLICED)
def test_the_cut_text_gives_the_rows_of_the_printed_tree(db, sql):
    printed, columns = _printed(sql)
    cut = _spliced(sql, "sqlite", parsed_select(sql, "sqlite"), columns)
    assert cut is not None and parsed_select(cut, "sqlite").args.get("limit") is None
    assert [p.alias for p in parsed_select(cut, "sqlite").expressions][-len(columns):] == [f"__goldeval_k{i}" for i in range(len(columns))]
    assert _rows(db, cut) == _rows(db, printed)


@pytest.mark.parametrize("sql", NOT_SPLICED)
def test_texts_whose_places_are_not_plain_are_left_to_sqlglot(sql):
    tree = parsed_select(sql, "sqlite")
    assert _spliced(sql, "sqlite", tree, ["x AS __goldeval_k0"]) is None


def test_a_from_in_the_select_list_leaves_the_pool_to_sqlglot(db):
    # Cut before the first top-level FROM, "population IS DISTINCT FROM 0" became "population IS DISTINCT , … FROM
    # 0 FROM country", which SQLite refuses: the pool was lost. Printed by sqlglot, Bouvet and Heard tie at 0.
    import sqlite3 as _sqlite3

    if _sqlite3.sqlite_version_info < (3, 39):
        pytest.skip(f"SQLite {_sqlite3.sqlite_version} has no IS DISTINCT FROM (3.39+)")
    pool = hidden_tie_pool(db, "SELECT name, population IS DISTINCT FROM 0 AS d FROM country ORDER BY population LIMIT 1",
                            {"columns": ["name", "d"], "rows": [["Bouvet", 0]]})
    assert pool is not None and pool["ties"] == [["Bouvet", 0], ["Heard", 0]]


ORDERED = SPLICED + NOT_SPLICED + [
    "SELECT name FROM country ORDER BY population /* most */ DESC, name -- then the name\nLIMIT 1",
    "SELECT name FROM country ORDER BY CASE WHEN continent = 'Europe' THEN 0 ELSE 1 END, length(name) LIMIT 1",
    'SELECT "name" FROM country ORDER BY "population" * 2 + 1 LIMIT 1',
    "SELECT name FROM country ORDER BY (SELECT count(*) FROM country AS c WHERE c.population < country.population) LIMIT 1",
    "SELECT name AS n, population AS p FROM country ORDER BY p DESC, n LIMIT 2",
    "SELECT name FROM country ORDER BY -population, population IS NULL, population BETWEEN 1 AND 2 LIMIT 1",
]


def test_a_spliced_key_column_is_what_sqlglot_prints_for_its_alias():
    # _without_limit writes a key's column as f"{key.sql()} AS __goldeval_k{i}" instead of printing
    # exp.alias_(key, ...), which copies the key first (issue 15): the two texts must be the same, on made-up keys
    # (comments, CASE, quoted names, a subquery, aliases read back, unary minus) and on every Spider order key.
    from conftest import SHARED

    texts = list(ORDERED)
    for f in sorted((SHARED / "data" / "spider").glob("spider_*_cases.jsonl")):
        for line in f.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            texts += [q for q in (row.get("gold_sql"), row.get("pred_sql")) if isinstance(q, str) and "order" in q.lower()]
    checked = 0
    for sql in texts:
        tree = parsed_select(sql, "sqlite")
        if tree is None or tree.args.get("order") is None:
            continue
        for i, key in enumerate(_keys(tree)):
            name = f"__goldeval_k{i}"
            assert exp.alias_(key, name).sql(dialect="sqlite") == f"{key.sql(dialect='sqlite')} AS {name}", sql
            checked += 1
    assert checked >= len(ORDERED)


def test_the_pool_finds_the_ties_either_way(db):
    # Bouvet and Heard tie at the boundary (population 0); Nauru and Tuvalu at the second place of a LIMIT 3.
    pool = hidden_tie_pool(db, "SELECT name FROM country ORDER BY population LIMIT 1", {"columns": ["name"], "rows": [["Bouvet"]]})
    assert pool == {"n": 1, "above": [], "ties": [["Bouvet"], ["Heard"]], "order_key": ["population"]}
    pool = hidden_tie_pool(db, "SELECT name FROM country ORDER BY population LIMIT 3",
                            {"columns": ["name"], "rows": [["Bouvet"], ["Heard"], ["Nauru"]]})
    assert pool is not None and pool["above"] == [["Bouvet"], ["Heard"]] and pool["ties"] == [["Nauru"], ["Tuvalu"]]


def test_every_spider_query_cut_gives_the_rows_of_the_printed_tree():
    from conftest import SHARED

    spider = SHARED / "data" / "spider"
    files = sorted(spider.glob("spider_*_cases.jsonl"))
    if not files:
        pytest.skip("../shared/data/spider is not beside the clone")
    queries: dict[tuple[str, str], None] = {}
    for f in files:
        for line in f.read_text(encoding="utf-8").splitlines():
            if line.strip():
                row = json.loads(line)
                for q in (row.get("gold_sql"), row.get("pred_sql")):
                    if isinstance(q, str) and "limit" in q.lower() and "order" in q.lower():
                        queries[(row["db_id"], q)] = None
    checked = 0
    dbs: dict[str, ReadOnlyDatabase] = {}
    try:
        for db_id, q in queries:
            tree = parsed_select(q, "sqlite")
            if tree is None or tree.args.get("limit") is None or tree.args.get("order") is None:
                continue
            printed, columns = _printed(q)
            cut = _spliced(q, "sqlite", tree, columns)
            if cut is None:
                continue
            path = next((spider / "database" / db_id).glob("*.sqlite"))
            d = dbs.setdefault(db_id, ReadOnlyDatabase(path))
            try:
                want = _rows(d, printed)
            except Exception as exc:  # noqa: BLE001 - a query that fails must fail the cut way too
                with pytest.raises(type(exc)):
                    _rows(d, cut)
            else:
                assert _rows(d, cut) == want, q
            checked += 1
    finally:
        for d in dbs.values():
            d.close()
    assert checked >= 100  # 162 distinct queries in the three files
