"""Databases named by the cases: a many-database set (Spider, BIRD) judged in one invocation.

A case may name its database (``"db": "concert_singer"``); with ``--db-dir DIR`` the name is resolved under DIR as
``NAME.sqlite``, ``NAME.duckdb``, ``NAME.db`` or ``NAME/NAME.sqlite`` (Spider's layout), in that order. Each
database is opened (read-only, with the run's time and row limits) the first time a case names it and reused for
every later case; all are closed at the end. A name that is not a plain file name (a path, ``..``, a NUL byte, longer
than a file name may be), that no file matches, or whose file resolves outside the folder (a symbolic link, itself
or a folder on its way, that leads out of it) makes that case unscored with the reason — never another database's
answer, and never a file outside the folder.

Source: ``DESIGN.md`` "Data formats" (a case may name its database, resolved under ``--db-dir``), goldeval.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from goldeval.errors import InputError, shorten
from goldeval.io.reading import file_sha256

__all__ = ["DatabaseDir", "LAYOUTS", "case_database", "case_database_names"]

#: Where a database named NAME is looked for under the folder, in this order.
LAYOUTS = ("{name}.sqlite", "{name}.duckdb", "{name}.db", "{name}/{name}.sqlite")
_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.\-]*$")
#: The longest file name (bytes) most file systems hold (NAME_MAX on Linux, macOS and Windows' NTFS).
_NAME_MAX = 255


class DatabaseDir:
    """The databases under one folder, opened once each, by name.

    Args:
        folder: The ``--db-dir`` folder.
        open_one: Opens one database file (read-only; the run's limits), e.g. ``AnswerConfig.open_database``'s
            engine for a path.

    Raises:
        InputError: *folder* is not a folder.
    """

    def __init__(self, folder: str | os.PathLike[str], open_one: Callable[[str], Any]) -> None:
        self.folder = Path(folder)
        if not self.folder.is_dir():
            raise InputError(f"--db-dir {folder}: not a folder. Give the folder that holds the databases "
                             f"({', '.join(LAYOUTS)}).")
        self._open_one = open_one
        self._open: dict[str, Any] = {}
        self.opened: list[str] = []  # names in the order they were first opened
        #: name → (file, sha256) of each database opened, taken as it was opened: removed or replaced later in the
        #: run, the file is still the one its queries read (the connection holds it open).
        self.opened_files: dict[str, tuple[str, str]] = {}

    def resolve(self, name: Any) -> Path:
        """The file of the database *name* (see :data:`LAYOUTS`): its path under the folder, checked to resolve
        inside it once every symbolic link is followed.

        Raises:
            InputError: *name* is not a plain name (text of letters, digits, ``_ . -``; no path separator, no NUL
                byte, not ``.`` or ``..``), too long for a file name, no file matches, or the file resolves outside
                the folder (a symbolic link to a file or folder elsewhere).
        """
        if not isinstance(name, str) or not _NAME.fullmatch(name) or name in (".", ".."):
            raise InputError(f"field 'db' must name a database under --db-dir {self.folder} (letters, digits, _ . -; "
                             f"no path), got {shorten(name)}.")
        longest = max(len(os.fsencode(layout.format(name=name).rsplit("/", 1)[-1])) for layout in LAYOUTS)
        if longest > _NAME_MAX:
            raise InputError(f"field 'db' names a database of {len(name)} characters, too long for a file name under "
                             f"--db-dir {self.folder} (at most {_NAME_MAX - len('.duckdb')}), got {shorten(name)}. Use "
                             "the database's file name without its extension.")
        root = self.folder.resolve()
        for layout in LAYOUTS:
            p = self.folder / layout.format(name=name)
            try:
                if not p.is_file():
                    continue
                real = p.resolve(strict=True)
            except OSError as exc:  # a name the file system refuses, a loop of links, no permission
                raise InputError(f"database {name!r} under --db-dir {self.folder}: {layout.format(name=name)} cannot be "
                                 f"read ({exc.strerror or exc}). Check the case's 'db' field or the folder.") from None
            if not real.is_relative_to(root):
                raise InputError(f"database {name!r}: {p} resolves to {real}, outside --db-dir {root} (a symbolic link "
                                 "leads out of the folder); only databases inside the folder are opened. Copy the "
                                 "database into the folder, or give the folder that holds it.")
            return p
        tried = ", ".join(layout.format(name=name) for layout in LAYOUTS)
        raise InputError(f"database {name!r} is not under --db-dir {self.folder} (looked for {tried}). Check the case's "
                         "'db' field or the folder.")

    def get(self, name: Any) -> Any:
        """The open database *name* (opened on first use, then reused).

        Raises:
            InputError: as :meth:`resolve`, or the file cannot be opened as a database.
        """
        db = self._open.get(name) if isinstance(name, str) else None
        if db is None:
            path = self.resolve(name)
            db = self._open[name] = self._open_one(str(path))
            self.opened.append(name)
            self.opened_files[name] = (str(path), file_sha256(path))
        return db

    def files(self, names: Iterable[str]) -> dict[str, str]:
        """name → file of each of *names* that resolves (the others are left out: their cases are unscored)."""
        out: dict[str, str] = {}
        for name in names:
            try:
                out[name] = str(self.resolve(name))
            except InputError:
                continue
        return out

    def close(self) -> None:
        """Close every database opened."""
        dbs, self._open = self._open, {}
        for db in dbs.values():
            db.close()

    def __enter__(self) -> DatabaseDir:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def case_database_names(rows: Iterable[Any]) -> list[str]:
    """The distinct ``db`` names the case rows give (strings only), in order of first appearance: what a run
    reads, so that their files' sha256 go into the run's key."""
    seen: dict[str, None] = {}
    for item in rows:
        data = getattr(item, "data", item)
        if isinstance(data, Mapping):
            name = data.get("db")
            if isinstance(name, str) and name not in seen:
                seen[name] = None
    return list(seen)


def case_database(case: Mapping[str, Any], db: Any, databases: Any, where: str) -> tuple[Any, str | None]:
    """The database a case is judged on: the one its ``db`` names under ``--db-dir`` (opened once, reused), else
    the run's ``--db``.

    Args:
        case: The case row (its optional ``db`` names a database).
        db: The run's ``--db`` database (or ``None``).
        databases: The :class:`~goldeval.answers.databases.DatabaseDir` of ``--db-dir`` (or ``None``).
        where: Prefix for the reason (``"cases.jsonl:4 (id q7)"``).

    Returns:
        ``(database, None)``, or ``(None, reason)`` when the case names a database that cannot be used (no
        ``--db-dir``, an unknown or path-like name): the reason says what to do.
    """
    if "db" not in case:
        return db, None
    name = case["db"]
    if databases is None:
        return None, (f"{where}: the case names the database {name!r}, and no --db-dir was given to find it in. Pass "
                      "--db-dir with the folder of the databases.")
    try:
        return databases.get(name), None
    except InputError as exc:
        return None, f"{where}: {exc}"
