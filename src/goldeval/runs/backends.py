"""Open the run store a location names: a SQLite file (:class:`goldeval.runs.store.RunStore`, the embedded default)
or a ``postgresql://`` URL (:class:`goldeval.runs.pgstore.PostgresRunStore`, a team's shared server).

The two backends share one interface (``PostgresRunStore`` subclasses ``RunStore``); this module is the one place
that chooses between them, so that the SQLite store need not know its PostgreSQL subclass (which would make the two
modules import each other).
"""

from __future__ import annotations

import os

from goldeval.paths import default_store
from goldeval.runs.location import check_store_target, store_scheme
from goldeval.runs.store import RunStore

__all__ = ["open_store", "open_existing_store"]


def _is_server(target: str | os.PathLike[str]) -> bool:
    if isinstance(target, str) and store_scheme(target) is not None:
        check_store_target(target)  # refuses a scheme goldeval does not serve (mysql://…) before anything is made
        return True
    return False


def open_store(path: str | os.PathLike[str] | None = None, *, readonly: bool = False, timeout: float = 30.0) -> RunStore:
    """The run store at *path*, created (SQLite: the file and its folder; PostgreSQL: the tables) when missing.

    Args:
        path: A SQLite file, or ``postgresql://user[:password]@host[:port]/dbname``. Default:
            :func:`goldeval.paths.default_store` (``$GOLDEVAL_STORE``, else ``$GOLDEVAL_HOME/goldeval.db``, else
            ``./.goldeval/goldeval.db``).
        readonly: Open without applying migrations, for reading.
        timeout: Seconds to wait for the database (SQLite's busy timeout; the server's connection).

    Returns:
        A :class:`~goldeval.runs.store.RunStore` (a ``PostgresRunStore`` for a URL); use it as a context manager.

    Raises:
        InputError: a URL of a scheme goldeval does not serve, or a PostgreSQL URL that cannot be read (the message
            never holds the password).
        StoreError: the store cannot be opened, is another program's database, or a migration fails.

    Example:
        >>> import os, tempfile
        >>> with open_store(os.path.join(tempfile.mkdtemp(), "runs.db")) as st:
        ...     st.list_runs()
        []
    """
    target = default_store() if path is None else path
    if _is_server(target):
        from goldeval.runs.pgstore import PostgresRunStore  # psycopg (the postgres extra): loaded only when named

        return PostgresRunStore(target, readonly=readonly, timeout=timeout)
    return RunStore(target, readonly=readonly, timeout=timeout)


def open_existing_store(path: str | os.PathLike[str] | None = None) -> RunStore:
    """The run store at *path*, which must already exist (for the commands that only read runs: nothing is created).

    Args:
        path: As for :func:`open_store`.

    Returns:
        The open store (read-only where this process may not write a SQLite file).

    Raises:
        NoStoreError: no store is there (an ``InputError``, exit 2, saying where goldeval looked).
        InputError: as for :func:`open_store`.
        StoreError: it cannot be read.

    Example:
        >>> import os, tempfile
        >>> from goldeval.runs.store import NoStoreError
        >>> try:
        ...     open_existing_store(os.path.join(tempfile.mkdtemp(), "none.db"))
        ... except NoStoreError as exc:
        ...     print("no such file" in str(exc))
        True
    """
    target = default_store() if path is None else path
    if _is_server(target):
        from goldeval.runs.pgstore import PostgresRunStore  # psycopg (the postgres extra): loaded only when named

        return PostgresRunStore.open_existing(target)
    return RunStore.open_existing(target)
