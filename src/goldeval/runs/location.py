"""Where a run store lives: a SQLite file, or a PostgreSQL server named by a ``postgresql://`` URL.

A ``--store`` value (or ``$GOLDEVAL_STORE``) that starts like a URL (``scheme://``) is a server, never a file:
``postgresql://`` and ``postgres://`` are served; any other scheme (``mysql://``, ``sqlite://``, ``s3://``) is
refused, so that it is not silently made a local folder named ``mysql:`` holding a SQLite file. A password in a URL
is used to connect and never shown: :func:`store_label` is how a store is named in messages and results files.

Only the standard library is imported here (the CLI's start-up reads it); the URL parser of
:mod:`goldeval.answers.postgres` loads when a URL is shown.
"""

from __future__ import annotations

import os
import re
from typing import Any

from goldeval.errors import InputError

__all__ = ["SERVED_SCHEMES", "store_scheme", "check_store_target", "is_server_store", "store_label"]

#: URL schemes a run store may be given as (both are libpq's spelling of a PostgreSQL server).
SERVED_SCHEMES = ("postgresql", "postgres")

# RFC 3986 scheme, at least two characters (a Windows drive letter, ``C:\\runs.db``, is a path) and ``://``.
_URL = re.compile(r"([A-Za-z][A-Za-z0-9+.-]+)://")


def store_scheme(target: str | os.PathLike[str]) -> str | None:
    """The lower-cased URL scheme *target* starts with (``"postgresql"``, ``"mysql"``), or ``None`` for a path.

    Example:
        >>> store_scheme("postgresql://ci@db.example/evals"), store_scheme("runs/goldeval.db")
        ('postgresql', None)
    """
    if not isinstance(target, str):
        return None
    m = _URL.match(target)
    return m.group(1).lower() if m else None


def check_store_target(target: str | os.PathLike[str]) -> None:
    """Refuse a store that is a URL of a scheme goldeval does not serve.

    Args:
        target: A ``--store`` value or ``$GOLDEVAL_STORE``.

    Raises:
        InputError: *target* is ``scheme://…`` with a scheme not in :data:`SERVED_SCHEMES` (the message names the
            scheme only: the rest of the URL may hold a password).

    Example:
        >>> check_store_target("postgresql://ci@db/evals")
        >>> check_store_target("mysql://ci@db/evals")
        Traceback (most recent call last):
        ...
        goldeval.errors.InputError: run store mysql://… (--store or $GOLDEVAL_STORE): goldeval keeps runs in a SQLite file or on a PostgreSQL server (postgresql://user@host:port/dbname), not in a mysql:// store. Give a file path or a postgresql:// URL.
    """
    scheme = store_scheme(target)
    if scheme is not None and scheme not in SERVED_SCHEMES:
        raise InputError(
            f"run store {scheme}://… (--store or $GOLDEVAL_STORE): goldeval keeps runs in a SQLite file or on a PostgreSQL server "
            f"(postgresql://user@host:port/dbname), not in a {scheme}:// store. Give a file path or a postgresql:// URL."
        )


def is_server_store(target: Any) -> bool:
    """True for a ``postgresql://`` / ``postgres://`` store URL."""
    return store_scheme(target) in SERVED_SCHEMES


def store_label(target: str | os.PathLike[str]) -> str:
    """How a store is named in messages and in a results file's ``"run": {"store"}``: a file's absolute path, or a
    server URL without its password.

    Example:
        >>> store_label("postgresql://ci:s3cret@db.example:5432/evals")
        'postgresql://ci@db.example:5432/evals'
    """
    if is_server_store(target):
        # the URL parser of --db: it loads only when a server store is named (it imports the SQL transpiler)
        from goldeval.answers.postgres import parse_url

        try:
            return parse_url(str(target), option="--store").url
        except InputError:
            return f"{store_scheme(target)}://(an unreadable URL)"
    return os.path.abspath(target)
