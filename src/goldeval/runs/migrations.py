"""Schema migrations of the run store: an append-only list, each applied once and recorded in ``_migrations``.

Rules (borrowed from simonw/llm ``llm/migrations.py``):

* A migration, once shipped, is never edited or reordered; a schema change is a **new** migration appended to
  ``MIGRATIONS``. Its name is its identity in ``_migrations``.
* Each migration runs inside one transaction together with the row that records it, so a crash half-way leaves
  the database at the previous schema and the next open applies it again.
* ``migrate`` is run on every open; on an up-to-date database it reads one table and does nothing else.

Schema after all migrations (see each step below):

``runs``       one row per run: identity, versions, hashes, configuration, status and the whole results dict.
``cases``      one row per (run, case id): status, verdict, headline number, reason, raw judge text, the record.
``reviews``    human verdicts imported by ``goldeval review import`` (m002).
``tags``       names given to runs (``goldeval runs tag RUN baseline/main``), usable wherever a run id is (m004).
``run_inputs`` the input files of a run as it read them, zstd-compressed in parts: the case texts a report, ``review
               export`` and ``runs export`` show once the inputs moved (m005; none with ``--no-texts``).
``case_blocks`` cases recorded in bulk (``goldeval labels``' C path): one row per block of consecutive ``seq``, the
               records' JSON zstd-compressed; read back as the ``cases`` rows they stand for (m006); ``format`` says
               how a block is laid out: the records' JSON or coded (m007, :mod:`goldeval.runs.blocks`).

A PostgreSQL store (:mod:`goldeval.runs.pgstore`) has the same tables, columns and migration names: each migration
below has its PostgreSQL statements in :data:`POSTGRES_MIGRATIONS` (``DOUBLE PRECISION`` for SQLite's ``REAL``,
which is a double there too; ``BIGINT GENERATED ... AS IDENTITY`` for an ``INTEGER PRIMARY KEY``).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from datetime import UTC, datetime

from goldeval.errors import StoreError

__all__ = ["MIGRATIONS", "POSTGRES_MIGRATIONS", "migrate", "applied_migrations"]


def m001_runs_and_cases(db: sqlite3.Connection) -> None:
    """The first schema: runs and their per-case records."""
    db.execute(
        """
        CREATE TABLE runs (
            id               TEXT PRIMARY KEY,
            run_key          TEXT NOT NULL,
            arm              TEXT,
            created_at       TEXT NOT NULL,
            updated_at       TEXT NOT NULL,
            finished_at      TEXT,
            status           TEXT NOT NULL,
            goldeval_version TEXT NOT NULL,
            scorer_name      TEXT NOT NULL,
            scorer_version   TEXT NOT NULL,
            tokenizer        TEXT,
            judge_version    TEXT,
            rubric_hash      TEXT,
            dod_hash         TEXT,
            dataset_hash     TEXT NOT NULL,
            inputs           TEXT NOT NULL,
            config           TEXT NOT NULL,
            pid              INTEGER,
            host             TEXT,
            n                INTEGER,
            n_scored         INTEGER,
            n_failed         INTEGER,
            headline_name    TEXT,
            headline_value   REAL,
            gates_passed     INTEGER,
            results          TEXT
        )
        """
    )
    db.execute(
        """
        CREATE TABLE cases (
            run_id   TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
            case_id  TEXT NOT NULL,
            seq      INTEGER NOT NULL,
            status   TEXT NOT NULL,
            verdict  TEXT,
            score    REAL,
            reason   TEXT,
            raw      TEXT,
            data     TEXT NOT NULL,
            PRIMARY KEY (run_id, case_id)
        ) WITHOUT ROWID
        """
    )


def m002_reviews_and_key_index(db: sqlite3.Connection) -> None:
    """Human reviews (``review import``) and an index to find an unfinished run by its key quickly."""
    db.execute(
        """
        CREATE TABLE reviews (
            id            INTEGER PRIMARY KEY,
            run_id        TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
            case_id       TEXT NOT NULL,
            judge_verdict TEXT,
            verdict       TEXT NOT NULL,
            reviewer      TEXT NOT NULL,
            reviewed_at   TEXT NOT NULL,
            note          TEXT,
            imported_at   TEXT NOT NULL
        )
        """
    )
    db.execute("CREATE INDEX reviews_run_case ON reviews(run_id, case_id)")
    db.execute("CREATE INDEX runs_key_status ON runs(run_key, status)")


def m003_review_settles(db: sqlite3.Connection) -> None:
    """``reviews.settles``: 1 when this review settled a conflict (``review import --on-conflict latest``): the
    latest such review is the case's settled verdict, the earlier ones are kept for the audit."""
    db.execute("ALTER TABLE reviews ADD COLUMN settles INTEGER NOT NULL DEFAULT 0")


