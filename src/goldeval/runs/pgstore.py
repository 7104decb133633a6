"""The run store on a PostgreSQL server: ``--store postgresql://user@host:port/dbname`` (or ``$GOLDEVAL_STORE``).

The same store as the SQLite one (:class:`goldeval.runs.store.RunStore`, whose methods this class inherits): the
same tables, columns and migration names (:data:`goldeval.runs.migrations.POSTGRES_MIGRATIONS`), the same queries,
so resume, compare, replay, review, report and tags behave alike. Many machines write at once: each run is its own
row, a case is keyed by ``(run_id, case_id)`` (a case written twice replaces its row), and migrations are applied
under a transaction-level advisory lock, so eight CI jobs opening a new database together create the tables once.

Why psycopg 3 directly rather than SQLAlchemy Core: the store's queries are a dozen plain statements written once
in the SQL that SQLite and PostgreSQL share (``?`` placeholders become psycopg's ``%s``; nothing else is rewritten),
psycopg is already the driver of ``--db postgresql://`` (the ``postgres`` extra), and SQLAlchemy would add a large
dependency whose pooling, ORM and dialect layer the store does not use.

Who is scoring a run, across machines: a session-level **advisory lock** per run (``pg_try_advisory_lock``), held
by the connection of the process that created or resumed the run for as long as it scores it. The server releases
it when that session ends: at once when the process exits or is killed (its socket closes), and within about two
minutes when its machine disappears (the session's TCP keepalives are set so). A run marked ``running`` whose lock
nobody holds is ``interrupted`` and another machine may resume it, continuing after its last committed case. Chosen
over a lease row (host + pid + heartbeat time) because it needs no clock agreement between machines, no heartbeat
write in the scoring loop, and no guess of how stale is "gone". The lock key is two 31-bit numbers: goldeval's
namespace and a hash of the run id.

The password: from the URL (kept in memory only: the store is named everywhere by the URL without it, as ``--db``
names a server), ``PGPASSWORD`` or ``~/.pgpass``.

Source: PostgreSQL documentation, "Advisory Locks" (9.27.10) and "Connection Settings" (tcp_keepalives_*);
psycopg 3 "Transactions management".
"""

from __future__ import annotations

import functools
import hashlib
import os
from collections.abc import Iterable, Mapping
from itertools import chain
from typing import Any

import orjson
import zstandard

from goldeval.answers.postgres import parse_url
from goldeval.errors import StoreError
from goldeval.paths import default_store
from goldeval.runs.blocks import FORMAT_CODED, FORMAT_CODED_STATUS_FIRST, block_rows
from goldeval.runs.migrations import MIGRATIONS, POSTGRES_MIGRATIONS
from goldeval.runs.store import NoStoreError, RunMeta, RunStore, case_columns, now_iso

__all__ = ["PostgresRunStore", "LOCK_NAMESPACE", "migrate_postgres", "run_lock_key"]

#: The first key of every advisory lock goldeval takes (``'gold'`` as a 31-bit number); the second is 0 for the
#: migrations and a hash of the run id for a run.
LOCK_NAMESPACE = int.from_bytes(b"gold") & 0x7FFFFFFF

#: Case rows per INSERT statement (9 parameters each: 9,000 per statement, far under PostgreSQL's 65,535).
_ROWS_PER_INSERT = 1000

#: The tables goldeval creates; a database holding one of them without ``_migrations`` belongs to another program.
_OWN_TABLES = ("runs", "cases", "reviews", "tags")


def run_lock_key(run_id: str) -> int:
    """The second key of *run_id*'s advisory lock: 31 bits of its sha256, never 0 (the migrations' key).

    Example:
        >>> 0 < run_lock_key("20261204-030000-abcdef") < 2**31
        True
    """
    return (int.from_bytes(hashlib.sha256(run_id.encode()).digest()[:4]) & 0x7FFFFFFF) or 1


@functools.lru_cache(maxsize=256)
def _format_params(sql: str) -> str:
    """*sql* written with qmark placeholders (``?``, as sqlite3 takes them) in psycopg's format style (``%s``).
    The store's statements hold no ``?`` or ``%`` of their own (no literal holds one)."""
    return sql.replace("?", "%s")


