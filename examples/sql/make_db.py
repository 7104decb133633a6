#!/usr/bin/env python3
"""Build the example clinic database and its case file, deterministically (stdlib only).

    python examples/sql/make_db.py            # writes examples/sql/clinic.sqlite and examples/sql/cases.jsonl
    python examples/sql/make_db.py --out DIR  # somewhere else (the test suite rebuilds into a temp folder)
    python examples/sql/make_db.py --postgres postgresql://postgres@127.0.0.1:5432/clinic   # also into PostgreSQL

Tables: wards (6 rows), patients (1,500), admissions (4,000), trial_enrollments (181). The same seed gives the same
rows on any CPython ≥ 3.8 (``random.Random`` with an explicit seed; no set or dict order is relied on).

The case file holds 22 questions. Each golden's rows come from executing its canonical query on the database just
built (``rows_from: canonical_query``), except q19, whose golden is typed in by hand with a deliberate error so that
``gold_status`` has something to flag. The two attempt files (``arm_a.jsonl``, ``arm_b.jsonl``) are written by hand,
not by this script.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import random
import sqlite3
from pathlib import Path

SEED = 20240501
HERE = Path(__file__).resolve().parent

WARDS = [  # ward_id, name, beds, head_nurse (NULL for Surgery: NULL is not "")
    (1, "Cardiology", 30, "A. Okafor"),
    (2, "Oncology", 24, "M. Lindqvist"),
    (3, "Surgery", 40, None),
    (4, "Pediatrics", 20, "R. Das"),
    (5, "Neurology", 18, "J. Moreau"),
    (6, "Geriatrics", 26, "K. Tanaka"),
]
WARD_WEIGHTS = [0.22, 0.16, 0.24, 0.12, 0.10, 0.16]
SOURCES = [("emergency", 0.35), ("referral", 0.40), ("elective", 0.25)]
SITES = [("Site A", 50), ("Site B", 40), ("Site C", 40), ("Site D", 31), ("Site E", 20)]

SCHEMA = """
CREATE TABLE wards (ward_id INTEGER PRIMARY KEY, name TEXT NOT NULL, beds INTEGER NOT NULL, head_nurse TEXT);
CREATE TABLE patients (patient_id INTEGER PRIMARY KEY, sex TEXT NOT NULL, birth_year INTEGER NOT NULL,
                       age INTEGER NOT NULL, ssn TEXT NOT NULL, postcode TEXT NOT NULL);
CREATE TABLE admissions (admission_id INTEGER PRIMARY KEY, patient_id INTEGER NOT NULL REFERENCES patients,
                         ward_id INTEGER NOT NULL REFERENCES wards, admitted_on TEXT NOT NULL, discharged_on TEXT,
                         source TEXT NOT NULL, readmitted_30d INTEGER, cost REAL NOT NULL);
CREATE TABLE trial_enrollments (enrollment_id INTEGER PRIMARY KEY, site TEXT NOT NULL,
                                patient_id INTEGER NOT NULL REFERENCES patients);