def m004_tags(db: sqlite3.Connection) -> None:
    """``tags``: a name (``baseline/main``) → the run it names, and when it was set. A name names one run; a run
    may carry several names. Deleting a run deletes its tags."""
    db.execute(
        """
        CREATE TABLE tags (
            name      TEXT PRIMARY KEY,
            run_id    TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
            tagged_at TEXT NOT NULL
        )
        """
    )
    db.execute("CREATE INDEX tags_run ON tags(run_id)")


def m005_run_inputs(db: sqlite3.Connection) -> None:
    """``run_inputs``: each input file of a run (role ``predictions``, ``cases``, ``attempts``…), as the scorer read it
    (a stream's or a decoded file's plain copy), in parts of up to 8 MiB each compressed as one zstd frame. ``sha256``
    is the input's sha256 as the run records it (``runs.inputs``), ``name`` the name of the file read (its ending says
    its format: ``.jsonl``, ``.csv``, ``.parquet``), ``size`` the part's uncompressed bytes. Deleting a
    run deletes its kept inputs."""
    db.execute(
        """
        CREATE TABLE run_inputs (
            run_id  TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
            role    TEXT NOT NULL,
            part    INTEGER NOT NULL,
            sha256  TEXT NOT NULL,
            name    TEXT NOT NULL,
            size    INTEGER NOT NULL,
            data    BLOB NOT NULL,
            PRIMARY KEY (run_id, role, part)
        )
        """
    )


def m006_case_blocks(db: sqlite3.Connection) -> None:
    """``case_blocks``: ``scored`` cases recorded in bulk, ``n`` consecutive ones from ``seq0`` in one row. ``data``
    is one zstd frame of the records' JSON, newline-separated (each record on one line, as the ``data`` column of
    ``cases`` holds it); their ``case_id``, ``status``, ``verdict``, ``score``, ``reason`` and ``raw`` are read from
    each record (:func:`goldeval.runs.columns.case_columns`). ``ids`` is one zstd frame of the case ids' JSON,
    comma-separated (the ids digest a finished run is checked by, without decoding the records). A case of a block
    is recorded once: its id is in no other block and no ``cases`` row of the run (see
    :meth:`goldeval.runs.store.RunStore.write_case_block`). Deleting a run deletes its blocks."""
    db.execute(
        """
        CREATE TABLE case_blocks (
            run_id  TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
            seq0    INTEGER NOT NULL,
            n       INTEGER NOT NULL,
            ids     BLOB NOT NULL,
            data    BLOB NOT NULL,
            PRIMARY KEY (run_id, seq0)
        ) WITHOUT ROWID
        """
    )


def m007_case_block_format(db: sqlite3.Connection) -> None:
    """``case_blocks.format``: how a block's ``data`` is laid out (:mod:`goldeval.runs.blocks`): 1, the records' JSON
    one a line (every block written before); 2, coded (ids, line numbers and a code a case into a table of record
    tails). A goldeval that knows only m006 refuses the store (an unknown migration) instead of misreading a block."""
    db.execute("ALTER TABLE case_blocks ADD COLUMN format INTEGER NOT NULL DEFAULT 1")


#: The migrations in the order they apply. Append only; never edit, rename or reorder a shipped one.
MIGRATIONS: list[Callable[[sqlite3.Connection], None]] = [
    m001_runs_and_cases,
    m002_reviews_and_key_index,
    m003_review_settles,
    m004_tags,
    m005_run_inputs,
    m006_case_blocks,
    m007_case_block_format,
]