@functools.lru_cache(maxsize=8)
def _upsert_sql(n_rows: int) -> str:
    """The upsert of *n_rows* case rows (distinct case ids: PostgreSQL refuses to update one row twice in one
    statement) in one statement. A row already stored under the same case id is replaced and keeps its ``seq``, as
    in :func:`goldeval.runs.store._upsert_sql`'s SQLite statement: a case recorded again (redone by a resumed run,
    judged again by the LLM stage) keeps its place in the run's recording order."""
    return (
        "INSERT INTO cases (run_id, case_id, seq, status, verdict, score, reason, raw, data) VALUES "
        + ", ".join(["(%s, %s, %s, %s, %s, %s, %s, %s, %s)"] * n_rows)
        + " ON CONFLICT (run_id, case_id) DO UPDATE SET status = excluded.status, "
        "verdict = excluded.verdict, score = excluded.score, reason = excluded.reason, raw = excluded.raw, "
        "data = excluded.data"
    )


class PgConnection:
    """The part of :class:`sqlite3.Connection` the run store uses, on a psycopg connection in autocommit mode.

    ``execute(sql, params)`` takes the store's statements as written for sqlite3 (``?`` placeholders) and returns
    psycopg's cursor (iterable; ``fetchone``, ``fetchall``). ``BEGIN IMMEDIATE`` (SQLite's "take the write lock
    now") is a plain ``BEGIN``: PostgreSQL locks the rows each statement writes, and ``SELECT … FOR UPDATE`` where a
    read must hold.

    Args:
        conn: An open ``psycopg.Connection`` with ``autocommit=True``.
    """

    def __init__(self, conn: Any) -> None:
        self.conn = conn

    def execute(self, sql: str, params: Iterable[Any] = ()) -> Any:
        """Run one statement; returns its cursor."""
        if sql == "BEGIN IMMEDIATE":
            sql = "BEGIN"
        values = tuple(params)
        return self.conn.execute(_format_params(sql), values) if values else self.conn.execute(sql)

    @property
    def in_transaction(self) -> bool:
        """True inside a transaction block (also one that failed and awaits its ROLLBACK)."""
        from psycopg.pq import TransactionStatus  # optional dependency (extra postgres): loaded with the store

        return self.conn.info.transaction_status != TransactionStatus.IDLE

    def close(self) -> None:
        """Close the connection (the server then releases this session's advisory locks)."""
        self.conn.close()


def _connect(url: str, password: str | None, timeout: float) -> Any:
    """A psycopg connection in autocommit mode, its TCP keepalives set so that the server notices a vanished client
    (and releases its run locks) within about two minutes."""
    try:
        import psycopg  # optional heavy dependency (extra postgres): loaded only for a PostgreSQL store
    except ImportError:
        raise StoreError(f"run store {url}: a PostgreSQL run store needs the optional extra: "
                         "pip install 'goldeval[postgres]'.") from None
    kwargs: dict[str, Any] = {"autocommit": True, "connect_timeout": max(1, int(timeout)), "application_name": "goldeval"}
    if password is not None:
        kwargs["password"] = password
    try:
        conn = psycopg.connect(url, **kwargs)
    except psycopg.Error as exc:
        raise StoreError(
            f"run store {url}: cannot connect ({_scrub(exc, password)}). Check the host, port, database and user, and "
            "the password (PGPASSWORD or ~/.pgpass; one written in the URL is used but never shown)."
        ) from None
    try:
        # the session's own setting (any role may set it): 60 s idle, then 6 probes 10 s apart
        conn.execute("SET tcp_keepalives_idle = 60; SET tcp_keepalives_interval = 10; SET tcp_keepalives_count = 6")
    except psycopg.Error:
        pass  # a Unix-socket connection has no TCP keepalives; its end is noticed at once anyway
    return conn


def _scrub(exc: BaseException, password: str | None) -> str:
    """The first line of a driver error, without the password (libpq may echo a connection string)."""
    text = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
    return text.replace(password, "***") if password else text


