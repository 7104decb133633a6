"""The judge's call cache: an unchanged re-run makes no calls, and any change to what the judge sees re-judges.

SQLite file ``goldeval.paths.home() / "judge_cache.db"`` (``$GOLDEVAL_HOME`` moves it). One row per completed call,
keyed by the sha256 of the canonical JSON of:

* ``JUDGE_VERSION`` and the user-prompt layout version,
* the system prompt's sha256 (the doctrine),
* the rubric's sha256,
* the answer parameters: model, base URL, temperature, seed, max_tokens, and the verdict schema's sha256 when the
  call sends one (``response_format`` other than ``none``; a judge that sends none keeps the keys it had before
  schemas were sent),
* the case id and materials (question, golden, rows, rule breakdown, rubric, mustNotUse, the answer's text and
  queries),
* the sample index (``--repeat 3`` keeps three entries per case) and the rows shown per table (``max_rows``).

Only completions are cached (the text the endpoint returned, even if it does not parse: the same inputs at
temperature 0 give the same text, and ``refresh=True`` asks again). Failed calls — time-outs, exhausted retries —
are never cached, so a re-run tries them again. The user prompt that was sent (with its nonce) is stored beside
the answer, so every cached verdict can be audited, and so is the response format the answer was given under
(``json_schema``, ``json_object``, ``format``, ``none``; ``NULL`` in entries written before it was recorded).

Schema migrations are append-only (never edit a shipped one).
"""

from __future__ import annotations

import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

from goldeval.errors import StoreError
from goldeval.llm.prompt import (
    DEFAULT_MAX_ROWS,
    JUDGE_VERSION,
    SYSTEM_PROMPT_SHA256,
    USER_PROMPT_LAYOUT,
    canonical_json,
    rubric_hash,
    sha256_text,
)
from goldeval.paths import home

__all__ = ["JudgeCache", "cache_key", "default_cache_path"]

_MIGRATIONS = [
    """
    CREATE TABLE judge_calls (
        key TEXT PRIMARY KEY,
        created_at REAL NOT NULL,
        judge_version TEXT NOT NULL,
        system_prompt_sha256 TEXT NOT NULL,
        rubric_sha256 TEXT,
        model TEXT NOT NULL,
        params TEXT NOT NULL,
        case_id TEXT,
        sample INTEGER NOT NULL,
        user_prompt TEXT NOT NULL,
        response TEXT NOT NULL,
        prompt_tokens INTEGER,
        completion_tokens INTEGER,
        latency_s REAL,
        finish_reason TEXT,
        response_model TEXT
    );
    """,
    "ALTER TABLE judge_calls ADD COLUMN response_format TEXT;",
]


def default_cache_path() -> Path:
    """``goldeval.paths.home() / "judge_cache.db"``."""

    return home() / "judge_cache.db"


def cache_key(materials: dict[str, Any], params: dict[str, Any], sample: int = 0, *, max_rows: int = DEFAULT_MAX_ROWS) -> str:
    """The cache key of one judge call (hex sha256). See the module docstring for what goes in.

    Args:
        materials: The case materials as given to :func:`goldeval.llm.prompt.build_user_prompt`, ``id``
            included (each case keeps its own entry and recorded prompt); the answering model's id is excluded.
        params: :meth:`JudgeConfig.answer_params`.
        sample: 0-based repeat index.
        max_rows: Rows of each table shown in the prompt (a different cut is a different prompt).
    """
    seen = {k: v for k, v in materials.items() if k not in ("model", "answer_model")}
    return sha256_text(
        canonical_json(
            {
                "judge_version": JUDGE_VERSION,
                "layout": USER_PROMPT_LAYOUT,
                "system_prompt_sha256": SYSTEM_PROMPT_SHA256,
                "rubric_sha256": rubric_hash(materials.get("rubric")),
                "params": params,
                "materials": seen,
                "sample": sample,
                "max_rows": max_rows,
            }
        )
    )


class JudgeCache:
    """The cache database; thread-safe (one connection behind a lock).

    Args:
        path: The SQLite file (created with its folder when missing); default :func:`default_cache_path`.
            ``":memory:"`` keeps it in memory.

    Raises:
        StoreError: the file cannot be opened or is not a goldeval judge cache.
    """

    def __init__(self, path: str | Path | None = None) -> None:
        self.path = Path(default_cache_path() if path is None else path) if path != ":memory:" else path
        self._lock = threading.Lock()
        try:
            if self.path != ":memory:":
                Path(self.path).parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(str(self.path), check_same_thread=False, timeout=30)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._migrate()
        except (sqlite3.Error, OSError) as exc:
            raise StoreError(
                f"judge cache {self.path}: cannot open ({exc}). Move it aside, or set GOLDEVAL_HOME to a writable folder."
            ) from None

    def _migrate(self) -> None:
        version = self._db.execute("PRAGMA user_version").fetchone()[0]
        if version > len(_MIGRATIONS):
            raise sqlite3.DatabaseError(f"schema version {version} is newer than this goldeval knows ({len(_MIGRATIONS)})")
        for i in range(version, len(_MIGRATIONS)):
            with self._db:
                self._db.executescript(_MIGRATIONS[i])
                self._db.execute(f"PRAGMA user_version = {i + 1}")

    def get(self, key: str) -> dict[str, Any] | None:
        """The cached call for *key* (``response``, ``user_prompt``, tokens, latency…), or ``None``.

        Raises:
            StoreError: the file cannot be read (damaged, locked past the wait): the message names it and the way out.
        """
        try:
            with self._lock:
                cur = self._db.execute("SELECT * FROM judge_calls WHERE key = ?", (key,))
                row = cur.fetchone()
                if row is None:
                    return None
                return dict(zip([d[0] for d in cur.description], row))
        except sqlite3.Error as exc:
            raise self._error("read", exc) from None

    def _error(self, what: str, exc: sqlite3.Error) -> StoreError:
        return StoreError(
            f"judge cache {self.path}: cannot {what} ({exc}). It is only a cache: run with --no-llm-cache, or move the "
            "file aside (a new one is made on the next run), or set GOLDEVAL_HOME to another folder; check the disk "
            "and permissions."
        )

    def put(self, key: str, *, case_id: str | None, sample: int, params: dict[str, Any], rubric_sha256: str | None,
            user_prompt: str, response: str, prompt_tokens: int | None = None, completion_tokens: int | None = None,
            latency_s: float | None = None, finish_reason: str | None = None, response_model: str | None = None,
            response_format: str | None = None) -> None:
        """Store one completed call (replacing an older entry with the same key); *response_format* is the form the
        answer was given under (:mod:`goldeval.llm.response_format`)."""
        try:
            with self._lock, self._db:
                self._db.execute(
                    "INSERT OR REPLACE INTO judge_calls VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                    (key, time.time(), JUDGE_VERSION, SYSTEM_PROMPT_SHA256, rubric_sha256, params.get("model", ""),
                     canonical_json(params), case_id, sample, user_prompt, response, prompt_tokens, completion_tokens,
                     latency_s, finish_reason, response_model, response_format),
                )
        except sqlite3.Error as exc:
            raise self._error("write", exc) from None

    def __len__(self) -> int:
        try:
            with self._lock:
                return self._db.execute("SELECT COUNT(*) FROM judge_calls").fetchone()[0]
        except sqlite3.Error as exc:
            raise self._error("read", exc) from None

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def __enter__(self) -> JudgeCache:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
