"""Ctrl-C inside one of the run store's write transactions: the transaction is rolled back, so the next write (the
run marked ``interrupted``, which Ctrl-C's exit 130 relies on) finds none open and succeeds.

Found by a breaker (hE, 2026-12-04): `goldeval score --workers 2 --no-texts` interrupted at ~2.4 s sometimes exited 3
with "write failed (cannot start a transaction within a transaction)", because a KeyboardInterrupt landing between
``BEGIN IMMEDIATE`` and ``COMMIT`` (e.g. in ``write_case_block``) was not caught by ``except sqlite3.Error``.
Each test below makes the interrupt land on one statement inside one write method, the way a signal would, and fails
without ``RunStore._transaction`` (the transaction stays open and ``set_status`` raises StoreError).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator

import pytest

from goldeval.errors import InputError, StoreError
from goldeval.runs.store import RunMeta, RunStore


class _InterruptOn:
    """Stands in for ``RunStore.db``: raises KeyboardInterrupt, as a Ctrl-C would, the first time a statement starting
    with *prefix* (case-insensitive) is executed; every other statement and attribute goes to the real connection."""

    def __init__(self, db, prefix: str) -> None:
        self._db = db
        self._prefix = prefix.upper()
        self.fired = 0

    def execute(self, sql: str, params=()):
        if not self.fired and sql.lstrip().upper().startswith(self._prefix):
            self.fired += 1
            raise KeyboardInterrupt
        return self._db.execute(sql, params)

    def __getattr__(self, name: str):
        return getattr(self._db, name)


def _meta() -> RunMeta:
    return RunMeta(run_key="k", scorer_name="token_f1", scorer_version="1", dataset_hash="d" * 64)


@pytest.fixture()
def store(tmp_path):
    with RunStore(tmp_path / "g.db") as st:
        yield st


def _count(st: RunStore, table: str) -> int:
    return st.db.execute(f"SELECT count(*) FROM {table}").fetchone()[0]


def _interrupted_then_marked(st: RunStore, run_id: str, prefix: str, write) -> _InterruptOn:
    """Run *write* with a Ctrl-C landing on the statement starting with *prefix*; then check that no transaction is
    left open and that the run can still be marked interrupted (what the CLI does next)."""
    real = st.db
    st.db = _InterruptOn(real, prefix)
    try:
        with pytest.raises(KeyboardInterrupt):
            write()
    finally:
        fake, st.db = st.db, real
    assert fake.fired == 1, f"the interrupt never landed on {prefix!r}: the test did not test anything"
    assert not real.in_transaction
    st.set_status(run_id, "interrupted")  # raised StoreError ("cannot start a transaction within a transaction")
    assert st.db.execute("SELECT status FROM runs WHERE id = ?", (run_id,)).fetchone()[0] == "interrupted"
    return fake


RECORD = b'{"id":"a","status":"scored","score":1.0}'


def test_ctrl_c_in_write_case_block_rolls_back(store):
    run_id = store.create_run(_meta())
    _interrupted_then_marked(store, run_id, "INSERT INTO case_blocks",
                             lambda: store.write_case_block(run_id, 0, 1, RECORD, b'"a"'))
    assert _count(store, "case_blocks") == 0
    store.write_case_block(run_id, 0, 1, RECORD, b'"a"')  # the same write, not interrupted, is stored
    assert _count(store, "case_blocks") == 1


def test_ctrl_c_in_write_cases_rolls_back(store):
    run_id = store.create_run(_meta())
    row = ("a", 0, "scored", None, 1.0, None, None, '{"id":"a","status":"scored","score":1.0}')
    _interrupted_then_marked(store, run_id, "INSERT INTO cases", lambda: store.write_cases(run_id, [row]))
    assert _count(store, "cases") == 0
    store.write_cases(run_id, [row])
    assert _count(store, "cases") == 1


def test_ctrl_c_in_delete_run_keeps_the_whole_run(store):
    run_id = store.create_run(_meta())
    store.write_cases(run_id, [("a", 0, "scored", None, 1.0, None, None, '{"id":"a","status":"scored","score":1.0}')])
    store.set_status(run_id, "finished")
    # the run's cases are deleted first, then the run row: the interrupt lands between the two
    _interrupted_then_marked(store, run_id, "DELETE FROM runs", lambda: store.delete_run(run_id))
    assert _count(store, "cases") == 1 and _count(store, "runs") == 1


def test_ctrl_c_in_tag_leaves_no_tag(store):
    run_id = store.create_run(_meta())
    _interrupted_then_marked(store, run_id, "INSERT INTO tags", lambda: store.tag(run_id, "baseline"))
    assert _count(store, "tags") == 0
    assert store.tag(run_id, "baseline")["run_id"] == run_id


def test_tag_refused_still_rolls_back_and_says_why(store):
    # The healthy refusal inside the transaction (a tag moves only when told) is an InputError as before, with no
    # transaction left open.
    a, b = store.create_run(_meta()), store.create_run(_meta())
    store.tag(a, "baseline")
    with pytest.raises(InputError, match="already names run"):
        store.tag(b, "baseline")
    assert not store.db.in_transaction
    store.set_status(b, "interrupted")


def test_ctrl_c_in_claim_rolls_back(store):
    run_id = store.create_run(_meta())
    store.set_status(run_id, "interrupted")
    _interrupted_then_marked(store, run_id, "UPDATE runs SET status = 'running'", lambda: store.claim(run_id))
    assert store.claim(run_id) is None  # claimable after


def test_ctrl_c_while_keeping_an_input_keeps_none_of_it(store):
    run_id = store.create_run(_meta())

    def parts() -> Iterator[tuple[int, bytes]]:  # Ctrl-C while the second part is being compressed
        yield 3, b"abc"
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        store.keep_input(run_id, "predictions", "0" * 64, "p.jsonl", parts())
    assert not store.db.in_transaction
    assert _count(store, "run_inputs") == 0
    store.set_status(run_id, "interrupted")


def test_ctrl_c_in_set_status_rolls_back(store):
    run_id = store.create_run(_meta())
    real = store.db
    store.db = _InterruptOn(real, "UPDATE runs")
    try:
        with pytest.raises(KeyboardInterrupt):
            store.set_status(run_id, "failed")
    finally:
        store.db = real
    assert not real.in_transaction
    assert real.execute("SELECT status FROM runs WHERE id = ?", (run_id,)).fetchone()[0] == "running"
    store.set_status(run_id, "interrupted")


class _ConnectionGone(_InterruptOn):
    """A connection that dies under the statement *prefix* raises on (KeyboardInterrupt, as a Ctrl-C landing there):
    every later statement, the ROLLBACK included, raises the driver's error, as a lost PostgreSQL connection does."""

    def execute(self, sql: str, params=()):
        if self.fired:
            raise sqlite3.OperationalError("the connection is closed")
        return super().execute(sql, params)

    @property
    def in_transaction(self) -> bool:
        return True  # (psycopg: a lost connection's transaction status is not idle)


