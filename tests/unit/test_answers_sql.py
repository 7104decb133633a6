"""The read-only executor: writes of every kind are refused, the database file's bytes never change, a runaway query
is stopped at the time limit, a result over the row limit is refused, and a failing query says what the database
said."""

from __future__ import annotations

import hashlib
import signal
import sqlite3
import time
from pathlib import Path

import pytest

from goldeval.answers.sql import QueryError, ReadOnlyDatabase
from goldeval.errors import InputError


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture()
def db_file(tmp_path: Path) -> Path:
    p = tmp_path / "t.sqlite"
    con = sqlite3.connect(p)
    con.execute("CREATE TABLE patients (patient_id INTEGER PRIMARY KEY, age INTEGER, ssn TEXT)")
    con.executemany("INSERT INTO patients VALUES (?, ?, ?)", [(i, 20 + i % 60, f"000-00-{i:04d}") for i in range(1, 201)])
    con.commit()
    con.close()
    return p


WRITES = [
    "INSERT INTO patients VALUES (999, 1, 'x')",
    "UPDATE patients SET age = 0",
    "DELETE FROM patients",
    "DROP TABLE patients",
    "REPLACE INTO patients VALUES (1, 1, 'x')",
    "ALTER TABLE patients ADD COLUMN z INTEGER",
    "CREATE TABLE t (x)",
    "CREATE TEMP TABLE t (x)",
    "CREATE INDEX i ON patients (age)",
    "ATTACH DATABASE '{other}' AS other",
    "PRAGMA query_only = OFF",
    "PRAGMA journal_mode = WAL",
    "PRAGMA user_version = 7",
    "SELECT load_extension('/nonexistent/ext')",
    "BEGIN",
    "VACUUM",
    "VACUUM INTO '{other}'",
    "ANALYZE",
    "SELECT 1; DELETE FROM patients",
]


@pytest.mark.parametrize("sql", WRITES)
def test_write_is_refused_and_bytes_unchanged(db_file: Path, tmp_path: Path, sql: str) -> None:
    other = tmp_path / "other.sqlite"
    before = _sha(db_file)
    with ReadOnlyDatabase(db_file, timeout_s=2) as db:
        with pytest.raises(QueryError):
            db.execute(sql.format(other=other))
        # The connection still reads after a refusal.
        assert db.execute("SELECT COUNT(*) FROM patients").rows == [(200,)]
    assert _sha(db_file) == before
    assert not other.exists(), "ATTACH / VACUUM INTO must not create a file"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.sqlite"], "no journal, WAL or other file appears"


def test_every_write_in_one_session_leaves_bytes_unchanged(db_file: Path, tmp_path: Path) -> None:
    before = _sha(db_file)
    with ReadOnlyDatabase(db_file) as db:
        for sql in WRITES:
            with pytest.raises(QueryError):
                db.execute(sql.format(other=tmp_path / "other.sqlite"))
    assert _sha(db_file) == before


def test_refusal_message_says_read_only(db_file: Path) -> None:
    with ReadOnlyDatabase(db_file) as db:
        with pytest.raises(QueryError, match="read-only"):
            db.execute("DELETE FROM patients")


def test_runaway_query_is_stopped_at_the_time_limit(db_file: Path) -> None:
    runaway = "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c) SELECT COUNT(*) FROM c"
    with ReadOnlyDatabase(db_file, timeout_s=0.3) as db:
        start = time.monotonic()
        with pytest.raises(QueryError, match="time limit"):
            db.execute(runaway)
        elapsed = time.monotonic() - start
        assert elapsed < 3.0  # stopped near 0.3 s, not left running
        assert db.execute("SELECT 1").rows == [(1,)]  # and the connection is usable afterwards


def test_row_limit(db_file: Path) -> None:
    with ReadOnlyDatabase(db_file, max_rows=150) as db:
        with pytest.raises(QueryError, match="more than 150 rows"):
            db.execute("SELECT * FROM patients")
        assert len(db.execute("SELECT * FROM patients LIMIT 150").rows) == 150