#: The same migrations for a PostgreSQL store: name → its statements (the same tables and columns; a test checks
#: the names match :data:`MIGRATIONS` one to one and the columns match SQLite's). Append only, as above.
POSTGRES_MIGRATIONS: dict[str, tuple[str, ...]] = {
    "m001_runs_and_cases": (
        """
        CREATE TABLE runs (
            id               TEXT PRIMARY KEY,
            run_key          TEXT NOT NULL,
            arm              TEXT,
            created_at       TEXT NOT NULL,
            updated_at       TEXT NOT NULL,
            finished_at      TEXT,
            status           TEXT NOT NULL,
            goldeval_version TEXT NOT NULL,
            scorer_name      TEXT NOT NULL,
            scorer_version   TEXT NOT NULL,
            tokenizer        TEXT,
            judge_version    TEXT,
            rubric_hash      TEXT,
            dod_hash         TEXT,
            dataset_hash     TEXT NOT NULL,
            inputs           TEXT NOT NULL,
            config           TEXT NOT NULL,
            pid              INTEGER,
            host             TEXT,
            n                BIGINT,
            n_scored         BIGINT,
            n_failed         BIGINT,
            headline_name    TEXT,
            headline_value   DOUBLE PRECISION,
            gates_passed     INTEGER,
            results          TEXT
        )
        """,
        """
        CREATE TABLE cases (
            run_id   TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
            case_id  TEXT NOT NULL,
            seq      BIGINT NOT NULL,
            status   TEXT NOT NULL,
            verdict  TEXT,
            score    DOUBLE PRECISION,
            reason   TEXT,
            raw      TEXT,
            data     TEXT NOT NULL,
            PRIMARY KEY (run_id, case_id)
        )
        """,
        # the cases of a run in recording order (iter_cases, next_seq) without a sort
        "CREATE INDEX cases_run_seq ON cases(run_id, seq)",
    ),
    "m002_reviews_and_key_index": (
        """
        CREATE TABLE reviews (
            id            BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
            run_id        TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
            case_id       TEXT NOT NULL,
            judge_verdict TEXT,
            verdict       TEXT NOT NULL,
            reviewer      TEXT NOT NULL,
            reviewed_at   TEXT NOT NULL,
            note          TEXT,
            imported_at   TEXT NOT NULL
        )
        """,
        "CREATE INDEX reviews_run_case ON reviews(run_id, case_id)",
        "CREATE INDEX runs_key_status ON runs(run_key, status)",
    ),
    "m003_review_settles": ("ALTER TABLE reviews ADD COLUMN settles INTEGER NOT NULL DEFAULT 0",),
    "m004_tags": (
        """
        CREATE TABLE tags (
            name      TEXT PRIMARY KEY,
            run_id    TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
            tagged_at TEXT NOT NULL
        )
        """,
        "CREATE INDEX tags_run ON tags(run_id)",
    ),
    "m005_run_inputs": (
        """
        CREATE TABLE run_inputs (
            run_id  TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
            role    TEXT NOT NULL,
            part    BIGINT NOT NULL,
            sha256  TEXT NOT NULL,
            name    TEXT NOT NULL,
            size    BIGINT NOT NULL,
            data    BYTEA NOT NULL,
            PRIMARY KEY (run_id, role, part)
        )
        """,
    ),
    "m006_case_blocks": (
        """
        CREATE TABLE case_blocks (
            run_id  TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
            seq0    BIGINT NOT NULL,
            n       BIGINT NOT NULL,
            ids     BYTEA NOT NULL,
            data    BYTEA NOT NULL,
            PRIMARY KEY (run_id, seq0)
        )
        """,
    ),
    "m007_case_block_format": ("ALTER TABLE case_blocks ADD COLUMN format INTEGER NOT NULL DEFAULT 1",),
}


def applied_migrations(db: sqlite3.Connection) -> list[str]:
    """Names of the migrations already applied to *db*, in the order they were applied."""
    db.execute("CREATE TABLE IF NOT EXISTS _migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)")
    return [r[0] for r in db.execute("SELECT name FROM _migrations ORDER BY rowid")]


def migrate(db: sqlite3.Connection, *, upto: int | None = None) -> list[str]:
    """Apply every migration not yet recorded in ``_migrations``, each in its own transaction.

    Args:
        db: A connection in autocommit mode (``isolation_level=None``); transactions are opened here.
        upto: Apply only ``MIGRATIONS[:upto]`` (used by the tests to build the previous schema).

    Returns:
        The names applied by this call (empty when the database was up to date).

    Raises:
        StoreError: the database records a migration this goldeval does not know (it was written by a newer
            goldeval), or a migration failed (the database is left at the schema before it).
    """
    done = applied_migrations(db)
    known = [m.__name__ for m in MIGRATIONS]
    unknown = [name for name in done if name not in known]
    if unknown:
        raise StoreError(
            f"run store: the database has migrations this goldeval does not know ({', '.join(unknown)}); "
            "it was written by a newer goldeval. Upgrade goldeval, or pass --store with another path."
        )
    applied: list[str] = []
    for m in MIGRATIONS[:upto]:
        if m.__name__ in done:
            continue
        try:
            db.execute("BEGIN IMMEDIATE")
            # another process may have applied it while we waited for the lock
            if db.execute("SELECT 1 FROM _migrations WHERE name = ?", (m.__name__,)).fetchone():
                db.execute("COMMIT")
                continue
            m(db)
            db.execute(
                "INSERT INTO _migrations (name, applied_at) VALUES (?, ?)",
                (m.__name__, datetime.now(UTC).isoformat(timespec="seconds")),
            )
            db.execute("COMMIT")
        except BaseException as exc:  # (Ctrl-C included: the next statement on this connection finds no transaction open)
            try:
                if db.in_transaction:
                    db.execute("ROLLBACK")
            except sqlite3.Error:  # (a ROLLBACK that fails too does not replace what stopped the migration)
                pass
            if isinstance(exc, sqlite3.Error):
                raise StoreError(f"run store: migration {m.__name__} failed ({exc}); the database is unchanged by it.") from exc
            raise
        applied.append(m.__name__)
    return applied