def test_a_rollback_that_fails_too_does_not_replace_the_ctrl_c(store):
    # break-fix (hG, 2026-12-05): when the ROLLBACK itself failed (the connection gone), its error replaced what had
    # stopped the transaction: the Ctrl-C here (exit 3, "internal error: OperationalError", instead of 130), a
    # driver error elsewhere (tests/postgres/test_pg_lost.py: a server that went away). Expected: the Ctrl-C.
    run_id = store.create_run(_meta())
    real = store.db
    store.db = _ConnectionGone(real, "UPDATE runs")
    try:
        with pytest.raises(KeyboardInterrupt):
            store.set_status(run_id, "interrupted")
        assert store.db.fired == 1
    finally:
        store.db = real
    real.execute("ROLLBACK")  # (the real connection's transaction, which the fake did not let go)
    assert real.execute("SELECT status FROM runs WHERE id = ?", (run_id,)).fetchone()[0] == "running"


class _LockedTags:
    """Stands in for ``RunStore.db``: reading the tags fails as a store locked past its timeout does."""

    def __init__(self, db) -> None:
        self._db = db

    def execute(self, sql: str, params=()):
        if "FROM tags" in sql:
            raise sqlite3.OperationalError("database is locked")
        return self._db.execute(sql, params)

    def __getattr__(self, name: str):
        return getattr(self._db, name)


def test_a_tag_that_cannot_be_read_is_a_store_error_not_no_such_tag(store):
    # break-fix (hG, 2026-12-05): _tagged took every OperationalError for "a store made before tags existed", so a
    # store locked past its timeout answered `runs untag baseline` with "no tag 'baseline'" (exit 2, bad input)
    # while the tag was there. Expected: a StoreError saying the read failed; the tag is still there after.
    run_id = store.create_run(_meta())
    store.tag(run_id, "baseline")
    real = store.db
    store.db = _LockedTags(real)
    try:
        with pytest.raises(StoreError, match="database is locked"):
            store.untag("baseline")
    finally:
        store.db = real
    assert store.untag("baseline") == run_id