"""

# id, question, canonical query, golden columns, extra golden fields, rubric, must_not_use
CASES = [
    ("q01", "How many admissions did each ward have in March 2024?",
     "SELECT w.name, COUNT(*) FROM admissions a JOIN wards w USING (ward_id) "
     "WHERE a.admitted_on BETWEEN '2024-03-01' AND '2024-03-31' GROUP BY w.name",
     ["ward", "n_admissions"], {}, [], []),
    ("q02", "List the ward of every admission on 1 March 2024.",
     "SELECT w.name FROM admissions a JOIN wards w USING (ward_id) WHERE a.admitted_on = '2024-03-01'",
     ["ward"], {}, [], []),
    ("q03", "List the wards by number of admissions in March 2024, highest first.",
     "SELECT w.name, COUNT(*) AS n FROM admissions a JOIN wards w USING (ward_id) "
     "WHERE a.admitted_on BETWEEN '2024-03-01' AND '2024-03-31' GROUP BY w.name ORDER BY n DESC",
     ["ward", "n_admissions"], {"ordered": True}, [], []),
    ("q04", "What percentage of discharged admissions were followed by a readmission within 30 days? Round to 2 decimals.",
     "SELECT ROUND(100.0 * SUM(readmitted_30d) / COUNT(*), 2) FROM admissions WHERE discharged_on IS NOT NULL",
     ["readmission_pct"], {}, [], []),
    ("q05", "What share of March 2024 admissions came through the emergency department?",
     "SELECT 1.0 * SUM(source = 'emergency') / COUNT(*) FROM admissions "
     "WHERE admitted_on BETWEEN '2024-03-01' AND '2024-03-31'",
     ["emergency_rate"], {}, [], []),
    ("q06", "How many admissions did Cardiology have in March 2024?",
     "SELECT COUNT(*) FROM admissions a JOIN wards w USING (ward_id) "
     "WHERE w.name = 'Cardiology' AND a.admitted_on BETWEEN '2024-03-01' AND '2024-03-31'",
     ["n_admissions"], {}, [], []),
    ("q07", "In which month of 2024 did Oncology admit the most patients?",
     "SELECT CAST(strftime('%m', a.admitted_on) AS INTEGER) AS m FROM admissions a JOIN wards w USING (ward_id) "
     "WHERE w.name = 'Oncology' GROUP BY m ORDER BY COUNT(*) DESC, m LIMIT 1",
     ["admission_month"], {}, [], []),
    ("q08", "Which 2 trial sites enrolled the most patients?",
     "SELECT site, COUNT(*) AS n FROM trial_enrollments GROUP BY site ORDER BY n DESC LIMIT 2",
     ["site", "n_enrolled"], {"top_n": {"n": 2, "by": "n_enrolled", "direction": "desc"}}, [], []),
    ("q09", "What is the most common blood type among Cardiology patients?",
     None, [], {"kind": "unanswerable"}, [], []),
    ("q10", "What is the average cost of a Surgery admission?",
     "SELECT ROUND(AVG(cost), 2) FROM admissions a JOIN wards w USING (ward_id) WHERE w.name = 'Surgery'",
     ["avg_cost"], {}, [], []),
    ("q11", "How many distinct patients older than 65 were admitted in 2024?",
     "SELECT COUNT(DISTINCT a.patient_id) FROM admissions a JOIN patients p USING (patient_id) WHERE p.age > 65",
     ["n_patients"], {}, [], ["patients.ssn", "Do not identify patients by name or address."]),
    ("q12", "What was the total cost of admissions per ward in 2024?",
     "SELECT w.name, ROUND(SUM(a.cost), 2) FROM admissions a JOIN wards w USING (ward_id) GROUP BY w.name",
     ["ward", "total_cost"], {}, [], []),
    ("q13", "Describe how the admission volume changed over 2024.",
     None, [], {"kind": "criteria"},
     ["REQUIRED: names the busiest and the quietest month", "CREDITED: gives monthly counts", "WRONG: reports a steady decline"], []),
    ("q14", "How many emergency admissions were there in the first quarter of 2024?",
     "SELECT COUNT(*) FROM admissions WHERE source = 'emergency' AND admitted_on BETWEEN '2024-01-01' AND '2024-03-31'",
     ["n_emergency"], {}, ["PREFERRED: counts by admission date", "ACCEPT: counts by discharge date, if the answer says so"], []),
    ("q15", "How many beds does the Oncology ward have?",
     "SELECT beds FROM wards WHERE name = 'Oncology'",
     ["beds"], {}, [], []),
    ("q16", "How many patients were admitted to Neurology in 2024?",
     "SELECT COUNT(DISTINCT patient_id) FROM admissions a JOIN wards w USING (ward_id) WHERE w.name = 'Neurology'",
     ["n_patients"], {}, [], []),
    ("q17", "How many admissions are still open (no discharge date)?",
     "SELECT COUNT(*) FROM admissions WHERE discharged_on IS NULL",
     ["n_open"], {}, [], []),
    ("q18", "Who is the head nurse of each ward?",
     "SELECT name, head_nurse FROM wards",
     ["ward", "head_nurse"], {}, [], []),
    ("q19", "What share of 2024 admissions were elective?",
     "SELECT 1.0 * SUM(source = 'elective') / COUNT(*) FROM admissions",
     ["elective_share"], {"hand_value": 135.0, "note": "typed in by hand as 135 (meant 13.5%?): a share cannot exceed 1"}, [], []),
    ("q20", "On what date was the first admission of 2024?",
     "SELECT MIN(admitted_on) FROM admissions",
     ["first_admission"], {}, [], []),
    ("q21", "Which ward had the most admissions in 2024?",
     "SELECT w.name, COUNT(*) AS n FROM admissions a JOIN wards w USING (ward_id) GROUP BY w.name ORDER BY n DESC LIMIT 1",
     ["ward", "n_admissions"], {}, [], []),
    ("q22", "How many female patients are there?",
     "SELECT COUNT(*) FROM patients WHERE sex = 'F'",
     ["n_female"], {}, [], []),
]


def make_rows() -> dict[str, list[tuple]]:
    """Every table's rows, generated from SEED (the same for SQLite and PostgreSQL)."""
    rng = random.Random(SEED)
    patients = []
    for pid in range(1, 1501):
        birth = rng.randint(1930, 2020)
        ssn = f"{rng.randint(100, 899):03d}-{rng.randint(1, 99):02d}-{rng.randint(1, 9999):04d}"
        patients.append((pid, rng.choice("FM"), birth, 2024 - birth, ssn, f"P{rng.randint(1000, 9999)}"))
    start = dt.date(2024, 1, 1)
    admissions = []
    for aid in range(1, 4001):
        day = start + dt.timedelta(days=rng.randint(0, 365))
        ward = rng.choices([w[0] for w in WARDS], WARD_WEIGHTS)[0]
        source = rng.choices([s for s, _ in SOURCES], [w for _, w in SOURCES])[0]
        still_in = rng.random() < 0.03
        discharged = None if still_in else (day + dt.timedelta(days=rng.randint(0, 20))).isoformat()
        readmitted = None if still_in else int(rng.random() < 0.12)
        cost = round(rng.uniform(500, 20000), 2)
        admissions.append((aid, rng.randint(1, 1500), ward, day.isoformat(), discharged, source, readmitted, cost))
    enrol = []
    for site, n in SITES:
        for _ in range(n):
            enrol.append((len(enrol) + 1, site, rng.randint(1, 1500)))
    return {"wards": WARDS, "patients": patients, "admissions": admissions, "trial_enrollments": enrol}


