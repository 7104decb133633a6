#!/usr/bin/env python3
"""Spider on PostgreSQL: load the six Spider SQLite databases into a PostgreSQL server, re-execute the published
GPT-4 predictions there (as written, and translated with ``--sql-dialect sqlite``), and compare the rule judge's
verdicts with the same judge's on SQLite.

    python examples/spider/spider_postgres.py --pg postgresql://postgres@127.0.0.1:5432 [--data ../shared/data/spider]
                                              [--out spider_postgres.json]

``--pg`` names a server and a role that may create databases (the password from PGPASSWORD or ~/.pgpass, or in
the URL); the databases ``spider_<db_id>`` on it are replaced. Each SQLite table is copied with its rows as they
are, typed by its values: a column whose every value is an integer, or text that spells one exactly (``'12'``,
not ``'012'``), becomes ``bigint``; every value a number, ``double precision``; anything else ``text``. (Spider
declares some id and year columns ``text`` and joins or compares them with integer columns, which SQLite's type
affinity allows and PostgreSQL refuses; the judge reads ``'12'`` and ``12`` as the same number either way.) Names
are lower-cased, as PostgreSQL folds unquoted names; declared primary keys are kept (PostgreSQL then accepts the
other columns of a table grouped by its key, as SQLite does). Then, per prediction file, every row is judged three times with the same golden
(``judge_spider.golden_spec``; the gold SQL is the canonical query): on SQLite, on PostgreSQL as written, and on
PostgreSQL translated from SQLite. A query "executes" when the database returns rows for it within the limits.

The data are not copied into this repository (see ``judge_spider.py`` and ``../shared/data/spider/README.md``;
Spider: Yu et al., EMNLP 2018, CC BY-SA 4.0).
"""

from __future__ import annotations

import argparse
import json
import re
import sqlite3
import sys
import time
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from judge_spider import DEFAULT_DATA, golden_spec  # noqa: E402

FILES = ("spider_dinsql-gpt4_cases.jsonl", "spider_dailsql-gpt4_cases.jsonl", "spider_gpt4-zeroshot_cases.jsonl")


def _server_url(base: str, db: str) -> str:
    import urllib.parse

    u = urllib.parse.urlsplit(base)
    return urllib.parse.urlunsplit((u.scheme, u.netloc, "/" + db, u.query, ""))


_INT_TEXT = re.compile(r"^-?(?:0|[1-9][0-9]*)$")
_REAL_TEXT = re.compile(r"^-?[0-9]+\.[0-9]+$")


def _kind(v) -> str:
    """``int`` / ``real`` for a number, or for text that spells one exactly (``'12'``, ``'3.5'``; not ``'012'``);
    else ``text``."""
    if isinstance(v, int):
        return "int"
    if isinstance(v, float):
        return "real"
    if isinstance(v, str) and _INT_TEXT.match(v):
        return "int"
    if isinstance(v, str) and _REAL_TEXT.match(v):
        return "real"
    return "text"


def load_database(sqlite_path: Path, base_url: str, name: str) -> dict[str, int]:
    """Copy every table of *sqlite_path* into a fresh PostgreSQL database *name*; ``{table: rows}``."""
    import psycopg
    from psycopg import sql

    with psycopg.connect(_server_url(base_url, "postgres"), autocommit=True) as admin:
        admin.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))
        admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    lite = sqlite3.connect(f"file:{sqlite_path}?mode=ro", uri=True)
    lite.text_factory = lambda b: b.decode("utf-8", "replace")
    counts = {}
    with psycopg.connect(_server_url(base_url, name)) as con:
        for (table,) in lite.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"):
            q = '"' + table.replace('"', '""') + '"'
            info = list(lite.execute(f"PRAGMA table_info({q})"))
            cols = [r[1] for r in info]
            pk = [r[1] for r in sorted(info, key=lambda r: r[5]) if r[5] > 0]
            types = []
            for c in cols:
                cq = '"' + c.replace('"', '""') + '"'
                kinds = set()
                for (v,) in lite.execute(f"SELECT DISTINCT {cq} FROM {q} WHERE {cq} IS NOT NULL"):
                    kinds.add(_kind(v))
                types.append("bigint" if kinds <= {"int"} else "double precision" if kinds <= {"int", "real"} else "text")
            con.execute(sql.SQL("CREATE TABLE {} ({})").format(
                sql.Identifier(table.lower()),
                sql.SQL(", ").join(sql.SQL("{} {}").format(sql.Identifier(c.lower()), sql.SQL(t)) for c, t in zip(cols, types))))
            rows = list(lite.execute(f"SELECT * FROM {q}"))
            with con.cursor() as cur, cur.copy(sql.SQL("COPY {} FROM STDIN").format(sql.Identifier(table.lower()))) as copy:
                for r in rows:
                    copy.write_row([None if v is None else str(v) if t == "text" else int(v) if t == "bigint" else float(v)
                                    for v, t in zip(r, types)])
            counts[table] = len(rows)
            if pk:  # PostgreSQL lets a query select the other columns of a table grouped by its primary key
                try:
                    with con.transaction():
                        con.execute(sql.SQL("ALTER TABLE {} ADD PRIMARY KEY ({})").format(
                            sql.Identifier(table.lower()), sql.SQL(", ").join(sql.Identifier(c.lower()) for c in pk)))
                except psycopg.Error as exc:  # duplicate or NULL keys in the data: kept without the key
                    print(f"{name}.{table}: no primary key ({str(exc).splitlines()[0]})", file=sys.stderr)
        con.execute("ANALYZE")
    lite.close()
    return counts


