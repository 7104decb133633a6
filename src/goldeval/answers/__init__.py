"""The rule-based data-answer judge (one module per concept).

* :mod:`~goldeval.answers.values` — typed normalisation of cells, numeric tolerance, column-name roles
* :mod:`~goldeval.answers.pairing` — golden ↔ prediction column pairing (an assignment problem)
* :mod:`~goldeval.answers.rows` — multiset / ordered / top-N row comparison and mismatch description
* :mod:`~goldeval.answers.text` — prose answers: stated values, refusals, hedges, grader-aimed text
* :mod:`~goldeval.answers.sql` — read-only re-execution (SQLite; DuckDB optional)
* :mod:`~goldeval.answers.forbidden` — mustNotUse on the parsed final query (sqlglot)
* :mod:`~goldeval.answers.gold` — golden checks (``gold_status``)
* :mod:`~goldeval.answers.config` — ``JUDGE_NAME``, ``JUDGE_VERSION``, :class:`AnswerConfig`, :class:`CaseResult`
* :mod:`~goldeval.answers.shapes` — tables out of golden/prediction objects; the case's options checked
* :mod:`~goldeval.answers.verdicts` — verdict builders shared by the rules
* :mod:`~goldeval.answers.table` — the table rule (pairing, rows, ties, order, grain → a verdict)
* :mod:`~goldeval.answers.prose` — the prose rules (a stated value; an unanswerable golden)
* :mod:`~goldeval.answers.answer` — one answer judged (:func:`judge_answer`): mustNotUse, golden checks, rubric
* :mod:`~goldeval.answers.canonical` — rows tied at a LIMIT boundary, from the canonical query
* :mod:`~goldeval.answers.case` — one case row against its attempt row (:func:`judge_case`)
* :mod:`~goldeval.answers.batch` — a case file joined with an attempt file, judged case by case, summarized
* :mod:`~goldeval.answers.golden_health` — the golden health check before any run (``goldeval check-goldens``)
* :mod:`~goldeval.answers.judge` — re-exports the public names above (the import path used so far)
* :mod:`~goldeval.answers.scorer` — :class:`AnswerJudge`, the ``answer_judge`` Scorer
* :mod:`~goldeval.answers.column_pairs` — the :class:`Pairing` result and the parts both pairing paths share
* :mod:`~goldeval.answers.query_bounds` — every query's time, row and size bounds, its rows and its errors
* :mod:`~goldeval.answers.rubric` — each rubric clause's marker, the verdict it fixes and the part it played in a
  verdict (:func:`clause_roles`, what the report's case view shows)

May import: :mod:`goldeval.scoring`, :mod:`goldeval.io`, the foundation modules. Never: another domain package, an
engine, runs, report, pipeline, cli. The judge over a case file and an attempt file on the local engine
(``judge_file``, ``judge_answer_file``) is :mod:`goldeval.pipeline.files`'; the old paths here still work with a
DeprecationWarning (:func:`goldeval._compat.moved_attribute`). Inside the package, ``batch`` (the joins) and
``scorer`` sit on top of the per-case rules; no rule imports them.

Source: ``DESIGN.md`` "Data answers", goldeval.
"""

from __future__ import annotations

from typing import Any

from goldeval._compat import moved_attribute

from goldeval.answers.judge import (
    JUDGE_NAME,
    JUDGE_VERSION,
    AnswerConfig,
    CaseResult,
    iter_judged,
    judge_answer,
    judge_case,
    llm_materials,
    outcome_from_dict,
    summarize,
)
from goldeval.answers.sql import (
    DatabaseLostError,
    QueryError,
    QueryResult,
    ReadOnlyDatabase,
)

__all__ = [
    "JUDGE_NAME",
    "JUDGE_VERSION",
    "CaseResult",
    "AnswerConfig",
    "DatabaseLostError",
    "QueryError",
    "QueryResult",
    "ReadOnlyDatabase",
    "iter_judged",
    "judge_answer",
    "judge_case",
    "llm_materials",
    "outcome_from_dict",
    "summarize",
]


def __getattr__(name: str) -> Any:
    # the deprecation path of judge_file / judge_answer_file, which moved up a layer (see moved_attribute)
    return moved_attribute(__name__, name)
