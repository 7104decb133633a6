"""What issue 31 item 5 (hC) shares or notes once instead of remaking on every call gives what remaking it gives:

* one sqlglot tokenizer a thread and dialect (:func:`goldeval.answers.doubt.dialect_tokenizer`) gives, token for
  token (type, text, line, column, offsets, comments), what a new one gives (``Dialect.tokenize``, sqlglot's own
  call, the reference), on texts chosen to exercise the tokenizer's state: non-ASCII, escapes, comments, several
  lines, quoted identifiers, dialect-only quotes, a text it refuses, in several dialects in turn and in threads;
* a column's "two values fold alike", noted as its text values are read
  (:func:`goldeval.answers.literals.read_columns_dirty`), is the column gate's answer that SQLite's own aggregate
  gives (:func:`goldeval.answers.literals.columns_dirty`, ``COUNT(DISTINCT c) <> COUNT(DISTINCT LOWER(TRIM(c)))``
  or a value with spaces around it), on columns made here whose answers are worked out by hand below.
"""

from __future__ import annotations

import sqlite3
import threading

import pytest
from sqlglot.dialects.dialect import Dialect
from sqlglot.errors import TokenError

from goldeval.answers import ReadOnlyDatabase
from goldeval.answers.doubt import dialect_tokenizer, query_tokens
from goldeval.answers.literals import columns_dirty, read_columns_dirty

#: Texts for the tokenizer: each a different path through its scanner, several ending in a state (a comment, a
#: string, a line count) that a reused tokenizer must not carry into the next text.
TEXTS = [
    "SELECT name FROM singer WHERE age > 20",
    "SELECT T1.name ,  count(*) FROM concert AS T1 JOIN stadium AS T2 ON T1.stadium_id  =  T2.stadium_id GROUP BY T1.name",
    "SELECT 'it''s', \"a\"\"b\" FROM t -- trailing comment",
    "SELECT /* one */ 1 /* two\nlines */ + 2.5e-3, x'AbCd' FROM t",
    "SELECT Name FROM country WHERE Continent = 'Évora – Ålesund ✓' AND Région = \"naïve\"",
    "SELECT\n  a,\n  b\nFROM\n  t\nWHERE\n  c = 'multi\nline string'\nORDER BY a DESC LIMIT 3",
    "SELECT [bracketed name], `backticked` FROM [my table]",
    "SELECT * FROM t WHERE s LIKE '%\\_%' ESCAPE '\\'",
    "SELECT COUNT(DISTINCT LOWER(TRIM(\"x\"))) FILTER (WHERE typeof(\"x\") = 'text') FROM \"t\"",
    "SELECT 1;SELECT 2;",
    "SELECT $$dollar 'quoted'$$, E'\\n' FROM t",
    "",
    "   \n\t  ",
    "SELECT 'never closed FROM t",
    "SELECT 😀 FROM t",
]


def _tokens(tokens):
    """Every field of each token (sqlglot's Token has no ``__eq__`` of its own)."""
    return [(t.token_type, t.text, t.line, t.col, t.start, t.end, tuple(t.comments)) for t in tokens]


def _reference(dialect, sql):
    """What sqlglot's own call gives: a new tokenizer for the text (its tokens, or the type of error it raises)."""
    try:
        return _tokens(Dialect.get_or_raise(dialect).tokenize(sql))
    except TokenError as exc:
        return type(exc)


def _shared(dialect, sql):
    try:
        return _tokens(dialect_tokenizer(dialect).tokenize(sql))
    except TokenError as exc:
        return type(exc)


@pytest.mark.parametrize("dialect", ["sqlite", "duckdb", "postgres", "mysql", "tsql"])
def test_a_shared_tokenizer_gives_a_new_ones_tokens_on_every_text_in_turn(dialect):
    # Twice over, so that every text follows every kind of text (one refused, one with a comment at its end, …).
    for sql in TEXTS + TEXTS[::-1]:
        assert _shared(dialect, sql) == _reference(dialect, sql), (dialect, sql)


