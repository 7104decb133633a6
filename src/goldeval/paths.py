"""Where goldeval keeps its files: the run store and the judge cache live under one home folder."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["home", "default_store", "default_store_path", "STORE_ENV"]

#: The environment variable that names the run store (a SQLite file or a ``postgresql://`` URL) when ``--store``
#: is not given.
STORE_ENV = "GOLDEVAL_STORE"


def home() -> Path:
    """``$GOLDEVAL_HOME`` when set, else ``./.goldeval`` (relative to the working directory). Not created here."""
    env = os.environ.get("GOLDEVAL_HOME")
    return Path(env) if env else Path.cwd() / ".goldeval"


def default_store_path() -> Path:
    """The run store's default database file: ``home() / "goldeval.db"``."""
    return home() / "goldeval.db"


def default_store() -> str:
    """The run store used when ``--store`` is not given: ``$GOLDEVAL_STORE`` when set and not blank (a SQLite file
    or a ``postgresql://`` URL, so a CI job names its team's server once), else :func:`default_store_path`."""
    env = os.environ.get(STORE_ENV)
    return env if env and env.strip() else str(default_store_path())
