"""`goldeval judge` under a 4 GB address-space limit (a 4 GB CI machine with no swap to hide in): a query whose result
is 1,000,000 rows of 10 kB, or one value of 2 GB, makes its case unscored with the size reason, never a MemoryError
or exit 3, and the other cases are judged. The peak RSS (tests/peak_rss.py) is a memory bound, not a timing; the
figures are in benchmarks/README.md ("Memory of a judged query").

OPENBLAS_NUM_THREADS=1: a library that reserves address space per thread at import (OpenBLAS under NumPy) could
otherwise fail the interpreter's start-up under the limit; goldeval judge imports none today, the setting keeps the
test about the queries.

Source: goldeval issue 25, item 3.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3

import pytest

from peak_rss import peak_kib

#: The address-space limit every process of the judged invocation runs under.
ADDRESS_SPACE = 4 * 1024**3

WIDE = {"sqlite": ("WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r WHERE i < 1000000) "
                   "SELECT i, printf('%.*c', 10000, 'x') FROM r"),
        "duckdb": "SELECT i, repeat('x', 10000) AS s FROM range(1000000) r(i)"}
CELL = {"sqlite": "SELECT replace(hex(zeroblob(1000000000)), '0', 'y')",
        "duckdb": "SELECT repeat('y', 2000000000)"}
#: What each engine says of the one 2 GB value: SQLite's length limit; DuckDB's worker process cannot allocate it
#: within its 2 GiB address space (tests/e2e/test_duckdb_worker.py has a value that fits and passes the time limit).
CELL_REASON = {"sqlite": r"over 16,000,000 bytes \(the value limit\)",
               "duckdb": r"needed more memory than DuckDB may use \(1GB memory_limit; DuckDB worker limit 2,048 MB\)"}


def write_cases(tmp_path, wide: str, cell: str, ok: str) -> tuple[str, str]:
    """Four cases: two that match (first and last, *ok* returns 1, 2, 3) around the two memory cases."""
    cases, attempts = tmp_path / "cases.jsonl", tmp_path / "attempts.jsonl"
    golden = {"kind": "value", "columns": ["n"], "rows": [[1], [2], [3]]}
    with open(cases, "w") as c, open(attempts, "w") as a:
        for cid, sql in (("ok-first", ok), ("wide", wide), ("cell", cell), ("ok-last", ok)):
            c.write(json.dumps({"id": cid, "question": "Which numbers?", "golden": golden}) + "\n")
            a.write(json.dumps({"id": cid, "final_query": sql}) + "\n")
    return str(cases), str(attempts)


def judge_limited(tmp_path, db: str, cases: str, attempts: str, *extra: str) -> tuple[dict, dict, int]:
    """``goldeval judge`` under :data:`ADDRESS_SPACE`: (case id -> record, aggregate, peak RSS KiB). peak_kib
    asserts exit 0 (judged, no gate): never 3."""
    out = tmp_path / "out.jsonl"
    env = {**os.environ, "GOLDEVAL_HOME": str(tmp_path / "home"), "OPENBLAS_NUM_THREADS": "1"}
    peak = peak_kib(["judge", cases, attempts, "--db", db, "--out", str(out), "--out-format", "jsonl", "-q",
                     "--timeout", "5", *extra], env, address_space=ADDRESS_SPACE)
    lines = [json.loads(x) for x in out.read_text().splitlines()]
    return {r["id"]: r for r in lines[:-1]}, lines[-1]["aggregate"], peak


def check_run(records: dict, agg: dict, cell_reason: str) -> None:
    assert records["ok-first"]["verdict"] == "match" and records["ok-last"]["verdict"] == "match"
    assert records["wide"]["status"] == "unscored"
    assert "result is over 256 MB (the size limit)" in records["wide"]["reason"]
    assert "raise --max-result-mb" in records["wide"]["reason"]
    assert records["cell"]["status"] == "unscored" and re.search(cell_reason, records["cell"]["reason"])
    assert (agg["n"], agg["match"], agg["unscored"]) == (4, 2, 2)


@pytest.mark.parametrize("engine", ["sqlite", "duckdb"])
def test_memory_cases_are_unscored_under_a_4gb_address_space(tmp_path, engine):
    if engine == "duckdb":
        duckdb = pytest.importorskip("duckdb")
        db = tmp_path / "t.duckdb"
        con = duckdb.connect(str(db))
        con.execute("CREATE TABLE t AS SELECT i + 1 AS n FROM range(3) r(i)")
        con.close()
    else:
        db = tmp_path / "t.sqlite"
        con = sqlite3.connect(db)
        con.execute("CREATE TABLE t (n INTEGER)")
        con.executemany("INSERT INTO t VALUES (?)", [(1,), (2,), (3,)])
        con.commit()
        con.close()
    cases, attempts = write_cases(tmp_path, WIDE[engine], CELL[engine], "SELECT n FROM t ORDER BY n")
    records, agg, peak = judge_limited(tmp_path, str(db), cases, attempts)
    check_run(records, agg, CELL_REASON[engine])
    print(f"{engine}: peak RSS {peak / 1024:.0f} MiB under a {ADDRESS_SPACE / 1024**3:g} GiB address space")
    if engine == "sqlite":
        assert peak < 1024 * 1024  # KiB: the wide result stops near 256 MB of objects; no value passes 16 MB
    else:
        assert peak < 2 * 1024 * 1024  # KiB, the worker counted: its 2 GiB address space (was 2,424 MiB in-process)


def test_a_smaller_limit_stops_sooner(tmp_path):
    """--max-result-mb is the limit the reason names, and it is recorded with the run's configuration."""
    db = tmp_path / "t.sqlite"
    con = sqlite3.connect(db)
    con.execute("CREATE TABLE t (n INTEGER)")
    con.executemany("INSERT INTO t VALUES (?)", [(1,), (2,), (3,)])
    con.commit()
    con.close()
    cases, attempts = write_cases(tmp_path, WIDE["sqlite"], CELL["sqlite"], "SELECT n FROM t ORDER BY n")
    records, agg, peak = judge_limited(tmp_path, str(db), cases, attempts, "--max-result-mb", "20")
    assert "result is over 20 MB (the size limit)" in records["wide"]["reason"]
    assert (agg["match"], agg["unscored"]) == (2, 2)
    header = json.loads((tmp_path / "out.jsonl").read_text().splitlines()[-1])
    assert header["config"]["max_result_bytes"] == 20_000_000
