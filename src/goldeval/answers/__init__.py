"""The rule-based data-answer judge (one module per concept).

* :mod:`~goldeval.answers.values` — typed normalisation of cells, numeric tolerance, column-name roles
* :mod:`~goldeval.answers.pairing` — golden ↔ prediction column pairing (an assignment problem)
* :mod:`~goldeval.answers.rows` — multiset / ordered / top-N row comparison and mismatch description
* :mod:`~goldeval.answers.text` — prose answers: stated values, refusals, hedges, grader-aimed text
* :mod:`~goldeval.answers.sql` — read-only re-execution (SQLite; DuckDB optional)
* :mod:`~goldeval.answers.forbidden` — mustNotUse on the parsed final query (sqlglot)
* :mod:`~goldeval.answers.gold` — golden checks (``gold_status``)
* :mod:`~goldeval.answers.judge` — the verdict and the batch (:func:`judge_file`)

Source: ``DESIGN.md`` "Data answers", goldeval.
"""

from __future__ import annotations

from goldeval.answers.judge import (
    JUDGE_NAME,
    JUDGE_VERSION,
    CaseResult,
    AnswerConfig,
    iter_judged,
    judge_answer,
    judge_answer_file,
    judge_case,
    judge_file,
    llm_materials,
    outcome_from_dict,
    summarize,
)
from goldeval.answers.sql import QueryError, QueryResult, ReadOnlyDatabase

__all__ = [
    "JUDGE_NAME",
    "JUDGE_VERSION",
    "CaseResult",
    "AnswerConfig",
    "QueryError",
    "QueryResult",
    "ReadOnlyDatabase",
    "iter_judged",
    "judge_answer",
    "judge_answer_file",
    "judge_case",
    "judge_file",
    "llm_materials",
    "outcome_from_dict",
    "summarize",
]
