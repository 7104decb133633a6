"""`goldeval judge --db postgresql://…` under a 4 GB address-space limit: a result of 1,000,000 rows of 10 kB stops at
the size limit; a value over the server's 1 GB field limit (``repeat('y', 2e9)``) is failed by the server before any
byte is sent; a legal 300 MB value is read and refused by the size limit. Each case unscored with its reason, the
run finished (exit 0), the cases around them judged. Peak RSS via tests/peak_rss.py (figures in
benchmarks/README.md, "Memory of a judged query").

Source: goldeval issue 25, item 3.
"""

from __future__ import annotations

import json
import os


from peak_rss import peak_kib

DB = "goldeval_memory"
ADDRESS_SPACE = 4 * 1024**3

QUERIES = {
    "ok-first": "SELECT n FROM t ORDER BY n",
    "wide": "SELECT i, repeat('x', 10000) AS s FROM generate_series(1, 1000000) AS g(i)",
    "cell-over-1gb": "SELECT repeat('y', 2000000000)",
    "cell-300mb": "SELECT repeat('y', 300000000)",
    "ok-last": "SELECT n FROM t ORDER BY n",
}
REASONS = {
    "wide": "result is over 256 MB (the size limit)",
    "cell-over-1gb": "needed more than the server allows",
    "cell-300mb": "result is over 256 MB (the size limit)",
}


def test_memory_cases_are_unscored_under_a_4gb_address_space(pg, tmp_path):
    pg.create_database(DB, "CREATE TABLE t (n integer); INSERT INTO t VALUES (1), (2), (3);")
    cases, attempts = tmp_path / "cases.jsonl", tmp_path / "attempts.jsonl"
    golden = {"kind": "value", "columns": ["n"], "rows": [[1], [2], [3]]}
    with open(cases, "w") as c, open(attempts, "w") as a:
        for cid, sql in QUERIES.items():
            c.write(json.dumps({"id": cid, "question": "Which numbers?", "golden": golden}) + "\n")
            a.write(json.dumps({"id": cid, "final_query": sql}) + "\n")
    out = tmp_path / "out.jsonl"
    env = {**os.environ, "GOLDEVAL_HOME": str(tmp_path / "home"), "OPENBLAS_NUM_THREADS": "1"}
    peak = peak_kib(["judge", str(cases), str(attempts), "--db", pg.url(DB, role="ro"), "--timeout", "60",
                     "--out", str(out), "--out-format", "jsonl", "-q"], env, address_space=ADDRESS_SPACE)
    lines = [json.loads(x) for x in out.read_text().splitlines()]
    records, agg = {r["id"]: r for r in lines[:-1]}, lines[-1]["aggregate"]
    assert records["ok-first"]["verdict"] == "match" and records["ok-last"]["verdict"] == "match"
    for cid, reason in REASONS.items():
        assert records[cid]["status"] == "unscored" and reason in records[cid]["reason"], records[cid]
    assert (agg["n"], agg["match"], agg["unscored"]) == (5, 2, 3)
    print(f"postgresql: peak RSS {peak / 1024:.0f} MiB under a 4 GiB address space")
    assert peak < 2 * 1024 * 1024  # KiB: the 300 MB value is held a few times over, never the 10 GB result