@pytest.mark.parametrize("n", [9_999, 10_000, 10_001, 20_000, 25_000])
def test_rows_across_fetch_blocks_and_the_row_limit_at_a_block_boundary(db_file: Path, n: int) -> None:
    # The SQLite fetch stops at a block shorter than 10,000 rows (the driver's end of the statement): every row
    # still comes back, and the row limit is enforced at, below and above a block boundary (the rows are range(n)).
    runaway = f"WITH RECURSIVE c(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM c WHERE i + 1 < {n}) SELECT i FROM c"
    with ReadOnlyDatabase(db_file) as db:
        assert db.execute(runaway).rows == [(i,) for i in range(n)]
    for limit in (n - 1, n, 10_000):
        with ReadOnlyDatabase(db_file, max_rows=limit) as db:
            if n > limit:
                with pytest.raises(QueryError, match=f"more than {limit} rows"):
                    db.execute(runaway)
            else:
                assert len(db.execute(runaway).rows) == n


@pytest.mark.parametrize("signame", ["SIGINT", "SIGTERM"])
def test_a_signal_during_a_query_stops_it_and_its_handler_runs_after(db_file: Path, signame: str) -> None:
    # The signal arrives inside the query (a SQL function sends it); the query is stopped by the progress callback,
    # not run to its end (it counts for hours), and the handler in force before (KeyboardInterrupt for SIGINT, a
    # handler of the caller for SIGTERM) runs once the query has stopped; the handlers are back as they were.
    import os
    import signal

    sig = getattr(signal, signame)
    seen: list[int] = []

    def handler(signum, frame):
        seen.append(signum)
        raise KeyboardInterrupt

    before = signal.getsignal(sig)
    if sig == signal.SIGTERM:
        signal.signal(sig, handler)
    try:
        installed = signal.getsignal(sig)
        # send() is the test's own function: not a built-in, so it must be allowed by name like any other
        with ReadOnlyDatabase(db_file, timeout_s=600, allow_functions=["send"]) as db:
            db._conn.create_function("send", 0, lambda: os.kill(os.getpid(), sig) or 1)
            start = time.monotonic()
            with pytest.raises(KeyboardInterrupt):
                db.execute("WITH RECURSIVE c(i) AS (SELECT send() UNION ALL SELECT i + 1 FROM c WHERE i < 100000000000) "
                           "SELECT COUNT(*) FROM c")
            assert time.monotonic() - start < 60  # stopped by the signal, not by the end of the query (hours)
            assert signal.getsignal(sig) is installed
            assert db.execute("SELECT 1").rows == [(1,)]  # the connection reads on
        assert seen == ([sig] if sig == signal.SIGTERM else [])
    finally:
        signal.signal(sig, before)


def test_failing_query_gives_the_database_message(db_file: Path) -> None:
    with ReadOnlyDatabase(db_file) as db:
        with pytest.raises(QueryError, match="no such column: ward_name"):
            db.execute("SELECT ward_name FROM patients")


def test_read_only_pragmas_and_columns(db_file: Path) -> None:
    with ReadOnlyDatabase(db_file) as db:
        assert [r[1] for r in db.execute("PRAGMA table_info(patients)").rows] == ["patient_id", "age", "ssn"]
        assert db.schema() == {"patients": ["patient_id", "age", "ssn"]}
        res = db.execute("SELECT COUNT(*) AS n, MAX(age) FROM patients;")
        assert res.columns == ["n", "MAX(age)"]
        assert res.rows == [(200, 79)]  # ages 20 + i % 60 for i in 1..200: the largest is 20 + 59


