"""Where goldeval keeps its files: the run store and the judge cache live under one home folder."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["home", "default_store_path"]


def home() -> Path:
    """``$GOLDEVAL_HOME`` when set, else ``./.goldeval`` (relative to the working directory). Not created here."""
    env = os.environ.get("GOLDEVAL_HOME")
    return Path(env) if env else Path.cwd() / ".goldeval"


def default_store_path() -> Path:
    """The run store's default database file: ``home() / "goldeval.db"``."""
    return home() / "goldeval.db"
