"""The rule-based data-answer judge: one verdict per case, and the batch over a case file and an attempt file.

Order of decisions for one case (each step says why in ``why`` and keeps its evidence in ``details``):

1. **mustNotUse** field entries, on the parsed final query: a hit is ``no_match`` (``decided_by="must_not_use"``),
   before anything else. Prose entries are kept for the LLM judge.
2. **Golden checks** set ``gold_status`` / ``gold_note`` (never the verdict).
3. **The rule verdict** by the golden's kind:

   * ``criteria``: no rule decides → ``needs_human`` with the breakdown;
   * ``unanswerable``: a refusal that names what is missing → ``match``; a generic refusal → ``near_match``; an
     answer with values → ``no_match``;
   * ``value``: a table prediction is paired (:mod:`~goldeval.answers.pairing`) and its rows compared
     (:mod:`~goldeval.answers.rows`); a prose prediction against a one-cell golden is judged on the value it
     states; a refusal is ``no_match``; prose against a larger table → ``needs_human`` (prose grain).

4. **Rubric** clauses that could move the verdict (``ACCEPT``/``PREFERRED``/``DIVERGENT`` on a non-match, any
   ``REQUIRED`` on a match) and prose mustNotUse entries on a match make the case ``needs_human``: the LLM judge
   decides, with this breakdown in its prompt.

``match`` is answered only when every golden row is located under an unambiguous pairing; ``no_match`` only when
the grain is the same (every golden column paired, no extra key column) and the values are wrong, a golden column
is missing, the rows are a shotgun superset, or the asked-for order is wrong. Confidence ≤ 5 sets
``needs_human``.

Modules: :mod:`~goldeval.answers.config` (name, version, options), :mod:`~goldeval.answers.shapes` (input
shapes and case options), :mod:`~goldeval.answers.table` (the table rule), :mod:`~goldeval.answers.prose`
(prose and unanswerable rules), :mod:`~goldeval.answers.answer` (one answer: :func:`judge_answer`),
:mod:`~goldeval.answers.canonical` (tie rows from the canonical query), :mod:`~goldeval.answers.case` (one case
row: :func:`judge_case`), :mod:`~goldeval.answers.batch` (the joins and the summary of files). This module re-exports
their public names, so ``from goldeval.answers.judge import judge_case`` keeps working; ``judge_file`` and
``judge_answer_file`` run the local engine and are :mod:`goldeval.pipeline.files`' (the old path here warns).

Source: ``DESIGN.md`` "Data answers", goldeval.
"""

from __future__ import annotations

from typing import Any

from goldeval._compat import moved_attribute

from goldeval.answers.answer import judge_answer
from goldeval.answers.batch import (
    iter_judged,
    llm_materials,
    summarize,
)
from goldeval.answers.case import judge_case, outcome_from_dict
from goldeval.answers.config import JUDGE_NAME, JUDGE_VERSION, AnswerConfig, CaseResult

__all__ = [
    "JUDGE_NAME",
    "JUDGE_VERSION",
    "AnswerConfig",
    "CaseResult",
    "judge_answer",
    "judge_case",
    "iter_judged",
    "llm_materials",
    "outcome_from_dict",
    "summarize",
]


def __getattr__(name: str) -> Any:
    # the deprecation path of judge_file / judge_answer_file, which moved up a layer (see moved_attribute)
    return moved_attribute(__name__, name)
