"""The run store: every goldeval run, its pinned versions and its per-case results, in one SQLite file.

The database is opened in WAL mode (readers — ``goldeval runs list`` while a run is scoring — never block the
writer) with ``synchronous=NORMAL``: a committed transaction survives a killed process; only an OS crash or a
power cut can lose the last commits. Per-case rows are keyed by ``(run_id, case_id)``, so a case recorded twice
(a resumed run redoing its last, uncommitted batch) replaces its row and is never duplicated. Cases recorded in bulk
(``goldeval labels``, ``goldeval score``'s folded chunks: :meth:`RunStore.write_case_block`,
:meth:`RunStore.write_coded_block`) are kept as zstd blocks of many cases a row (``case_blocks``, formats in
:mod:`goldeval.runs.blocks`: ~1.7 bytes a label case in a coded block instead of ~166 in a row) and read back as
the rows they stand for.

A ``postgresql://`` URL opens the same store on a PostgreSQL server instead (:mod:`goldeval.runs.pgstore`).

Default location: ``goldeval.paths.default_store()`` (``$GOLDEVAL_STORE``, else ``$GOLDEVAL_HOME/goldeval.db`` or
``./.goldeval/goldeval.db``); the CLI's ``--store PATH`` moves it.

Source: ``DESIGN.md`` "Runs, versions, comparisons"; issue #5.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import heapq
import inspect
import os
import re
import secrets
import socket
import sqlite3
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from itertools import chain, count, repeat
from operator import itemgetter
from pathlib import Path
from typing import Any, cast
from urllib.parse import quote

import orjson
import zstandard

from goldeval.errors import InputError, StoreError, shorten
from goldeval.paths import default_store
from goldeval.runs.blocks import (
    FORMAT_CODED,
    FORMAT_CODED_STATUS_FIRST,
    FORMAT_JSON_LINES,
    block_records,
    block_rows,
    compress_block,
)
from goldeval.runs.columns import case_columns
from goldeval.runs.location import check_store_target, store_label, store_scheme
from goldeval.runs.migrations import MIGRATIONS, migrate

__all__ = ["RunStore", "RunMeta", "now_iso", "headline", "gates_passed", "case_columns", "check_tag_name", "HEADLINE_METRICS",
           "MAX_TAG_LENGTH", "NoStoreError", "RUN_ID", "compress_block"]

#: Aggregate keys tried, in order, for the headline metric shown by ``runs list`` (a results dict may name its
#: own with ``aggregate["headline"]``).
HEADLINE_METRICS: tuple[str, ...] = (
    "whole_note_f1_mean",
    "section_f1_mean",
    "pass_rate",
    "macro_f1",
    "f1",
    "recall",
    "precision",
)


#: Every run id :meth:`RunStore.create_run` makes: ``YYYYmmdd-HHMMSS-xxxxxx`` (UTC, six hex digits). A run copied in
#: from elsewhere (a bundle) must have one: any other text could be ``latest`` or a tag's name, which an exact id
#: would then hide (:meth:`RunStore.resolve` tries ids first).
RUN_ID = re.compile(r"[0-9]{8}-[0-9]{6}-[0-9a-f]{6}")


def now_iso() -> str:
    """The current UTC time as ISO 8601 with microseconds (``2026-11-29T14:07:19.123456+00:00``)."""
    return datetime.now(UTC).isoformat()


def _dumps(obj: Any) -> str:
    return orjson.dumps(obj, option=orjson.OPT_SERIALIZE_NUMPY | orjson.OPT_NON_STR_KEYS).decode()


def _loads(text: str | bytes | None) -> Any:
    return None if text is None else orjson.loads(text)


def headline(results: Mapping[str, Any]) -> tuple[str | None, float | None]:
    """``(name, value)`` of a results dict's headline metric (see ``HEADLINE_METRICS``), or ``(None, None)``.

    A metric listed in ``aggregate["undefined"]`` has no value to show: ``(name, None)`` (``runs list`` shows it as
    undefined rather than its 0.0 seed)."""
    agg = results.get("aggregate") or {}
    if not isinstance(agg, Mapping):
        return None, None
    given_undefined = agg.get("undefined")
    undefined = given_undefined if isinstance(given_undefined, Mapping) else {}
    names = [agg["headline"]] if isinstance(agg.get("headline"), str) else []
    for name in [*names, *HEADLINE_METRICS]:
        if name in undefined and name in agg:
            return name, None
        value = agg.get(name)
        if isinstance(value, Mapping):  # e.g. {"rate": ..., ...}
            value = value.get("rate", value.get("value"))
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return name, float(value)
    return None, None


def gates_passed(results: Mapping[str, Any]) -> bool | None:
    """Whether every gate passed, read from ``results["gates"]``; ``None`` when the run was not gated.

    Accepted shapes: a bool; a dict with ``passed`` (or ``pass``/``ok``); a list of such dicts (all must pass);
    a dict of gate name → such dict.
    """
    gates = results.get("gates")
    if gates is None:
        return None
    if isinstance(gates, bool):
        return gates

    def one(g: Any) -> bool | None:
        if isinstance(g, bool):
            return g
        if isinstance(g, Mapping):
            for k in ("passed", "pass", "ok", "all_passed"):
                if isinstance(g.get(k), bool):
                    return g[k]
        return None

    if isinstance(gates, Mapping):
        top = one(gates)
        if top is not None:
            return top
        for k in ("gates", "results"):
            if isinstance(gates.get(k), list):
                gates = gates[k]
                break
        else:
            values = [one(g) for g in gates.values()]
            values = [v for v in values if v is not None]
            return all(values) if values else None
    if isinstance(gates, list):
        values = [one(g) for g in gates]
        values = [v for v in values if v is not None]
        return all(values) if values else None
    return None


@dataclass(slots=True)
class RunMeta:
    """What identifies a run and pins its versions (everything ``runs show`` prints above the summary).

    Attributes:
        run_key: sha256 over the inputs' bytes, the resolved configuration, the scorer and its version, the arm;
            two invocations with the same key are the same run (an unfinished one is resumed).
        scorer_name, scorer_version: e.g. ``"freetext"``, ``"1"``.
        dataset_hash: sha256 over the input files' hashes (cases and predictions).
        inputs: role → ``{"path", "sha256"}`` for each input file.
        config: the resolved configuration (JSON-ready).
        arm: the arm name (``--arm``), or ``None``.
        tokenizer, judge_version, rubric_hash, dod_hash: ``None`` when the scorer has none.
        goldeval_version: the package version that produced the run.
    """

    run_key: str
    scorer_name: str
    scorer_version: str
    dataset_hash: str
    inputs: dict[str, Any] = field(default_factory=dict)
    config: dict[str, Any] = field(default_factory=dict)
    arm: str | None = None
    tokenizer: str | None = None
    judge_version: str | None = None
    rubric_hash: str | None = None
    dod_hash: str | None = None
    goldeval_version: str = ""


_RUN_COLUMNS = (
    "id, run_key, arm, created_at, updated_at, finished_at, status, goldeval_version, scorer_name, scorer_version, "
    "tokenizer, judge_version, rubric_hash, dod_hash, dataset_hash, inputs, config, pid, host, n, n_scored, "
    "n_failed, headline_name, headline_value, gates_passed"
)


def _reading(method: Callable[..., Any]) -> Callable[..., Any]:
    """Turn a SQLite error raised while reading the store (a damaged page, a lock held too long) into a StoreError
    that says what happened to which file (it surfaced as "internal error: DatabaseError ... please report it")."""

    if inspect.isgeneratorfunction(method):
        @functools.wraps(method)
        def gen(self: RunStore, *args: Any, **kwargs: Any) -> Any:
            try:
                yield from method(self, *args, **kwargs)
            except self.db_errors as exc:
                raise StoreError(self._explain(exc, "reading it failed")) from exc
        return gen

    @functools.wraps(method)
    def wrapper(self: RunStore, *args: Any, **kwargs: Any) -> Any:
        try:
            return method(self, *args, **kwargs)
        except self.db_errors as exc:
            raise StoreError(self._explain(exc, "reading it failed")) from exc
    return wrapper


class RunStore:
    """An open run store: one SQLite connection (not shared between threads). The same interface on a PostgreSQL
    server is :class:`goldeval.runs.pgstore.PostgresRunStore`; :func:`goldeval.runs.backends.open_store` opens
    whichever a location names (a file or a ``postgresql://`` URL).

    Args:
        path: The database file; created (with its folder) when missing. Default:
            :func:`goldeval.paths.default_store` (``$GOLDEVAL_STORE``, else ``default_store_path()``).

    Raises:
        StoreError: the file cannot be opened or is not a goldeval database (or not SQLite at all).
        InputError: *path* is a URL (``postgresql://…``: use :func:`goldeval.runs.backends.open_store`; a scheme
            goldeval does not serve, ``mysql://…``, is refused there too): it is not made a folder.

    Use as a context manager, or call :meth:`close`.

    Example:
        >>> import tempfile, os
        >>> with RunStore(os.path.join(tempfile.mkdtemp(), "runs.db")) as st:
        ...     st.list_runs()
        []
    """

    #: The connection: a ``sqlite3.Connection``, or for the PostgreSQL store a ``PgConnection``, which answers the
    #: same ``execute`` / ``in_transaction`` / ``close`` the methods here use.
    db: Any
    #: The driver's errors that mean "the store failed" (turned into :class:`StoreError` with :meth:`_explain`).
    db_errors: tuple[type[BaseException], ...] = (sqlite3.Error,)
    #: ORDER BY that lists runs newest first (the insertion order breaks a tie on the timestamp).
    newest = "created_at DESC, rowid DESC"

    def __init__(
        self, path: str | os.PathLike[str] | None = None, *, readonly: bool = False, timeout: float = 30.0,
        _migrate_upto: int | None = None,
    ) -> None:
        target = default_store() if path is None else path
        if isinstance(target, str) and store_scheme(target) is not None:
            check_store_target(target)  # refuses a scheme goldeval does not serve
            raise InputError(f"RunStore opens a SQLite file; {store_label(target)} is a server store: open it with "
                             "goldeval.runs.backends.open_store(), which picks the backend by the location")
        self.path: Any = Path(target)
        #: What another process passes to ``RunStore()`` to open this same store (the writer process).
        self.location = str(self.path)
        self.readonly = readonly
        _refuse_non_sqlite(self.path)
        if readonly:
            self.db = _open_readonly(self.path, timeout)
            self.migrations_applied: list[str] = []
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            reason = unwritable_reason(self.path) or f"its folder cannot be created ({exc.strerror})"
            raise StoreError(_cannot_record(self.path, reason)) from None
        try:
            self.db = sqlite3.connect(self.path, timeout=timeout, isolation_level=None, check_same_thread=False)
            # before any PRAGMA: journal_mode=WAL rewrites the file's header, and another program's database is left
            # exactly as it was
            _refuse_foreign(self.db, self.path)
            # A new store gets 16 KiB pages (a no-op on an existing one: its page size is fixed). Case rows of a few
            # hundred bytes, keyed by text: measured 10-15 % less CPU per 100k inserted than the 4 KiB default.
            self.db.execute("PRAGMA page_size=16384")
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute("PRAGMA synchronous=NORMAL")
            self.db.execute("PRAGMA foreign_keys=ON")
        except sqlite3.DatabaseError as exc:
            why = unwritable_reason(self.path)
            if why is not None:  # "unable to open database file" / "readonly database" on a read-only mount or folder
                raise StoreError(_cannot_record(self.path, why)) from None
            raise StoreError(_explain(self.path, exc, "cannot open it")) from None
        self.migrations_applied = migrate(self.db, upto=_migrate_upto)

    @classmethod
    def open_existing(cls, path: str | os.PathLike[str] | None = None) -> RunStore:
        """Open a store that must already exist (for commands that only read runs: nothing is created).

        A store this process may not write (a read-only file or folder: an archive, another user's store) is
        opened read-only, so that it can still be listed, shown, exported and compared; an older schema is then
        read as it is when it holds every table the readers need, and refused otherwise.

        Raises:
            NoStoreError: there is no database at *path* (an InputError, exit 2: the message says where goldeval
                looked and how to point it elsewhere).
            StoreError: it cannot be read.
        """
        target = default_store() if path is None else path
        if isinstance(target, str) and store_scheme(target) is not None:
            check_store_target(target)
            raise InputError(f"RunStore opens a SQLite file; {store_label(target)} is a server store: open it with "
                             "goldeval.runs.backends.open_existing_store()")
        p = Path(target)
        if not p.is_file():
            raise NoStoreError(
                f"run store {p}: no such file, so no run was recorded there. Pass --store with the database the "
                "scoring commands wrote (or set GOLDEVAL_HOME), or score something first."
            )
        if not os.access(p, os.W_OK) or not os.access(p.parent, os.W_OK):
            return cls(p, readonly=True)
        try:
            return cls(p)
        except StoreError as exc:
            if "read-only" not in str(exc) and "readonly" not in str(exc):
                raise
            return cls(p, readonly=True)

    # -- lifecycle -------------------------------------------------------------------------------------------
    def close(self) -> None:
        """Close the connection (pending transactions are not committed here; the Recorder commits)."""
        self.db.close()

    def __enter__(self) -> RunStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextlib.contextmanager
    def _transaction(self, failed: str) -> Iterator[None]:
        """One write transaction: ``BEGIN IMMEDIATE``, the block, ``COMMIT``; rolled back on any exception, Ctrl-C
        included, so that the next write finds no transaction open (a KeyboardInterrupt between ``BEGIN`` and
        ``COMMIT`` used to leave it open, and marking the run interrupted then failed with "cannot start a transaction
        within a transaction": exit 3 where Ctrl-C promises 130). A SQLite error is raised as a :class:`StoreError`
        saying *failed* (e.g. ``"write failed"``) of which store; any other exception as it is. A ``ROLLBACK`` that
        fails too (the connection is gone: a PostgreSQL server that went away) does not replace that exception: the
        driver's own error reached the caller as an internal error (exit 3, "please report it"), and a Ctrl-C was lost.

        Example:
            >>> with store._transaction(f"delete of {run_id} failed"):  # doctest: +SKIP
            ...     store.db.execute("DELETE FROM runs WHERE id = ?", (run_id,))
        """
        try:
            self.db.execute("BEGIN IMMEDIATE")
            yield
            self.db.execute("COMMIT")
        except BaseException as exc:
            try:
                if self.db.in_transaction:
                    self.db.execute("ROLLBACK")
            except self.db_errors:  # (nothing was committed; the exception below says what failed first)
                pass
            if isinstance(exc, self.db_errors):
                raise StoreError(self._explain(exc, failed)) from exc
            raise

    def _tx(self, sql: str, params: Iterable[Any] = ()) -> None:
        with self._transaction("write failed"):
            self.db.execute(sql, tuple(params))

    # -- runs ------------------------------------------------------------------------------------------------
    def create_run(self, meta: RunMeta) -> str:
        """Insert a new run with status ``running``; returns its id (``YYYYmmdd-HHMMSS-xxxxxx``, UTC)."""
        stamp = now_iso()
        run_id = datetime.now(UTC).strftime("%Y%m%d-%H%M%S-") + secrets.token_hex(3)
        self._tx(
            "INSERT INTO runs (id, run_key, arm, created_at, updated_at, status, goldeval_version, scorer_name, "
            "scorer_version, tokenizer, judge_version, rubric_hash, dod_hash, dataset_hash, inputs, config, pid, host) "
            "VALUES (?, ?, ?, ?, ?, 'running', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                run_id, meta.run_key, meta.arm, stamp, stamp, meta.goldeval_version, meta.scorer_name,
                meta.scorer_version, meta.tokenizer, meta.judge_version, meta.rubric_hash, meta.dod_hash,
                meta.dataset_hash, _dumps(meta.inputs), _dumps(meta.config), os.getpid(), socket.gethostname(),
            ),
        )
        return run_id

    def _explain(self, exc: BaseException, doing: str) -> str:
        """The store error message for a driver error raised while *doing* something."""
        assert isinstance(exc, sqlite3.Error)
        return _explain(self.path, exc, doing)

    def _owner_gone(self, run: Mapping[str, Any]) -> bool:
        """True when the process that marked *run* ``running`` is known to be gone (it ran on this host and its pid
        is no longer alive): the run is then shown ``interrupted`` and is resumable."""
        return run["host"] == socket.gethostname() and run["pid"] is not None and not _alive(run["pid"])

    def _owned_elsewhere(self, run: Mapping[str, Any]) -> bool:
        """True when another live process on this host is scoring *run* (a SQLite store lives on one machine)."""
        return run["host"] == socket.gethostname() and run["pid"] not in (None, os.getpid()) and _alive(run["pid"])

    def _row_to_run(self, row: tuple[Any, ...]) -> dict[str, Any]:
        names = [c.strip() for c in _RUN_COLUMNS.split(",")]
        run = dict(zip(names, row))
        if run["status"] == "running" and self._owner_gone(run):
            run["status"] = "interrupted"  # its process is gone (killed outright): resumable
        run["inputs"] = _loads(run["inputs"])
        run["config"] = _loads(run["config"])
        run["gates_passed"] = None if run["gates_passed"] is None else bool(run["gates_passed"])
        return run

    @_reading
    def resolve(self, ref: str) -> str:
        """The run id *ref* names: an exact id, a tag (``baseline/main``, see :meth:`tag`), a unique prefix of an id,
        ``latest`` (the newest run) or ``latest~N`` (the N-th run before it: ``goldeval compare latest~1 latest``).

        Raises:
            InputError: no run, or several runs, match *ref*, or *ref* is blank (the message lists up to five of
                them): the argument is wrong, the store is fine (exit 2, not 3).
        """
        if not isinstance(ref, str) or not ref.strip():
            raise InputError(f"run store {self.path}: a run reference must name a run (an id, a tag, a prefix of an id, "
                             f"'latest' or 'latest~N'), got {shorten(ref)}. List the runs with `goldeval runs list`.")
        if ref == "latest" or (ref.startswith("latest~") and ref[7:].isdigit()):
            back = int(ref[7:]) if ref != "latest" else 0
            row = self.db.execute(f"SELECT id FROM runs ORDER BY {self.newest} LIMIT 1 OFFSET ?", (back,)).fetchone()
            if row is None:
                n = self.db.execute("SELECT count(*) FROM runs").fetchone()[0]
                raise InputError(f"run store {self.path}: holds {n} run(s), so {ref!r} names nothing. List them with `goldeval runs list`.")
            return row[0]
        if self.db.execute("SELECT 1 FROM runs WHERE id = ?", (ref,)).fetchone():
            return ref
        tagged = self._tagged(ref)
        if tagged is not None:
            return tagged
        like = ref.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
        rows = [r[0] for r in self.db.execute("SELECT id FROM runs WHERE id LIKE ? ESCAPE '\\' ORDER BY id LIMIT 6", (like,))]
        if len(rows) == 1:
            return rows[0]
        if not rows:
            raise InputError(
                f"run store {self.path}: no run {shorten(ref)}. List the runs with `goldeval runs list`"
                " (and pass the same --store)."
            )
        raise InputError(f"run store {self.path}: {shorten(ref)} names several runs ({', '.join(rows[:5])}…). Give more of the id.")

    @_reading
    def _tagged(self, name: str) -> str | None:
        """The run id tag *name* names, or ``None`` (also for a read-only store made before tags existed)."""
        try:
            row = self.db.execute("SELECT run_id FROM tags WHERE name = ?", (name,)).fetchone()
        except sqlite3.OperationalError as exc:  # a read-only store of the schema before m004: it holds no tag
            if "no such table" not in str(exc):  # (a lock held too long is a failed read, not "no tag")
                raise
            return None
        return None if row is None else row[0]

    # -- whole rows, as stored (run bundles) ------------------------------------------------------------------
    @_reading
    def stored_run(self, ref: str) -> dict[str, Any]:
        """The run *ref* names as its stored row: every column of ``runs``, JSON columns as the stored text (so a
        copy made with :meth:`put_stored_run` is the same row, byte for byte)."""
        run_id = self.resolve(ref)
        cur = self.db.execute("SELECT * FROM runs WHERE id = ?", (run_id,))
        names = [d[0] for d in cur.description]
        return dict(zip(names, cur.fetchone()))

    @_reading
    def stored_cases(self, run_id: str) -> Iterator[tuple[Any, ...]]:
        """The run's case rows as stored, in recording order: ``(case_id, seq, status, verdict, score, reason, raw,
        data)`` (``data``: the record's JSON text)."""
        yield from self._case_rows(run_id)

    @_reading
    def stored_reviews(self, run_id: str) -> list[dict[str, Any]]:
        """The run's review rows as stored (without their local ``id``), oldest first."""
        cols = ("case_id", "judge_verdict", "verdict", "reviewer", "reviewed_at", "note", "imported_at", "settles")
        sql = f"SELECT {', '.join(cols)} FROM reviews WHERE run_id = ? ORDER BY id"
        return [dict(zip(cols, r)) for r in self.db.execute(sql, (run_id,))]

    def put_stored_run(self, row: Mapping[str, Any], cases: Iterable[tuple[Any, ...]], reviews: Iterable[Mapping[str, Any]],
                       *, batch: int = 5000) -> bool:
        """Write a run copied from another store (:meth:`stored_run`, :meth:`stored_cases`, :meth:`stored_reviews`),
        idempotently: the run row is inserted or replaced, each case upserted by ``(run, case id)`` (the cases of a
        run already here that were kept in blocks are replaced by the rows, never doubled), and a review added only
        when the same review (case, reviewer, time, verdict) is not there yet.

        Args:
            row: The run's columns; ``id`` and ``run_key`` are required and the rest default to NULL.
            cases: ``(case_id, seq, status, verdict, score, reason, raw, data)`` rows.
            reviews: Review rows (``case_id``, ``verdict``, ``reviewer``, ``reviewed_at``, …).
            batch: Case rows per transaction.

        Returns:
            True when the run was new to this store.

        Raises:
            InputError: a run with the same id but another ``run_key`` is already here (a different run: nothing is
                written).
        """
        names = [c.strip() for c in _RUN_COLUMNS.split(",")] + ["results"]
        values = [row.get(n) for n in names]
        have = self.db.execute("SELECT run_key FROM runs WHERE id = ?", (row["id"],)).fetchone()
        if have is not None and have[0] != row["run_key"]:
            raise InputError(f"run store {self.path}: run {row['id']} is already here and is another run (its key "
                             f"{str(have[0])[:12]}… differs from {str(row['run_key'])[:12]}…); nothing was imported.")
        placeholders = ", ".join(["?"] * len(names))
        updates = ", ".join(f"{n} = excluded.{n}" for n in names if n != "id")
        self._tx(f"INSERT INTO runs ({', '.join(names)}) VALUES ({placeholders}) ON CONFLICT (id) DO UPDATE SET {updates}",
                 values)
        pending: list[tuple[Any, ...]] = []
        for case in cases:
            pending.append(tuple(case))
            if len(pending) >= batch:
                self.write_cases(row["id"], pending)
                pending = []
        self.write_cases(row["id"], pending)
        if have is not None and self._run_has_blocks(row["id"]):
            # the run was recorded here with cases in blocks, which an upsert of the same ids never replaces: the
            # bundle's rows (every case) now stand for them, so the blocks go (after the rows are in: a failure
            # between the two leaves a run that a second import repairs, never one that lost cases)
            self._tx("DELETE FROM case_blocks WHERE run_id = ?", (row["id"],))
        known = {(r["case_id"], r["reviewer"], r["reviewed_at"], r["verdict"]) for r in self.stored_reviews(row["id"])}
        for r in reviews:
            if (r["case_id"], r["reviewer"], r["reviewed_at"], r["verdict"]) in known:
                continue
            self._tx(
                "INSERT INTO reviews (run_id, case_id, judge_verdict, verdict, reviewer, reviewed_at, note, imported_at, settles) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (row["id"], r["case_id"], r.get("judge_verdict"), r["verdict"], r["reviewer"], r["reviewed_at"], r.get("note"),
                 r.get("imported_at") or now_iso(), int(bool(r.get("settles")))),
            )
        return have is None

    # -- tags ------------------------------------------------------------------------------------------------
    def tag(self, ref: str, name: str, *, move: bool = False) -> dict[str, Any]:
        """Give the run *ref* names the tag *name* (``baseline/main``): from now on *name* names that run wherever a
        run id is accepted (:meth:`resolve`).

        A tag names one run. Setting a tag that already names another run moves it only with ``move=True``: a
        baseline never changes because a command was retyped. Setting it again on the same run changes nothing.

        Args:
            ref: The run (an id, a prefix, a tag, ``latest``).
            name: The tag; see :func:`check_tag_name` for what a tag may be.
            move: Move the tag when it names another run.

        Returns:
            ``{"name", "run_id", "previous"}``: ``previous`` is the run the tag named before (``None`` for a new tag;
            the same run when nothing changed).

        Raises:
            InputError: *name* is not a valid tag, *ref* names no single run, or the tag names another run and
                *move* is false (the message names that run and says to pass ``--move``).

        Example:
            >>> import tempfile, os
            >>> st = RunStore(os.path.join(tempfile.mkdtemp(), "runs.db"))
            >>> run_id = st.create_run(RunMeta(run_key="k", scorer_name="labels", scorer_version="1", dataset_hash="d"))
            >>> st.tag(run_id, "baseline/main")["previous"] is None, st.resolve("baseline/main") == run_id
            (True, True)
            >>> st.close()
        """
        check_tag_name(name)
        run_id = self.resolve(ref)
        with self._transaction(f"tagging run {run_id} failed"):
            row = self.db.execute("SELECT run_id FROM tags WHERE name = ?", (name,)).fetchone()
            previous = None if row is None else row[0]
            if previous is not None and previous != run_id and not move:
                raise InputError(
                    f"runs tag: {name!r} already names run {previous}; a tag moves only when told. Pass --move to make "
                    f"it name {run_id}, or choose another name."
                )
            if previous is None:
                self.db.execute("INSERT INTO tags (name, run_id, tagged_at) VALUES (?, ?, ?)", (name, run_id, now_iso()))
            elif previous != run_id:
                self.db.execute("UPDATE tags SET run_id = ?, tagged_at = ? WHERE name = ?", (run_id, now_iso(), name))
        return {"name": name, "run_id": run_id, "previous": previous}

    def untag(self, name: str) -> str:
        """Remove the tag *name*; returns the run id it named.

        Raises:
            InputError: there is no such tag.
        """
        run_id = self._tagged(name)
        if run_id is None:
            raise InputError(f"runs untag: no tag {shorten(name)} in run store {self.path}. List the tags with "
                             "`goldeval runs tags`.")
        self._tx("DELETE FROM tags WHERE name = ?", (name,))
        return run_id

    @_reading
    def tags(self, ref: str | None = None) -> list[dict[str, Any]]:
        """The tags, by name: ``[{"name", "run_id", "tagged_at"}]``; only the run *ref* names' tags when given."""
        sql, params = "SELECT name, run_id, tagged_at FROM tags", cast(tuple[Any, ...], ())
        if ref is not None:
            sql, params = sql + " WHERE run_id = ?", (self.resolve(ref),)
        try:
            rows = self.db.execute(sql + " ORDER BY name", params).fetchall()
        except sqlite3.OperationalError:  # a read-only store of the schema before m004
            return []
        return [{"name": n, "run_id": r, "tagged_at": t} for n, r, t in rows]

    @_reading
    def get_run(self, ref: str, *, with_results: bool = True, with_cases: bool = True) -> dict[str, Any]:
        """The run *ref* names (see :meth:`resolve`) as a dict of its columns; ``results`` is the stored results
        dict (``None`` until the run finished). With ``with_cases=False`` a ``per_example`` kept in the cases table
        stays its reference (``{"$cases": …}``) instead of every case read back: for readers of the results' other
        keys (a run's inputs), at a 100,000-case run 0.8 s and its records' memory less. Raises InputError when
        *ref* names no single run."""
        run_id = self.resolve(ref)
        row = self.db.execute(f"SELECT {_RUN_COLUMNS} FROM runs WHERE id = ?", (run_id,)).fetchone()
        run = self._row_to_run(row)
        if with_results:
            results = _loads(self.db.execute("SELECT results FROM runs WHERE id = ?", (run_id,)).fetchone()[0])
            cases_ref = results.get("per_example") if isinstance(results, dict) else None
            if with_cases and isinstance(cases_ref, dict) and cases_ref.get("$cases"):
                results["per_example"] = self._per_example_from_cases(run_id, cases_ref)
            run["results"] = results
        run["n_recorded"] = self.db.execute("SELECT count(*) FROM cases WHERE run_id = ?", (run_id,)).fetchone()[0]
        if self._has_blocks():
            run["n_recorded"] += self.db.execute("SELECT CAST(coalesce(sum(n), 0) AS BIGINT) FROM case_blocks WHERE run_id = ?",
                                                 (run_id,)).fetchone()[0]
        return run

    @_reading
    def list_runs(self, *, limit: int | None = None, arm: str | None = None, scorer: str | None = None) -> list[dict[str, Any]]:
        """Runs, newest first, optionally only one arm / one scorer; each with ``n_recorded`` (cases stored)."""
        where, params = [], []
        if arm is not None:
            where.append("arm = ?")
            params.append(arm)
        if scorer is not None:
            where.append("scorer_name = ?")
            params.append(scorer)
        in_blocks = "+ (SELECT CAST(coalesce(sum(n), 0) AS BIGINT) FROM case_blocks b WHERE b.run_id = runs.id)" if self._has_blocks() else ""
        sql = f"SELECT {_RUN_COLUMNS}, (SELECT count(*) FROM cases c WHERE c.run_id = runs.id) {in_blocks} FROM runs"
        if where:
            sql += " WHERE " + " AND ".join(where)
        sql += f" ORDER BY {self.newest}"
        if limit is not None:
            sql += f" LIMIT {int(limit)}"
        out = []
        for row in self.db.execute(sql, params):
            run = self._row_to_run(row[:-1])
            run["n_recorded"] = row[-1]
            out.append(run)
        return out

    @_reading
    def find_unfinished(self, run_key: str) -> dict[str, Any] | None:
        """The newest run with *run_key* that did not finish and whose process is not alive on this host (a run
        still being scored by another process is never resumed under it), or ``None``."""
        rows = self.db.execute(
            f"SELECT {_RUN_COLUMNS} FROM runs WHERE run_key = ? AND status != 'finished' ORDER BY {self.newest}",
            (run_key,),
        ).fetchall()
        for row in rows:
            run = self._row_to_run(row)
            if run["status"] == "running" and self._owned_elsewhere(run):
                continue
            return run
        return None

    def set_identity(self, run_id: str, *, run_key: str, dataset_hash: str, inputs: Mapping[str, Any]) -> None:
        """Set a run's key, dataset hash and input hashes (a run whose inputs were hashed beside the scoring)."""
        self._tx(
            "UPDATE runs SET run_key = ?, dataset_hash = ?, inputs = ? WHERE id = ?",
            (run_key, dataset_hash, _dumps(dict(inputs)), run_id),
        )

    @_reading
    def unfinished_like(self, *, scorer_name: str, scorer_version: str, arm: str | None, config: Mapping[str, Any]) -> list[dict[str, Any]]:
        """Runs that did not finish, of the same scorer, version, arm and configuration: the runs a new invocation
        could resume, whatever its input files (including runs whose key is still ``pending:``)."""
        rows = self.db.execute(
            f"SELECT {_RUN_COLUMNS} FROM runs WHERE status != 'finished' AND scorer_name = ? AND scorer_version = ? "
            f"ORDER BY {self.newest}",
            (scorer_name, str(scorer_version)),
        ).fetchall()
        out = []
        for row in rows:
            run = self._row_to_run(row)
            if run["arm"] == arm and run["config"] == dict(config):
                out.append(run)
        return out

    def claim(self, run_id: str) -> str | None:
        """Mark *run_id* as ``running`` in this process (on resume), atomically: the check and the update are one
        write transaction, so two processes started together can never both resume the same run.

        Returns:
            ``None`` when this process now owns the run; else why it could not be claimed: ``"finished"``, or
            ``"running"`` (another live process on this host is scoring it).
        """
        me, host = os.getpid(), socket.gethostname()
        with self._transaction(f"claiming run {run_id} failed"):
            row = self.db.execute("SELECT status, pid, host FROM runs WHERE id = ?", (run_id,)).fetchone()
            status, pid, owner = row if row is not None else ("finished", None, None)
            why = None
            if status == "finished":
                why = "finished"
            elif status == "running" and self._owned_elsewhere({"pid": pid, "host": owner, "id": run_id}):
                why = "running"
            if why is None:
                self.db.execute(
                    "UPDATE runs SET status = 'running', pid = ?, host = ?, updated_at = ? WHERE id = ?", (me, host, now_iso(), run_id)
                )
        return why

    def set_status(self, run_id: str, status: str) -> None:
        """Set a run's status: ``running`` | ``interrupted`` | ``failed`` | ``finished``."""
        self._tx("UPDATE runs SET status = ?, updated_at = ? WHERE id = ?", (status, now_iso(), run_id))

    def _per_example_from_cases(self, run_id: str, ref: Mapping[str, Any]) -> list[dict[str, Any]]:
        """Rebuild a results dict's ``per_example`` from the cases table (see :meth:`finish_run`)."""
        return list(self.per_example_records(run_id, ref))

    @_reading
    def per_example_records(self, run_id: str, ref: Mapping[str, Any]) -> Iterator[dict[str, Any]]:
        """The entries of a results dict's ``per_example`` kept in the cases table, one at a time, in recording order.

        Args:
            run_id: The run's id (:meth:`resolve`).
            ref: The ``{"$cases": true, "status", "drop_keys", "keep_keys"?}`` that :meth:`finish_run` stored in
                place of the list (what ``get_run(ref, with_cases=False)["results"]["per_example"]`` holds). With
                ``keep_keys`` an entry is the record's values of those keys, in that order (``None`` for a key it
                lacks: :attr:`goldeval.scoring.protocol.Scorer.per_example_keys`).

        Returns:
            An iterator of per-case records (dicts), decoded as the cursor reaches them: a reader that keeps only
            part of each (a report's summary, charts and sample) holds no more than that, at any number of cases.
            ``list(...)`` of it is the ``per_example`` :meth:`get_run` rebuilds.
        """
        drop = tuple(ref.get("drop_keys") or ())
        keep = ref.get("keep_keys")
        status = ref.get("status", "scored")  # None: every case (a judge's per_example holds the unscored ones too)
        for _, rec in self._case_records(run_id, status=status):
            if keep is not None:
                yield {k: rec.get(k) for k in keep}
                continue
            for k in drop:
                rec.pop(k, None)
            yield rec

    @_reading
    def _cases_hold(self, run_id: str, per_example: list[Any]) -> bool:
        """True when the run's ``scored`` case rows, in recording order, have exactly the ids of *per_example* (so
        :meth:`get_run` rebuilds the same list). A record of another status stored under the id of a scored case
        (e.g. a duplicate-id error whose made-up id ``a#line3`` is also a real id) replaces that case's row: the
        rebuilt list would silently lose it, so such a run keeps its ``per_example`` in the run row."""
        try:
            ids = [entry["id"] for entry in per_example]
            if None in ids:
                return False
            want = orjson.dumps(list(map(str, ids)))
        except (KeyError, TypeError, IndexError, ValueError):  # an entry without an id, not an object, or an id
            return False  # that is not Unicode text (nor a value `in` can compare)
        return self._scored_ids_json(run_id) == want

    def _scored_ids_json(self, run_id: str) -> bytes:
        """The ids of the run's ``scored`` cases, in recording order, as one JSON array in orjson's spelling."""
        scored = "SELECT case_id FROM cases WHERE run_id = ? AND status = 'scored' ORDER BY seq"
        if self._run_has_blocks(run_id):  # merged with the bulk-recorded cases, in orjson's spelling
            return orjson.dumps([row[0] for row in self._case_rows(run_id, status="scored")])
        try:
            # Compared as one JSON array built by SQLite (one row back, not 100k): equal texts are equal lists,
            # whichever encoder wrote them; a text that differs only in escaping keeps per_example in the run row.
            (stored,) = self.db.execute(f"SELECT json_group_array(case_id) FROM ({scored})", (run_id,)).fetchone()
        except sqlite3.OperationalError as exc:
            if "no such function" not in str(exc):
                raise
            # a SQLite built without its JSON functions (optional before 3.38): the ids come back one by one
            return orjson.dumps([cid for (cid,) in self.db.execute(scored, (run_id,))])
        return stored.encode()

    def _cases_match_digest(self, run_id: str, streamed: Mapping[str, Any]) -> bool:
        """True when the run's ``scored`` case ids (every case's, when *streamed* says ``"status": null``), in
        recording order, are *streamed*'s: ``n`` of them, whose JSON array (as orjson writes it) has the sha256
        ``ids_sha256``. Read with a cursor: memory does not grow with the cases."""
        h = hashlib.sha256(b"[")
        n = 0
        status = streamed.get("status", "scored")
        where = "run_id = ?" + ("" if status is None else " AND status = ?")
        params = (run_id,) if status is None else (run_id, status)
        table = ((seq, 1, orjson.dumps(cid)) for cid, seq in
                 self.db.execute(f"SELECT case_id, seq FROM cases WHERE {where} ORDER BY seq", params))
        blocks: Iterable[tuple[int, int, bytes]] = ()
        if status in (None, "scored") and self._run_has_blocks(run_id):  # a block's cases are all scored
            dctx = zstandard.ZstdDecompressor()
            blocks = ((seq0, k, dctx.decompress(bytes(ids))) for seq0, k, ids in self.db.execute(
                "SELECT seq0, n, ids FROM case_blocks WHERE run_id = ? ORDER BY seq0", (run_id,)))
        for _, k, ids in heapq.merge(table, blocks, key=itemgetter(0)):
            h.update((b"," if n else b"") + ids)
            n += k
        h.update(b"]")
        return n == streamed.get("n") and h.hexdigest() == streamed.get("ids_sha256")

    @_reading
    def _streamed_ids_match(self, run_id: str, streamed: Mapping[str, Any], blocks_ids: Mapping[str, Any] | None) -> bool:
        """:meth:`_cases_match_digest`, answered from *blocks_ids* when it covers the cases that check reads (see
        :meth:`finish_run`)."""
        status = streamed.get("status", "scored")
        covers = {"scored": ("all", "scored"), None: ("all",)}.get(status, ())
        if blocks_ids is not None and blocks_ids.get("statuses") in covers:
            return blocks_ids.get("n") == streamed.get("n") and blocks_ids.get("ids_sha256") == streamed.get("ids_sha256")
        return self._cases_match_digest(run_id, streamed)

    def finish_run(self, run_id: str, results: Mapping[str, Any], *, per_example_in_cases: bool = False,
                   blocks_ids: Mapping[str, Any] | None = None) -> None:
        """Store the results dict with the run, its counts, headline and gate outcome; status ``finished``.

        With ``per_example_in_cases`` (the scorer recorded every ``per_example`` entry as a ``scored`` case, in
        order, as the entry plus ``"status"``), the entries are not stored a second time: the stored dict holds
        ``{"$cases": true, ...}`` in their place and :meth:`get_run` rebuilds the list from the cases table. For
        100k free-text rows that keeps ~30 MB of JSON (and two copies of it in memory) out of the run row. The ids
        and order of those cases are checked against ``per_example`` first; when they differ the entries are stored
        in the run row after all (see :meth:`_cases_hold`), so a read never loses one.

        A streamed ``per_example`` (``{"$streamed": true, "n", "ids_sha256"}``: the scorer did not keep the entries)
        is checked against the cases' ids read back (:meth:`_cases_match_digest`), or, with *blocks_ids*
        (:meth:`goldeval.runs.recorder.Recorder.blocks_ids_digest`: the ids of every case the recorder wrote in
        blocks, hashed as it wrote them, on a run that had no case before it), against those: the same check
        without reading, decompressing and hashing the stored ids again. *blocks_ids* stands in for the read only
        where it covers every case the check reads (a check of the ``scored`` cases, or of every case with
        ``"statuses": "all"``); otherwise the cases are read back as without it.
        """
        agg = results.get("aggregate") or {}
        name, value = headline(results)
        passed = gates_passed(results)
        stamp = now_iso()

        def count(key: str) -> int | None:
            v = agg.get(key) if isinstance(agg, Mapping) else None
            return v if isinstance(v, int) and not isinstance(v, bool) else None

        stored: Mapping[str, Any] = results
        per_example = results.get("per_example")
        if per_example_in_cases and isinstance(per_example, list) and self._cases_hold(run_id, per_example):
            stored = {**results, "per_example": {"$cases": True, "status": "scored", "drop_keys": ["status"]}}
        elif isinstance(per_example, Mapping) and per_example.get("$streamed"):
            # The entries were streamed (to --out and to the cases table), not kept: the cases are the only copy.
            drop = per_example.get("drop_keys")
            marker: dict[str, Any] = {"$cases": True, "status": per_example.get("status", "scored"),
                                      "drop_keys": list(["status"] if drop is None else drop)}
            if per_example.get("keep_keys") is not None:
                marker["keep_keys"] = list(per_example["keep_keys"])
            if not (per_example_in_cases and self._streamed_ids_match(run_id, per_example, blocks_ids)):
                marker["note"] = ("the scored cases recorded differ from the run's per_example (ids or order); "
                                  "per_example is rebuilt from the recorded cases")
            stored = {**results, "per_example": marker}
        self._tx(
            "UPDATE runs SET status = 'finished', finished_at = ?, updated_at = ?, results = ?, n = ?, n_scored = ?, "
            "n_failed = ?, headline_name = ?, headline_value = ?, gates_passed = ? WHERE id = ?",
            (
                stamp, stamp, _dumps(stored), count("n"), count("n_scored"), count("n_failed"), name, value,
                None if passed is None else int(passed), run_id,
            ),
        )

    def delete_run(self, ref: str) -> str:
        """Delete a run, its cases, its reviews and its tags; returns the id deleted.

        Raises:
            InputError: *ref* names no single run, or a run still being scored by another process (alive on this
                host, or on another host): deleting it would make that process fail on its next write.
        """
        run = self.get_run(ref, with_results=False)
        run_id = run["id"]
        if run["status"] == "running" and not (run["pid"] == os.getpid() and run["host"] == socket.gethostname()):
            where = f"pid {run['pid']}" + ("" if run["host"] == socket.gethostname() else f" on host {run['host']}")
            raise InputError(
                f"run store {self.path}: run {run_id} is being scored right now ({where}); deleting it would make that "
                "process fail. Stop it first (it is then resumable, or deletable)."
            )
        with self._transaction(f"delete of {run_id} failed"):
            self.db.execute("DELETE FROM reviews WHERE run_id = ?", (run_id,))
            self.db.execute("DELETE FROM tags WHERE run_id = ?", (run_id,))
            self.db.execute("DELETE FROM run_inputs WHERE run_id = ?", (run_id,))
            self.db.execute("DELETE FROM cases WHERE run_id = ?", (run_id,))
            if self._has_blocks():
                self.db.execute("DELETE FROM case_blocks WHERE run_id = ?", (run_id,))
            self.db.execute("DELETE FROM runs WHERE id = ?", (run_id,))
        return run_id

    # -- cases -----------------------------------------------------------------------------------------------
    def write_cases(self, run_id: str, cases: list[tuple[str, int, str, str | None, float | None, str | None, str | None, str]]) -> None:
        """Upsert prepared case rows ``(case_id, seq, status, verdict, score, reason, raw, data_json)`` in one
        transaction (a row already there for the same case id is replaced: never a duplicate)."""
        if cases:
            self._upsert_cases(run_id, len(cases), ((run_id, *c) for c in cases))

    def write_case_columns(self, run_id: str, *batches: tuple[int, list[Any], list[str]]) -> None:
        """Upsert batches of cases in one transaction, as the recorder sends them: each batch is ``(seq of its
        first case, [[case_id, status, verdict, score, reason, raw], …], [data_json, …])`` (consecutive seq; a
        case id already stored is replaced: never a duplicate). The rows are bound straight from the lists."""
        rows = []
        n = 0
        for seq0, keys, records in batches:
            if len(keys) != len(records):
                raise StoreError(f"run store: {len(keys)} case keys but {len(records)} records in one batch of run {run_id}.")
            cid, status, verdict, score, reason, raw = zip(*keys) if keys else ((),) * 6
            rows.append(zip(repeat(run_id), cid, count(seq0), status, verdict, score, reason, raw, records))
            n += len(keys)
        if n:
            self._upsert_cases(run_id, n, chain.from_iterable(rows))

    def _upsert_cases(self, run_id: str, n: int, rows: Iterable[tuple[Any, ...]]) -> None:
        """Upsert ``(run_id, case_id, seq, status, verdict, score, reason, raw, data)`` rows in one transaction,
        ``_ROWS_PER_INSERT`` rows per INSERT statement (rows later in the iterable win over earlier ones with the
        same case id, within a statement too)."""
        flat = list(chain.from_iterable(rows))
        step = _ROWS_PER_INSERT * 9
        with self._transaction(f"writing {n} case rows of run {run_id} failed"):
            for start in range(0, len(flat), step):
                part = flat[start:start + step]
                self.db.execute(_upsert_sql(len(part) // 9), part)

    def write_case_block(self, run_id: str, seq0: int, n: int, records: bytes, ids: bytes, *, compressed: bool = False) -> None:
        """Store *n* ``scored`` cases recorded in bulk, ``seq0`` … ``seq0 + n - 1``, as one compressed block (one row of
        ``case_blocks``, one transaction): every reader of the run's cases (:meth:`stored_cases`, :meth:`iter_cases`,
        :meth:`case_map`, :meth:`get_run`, counts, bundles) reads them back as the ``cases`` rows :meth:`write_cases`
        would have stored for the same records, in ``seq`` order among the run's other cases.

        Args:
            run_id: The run. seq0: The ``seq`` of the first record. n: How many records.
            records: The records' JSON (objects with a string ``"id"`` and ``"status": "scored"``),
                newline-separated, each on one line: exactly the ``data`` each would have in ``cases``. Their
                ``case_id``, ``status``, ``verdict``, ``score``, ``reason`` and ``raw`` are read from them
                (:func:`case_columns`) when read back.
            ids: The records' ids as JSON (orjson's spelling), comma-separated, in the same order.
            compressed: *records* and *ids* are already as the store keeps them (:func:`compress_block`): then
                only read back are the records counted (a block of another count is reported damaged).

        Notes:
            A block is for cases recorded once (a run's first recording of those ids): a block row is never
            replaced by a later record of the same id, as a ``cases`` row is. The caller guarantees it
            (:meth:`goldeval.runs.recorder.Recorder.record_lines`).

        Raises:
            StoreError: the records are not *n* lines, or the write failed (nothing of the block is stored).
        """
        if n <= 0:
            return
        if compressed:
            blob, id_blob = records, ids
        else:
            given = records.count(b"\n") + 1
            if given != n:
                raise StoreError(f"run store: a block of {n} cases of run {run_id} came with {given} records; nothing "
                                 "of it was stored.")
            blob, id_blob = compress_block(records, ids)
        with self._transaction(f"writing a block of {n} cases of run {run_id} failed"):
            self.db.execute("INSERT INTO case_blocks (run_id, seq0, n, ids, data) VALUES (?, ?, ?, ?, ?)",
                            (run_id, seq0, n, id_blob, blob))

    def write_coded_block(self, run_id: str, seq0: int, n: int, data: bytes, ids: bytes, fmt: int = FORMAT_CODED) -> None:
        """Store *n* ``scored`` cases, ``seq0`` … ``seq0 + n - 1``, as one coded block (format 2 or 3, see
        :mod:`goldeval.runs.blocks`), in one transaction; read back as the ``cases`` rows they stand for, as a block of
        :meth:`write_case_block` is.

        Args:
            run_id: The run. seq0: The first case's seq. n: The cases.
            data: One zstd frame of :func:`goldeval.runs.blocks.encode_coded`'s bytes.
            ids: One zstd frame of the cases' ids' JSON, comma-separated (as for :meth:`write_case_block`).
            fmt: :data:`~goldeval.runs.blocks.FORMAT_CODED` (records ``{"id", "status", "line"…``) or
                :data:`~goldeval.runs.blocks.FORMAT_CODED_STATUS_FIRST` (``{"status", "id", "line"…``).

        Notes:
            For cases recorded once, as :meth:`write_case_block`. The block is checked when it is read back (a block
            whose ids, codes or line numbers are not *n* is reported damaged).

        Raises:
            StoreError: the write failed (nothing of the block is stored).
        """
        if fmt not in (FORMAT_CODED, FORMAT_CODED_STATUS_FIRST):
            raise StoreError(f"run store: a coded block has format 2 or 3, not {fmt!r}.")
        if n <= 0:
            return
        with self._transaction(f"writing a block of {n} cases of run {run_id} failed"):
            self.db.execute("INSERT INTO case_blocks (run_id, seq0, n, ids, data, format) VALUES (?, ?, ?, ?, ?, ?)",
                            (run_id, seq0, n, ids, data, fmt))

    def _has_blocks(self) -> bool:
        """Whether the store has the ``case_blocks`` table (a read-only store of an older schema may not)."""
        has = getattr(self, "_blocks_table", None)
        if has is None:
            has = self.db.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'case_blocks'").fetchone() is not None
            self._blocks_table = has
        return has

    def _run_has_blocks(self, run_id: str) -> bool:
        return self._has_blocks() and self.db.execute(
            "SELECT 1 FROM case_blocks WHERE run_id = ? LIMIT 1", (run_id,)).fetchone() is not None

    def _case_rows(self, run_id: str, *, status: str | None = None) -> Iterator[tuple[Any, ...]]:
        """The run's case rows ``(case_id, seq, status, verdict, score, reason, raw, data)`` in ``seq`` order: the
        ``cases`` table's merged with the blocks' (decoded one block at a time); only those of *status* when given."""
        where = "run_id = ?" + ("" if status is None else " AND status = ?")
        table = self.db.execute(f"SELECT case_id, seq, status, verdict, score, reason, raw, data FROM cases WHERE {where} "
                                "ORDER BY seq", (run_id,) if status is None else (run_id, status))
        if not self._run_has_blocks(run_id):
            yield from table
            return
        fmt = "format" if self._blocks_have_format() else str(FORMAT_JSON_LINES)
        blocks = self.db.execute(f"SELECT seq0, n, data, ids, {fmt} FROM case_blocks WHERE run_id = ? ORDER BY seq0", (run_id,))
        yield from heapq.merge(table, block_rows(blocks, status), key=itemgetter(1))

    def _blocks_have_format(self) -> bool:
        """Whether ``case_blocks`` has its ``format`` column (m007; a read-only store of m006 has not: its blocks are
        all format 1)."""
        has = getattr(self, "_format_column", None)
        if has is None:
            has = any(r[1] == "format" for r in self.db.execute("PRAGMA table_info(case_blocks)"))
            self._format_column = has
        return has

    @_reading
    def next_seq(self, run_id: str) -> int:
        """One more than the highest ``seq`` recorded for *run_id* (0 for a run with no case yet)."""
        row = self.db.execute("SELECT max(seq) FROM cases WHERE run_id = ?", (run_id,)).fetchone()
        last = -1 if row[0] is None else row[0]
        if self._has_blocks():
            (end,) = self.db.execute("SELECT max(seq0 + n) FROM case_blocks WHERE run_id = ?", (run_id,)).fetchone()
            if end is not None:
                last = max(last, end - 1)
        return last + 1

    def _case_records(self, run_id: str, *, status: str | None = None) -> Iterator[tuple[str, dict[str, Any]]]:
        """``(case id, record)`` of each of the run's cases in ``seq`` order: :meth:`_case_rows` with each row's
        ``data`` decoded, except that the records of a block of JSON lines are decoded once (reading a block's
        case for its columns already decodes it), not a second time from their text. A store whose ``case_blocks``
        has another layout than the one :func:`block_records` reads is read through :meth:`_case_rows`."""
        loads = orjson.loads
        if not (self._run_has_blocks(run_id) and self._json_line_blocks(run_id)):
            for row in self._case_rows(run_id, status=status):
                yield row[0], loads(row[7])
            return
        where = "run_id = ?" + ("" if status is None else " AND status = ?")
        params = (run_id,) if status is None else (run_id, status)
        blocks = self.db.execute("SELECT seq0, n, data FROM case_blocks WHERE run_id = ? ORDER BY seq0", (run_id,))
        if self.db.execute(f"SELECT 1 FROM cases WHERE {where} LIMIT 1", params).fetchone() is None:
            for cid, _, record in block_records(blocks, status):  # blocks only (a score run): nothing to merge
                yield cid, record
            return
        table = self.db.execute(f"SELECT case_id, seq, data FROM cases WHERE {where} ORDER BY seq", params)
        for row in heapq.merge(table, block_records(blocks, status), key=itemgetter(1)):
            yield row[0], (row[2] if row[2].__class__ is dict else loads(row[2]))

    def _json_line_blocks(self, run_id: str) -> bool:
        """Whether every block of *run_id* holds its records as JSON lines (format 1, the layout
        :func:`block_records` reads): always so in a store of m006 (no ``format`` column), else when the run has no
        block of another format (a labels run's coded blocks, format 2, are read through :meth:`_case_rows`)."""
        if not self._blocks_have_format():
            return True
        other = self.db.execute("SELECT 1 FROM case_blocks WHERE run_id = ? AND format != ? LIMIT 1",
                                (run_id, FORMAT_JSON_LINES)).fetchone()
        return other is None

    @_reading
    def iter_cases(self, run_id: str) -> Iterator[dict[str, Any]]:
        """The per-case records of *run_id* (as recorded), in the order they were recorded."""
        for _, record in self._case_records(run_id):
            yield record

    @_reading
    def case_records(self, run_id: str) -> Iterator[tuple[str, dict[str, Any]]]:
        """``(case id, per-case record)`` of each case of *run_id*, in recording order, decoded one at a time (for
        a reader that keeps only part of each record: :class:`goldeval.runs.compare.CompareCases`)."""
        yield from self._case_records(run_id)

    @_reading
    def cases(self, ref: str) -> list[dict[str, Any]]:
        """All per-case records of the run *ref* names, in recording order."""
        return list(self.iter_cases(self.resolve(ref)))

    @_reading
    def case_map(self, run_id: str) -> dict[str, dict[str, Any]]:
        """case id → per-case record for *run_id*."""
        return dict(self._case_records(run_id))

    # -- kept inputs (the case texts) -------------------------------------------------------------------------
    def keep_input(self, run_id: str, role: str, sha256: str, name: str, parts: Iterable[tuple[int, bytes]]) -> int:
        """Store one input file of *run_id* as the scorer read it, replacing what was kept for *role* before (a
        resumed run finishing again), in one transaction: a failure half-way keeps nothing of it.

        Args:
            run_id: The run. role: The input's role (``predictions``, ``cases``…). sha256: The input's sha256 as
                the run records it (``inputs[role]["sha256"]``). name: The name of the file read (its ending says
                its format).
            parts: ``(uncompressed size, compressed bytes)`` of each part, in order
                (:func:`goldeval.runs.texts.compressed_parts`); an exception raised by it (the file changed while
                it was read) rolls the transaction back and is raised again.

        Returns:
            The compressed bytes stored.

        Raises:
            StoreError: the store refused the write.
        """
        stored = 0
        with self._transaction(f"keeping the {role} input of run {run_id} failed"):
            self.db.execute("DELETE FROM run_inputs WHERE run_id = ? AND role = ?", (run_id, role))
            for i, (size, data) in enumerate(parts):
                self.db.execute("INSERT INTO run_inputs (run_id, role, part, sha256, name, size, data) VALUES (?, ?, ?, ?, ?, ?, ?)",
                                (run_id, role, i, sha256, name, size, data))
                stored += len(data)
        return stored

    @_reading
    def kept_inputs(self, run_id: str) -> dict[str, dict[str, Any]]:
        """role → ``{"sha256", "name", "size", "stored", "parts"}`` of each input file kept with *run_id* (``size``: its
        bytes as read, ``stored``: compressed); empty for a run recorded with ``--no-texts``, before texts were kept,
        or in a read-only store of an older schema."""
        sql = ("SELECT role, MIN(sha256), MIN(name), SUM(size), SUM(LENGTH(data)), COUNT(*) FROM run_inputs WHERE run_id = ? "
               "GROUP BY role ORDER BY role")
        try:
            rows = list(self.db.execute(sql, (run_id,)))
        except sqlite3.OperationalError:  # a read-only store of the schema before m005: nothing kept
            return {}
        return {r[0]: {"sha256": r[1], "name": r[2], "size": int(r[3]), "stored": int(r[4]), "parts": int(r[5])} for r in rows}

    @_reading
    def kept_input_parts(self, run_id: str, role: str) -> Iterator[bytes]:
        """The compressed parts of the *role* input kept with *run_id*, in order (nothing when none was kept)."""
        n = self.db.execute("SELECT COUNT(*) FROM run_inputs WHERE run_id = ? AND role = ?", (run_id, role)).fetchone()[0]
        for part in range(int(n)):  # one part in memory at a time
            row = self.db.execute("SELECT data FROM run_inputs WHERE run_id = ? AND role = ? AND part = ?",
                                  (run_id, role, part)).fetchone()
            if row is None:
                raise StoreError(f"run store {store_label(self.location)}: part {part} of the {role} input of run {run_id} is missing.")
            yield bytes(row[0])

    # -- reviews ---------------------------------------------------------------------------------------------
    def add_review(
        self, run_id: str, case_id: str, *, verdict: str, reviewer: str, reviewed_at: str,
        judge_verdict: str | None = None, note: str | None = None, settles: bool = False,
    ) -> None:
        """Record one human verdict on a case of a run (``settles``: it settles a conflict with earlier reviews,
        as ``review import --on-conflict latest`` records it)."""
        self._tx(
            "INSERT INTO reviews (run_id, case_id, judge_verdict, verdict, reviewer, reviewed_at, note, imported_at, settles) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (run_id, case_id, judge_verdict, verdict, reviewer, reviewed_at, note, now_iso(), int(bool(settles))),
        )

    @_reading
    def reviews(self, ref: str) -> list[dict[str, Any]]:
        """The human reviews recorded for a run, oldest first (``settles`` is true for a review that settled a
        conflict with the earlier ones)."""
        run_id = self.resolve(ref)
        cols = ("case_id", "judge_verdict", "verdict", "reviewer", "reviewed_at", "note", "imported_at", "settles")
        try:
            rows = list(self.db.execute(f"SELECT {', '.join(cols)} FROM reviews WHERE run_id = ? ORDER BY id", (run_id,)))
        except sqlite3.OperationalError:  # a read-only store of the schema before m003: no review settled a conflict
            rows = [(*r, 0) for r in self.db.execute(f"SELECT {', '.join(cols[:-1])} FROM reviews WHERE run_id = ? ORDER BY id", (run_id,))]
        return [{**dict(zip(cols, r)), "settles": bool(r[-1])} for r in rows]


#: Longest tag name accepted.
MAX_TAG_LENGTH = 200


def check_tag_name(name: object) -> None:
    """Refuse a tag name that could not always name the same run.

    A tag is 1 to 200 characters with no whitespace or control character; it may not be ``latest`` or
    ``latest~N`` (those name the newest runs), and may not start with a digit (run ids do: a tag ``2026`` would hide
    the runs whose id starts so). ``baseline/main``, ``release-1.4``, ``v2`` are tags.

    Raises:
        InputError: the name breaks one of these rules (the message says which).

    Example:
        >>> check_tag_name("baseline/main")
        >>> check_tag_name("latest")
        Traceback (most recent call last):
        ...
        goldeval.errors.InputError: runs tag: 'latest' cannot be a tag: it names the newest run. Choose another name (e.g. baseline/main).
    """
    if not isinstance(name, str) or not name:
        raise InputError(f"runs tag: a tag must be a non-empty name (e.g. baseline/main), got {shorten(name)}.")
    if name == "latest" or (name.startswith("latest~") and name[7:].isdigit()):
        raise InputError(f"runs tag: {name!r} cannot be a tag: it names the newest run. Choose another name (e.g. baseline/main).")
    if name[0].isdigit():
        raise InputError(f"runs tag: {shorten(name)} cannot be a tag: it starts with a digit, as run ids do, so it could "
                         f"hide a run's id prefix. Start it with a letter (e.g. v{name}).")
    if len(name) > MAX_TAG_LENGTH or any(c.isspace() or not c.isprintable() for c in name):
        raise InputError(f"runs tag: {shorten(name)} cannot be a tag: a tag is at most {MAX_TAG_LENGTH} printable "
                         "characters without spaces. Choose another name (e.g. baseline/main).")


#: Case rows per INSERT statement: one statement of many rows costs SQLite (and the binding) about 20 % less than
#: as many one-row statements (measured: 100k rows 0.25 s vs 0.32 s CPU). 100 rows × 9 values stays under 999,
#: the most variables a statement could take before SQLite 3.32.
_ROWS_PER_INSERT = 100


@functools.lru_cache(maxsize=8)
def _upsert_sql(n_rows: int) -> str:
    """The upsert of *n_rows* case rows in one statement (a row already stored under the same case id is
    replaced)."""
    return (
        "INSERT INTO cases (run_id, case_id, seq, status, verdict, score, reason, raw, data) VALUES "
        + ", ".join(["(?, ?, ?, ?, ?, ?, ?, ?, ?)"] * n_rows)
        + " ON CONFLICT (run_id, case_id) DO UPDATE SET status = excluded.status, verdict = excluded.verdict, "
        "score = excluded.score, reason = excluded.reason, raw = excluded.raw, data = excluded.data"
    )


def _explain(path: Path, exc: sqlite3.Error, doing: str) -> str:
    """The store error message for a SQLite error: what went wrong with the file, and what to do about it."""
    code = getattr(exc, "sqlite_errorname", "") or ""
    if code.startswith("SQLITE_READONLY") or "readonly" in str(exc):
        why = unwritable_reason(Path(path))
        if why is not None:
            return _cannot_record(Path(path), why, doing=doing)
        return (f"run store {path}: {doing}: the file (or its folder) is read-only ({exc}). Make it writable or pass --store "
                "with a writable path (a scoring command can also run with --no-store, recording nothing).")
    if code.startswith(("SQLITE_BUSY", "SQLITE_LOCKED")) or "locked" in str(exc):
        return (f"run store {path}: {doing}: the database is locked by another process ({exc}). Retry when it has "
                "finished, or pass --store with another path.")
    if code.startswith(("SQLITE_NOTADB", "SQLITE_CORRUPT")) or "not a database" in str(exc) or "malformed" in str(exc):
        return (f"run store {path}: {doing}: not a SQLite database, or a damaged one ({exc}). Pass --store with "
                f"another path; move the file away if it is not a goldeval database, or salvage a damaged one with "
                f"`sqlite3 {path} .recover`.")
    return f"run store {path}: {doing} ({exc}). Check the path and the disk, then retry."


class NotAStoreError(StoreError, InputError):
    """``--store`` names a file that is no goldeval run store (not SQLite at all, or another program's database): a
    usage error (exit 2), and a :class:`~goldeval.errors.StoreError` for code that catches store problems. A
    goldeval store that is damaged stays a plain StoreError (exit 3)."""


#: The first 16 bytes of every SQLite 3 database file (https://www.sqlite.org/fileformat.html §1.3.1).
SQLITE_HEADER = b"SQLite format 3\x00"


def _refuse_non_sqlite(path: Path) -> None:
    """Refuse a non-empty regular file that does not begin with the SQLite header: it is no store (a JSONL file, a
    TOML file passed to --store by mistake), never a damaged one."""
    try:
        if not path.is_file() or path.stat().st_size == 0:
            return
        with open(path, "rb") as fh:
            head = fh.read(len(SQLITE_HEADER))
    except OSError:
        return  # SQLite says why
    if head != SQLITE_HEADER:
        raise NotAStoreError(
            f"run store {path}: not a SQLite database (it begins {head!r}), so it is no goldeval run store. --store "
            "names the database goldeval records runs in (default .goldeval/goldeval.db, or $GOLDEVAL_HOME): pass "
            "another path, or move the file away if it should be one.")


class NoStoreError(StoreError, InputError):
    """There is no run store at the path a reading command was given (or the default one): the user's missing
    file, so an :class:`~goldeval.errors.InputError` (exit 2), and a :class:`~goldeval.errors.StoreError` for code
    that catches store problems."""


def unwritable_reason(path: Path) -> str | None:
    """Why the database file *path* (existing or to be created, with any missing folders) cannot be written, or
    ``None`` when nothing visible prevents it.

    Checked on the file when it exists, else on its nearest existing folder: a read-only file system
    (``statvfs`` ``ST_RDONLY``: a read-only mount, even for root), then the permission bits (``os.access``). The
    nearest existing path being a file (``GOLDEVAL_HOME=notes.txt``) is named as such, not as a read-only folder.
    """
    target = path
    while not os.path.exists(target) and target.parent != target:
        target = target.parent
    try:
        if os.statvfs(target).f_flag & os.ST_RDONLY:
            return f"{target} is on a read-only file system (a read-only mount)"
    except OSError:
        return None
    if target == path:
        if not os.access(path, os.W_OK):
            return f"the file {path} is read-only for this user"
        folder = path.parent
        if not os.access(folder, os.W_OK | os.X_OK):
            return f"its folder {folder} is read-only for this user (SQLite writes a -wal and a -shm file beside it)"
        return None
    if not os.path.isdir(target):  # GOLDEVAL_HOME (or a --store folder) that is a file: no folder can be made in it
        return f"{target} is a file, not a folder, so the store's folder cannot be made there"
    if not os.access(target, os.W_OK | os.X_OK):
        return f"the folder {target} is read-only for this user"
    return None


def _cannot_record(path: Path, why: str, *, doing: str = "cannot record a run there") -> str:
    """The message for a store that cannot be written: where, why, and what to do instead."""
    return (f"run store {path}: {doing}: {why}. A scoring command writes its run to the store: pass --store with a "
            "path on a writable disk (or set GOLDEVAL_HOME to a writable folder), or add --no-store to record nothing. "
            "A read-only store can still be read (runs list / show / export, compare, report).")


def _refuse_foreign(db: sqlite3.Connection, path: Path) -> None:
    """Refuse a SQLite database that holds tables but is not a goldeval run store (no ``_migrations`` table):
    goldeval would otherwise add its tables to another program's database."""
    names = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")}
    if names and "_migrations" not in names:
        shown = ", ".join(sorted(names)[:5]) + ("…" if len(names) > 5 else "")
        raise NotAStoreError(
            f"run store {path}: a SQLite database of another program (tables {shown}; no goldeval _migrations table). "
            "goldeval does not add its tables to it. Pass --store with another path."
        )


#: Tables (and the migration that made them) a read-only store must hold for the reading commands.
_READ_TABLES = ("runs", "cases", "reviews")


def _open_readonly(path: Path, timeout: float) -> sqlite3.Connection:
    """A read-only connection to an existing store (``mode=ro``; ``immutable=1`` when even the WAL index cannot be
    opened because the folder is read-only). Raises StoreError when it cannot be read or is not a goldeval store."""

    uri = "file:" + quote(str(path.resolve()))
    last: sqlite3.Error | None = None
    for mode in ("mode=ro", "immutable=1"):
        db = None
        try:
            db = sqlite3.connect(f"{uri}?{mode}", uri=True, timeout=timeout, isolation_level=None, check_same_thread=False)
            names = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        except sqlite3.Error as exc:
            if db is not None:
                db.close()  # a connection left open kept the file (and a read-only mount of it) busy
            last = exc
            continue
        if "_migrations" not in names:
            db.close()
            if names:
                raise NotAStoreError(
                    f"run store {path}: a SQLite database of another program (no goldeval _migrations table). "
                    "Pass --store with the database the scoring commands wrote."
                )
            raise StoreError(f"run store {path}: an empty database (read-only), so no run was recorded there. "
                             "Pass --store with the database the scoring commands wrote.")

        done = [r[0] for r in db.execute("SELECT name FROM _migrations")]
        unknown = [n for n in done if n not in {m.__name__ for m in MIGRATIONS}]
        missing = [t for t in _READ_TABLES if t not in names]
        if unknown or missing:
            db.close()
            why = (f"it was written by a newer goldeval ({', '.join(unknown)})" if unknown
                   else f"it has an older schema (no {', '.join(missing)} table) and is read-only, so it cannot be upgraded")
            raise StoreError(f"run store {path}: {why}. Copy it to a writable place and pass --store with the copy"
                             + (", or upgrade goldeval." if unknown else "."))
        return db
    assert last is not None
    raise StoreError(_explain(path, last, "cannot read it"))


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except OSError:
        return False
    return True