def test_the_texts_reach_the_states_they_are_meant_to():
    # Not a silent list: the unterminated string is refused, the comment is kept on a token, the second line is
    # counted (sqlglot's reading, taken as it is).
    assert _reference("sqlite", "SELECT 'never closed FROM t") is TokenError
    toks = Dialect.get_or_raise("sqlite").tokenize(TEXTS[2])
    assert toks[-1].comments == [" trailing comment"]
    assert max(t.line for t in Dialect.get_or_raise("sqlite").tokenize(TEXTS[5])) == 9


def test_dialects_interleaved_keep_their_own_tokenizers():
    # `[x]` is a quoted identifier in tsql and sqlite, an array bracket elsewhere: each dialect keeps its reading
    # whichever dialect tokenized last.
    for _ in range(3):
        for dialect in ("tsql", "postgres", "sqlite", "duckdb"):
            for sql in (TEXTS[6], TEXTS[10], TEXTS[4]):
                assert _shared(dialect, sql) == _reference(dialect, sql), (dialect, sql)
    assert dialect_tokenizer("sqlite") is dialect_tokenizer("sqlite")
    assert dialect_tokenizer("sqlite") is not dialect_tokenizer("duckdb")


def test_each_thread_has_its_own_tokenizer_and_its_tokens_stay_right_in_parallel():
    mine = dialect_tokenizer("sqlite")
    seen: dict[str, object] = {}
    wrong: list[tuple[str, str]] = []

    def work(name):
        seen[name] = dialect_tokenizer("sqlite")
        for _ in range(40):
            for sql in TEXTS:
                if _shared("sqlite", sql) != _reference("sqlite", sql):
                    wrong.append((name, sql))

    threads = [threading.Thread(target=work, args=(f"t{i}",)) for i in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert wrong == []
    assert len({id(x) for x in seen.values()} | {id(mine)}) == 4


def test_query_tokens_reads_what_sqlglot_reads():
    for sql in TEXTS:
        read = query_tokens(sql, "sqlite")
        ref = _reference("sqlite", sql)
        if ref is TokenError:
            assert read is None
        else:
            assert _tokens(read.tokens) == ref


@pytest.fixture
def columns_db(tmp_path):
    path = tmp_path / "c.sqlite"
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE t (a TEXT, b TEXT COLLATE NOCASE, c TEXT, d TEXT, e TEXT, f TEXT, g TEXT, h TEXT)")
    con.executemany("INSERT INTO t VALUES (?, ?, ?, ?, ?, ?, ?, ?)", [
        ("Asia", "Asia", "x", "Élan", "Élan", "x", "Asia", "tab\t"),
        ("asia", "asia", " x", "élan", "ÉLAN", 3, "Asia", "tab"),
        ("Europe", "Europe", "y", "Zed", "Zed", None, "Europe", "z"),
    ])
    con.commit()
    con.close()
    db = ReadOnlyDatabase(path)
    yield db
    db.close()


def test_read_columns_dirty_is_the_aggregate_gate_on_hand_worked_columns(columns_db):
    # By hand, under SQLite's LOWER(TRIM(v)) (ASCII letters lowered, spaces only trimmed):
    #   a: 'Asia' and 'asia' differ and fold alike                               -> dirty
    #   b: the same under NOCASE, where they are one value                       -> clean
    #   c: ' x' has a space in front                                             -> dirty
    #   d: 'Élan', 'élan': only ASCII letters are lowered, so 'É' and 'é' stay apart -> clean
    #   e: 'Élan', 'ÉLAN': both fold to 'Élan' ('LAN' lowered, 'É' kept)            -> dirty
    #   f: 'x' beside a number and a NULL (only text is read)                    -> clean
    #   g: 'Asia' twice is one value                                             -> clean
    #   h: 'tab\t' and 'tab': a tab is not a space, so they fold apart           -> clean
    expected = {"a": True, "b": False, "c": True, "d": False, "e": True, "f": False, "g": False, "h": False}
    cols = list(expected)
    first = read_columns_dirty(columns_db, "t", cols)
    assert first == expected
    assert read_columns_dirty(columns_db, "t", cols) == expected  # remembered: the same again
    assert {c: read_columns_dirty(columns_db, "t", [c])[c] for c in cols} == expected  # one at a time
    assert columns_dirty(columns_db, "t", cols, "sqlite") == expected  # SQLite's aggregate, the gate's definition
