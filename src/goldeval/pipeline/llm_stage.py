"""The rules-then-LLM stage of a data-answer run: the cases the rules could not decide go to the LLM judge, and its
verdicts are merged into the rule results and recorded.

Used by ``goldeval judge --llm MODEL`` and by any library caller that holds rule results from
:func:`goldeval.pipeline.files.judge_file` (``keep_materials=True``). Nothing here prints: what the stage did comes
back as an :class:`LlmStage` for the caller to show.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from goldeval.llm.accounting import CallTally
from goldeval.llm.options import LlmOptions, judge_config
from goldeval.answers.judge import llm_materials
from goldeval.answers.scorer import AnswerJudge
from goldeval.errors import InputError
from goldeval.io.reading import Row
from goldeval.io.reading import RowError
from goldeval.io.reading import check_ids
from goldeval.io.reading import read_rows
from goldeval.llm import JudgeCache
from goldeval.llm import judge_cases
from goldeval.llm.run import same_model
from goldeval.llm.wiring import case_materials
from goldeval.llm.wiring import from_answer_materials
from goldeval.llm.wiring import merge_llm
from goldeval.scoring.slices import sliced

__all__ = ["LlmStage", "read_checked", "refuse_answering_model", "run_llm_stage"]


@dataclass(slots=True)
class LlmStage:
    """What one LLM stage did.

    Attributes:
        results: The merged results (rule verdicts with the LLM's where it decided), or ``None`` after a dry run
            (the count is in ``judged`` and in the rule results' ``llm_dry_run``).
        judged: What :func:`goldeval.llm.judge_cases` returned (``aggregate`` with calls, tokens, spend; or the
            dry run's counts: ``sent``, ``calls``, ``cached``, ``http_calls``…).
        model: The judge model the calls went to. n_cases: The cases of the run (sent or not).
    """

    results: dict[str, Any] | None
    judged: dict[str, Any]
    model: str
    n_cases: int

    @property
    def spend_cap_reached(self) -> bool:
        """Whether the spend cap stopped calls in this stage."""
        return bool(((self.judged.get("aggregate") or {}).get("spend") or {}).get("reached"))


def read_checked(path: str) -> tuple[dict[str, dict[str, Any]], list[dict[str, Any]]]:
    """Rows of a case or attempt file by id, and a failure record for every line that cannot be used.

    Args:
        path: A JSONL (or CSV / Parquet) file of rows with an ``id``.

    Returns:
        ``(rows by id, failures)``: a failure is ``{"line", "id", "error", "file"}`` for a line that is not JSON,
        not an object, has no id or repeats an id: nothing is dropped silently.

    Raises:
        InputError: the file cannot be read.
    """

    name = os.path.basename(path)
    rows: dict[str, dict[str, Any]] = {}
    failures: list[dict[str, Any]] = []
    for item in check_ids(read_rows(path), file_name=name):
        if isinstance(item, RowError):
            failures.append({"line": item.line, "id": item.id, "error": item.error, "file": name})
        else:
            rows[str(item.data["id"])] = item.data
    return rows, failures


def _read_by_id(path: str) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for item in read_rows(path):
        if isinstance(item, Row) and item.data.get("id") is not None:
            out.setdefault(str(item.data["id"]), item.data)
    return out


def refuse_answering_model(attempts_path: str, judge_model: str | None) -> None:
    """Refuse, before any work, a judge model that produced some of the answers.

    Args:
        attempts_path: The attempt file; an attempt's ``model`` or ``answer_model`` field names its model.
        judge_model: The judge model (``--llm``).

    Raises:
        InputError: an attempt was answered by *judge_model* (a model never judges its own answers), naming the
            line.
    """

    for item in read_rows(attempts_path):
        if isinstance(item, Row):
            answered_by = item.data.get("model") or item.data.get("answer_model")
            if isinstance(answered_by, str) and same_model(answered_by, judge_model):
                raise InputError(
                    f"{attempts_path}:{item.line}: this answer was produced by {answered_by!r}, the judge model given "
                    f"with --llm ({judge_model!r}). A model never judges its own answers: choose another judge model."
                )


def run_llm_stage(rule_results: dict[str, Any], cases_path: str, attempts_path: str, opts: LlmOptions, *,
                  answer_config: Any = None, recorder: Any = None,
                  progress: Callable[[CallTally], None] | None = None, slice_by: str | None = None) -> LlmStage:
    """Send the cases of *rule_results* that the rules could not decide to the LLM judge and merge the verdicts.

    Args:
        rule_results: :func:`goldeval.pipeline.files.judge_file`'s results with ``keep_materials=True`` (their
            ``llm_materials``: the re-executed rows and the rule breakdown); changed in place.
        cases_path, attempts_path: The case and attempt files (a case reused from the store on resume has no
            materials: it is rebuilt from them).
        opts: The stage's :class:`~goldeval.llm.options.LlmOptions` (``send="all"``: every case, materials
            computed again for the rule-decided ones).
        answer_config: The rule judge's :class:`~goldeval.answers.judge.AnswerConfig` (for ``send="all"``).
        recorder: The run's recorder: the merged records of the cases sent are recorded again (the store keeps the
            last record of a case) and the run is finished with the merged results.
        slice_by: The run's slice field: the merged results' ``slices`` are aggregated again from the merged cases
            (each carries its ``slice``), so a slice counts the LLM's verdicts as the whole does.

    Returns:
        An :class:`LlmStage`; after a dry run its ``results`` is ``None`` and ``rule_results["llm_dry_run"]`` holds
        the count (so that an output still says what the run would do). Cases already decided by the LLM in a
        resumed run are skipped.

    Raises:
        InputError: a bad option, or the judge model answered these cases. JudgeError: the endpoint refuses.
    """

    config = judge_config(opts)
    attempts = _read_by_id(attempts_path)
    if opts.send == "all":

        raw_materials = llm_materials(cases_path, attempts_path, config=answer_config, only_undecided=False)
    else:
        raw_materials = rule_results.get("llm_materials") or []
    rule_results.pop("llm_materials", None)
    by_id = {str(r.get("id")): r for r in rule_results.get("per_example", [])}
    cases = None
    materials = []
    for m in raw_materials:
        cid = str(m.get("id"))
        rec = by_id.get(cid)
        if rec is None or ((rec.get("llm") is not None or rec.get("decided_by") == "llm") and not rec.get("capped")):
            continue  # not in this run, or already judged by the LLM (resumed run; one the spend cap left is judged now)
        model = (attempts.get(cid) or {}).get("model") or (attempts.get(cid) or {}).get("answer_model")
        if m.get("reused") or "golden" not in m:
            cases = cases if cases is not None else _read_by_id(cases_path)
            if cid in cases:
                materials.append(case_materials(cases[cid], attempts.get(cid), rec))
            continue
        materials.append(from_answer_materials(m, answer_model=model))
    cache = JudgeCache() if opts.cache else None
    try:
        judged = judge_cases(
            materials, config=config, cache=cache, repeat=opts.repeat, dry_run=opts.dry_run, send=opts.send,
            refresh=opts.refresh, progress=progress,  # no recorder here: the merged records are recorded below; a re-run is free via the cache
        )
    finally:
        if cache is not None:
            cache.close()
    if opts.dry_run:
        rule_results["llm_dry_run"] = judged
        return LlmStage(None, judged, config.model, len(by_id))
    merged = merge_llm(rule_results, judged)
    if slice_by is not None:
        judge = sliced(AnswerJudge(answer=answer_config), slice_by)
        jconfig = judge.configure()
        merged["slices"] = judge.finish(judge.new_partial(jconfig, keep_cases=False).update(merged["per_example"]),
                                        jconfig)["slices"]
    if recorder is not None:
        sent = {r["id"] for r in judged["per_example"] if r.get("sent_to_llm")}
        for rec in merged["per_example"]:
            if rec.get("id") in sent:
                recorder.record(rec)
        recorder.finish(merged)
    return LlmStage(merged, judged, config.model, len(by_id))