def verdict_of(outcome) -> str:
    if outcome.verdict is None:
        return "unscored"
    return "needs_human" if outcome.verdict.needs_human else outcome.verdict.verdict


def main(argv: list[str] | None = None) -> int:
    from goldeval.answers.judge import AnswerConfig, judge_case
    from goldeval.answers.postgres import PostgresDatabase
    from goldeval.answers.sql import QueryError, ReadOnlyDatabase

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pg", required=True, help="postgresql://user@host:port of a server (a role that may create databases)")
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--timeout", type=float, default=10.0)
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args(argv)
    db_ids = sorted(p.name for p in (args.data / "database").iterdir() if p.is_dir())
    loaded = {d: load_database(args.data / "database" / d / f"{d}.sqlite", args.pg, f"spider_{d}") for d in db_ids}
    print("loaded:", {d: sum(c.values()) for d, c in loaded.items()}, "rows", file=sys.stderr)
    cfg = AnswerConfig(timeout_s=args.timeout)
    lite = {d: ReadOnlyDatabase(args.data / "database" / d / f"{d}.sqlite", timeout_s=args.timeout) for d in db_ids}
    raw = {d: PostgresDatabase(_server_url(args.pg, f"spider_{d}"), timeout_s=args.timeout) for d in db_ids}
    tr = {d: PostgresDatabase(_server_url(args.pg, f"spider_{d}"), timeout_s=args.timeout, sql_dialect="sqlite") for d in db_ids}
    report: dict = {"databases": loaded, "files": {}}
    for name in FILES:
        rows = [json.loads(x) for x in (args.data / name).read_text(encoding="utf-8").splitlines() if x.strip()]
        runs = Counter()
        agree = {"as_written": Counter(), "translated": Counter()}
        errors = {"as_written": Counter(), "translated": Counter()}
        cases = []
        t0 = time.monotonic()
        for row in rows:
            d = row["db_id"]
            rec = {"id": row["id"], "db_id": d}
            for label, db in (("sqlite", lite[d]), ("as_written", raw[d]), ("translated", tr[d])):
                ran = {}
                for which in ("pred", "gold"):
                    try:
                        db.execute(row[f"{which}_sql"])
                        runs[(label, which)] += 1
                        ran[which] = True
                    except QueryError as exc:
                        ran[which] = False
                        if label != "sqlite" and which == "pred":
                            errors[label][str(exc)[:90]] += 1
                rec[f"{label}_ran"] = ran["pred"] and ran["gold"]
                # the golden's column names are SQLite's on every engine (PostgreSQL names count(*) "count")
                case = {"id": row["id"], "question": row["question"], "golden": {**golden_spec(row), "columns": row["gold_columns"]}}
                rec[label] = verdict_of(judge_case(case, {"id": row["id"], "final_query": row["pred_sql"]}, db=db, config=cfg).outcome)
            for label in ("as_written", "translated"):
                agree[label]["same" if rec[label] == rec["sqlite"] else f"{rec['sqlite']} -> {rec[label]}"] += 1
            cases.append(rec)
        n = len(rows)
        summary = {
            "n": n, "seconds": round(time.monotonic() - t0, 1),
            "pred_executes": {k: runs[(k, "pred")] for k in ("sqlite", "as_written", "translated")},
            "gold_executes": {k: runs[(k, "gold")] for k in ("sqlite", "as_written", "translated")},
            "verdicts_agree_with_sqlite": {k: agree[k]["same"] for k in agree},
            # among the rows whose prediction and gold query both run on PostgreSQL (and on SQLite)
            "both_run": {k: sum(1 for r in cases if r[f"{k}_ran"] and r["sqlite_ran"]) for k in agree},
            "agree_where_both_run": {k: sum(1 for r in cases if r[f"{k}_ran"] and r["sqlite_ran"] and r[k] == r["sqlite"])
                                     for k in agree},
            "differ_where_both_run": {k: [(r["id"], r["sqlite"], r[k]) for r in cases
                                          if r[f"{k}_ran"] and r["sqlite_ran"] and r[k] != r["sqlite"]] for k in agree},
            "disagreements": {k: {x: c for x, c in agree[k].most_common() if x != "same"} for k in agree},
            "top_errors": {k: errors[k].most_common(8) for k in errors},
            "sqlite_verdicts": dict(Counter(r["sqlite"] for r in cases)),
        }
        report["files"][name] = {**summary, "cases": cases}
        print(name, json.dumps(summary, indent=1), file=sys.stderr)
    for group in (lite, raw, tr):
        for db in group.values():
            db.close()
    if args.out:
        args.out.write_text(json.dumps(report, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