def build_db(path: Path) -> None:
    if path.exists():
        path.unlink()
    con = sqlite3.connect(path)
    con.executescript(SCHEMA)
    for table, rows in make_rows().items():
        con.executemany(f"INSERT INTO {table} VALUES ({', '.join('?' * len(rows[0]))})", rows)
    con.commit()
    con.execute("VACUUM")
    con.close()


#: The same tables in PostgreSQL: SQLite's INTEGER is 64-bit (BIGINT) and its REAL an 8-byte float (DOUBLE
#: PRECISION; PostgreSQL's REAL is 4 bytes); dates stay ISO text, as SQLite holds them, so every query means
#: the same on both.
PG_SCHEMA = SCHEMA.replace("INTEGER", "BIGINT").replace("REAL", "DOUBLE PRECISION")


def build_postgres(url: str) -> None:
    """Write the same tables and rows into the PostgreSQL database *url* (its tables of these names are
    replaced). Needs psycopg (``pip install 'goldeval[postgres]'``); the password from PGPASSWORD or ~/.pgpass."""
    import psycopg

    rows = make_rows()
    with psycopg.connect(url) as con:
        con.execute("DROP TABLE IF EXISTS trial_enrollments, admissions, patients, wards")
        con.execute(PG_SCHEMA)
        with con.cursor() as cur:
            for table, table_rows in rows.items():
                with cur.copy(f"COPY {table} FROM STDIN") as copy:
                    for r in table_rows:
                        copy.write_row(r)
        con.execute("ANALYZE")


def build_cases(db: Path, out: Path) -> None:
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    lines = []
    for cid, question, query, columns, extra, rubric, must_not_use in CASES:
        extra = dict(extra)
        golden: dict = {"kind": extra.pop("kind", "value")}
        if golden["kind"] == "value":
            golden["columns"] = columns
            hand = extra.pop("hand_value", None)
            note = extra.pop("note", None)
            if hand is not None:
                golden["rows"] = [[hand]]
                golden["rows_from"] = "typed in by hand"
                golden["note"] = note
            else:
                golden["rows"] = [list(r) for r in con.execute(query).fetchall()]
                golden["rows_from"] = "canonical_query"
            golden["canonical_query"] = query
            golden.update(extra)
        case = {"id": cid, "question": question, "golden": golden}
        if rubric:
            case["rubric"] = rubric
        if must_not_use:
            case["must_not_use"] = must_not_use
        lines.append(json.dumps(case, ensure_ascii=False))
    con.close()
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=HERE, help="folder to write clinic.sqlite and cases.jsonl into")
    ap.add_argument("--postgres", metavar="URL", help="also write the same tables into this PostgreSQL database "
                    "(postgresql://user@host:port/dbname; it must exist)")
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    db = args.out / "clinic.sqlite"
    build_db(db)
    build_cases(db, args.out / "cases.jsonl")
    print(f"wrote {db} and {args.out / 'cases.jsonl'}")
    if args.postgres:
        build_postgres(args.postgres)
        print(f"wrote the same tables into {args.postgres.split('@')[-1]}")


if __name__ == "__main__":
    main()
