"""The rule judge's name and version, the options of a judging run, and what one judged case carries.

Source: ``DESIGN.md`` "Data answers", goldeval.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from goldeval.answers.sql import DEFAULT_MAX_ROWS, DEFAULT_TIMEOUT_S
from goldeval.answers.values import REL_TOL
from goldeval.verdict import CaseOutcome

__all__ = ["JUDGE_NAME", "JUDGE_VERSION", "AnswerConfig", "CaseResult"]

JUDGE_NAME = "answer_judge"
#: Bump when a rule changes a verdict (recorded with every run).
JUDGE_VERSION = "1.2.0"  # 1.2.0 (issue 11): same rows in another multiplicity near_match; whole tie group match; exact identifiers; doubted goldens; order keys; unpaired columns. 1.1.0: break-fix rules


@dataclass(slots=True)
class AnswerConfig:
    """Options of a judging run (the CLI maps one option to one field; later options add fields here).

    Attributes:
        db: SQLite (or DuckDB) file to re-execute final queries and canonical queries on; ``None``: use the
            attempt's reported rows or text.
        timeout_s: Time limit per query, seconds.
        max_rows: Row limit per query (more rows: the case is unscored).
        rel_tol: Relative numeric tolerance.
        engine: ``sqlite`` | ``duckdb`` | ``None`` (by the file).
        check_canonical: Execute each golden's ``canonical_query`` (when a db is given) to fill in missing golden
            rows, or to check the given ones (a difference makes the golden ``suspect``).
    """

    db: str | None = None
    timeout_s: float = DEFAULT_TIMEOUT_S
    max_rows: int = DEFAULT_MAX_ROWS
    rel_tol: float = REL_TOL
    engine: str | None = None
    check_canonical: bool = True

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(slots=True)
class CaseResult:
    """One judged case: the outcome (what is recorded and counted) and the materials an LLM judge would need."""

    outcome: CaseOutcome
    materials: dict[str, Any] = field(default_factory=dict)

