"""A run end to end: inputs → engine → store → aggregate → gates → outputs; the resume and recording policy; the
rules-then-LLM stage; Spark orchestration. The CLI and the Python API (:func:`goldeval.evaluate`) both call it.

Modules:
    run          :func:`evaluate`: one scorer over one input, locally (row by row on the local engine, or the
                 scorer's batch kernel) or on Spark
    files        :func:`~goldeval.pipeline.files.score_file` / ``score_rows`` / ``judge_file`` /
                 ``judge_answer_file``: a scorer over a file in one call, on the local engine
    judging      ``judge_answers``: the data-answer judge over a case file and an attempt file, then the LLM stage
    recording    :class:`RunRecording`: which store and arm, start or resume a run (the resume policy)
    gating       load a definition of done before scoring, evaluate it after, finish the run with its decision
    llm_stage    the cases the rules leave undecided go to the LLM judge; verdicts merged and recorded
    spark        ``--engine spark``: score or judge on Spark, record as the partitions stream back
    result       :class:`Evaluation` (what a run hands back) and :class:`Observer` (hooks to watch it)

May import: engines, scorers, gates, runs, resultsfile, the domain packages (answers, judge, labels), io, errors. Never imports
``goldeval.cli`` and never prints or exits: what a caller shows comes through an :class:`Observer`, and the exit
decision is :attr:`Evaluation.exit_code`. Names are loaded on first use (``goldeval.cli`` imports
:mod:`~goldeval.pipeline.recording` at start-up).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from goldeval.pipeline.llm_stage import LlmStage, run_llm_stage
    from goldeval.pipeline.recording import RunRecording
    from goldeval.pipeline.result import Evaluation, Observer
    from goldeval.pipeline.run import evaluate

__all__ = ["Evaluation", "LlmStage", "Observer", "RunRecording", "evaluate", "run_llm_stage"]

_LAZY = {
    "Evaluation": "goldeval.pipeline.result",
    "LlmStage": "goldeval.pipeline.llm_stage",
    "Observer": "goldeval.pipeline.result",
    "RunRecording": "goldeval.pipeline.recording",
    "evaluate": "goldeval.pipeline.run",
    "run_llm_stage": "goldeval.pipeline.llm_stage",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'goldeval.pipeline' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