def migrate_postgres(conn: Any, *, upto: int | None = None) -> list[str]:
    """Apply the PostgreSQL migrations not yet recorded in ``_migrations``, each in its own transaction, under an
    advisory lock (several processes opening a new database at once apply each migration once).

    Args:
        conn: A psycopg connection in autocommit mode.
        upto: Apply only the first *upto* migrations (the tests build the previous schema so).

    Returns:
        The names applied by this call (empty when the database was up to date: then only ``_migrations`` is read).

    Raises:
        StoreError: the database records a migration this goldeval does not know, or a migration failed (the
            database is left at the schema before it).
    """
    import psycopg  # optional heavy dependency (extra postgres): loaded only for a PostgreSQL store

    names = [m.__name__ for m in MIGRATIONS][:upto]
    done = _applied(conn)
    unknown = [n for n in done if n not in POSTGRES_MIGRATIONS]
    if unknown:
        raise StoreError(
            f"run store: the database has migrations this goldeval does not know ({', '.join(unknown)}); it was "
            "written by a newer goldeval. Upgrade goldeval, or pass --store with another database."
        )
    if all(n in done for n in names):
        return []
    applied: list[str] = []
    for name in names:
        try:
            with conn.transaction():
                conn.execute("SELECT pg_advisory_xact_lock(%s, 0)", (LOCK_NAMESPACE,))
                conn.execute("CREATE TABLE IF NOT EXISTS _migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)")
                if conn.execute("SELECT 1 FROM _migrations WHERE name = %s", (name,)).fetchone():
                    continue  # applied before, or by another process while this one waited for the lock
                for statement in POSTGRES_MIGRATIONS[name]:
                    conn.execute(statement)
                conn.execute("INSERT INTO _migrations (name, applied_at) VALUES (%s, %s)", (name, now_iso()[:19] + "+00:00"))
        except psycopg.Error as exc:
            raise StoreError(f"run store: migration {name} failed ({_scrub(exc, None)}); the database is unchanged by "
                             "it. The role needs the right to create tables in the database's schema.") from exc
        applied.append(name)
    return applied


def _applied(conn: Any) -> list[str]:
    """Names recorded in ``_migrations`` (empty when the table does not exist yet)."""
    if conn.execute("SELECT to_regclass('_migrations')").fetchone()[0] is None:
        return []
    return [r[0] for r in conn.execute("SELECT name FROM _migrations")]