def test_bad_paths_are_input_errors(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no such database file"):
        ReadOnlyDatabase(tmp_path / "missing.sqlite")
    junk = tmp_path / "junk.sqlite"
    junk.write_bytes(b"this is not a database at all, just text" * 10)
    with pytest.raises(InputError, match="not a SQLite database"):
        ReadOnlyDatabase(junk)



def test_duckdb_read_only(tmp_path: Path) -> None:
    duck = pytest.importorskip("duckdb")
    p = tmp_path / "t.duckdb"
    con = duck.connect(str(p))
    con.execute("CREATE TABLE patients AS SELECT range AS patient_id, 20 + range % 60 AS age FROM range(1, 201)")
    con.close()
    before = _sha(p)
    other = tmp_path / "other.duckdb"
    with ReadOnlyDatabase(p, timeout_s=0.5) as db:
        assert db.engine == "duckdb"
        assert db.execute("SELECT COUNT(*) FROM patients").rows == [(200,)]
        for sql in ["INSERT INTO patients VALUES (999, 1)", "DELETE FROM patients", "DROP TABLE patients",
                    f"ATTACH '{other}' AS other", f"COPY patients TO '{tmp_path / 'out.csv'}'", "SET enable_external_access = true",
                    "INSTALL httpfs", "SELECT 1; SELECT 2"]:
            with pytest.raises(QueryError):
                db.execute(sql)
        # a streamed scan: constant memory, so only the time limit can stop it (a cross join builds its right side in
        # memory and, on a fast machine, met the 1 GB memory limit first: a bound, but not the one tested here)
        with pytest.raises(QueryError, match="time limit"):
            db.execute("SELECT count(*) FROM range(100000000000) r(i) WHERE i * i = -1")
    assert _sha(p) == before
    assert not other.exists() and not (tmp_path / "out.csv").exists()


def test_a_ctrl_c_during_the_schema_read_stops_the_run_and_is_not_swallowed(tmp_path):
    """The schema read (for mustNotUse on ``SELECT *``) prepares statements through the read-only authorizer, a Python
    callback: a KeyboardInterrupt raised inside it would be swallowed by sqlite3 (the statement merely denied, the
    schema left empty, the run going on into its next query). So the signal is only noted during the read and
    raised once it is done, with the schema read whole."""
    import os
    import signal
    import sqlite3 as _sqlite3
    import time as _time

    from goldeval.answers.sql import ReadOnlyDatabase

    path = tmp_path / "s.sqlite"
    con = _sqlite3.connect(path)
    con.execute("CREATE TABLE patients (id INTEGER, name TEXT)")
    con.commit()
    con.close()
    db = ReadOnlyDatabase(path)
    read = db._read_schema

    def read_with_a_ctrl_c():
        os.kill(os.getpid(), signal.SIGINT)
        _time.sleep(0.05)  # the handler runs here, inside the read: it must only note the signal
        return read()

    db._read_schema = read_with_a_ctrl_c
    with pytest.raises(KeyboardInterrupt):
        db.schema()
    assert db._schema == {"patients": ["id", "name"]}


def test_a_text_cell_that_is_not_utf8_is_read_as_latin1_and_the_rest_as_utf8(tmp_path: Path) -> None:
    # The driver decodes UTF-8 itself; a cell it cannot decode makes the query run again with the Latin-1
    # fallback for every text cell (UTF-8 still first): the rows _decode gives, cell by cell. A later query on the
    # same connection is read the quick way again (its UTF-8 cells unchanged).
    p = tmp_path / "enc.sqlite"
    con = sqlite3.connect(p)
    con.execute("CREATE TABLE t (id INTEGER, a TEXT)")
    con.execute("INSERT INTO t VALUES (1, CAST(x'436166e9' AS TEXT))")       # 'Caf' + 0xe9: Latin-1 é, not UTF-8
    con.execute("INSERT INTO t VALUES (2, CAST(x'436166c3a9' AS TEXT))")     # 'Café' in UTF-8
    con.execute("INSERT INTO t VALUES (3, 'plain')")
    con.commit()
    con.close()
    with ReadOnlyDatabase(p) as db:
        assert db.execute("SELECT id, a FROM t ORDER BY id").rows == [(1, "Café"), (2, "Café"), (3, "plain")]
        assert db.execute("SELECT a FROM t WHERE id > 1 ORDER BY id").rows == [("Café",), ("plain",)]
        assert db._conn.text_factory is str
        with pytest.raises(QueryError, match="no such column"):
            db.execute("SELECT nope FROM t")


# --- the size limit (bytes of the result's Python objects) -----------------------------------------------------

class _Recording:
    """A real cursor whose fetchmany sizes are noted (to see which block the size limit fires at)."""

    def __init__(self, cur):
        self.cur, self.asked, self.got = cur, [], []

    def fetchmany(self, n):
        batch = self.cur.fetchmany(n)
        self.asked.append(n)
        self.got.append(batch)
        return batch


_TEXT_ROWS = "WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r WHERE i < 5000) SELECT i, printf('%.*c', 100, 'x') FROM r"


def test_result_bytes_counts_python_objects() -> None:
    """A row costs its tuple, its slot in the list and each value's sys.getsizeof; containers count what they hold."""
    import sys

    from goldeval.answers.sql import result_bytes

    assert result_bytes([]) == 0
    row = (7, "abc", None, 1.5)
    assert result_bytes([row]) == sys.getsizeof(row) + 8 + sum(sys.getsizeof(v) for v in row)
    text = "y" * 1000
    assert result_bytes([(text,)] * 3) == 3 * (sys.getsizeof((text,)) + 8 + sys.getsizeof(text))
    nested = ([["a" * 50, {"k": "v" * 70}]],)
    inner = [["a" * 50, {"k": "v" * 70}]]
    deep = (sys.getsizeof(inner) + sys.getsizeof(inner[0]) + sys.getsizeof("a" * 50) + sys.getsizeof(inner[0][1])
            + sys.getsizeof("k") + sys.getsizeof("v" * 70))
    assert result_bytes([nested]) == sys.getsizeof(nested) + 8 + deep


def test_fetch_bounded_fires_at_the_block_that_passes_the_limit_and_leaves_the_rest_unread() -> None:
    from goldeval.answers.sql import fetch_bounded, result_bytes

    con = sqlite3.connect(":memory:")
    every = con.execute(_TEXT_ROWS).fetchall()
    per_row = result_bytes(every[:1])
    limit = 300 * per_row + 10  # 300 rows fit, the 301st does not
    cur = _Recording(con.execute(_TEXT_ROWS))
    with pytest.raises(QueryError, match=r"result is over 0\.0\d+ MB \(the size limit\).*raise --max-result-mb"):
        fetch_bounded(cur, 2, max_rows=1_000_000, max_result_bytes=limit)
    fetched = sum(len(b) for b in cur.got)
    # one row first (values unbounded), then blocks of limit/16 at the row size seen: the first block that takes
    # the count over the limit is the last one asked for
    assert cur.asked[0] == 1 and cur.asked[1] == limit // 16 // per_row
    assert sum(len(b) for b in cur.got[:-1]) * per_row <= limit < fetched * per_row
    assert fetched < len(every) and len(cur.cur.fetchall()) == len(every) - fetched  # the rest was never read


def test_fetch_bounded_is_silent_under_the_limit_and_returns_every_row() -> None:
    from goldeval.answers.sql import fetch_bounded, result_bytes

    con = sqlite3.connect(":memory:")
    every = con.execute(_TEXT_ROWS).fetchall()
    exact = result_bytes(every)
    assert fetch_bounded(con.execute(_TEXT_ROWS), 2, max_rows=5000, max_result_bytes=exact) == every
    with pytest.raises(QueryError, match="the size limit"):
        fetch_bounded(con.execute(_TEXT_ROWS), 2, max_rows=5000, max_result_bytes=exact - 1)


def test_fetch_bounded_first_block_fits_the_limit_at_the_largest_value() -> None:
    """With a bound on one value (SQLite's length limit) the first block is as many rows as fit at that size."""
    from goldeval.answers.sql import MAX_VALUE_BYTES, fetch_bounded

    con = sqlite3.connect(":memory:")
    cur = _Recording(con.execute(_TEXT_ROWS))
    rows = fetch_bounded(cur, 2, max_rows=10_000, max_result_bytes=64_000_000, value_bytes=MAX_VALUE_BYTES)
    assert len(rows) == 5000 and cur.asked[0] == 64_000_000 // (40 + 16 + 8 + 2 * (MAX_VALUE_BYTES + 49))


@pytest.mark.parametrize("engine", ["sqlite", "duckdb"])
def test_a_result_over_the_size_limit_is_a_query_error_on_each_engine(tmp_path: Path, engine: str) -> None:
    if engine == "duckdb":
        duckdb = pytest.importorskip("duckdb")
        path = tmp_path / "t.duckdb"
        con = duckdb.connect(str(path))
        con.execute("CREATE TABLE t AS SELECT i FROM range(3) r(i)")
        con.close()
        big = "SELECT i, repeat('x', 10000) AS s FROM range(1000000) r(i)"
    else:
        path = tmp_path / "t.sqlite"
        sqlite3.connect(path).execute("CREATE TABLE t (i)").connection.close()
        big = ("WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r WHERE i < 1000000) "
               "SELECT i, printf('%.*c', 10000, 'x') FROM r")
    with ReadOnlyDatabase(path, max_result_bytes=20_000_000) as db:
        with pytest.raises(QueryError, match=r"result is over 20 MB \(the size limit\): 2\d\.\d MB .* in the first [\d,]+ rows?,"):
            db.execute(big)
        assert db.execute("SELECT 1 AS one").rows == [(1,)]  # the connection goes on


def test_the_size_limit_must_be_positive(db_file: Path) -> None:
    for bad in (0, -5, 2.5, True):
        with pytest.raises(InputError, match="--max-result-mb"):
            ReadOnlyDatabase(db_file, max_result_bytes=bad)


def test_duckdb_connection_memory_settings(tmp_path: Path) -> None:
    """The DuckDB connection runs with the memory limit, no temp directory and at most two threads, locked."""
    duckdb = pytest.importorskip("duckdb")
    path = tmp_path / "t.duckdb"
    duckdb.connect(str(path)).close()
    with ReadOnlyDatabase(path) as db:
        # straight to the worker's connection: a judged query may not read settings (current_setting is refused)
        _, rows = db._conn.query("SELECT current_setting('memory_limit'), current_setting('temp_directory'), "
                                 "current_setting('threads')", timeout_s=5, max_rows=1, max_result_bytes=10**6)
        limit, temp, threads = rows[0]
        assert limit in ("953.6 MiB", "1000.0 MB", "1.0 GB") and temp == "" and 1 <= threads <= 2
        with pytest.raises(QueryError):
            db.execute("SET memory_limit = '10GB'")


def test_the_default_size_limit_refuses_no_shipped_example() -> None:
    """Every query of examples/sql (answers and canonical queries), of the vendored Spider regressions and of the
    Spider sets under ../shared when present (golden and predicted SQL of three systems, 1,029 cases) runs under the
    default size limit, the largest result far below it."""
    import json

    from conftest import REPO, SHARED
    from goldeval.answers.sql import DEFAULT_MAX_RESULT_BYTES, result_bytes

    def lines(p):
        return [json.loads(x) for x in p.read_text(encoding="utf-8").splitlines() if x.strip()]

    runs = []  # (database, query)
    ex = REPO / "examples" / "sql"
    for f in ("arm_a.jsonl", "arm_b.jsonl"):
        runs += [(ex / "clinic.sqlite", a["final_query"]) for a in lines(ex / f) if a.get("final_query")]
    runs += [(ex / "clinic.sqlite", c["golden"]["canonical_query"]) for c in lines(ex / "cases.jsonl")
             if c.get("golden", {}).get("canonical_query")]
    assert len(runs) >= 50
    vendored = REPO / "examples" / "spider" / "regressions"  # 27 Spider questions and their 30 reviewed answers
    dbs = {c["id"]: vendored / "databases" / c["db"] / f"{c['db']}.sqlite" for c in lines(vendored / "cases.jsonl")}
    runs += [(dbs[c["id"]], c["golden"]["canonical_query"]) for c in lines(vendored / "cases.jsonl")]
    runs += [(dbs[e["id"]], e["answer"]["final_query"]) for e in lines(vendored / "judge-regressions.jsonl")]
    spider = SHARED / "data" / "spider"  # when ../shared is beside the clone: the three prediction files
    for f in sorted(spider.glob("spider_*_cases.jsonl")):
        for c in lines(f):
            db = spider / "database" / c["db_id"] / f"{c['db_id']}.sqlite"
            runs += [(db, c[k]) for k in ("gold_sql", "pred_sql") if c.get(k)]
    largest, refused, opened = 0, [], {}
    try:
        for path, sql in runs:
            db = opened.get(path) or opened.setdefault(path, ReadOnlyDatabase(path, timeout_s=30))
            try:
                largest = max(largest, result_bytes(db.execute(sql).rows))
            except QueryError as exc:
                if "size limit" in str(exc):
                    refused.append((path.name, sql))
    finally:
        for db in opened.values():
            db.close()
    assert refused == []
    assert largest < DEFAULT_MAX_RESULT_BYTES / 100, largest


@pytest.mark.parametrize("n", [1, 2, 2047, 2048, 2049, 30_001])
def test_duckdb_rows_across_blocks_of_every_size_all_arrive(tmp_path: Path, n: int) -> None:
    """Blocks grow from one row to thousands, across DuckDB's vectors of 2,048 rows: no row is lost at a boundary."""
    duckdb = pytest.importorskip("duckdb")
    path = tmp_path / "t.duckdb"
    duckdb.connect(str(path)).close()
    with ReadOnlyDatabase(path) as db:
        rows = db.execute(f"SELECT i, repeat('z', (i % 300)::BIGINT) FROM range({n}) r(i)").rows
    assert [r[0] for r in rows] == list(range(n)) and all(len(r[1]) == r[0] % 300 for r in rows)


def _duck_file(tmp_path: Path) -> Path:
    duckdb = pytest.importorskip("duckdb")
    path = tmp_path / "t.duckdb"
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE t AS SELECT i AS n FROM range(3) r(i)")
    con.close()
    return path


def test_duckdb_values_come_back_from_the_worker_as_duckdb_returns_them(tmp_path: Path) -> None:
    """Rows cross the worker's pipe pickled: every type equal to (and of the class of) what DuckDB's Python API
    returns in this process."""
    import duckdb

    path = _duck_file(tmp_path)
    sql = ("SELECT 1.50::DECIMAL(10, 2) AS d, DATE '2020-02-29' AS day, TIMESTAMP '2020-01-01 12:34:56.789' AS ts, "
           "INTERVAL 3 DAY AS iv, '\\x00\\xff'::BLOB AS b, [1, NULL, 3] AS l, {'a': 1, 'b': [2.5]} AS s, "
           "MAP([1, 2], ['x', 'y']) AS m, NULL AS z, 170141183460469231731687303715884105727::HUGEINT AS h, "
           "'8c2f9e1e-0a5b-4c2e-9d43-3b7f3f6f6a10'::UUID AS u, 'é' AS txt, 0.1::DOUBLE AS f, TIME '01:02:03' AS tm")
    direct = duckdb.connect(str(path), read_only=True)
    expected = direct.execute(sql).fetchall()
    direct.close()
    with ReadOnlyDatabase(path) as db:
        got = db.execute(sql).rows
    assert got == expected
    assert [type(v) for v in got[0]] == [type(v) for v in expected[0]]


def test_duckdb_a_value_built_in_one_call_is_stopped_at_the_time_limit(tmp_path: Path) -> None:
    """A value built in one call (repeat()) is stopped at the time limit: by DuckDB's interrupt where it sees it, or by
    killing the worker after the grace period where it does not (which of the two depends on the machine's speed and
    DuckDB's build, so this test asserts only what holds for both); the next query is answered."""
    path = _duck_file(tmp_path)
    with ReadOnlyDatabase(path, timeout_s=1) as db:
        t0 = time.monotonic()
        with pytest.raises(QueryError, match="ran past the 1 s time limit"):
            db.execute("SELECT length(repeat('y', 600000000))")
        assert time.monotonic() - t0 < 15
        assert db.execute("SELECT count(*) FROM t").rows == [(3,)]


def test_duckdb_a_worker_that_ignores_the_interrupt_is_killed_and_replaced(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The kill path, made deterministic: the interrupt signal is never delivered (as for a DuckDB call that does not
    look at interrupts), so the worker is killed :data:`GRACE_S` after the time limit, the query fails with the
    time-limit reason, and a fresh worker (a new process id) answers the next query."""
    from goldeval.answers import duckdb_worker

    real_signal = duckdb_worker.DuckDBWorker._signal

    def drop_interrupt(self: duckdb_worker.DuckDBWorker, sig: int) -> None:
        if sig != signal.SIGUSR1:
            real_signal(self, sig)

    monkeypatch.setattr(duckdb_worker.DuckDBWorker, "_signal", drop_interrupt)
    path = _duck_file(tmp_path)
    with ReadOnlyDatabase(path, timeout_s=1) as db:
        first = db._conn.pid
        t0 = time.monotonic()
        with pytest.raises(QueryError, match="ran past the 1 s time limit"):
            db.execute("SELECT count(*) FROM range(100000000000) a")
        assert time.monotonic() - t0 < 1 + duckdb_worker.GRACE_S + 10
        assert db.execute("SELECT count(*) FROM t").rows == [(3,)]
        assert db._conn.pid != first


def test_duckdb_a_value_over_the_workers_address_space_is_unscored_not_a_memory_error(tmp_path: Path) -> None:
    path = _duck_file(tmp_path)
    with ReadOnlyDatabase(path, timeout_s=5) as db:
        with pytest.raises(QueryError, match="DuckDB worker limit 2,048 MB"):
            db.execute("SELECT repeat('y', 2000000000)")
        assert db.execute("SELECT count(*) FROM t").rows == [(3,)]


def test_duckdb_a_worker_killed_mid_query_fails_that_query_only(tmp_path: Path) -> None:
    import os
    import signal
    import threading

    path = _duck_file(tmp_path)
    with ReadOnlyDatabase(path, timeout_s=600) as db:
        pid = db._conn.pid
        killer = threading.Timer(1.0, os.kill, (pid, signal.SIGKILL))
        killer.start()
        try:
            with pytest.raises(QueryError, match=r"ran out of memory \(DuckDB worker limit 2,048 MB\).*killed by signal 9"):
                db.execute("SELECT count(*) FROM range(100000000000) r(i) WHERE i * i = -1")
        finally:
            killer.cancel()
        assert db.execute("SELECT count(*) FROM t").rows == [(3,)]
        assert db.schema() == {"t": ["n"]}


def test_duckdb_worker_address_space_grows_with_the_size_limit() -> None:
    from goldeval.answers.duckdb_worker import WORKER_ADDRESS_SPACE, worker_address_space
    from goldeval.answers.sql import DEFAULT_MAX_RESULT_BYTES

    assert worker_address_space(DEFAULT_MAX_RESULT_BYTES) == WORKER_ADDRESS_SPACE == 2 * 1024**3
    assert worker_address_space(20_000_000) == WORKER_ADDRESS_SPACE
    assert worker_address_space(DEFAULT_MAX_RESULT_BYTES + 100_000_000) == WORKER_ADDRESS_SPACE + 200_000_000


def test_duckdb_workers_past_the_most_alive_are_ended_and_start_again_when_asked(tmp_path: Path) -> None:
    """A folder of DuckDB files keeps each open: at most MAX_LIVE_WORKERS worker processes live, the least recently
    used ended (its process gone) and started again at its next query, with the same answers."""
    import os

    from goldeval.answers.duckdb_worker import MAX_LIVE_WORKERS

    paths = []
    for i in range(MAX_LIVE_WORKERS + 2):
        (tmp_path / str(i)).mkdir()
        paths.append(_duck_file(tmp_path / str(i)))
    dbs = [ReadOnlyDatabase(p) for p in paths]
    try:
        pids = [db._conn.pid for db in dbs]
        assert [db._conn.pid is not None for db in dbs] == [False] * 2 + [True] * MAX_LIVE_WORKERS
        for pid in pids[MAX_LIVE_WORKERS:]:
            os.kill(pid, 0)  # alive
        assert dbs[0].execute("SELECT count(*) FROM t").rows == [(3,)]
        assert dbs[0]._conn.pid is not None and dbs[2]._conn.pid is None  # the least recently used one went
    finally:
        for db in dbs:
            db.close()
    assert all(db._conn.pid is None for db in dbs)
    with pytest.raises(QueryError, match="was closed"):
        dbs[0].execute("SELECT 1")