class PostgresRunStore(RunStore):
    """A run store on a PostgreSQL server (see the module's notes); made by ``goldeval.runs.backends.open_store("postgresql://…")``.

    Args:
        path: ``postgresql://user[:password]@host[:port]/dbname[?param=value…]`` (libpq's URI). Default:
            ``$GOLDEVAL_STORE``.
        readonly: Do not apply migrations (what :meth:`open_existing` starts with).
        timeout: Seconds to wait for the connection.

    Attributes:
        path: The URL without its password (what messages and results files show).
        location: The URL as given (with its password): what the writer process connects with. Never shown.

    Raises:
        InputError: the URL cannot be read (the message never holds the password).
        StoreError: the server cannot be reached or refuses the login, the database holds another program's
            ``runs`` table, or a migration fails.
    """

    newest = "created_at DESC, id DESC"

    def __init__(
        self, path: str | os.PathLike[str] | None = None, *, readonly: bool = False, timeout: float = 30.0,
        _migrate_upto: int | None = None,
    ) -> None:
        import psycopg  # optional heavy dependency (extra postgres): loaded only for a PostgreSQL store

        given = str(default_store() if path is None else path)
        target = parse_url(given, option="--store")
        self.path = target.url
        self.location = given
        self.readonly = readonly
        self.db_errors = (psycopg.Error,)
        self._password = target.password
        self.db = PgConnection(_connect(target.url, target.password, timeout))
        self.migrations_applied: list[str] = []
        if readonly:
            return
        try:
            self._refuse_foreign()
            self.migrations_applied = migrate_postgres(self.db.conn, upto=_migrate_upto)
        except BaseException:
            self.db.close()
            raise

    def __repr__(self) -> str:
        return f"PostgresRunStore({self.path!r})"

    @classmethod
    def open_existing(cls, path: str | os.PathLike[str] | None = None) -> PostgresRunStore:
        """Open a PostgreSQL store that must already hold goldeval's tables (for the commands that read runs).

        A role that may only read (``default_transaction_read_only``) reads a store whose schema is current.

        Raises:
            NoStoreError: the database holds no goldeval tables (no run was recorded there): exit 2.
            StoreError: it cannot be reached or read, or its schema is older and the role may not upgrade it.
        """
        store = cls(path, readonly=True)
        try:
            done = _applied(store.db.conn)
            if not done:
                raise NoStoreError(
                    f"run store {store.path}: the database holds no goldeval run store (no _migrations table), so no "
                    "run was recorded there. Pass --store with the URL the scoring commands recorded into, or score "
                    "something first."
                )
            if any(m.__name__ not in done for m in MIGRATIONS):
                store.migrations_applied = migrate_postgres(store.db.conn)
            store.readonly = False
        except BaseException:
            store.close()
            raise
        return store

    def _refuse_foreign(self) -> None:
        """Refuse a database whose schema holds a table goldeval would create (``runs``…) but no ``_migrations``:
        another program's tables, which goldeval must not write into."""
        if _applied(self.db.conn):
            return
        found = [t for t in _OWN_TABLES if self.db.execute("SELECT to_regclass(?)", (t,)).fetchone()[0] is not None]
        if found:
            # Another goldeval may be creating its store right now: its migration's transaction (under the advisory
            # lock) makes _migrations and the tables, so between the two lookups above the tables can appear with
            # _migrations still unseen. Look again once that lock is free: a store being made then has _migrations.
            with self.db.conn.transaction():
                self.db.conn.execute("SELECT pg_advisory_xact_lock(%s, 0)", (LOCK_NAMESPACE,))
                made = bool(_applied(self.db.conn))
            if made:
                return
            raise StoreError(
                f"run store {self.path}: the database already has table(s) {', '.join(found)} of another program (no "
                "goldeval _migrations table). goldeval does not write into them: pass --store with another database, "
                "or a schema of its own (postgresql://…/dbname?options=-csearch_path%3Dgoldeval)."
            )

    def _explain(self, exc: BaseException, doing: str) -> str:
        return (f"run store {self.path}: {doing} ({_scrub(exc, self._password)}). Check that the server is reachable "
                "and that the role may read and write goldeval's tables, then retry.")

    # -- who is scoring a run: the run's advisory lock ------------------------------------------------------
    def _lock_holders(self, run_id: str) -> list[int]:
        """Backend pids of the sessions holding *run_id*'s advisory lock (in this database)."""
        rows = self.db.execute(
            "SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted AND objsubid = 2 "
            "AND database = (SELECT oid FROM pg_database WHERE datname = current_database()) "
            "AND classid::bigint = ? AND objid::bigint = ?",
            (LOCK_NAMESPACE, run_lock_key(run_id)),
        ).fetchall()
        return [r[0] for r in rows]

    def _owner_gone(self, run: Mapping[str, Any]) -> bool:
        return not self._lock_holders(run["id"])

    def _owned_elsewhere(self, run: Mapping[str, Any]) -> bool:
        me = self.db.conn.info.backend_pid
        return any(pid != me for pid in self._lock_holders(run["id"]))

    def _try_lock(self, run_id: str) -> bool:
        return bool(self.db.execute("SELECT pg_try_advisory_lock(?, ?)", (LOCK_NAMESPACE, run_lock_key(run_id))).fetchone()[0])

    def _unlock(self, run_id: str) -> None:
        self.db.execute("SELECT pg_advisory_unlock(?, ?)", (LOCK_NAMESPACE, run_lock_key(run_id)))

    def create_run(self, meta: RunMeta) -> str:
        """Insert a new run (see :meth:`RunStore.create_run`) and hold its lock while this store is open."""
        run_id = super().create_run(meta)
        try:
            self._try_lock(run_id)  # a new id: nobody else holds it
        except self.db_errors as exc:
            raise StoreError(self._explain(exc, f"locking run {run_id} failed")) from exc
        return run_id

    def claim(self, run_id: str) -> str | None:
        """Take *run_id* for this process (see :meth:`RunStore.claim`): its advisory lock first (on any machine,
        only one session holds it), then the status update. ``"running"`` when another session holds the lock."""
        try:
            locked = self._try_lock(run_id)
            if not locked:
                row = self.db.execute("SELECT status FROM runs WHERE id = ?", (run_id,)).fetchone()
                return "finished" if row is None or row[0] == "finished" else "running"
        except self.db_errors as exc:
            raise StoreError(self._explain(exc, f"claiming run {run_id} failed")) from exc
        why = super().claim(run_id)
        if why is not None:
            self._unlock(run_id)
        return why

    # -- cases ------------------------------------------------------------------------------------------------
    def _upsert_cases(self, run_id: str, n: int, rows: Iterable[tuple[Any, ...]]) -> None:
        # As in SQLite: the last row of a case id wins, at the seq of its first (a case recorded again keeps its
        # place; a row already stored keeps its seq, see _upsert_sql). PostgreSQL refuses one statement that updates
        # a row twice, so the rows are made distinct first. A NUL character, which a PostgreSQL text cannot hold, is
        # shown as U+FFFD in the reason and raw columns (the record in ``data`` is JSON, where it is escaped, and
        # intact).
        latest: dict[Any, tuple[Any, ...]] = {}
        for row in rows:
            first = latest.get(row[1])
            latest[row[1]] = row if first is None else (*row[:2], first[2], *row[3:])
        clean = [_without_nul(row) for row in latest.values()]
        for row in clean:
            if "\x00" in row[1]:
                raise StoreError(_unkeepable_id(self.path, run_id, n, row[1], "holds a NUL character (\\u0000), which a "
                                                "PostgreSQL text cannot hold"))
        try:
            with self.db.conn.transaction():
                for start in range(0, len(clean), _ROWS_PER_INSERT):
                    part = clean[start:start + _ROWS_PER_INSERT]
                    self.db.conn.execute(_upsert_sql(len(part)), list(chain.from_iterable(part)))
        except self.db_errors as exc:
            if getattr(exc, "sqlstate", None) == "54000":  # program_limit_exceeded: an index row too large
                longest = max((row[1] for row in clean), key=lambda cid: len(cid.encode("utf-8", "surrogatepass")))
                raise StoreError(_unkeepable_id(
                    self.path, run_id, n, longest, f"is {len(longest.encode('utf-8', 'surrogatepass')):,} bytes long, more "
                    f"than the server's index of case ids takes ({_scrub(exc, self._password)})")) from exc
            raise StoreError(self._explain(exc, f"writing {n} case rows of run {run_id} failed")) from exc

    def write_case_block(self, run_id: str, seq0: int, n: int, records: bytes, ids: bytes, *, compressed: bool = False) -> None:
        """A server store keeps every case a row of ``cases`` (the table a team's other readers of the database
        query): the block's records are written as the rows :meth:`RunStore.write_case_block` stands them for.

        Raises:
            StoreError: the records are not *n* lines, or the write failed (nothing of the block is stored).
        """
        if compressed:
            records = zstandard.ZstdDecompressor().decompress(records)
        lines = records.decode().split("\n")
        if len(lines) != n:
            raise StoreError(f"run store: a block of {n} cases of run {run_id} came with {len(lines)} records; nothing "
                             "of it was stored.")
        keys = []
        for line in lines:
            case = orjson.loads(line)
            keys.append((case["id"], *case_columns(case)))
        self.write_case_columns(run_id, (seq0, keys, lines))

    def write_coded_block(self, run_id: str, seq0: int, n: int, data: bytes, ids: bytes, fmt: int = FORMAT_CODED) -> None:
        """A server store keeps every case a row of ``cases``: the coded block's cases are written as the rows
        :meth:`RunStore.write_coded_block` stands them for (:func:`goldeval.runs.blocks.block_rows`).

        Raises:
            StoreError: the block is not *n* cases (nothing of it is stored), or the write failed.
        """
        if fmt not in (FORMAT_CODED, FORMAT_CODED_STATUS_FIRST):
            raise StoreError(f"run store: a coded block has format 2 or 3, not {fmt!r}.")
        rows = list(block_rows([(seq0, n, data, ids, fmt)], None))
        self.write_case_columns(run_id, (seq0, [(r[0], *r[2:7]) for r in rows], [r[7] for r in rows]))

    def _has_blocks(self) -> bool:
        return True  # a server store is read only at the current schema (see open_existing), which has case_blocks

    def _blocks_have_format(self) -> bool:
        return True  # (the same: m007 is applied)

    def _scored_ids_json(self, run_id: str) -> bytes:
        return orjson.dumps([row[0] for row in self._case_rows(run_id, status="scored")])


def _unkeepable_id(store: str, run_id: str, n: int, case_id: str, why: str) -> str:
    """The message of a case id a PostgreSQL store cannot keep (a SQLite store keeps any id): which id, why, and
    what to do instead; nothing of the *n* case rows being written was stored."""
    shown = repr(case_id if len(case_id) <= 60 else case_id[:60] + "…")
    return (f"run store {store}: run {run_id}: the case id {shown} {why}; none of the {n} case rows being written "
            "was stored. A SQLite run store keeps any id: record this input there (--store runs.db), or change the "
            "case's id in the input.")


def _without_nul(row: tuple[Any, ...]) -> tuple[Any, ...]:
    reason, raw = row[6], row[7]
    if (reason is None or "\x00" not in reason) and (raw is None or "\x00" not in raw):
        return row
    return (*row[:6], None if reason is None else reason.replace("\x00", "\ufffd"),
            None if raw is None else raw.replace("\x00", "\ufffd"), row[8])
