"""A data-answer run end to end, on this machine: the rule judge over a case file and an attempt file, the
rules-then-LLM stage, the store, the gates and the results file (``goldeval judge`` without ``--engine spark``).

Without an LLM judge every case streams, as it is judged, to the results file, to the store and to the caller's
``on_example``: nothing is kept per case. With one, the rule results are kept whole (the LLM stage merges into them)
and the file is written at the end.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Mapping
from typing import Any

from goldeval.errors import InputError
from goldeval.pipeline.gating import apply_definition, check_slice_gates, hold_finish_for_gates, load_definition
from goldeval.pipeline.recording import RunRecording
from goldeval.pipeline.result import Evaluation, Observer
from goldeval.answers.databases import DatabaseDir
from goldeval.answers.databases import case_database_names
from goldeval.answers.judge import JUDGE_NAME
from goldeval.answers.judge import JUDGE_VERSION
from goldeval.answers.postgres import is_postgres_url
from goldeval.answers.scorer import AnswerJudge
from goldeval.io.outputs import check_outputs
from goldeval.io.outputs import sqlite_files
from goldeval.io.reading import read_rows
from goldeval.io.resultsfile import ResultsFile
from goldeval.io.resultsfile import write_results
from goldeval.llm.client import JudgeClient
from goldeval.llm.options import LlmOptions
from goldeval.llm.options import cache_files
from goldeval.llm.options import judge_config
from goldeval.pipeline.files import judge_file
from goldeval.pipeline.llm_stage import refuse_answering_model
from goldeval.pipeline.llm_stage import run_llm_stage
from goldeval.runs.corrected import add_corrected_pass_rate, calibration_from, corrected_pass_rate
from goldeval.runs.recorder import rubric_text

__all__ = ["judge_answers", "named_databases"]


def named_databases(cases: str, db_dir: str | None) -> dict[str, str]:
    """name → file of each database the case file names (``"db"``) that resolves under *db_dir* ({} without one).

    Args:
        cases: The case file. db_dir: The folder of databases (``--db-dir``), or ``None``.

    Returns:
        The databases found (a missing case file: {} — the judge names it).
    """
    if db_dir is None:
        return {}

    if not os.path.isfile(cases):
        return {}  # the judge names the missing file
    names = case_database_names(read_rows(cases))
    return DatabaseDir(db_dir, open_one=lambda path: None).files(names)


class _NoFinish:
    """A recorder that passes everything through except ``finish`` (the rule stage of a run with an LLM judge)."""

    def __init__(self, recorder: Any) -> None:
        self._recorder = recorder

    def finish(self, results: dict[str, Any]) -> None:
        pass

    def __getattr__(self, name: str) -> Any:
        return getattr(self._recorder, name)


def judge_answers(
    cases: str,
    attempts: str,
    config: Any,
    *,
    llm_opts: Any = None,
    gates: str | os.PathLike[str] | None = None,
    recording: RunRecording | None = None,
    out: str | None = None,
    out_format: str = "json",
    on_example: Callable[[dict[str, Any]], None] | None = None,
    observer: Observer | None = None,
    guard: Mapping[str, Any] | None = None,
    calibration: str | os.PathLike[str] | None = None,
    slice_by: str | None = None,
) -> Evaluation:
    """Judge *attempts* against *cases* by rule (then by the LLM where the rules cannot decide), record, gate, write.

    Args:
        cases, attempts: The case file and the attempt file (JSONL).
        config: The rule judge's :class:`~goldeval.answers.judge.AnswerConfig` (database, bounds, checks).
        llm_opts: :class:`~goldeval.llm.options.LlmOptions` (``None`` or no model: rules only).
        gates: A definition of done (a gate on a metric the judge never produces is refused before any judging).
        recording: The run's :class:`~goldeval.pipeline.recording.RunRecording` (default: the default store).
        out, out_format: The results file (``'-'``: stdout), ``json`` or ``jsonl``.
        on_example: Called with each ``per_example`` entry (the merged one with an LLM judge), in order.
        observer: Hooks: ``ready`` (before the first case), ``total`` (the cases) and ``progress`` (one a case
            judged by rule), ``llm_progress`` (the LLM stage's running tally), ``llm_stage``, ``recorded``,
            ``summary``, ``gates``.
        guard: More outputs of the caller to check against the inputs before any work.
        calibration: A calibration set of human verdicts (a ``review stats --out`` JSON, a regressions file, or a
            run of the store whose reviews were imported; :func:`goldeval.runs.corrected.load_calibration`): the
            results gain the pass rate corrected for the judge's measured error (``corrected_pass_rate`` and the
            aggregate's ``pass_rate_corrected``, ``_low``, ``_high``), before the gates read them. Read before any
            judging.
        slice_by: A case field (``difficulty``, ``db``): every metric per value of it too (``results["slices"]``,
            after the LLM stage when there is one); gates under ``[gates.slices.NAME]`` read them.

    Returns:
        An :class:`~goldeval.pipeline.result.Evaluation`: ``dry_run`` after an LLM dry run (nothing judged or
        recorded; the count in ``results["llm_dry_run"]``), ``problem`` when no case could be judged.

    Raises:
        InputError: bad input (an output over an input, a bad gates file, LLM options without a model, the judge
            model answered these cases). JudgeError: the LLM endpoint is not ready. StoreError: the store fails.
    """

    observer = observer if observer is not None else Observer()
    recording = recording if recording is not None else RunRecording()
    llm_opts = llm_opts if llm_opts is not None else LlmOptions()
    named = named_databases(cases, config.db_dir)  # name -> file of every database the cases name (their sha256 key the run)
    server = is_postgres_url(config.db)
    db = config.db
    check_outputs({"--out": out, **(guard or {})},
                  {"CASES": cases, "ATTEMPTS": attempts, "--db": None if server else sqlite_files(db), "--gates": gates,
                   "--calibration": calibration if calibration is not None and os.path.isfile(calibration) else None,
                   "--store": recording.files(), "judge cache": cache_files(llm_opts),
                   **{f"database {name!r}": sqlite_files(path) for name, path in named.items()}})
    # a bad gates file, or a gate on a metric the judge never produces, fails before any judging
    definition = load_definition(gates, scorer=JUDGE_NAME)
    # the calibration set is read before any judging (a bad file, a run that is not in the store fail now); it is
    # read before this run is recorded, so `latest` names the run before it
    check_slice_gates(definition, slice_by)
    calib = None if calibration is None else calibration_from(calibration, recording.store)
    if llm_opts.dry_run and not llm_opts.enabled:
        raise InputError("--dry-run counts the calls the LLM judge would make: give --llm MODEL with it.")
    if (llm_opts.max_cost is not None or llm_opts.max_calls is not None) and not llm_opts.enabled:
        raise InputError("--max-cost / --max-calls cap the LLM judge's calls, and no LLM judge runs: give --llm MODEL "
                         "with them, or drop them.")
    if llm_opts.enabled:

        refuse_answering_model(attempts, judge_config(llm_opts).model)  # before any judging, not after the rules
        if not llm_opts.dry_run:  # no key, no client library: fail before a run is recorded, not after the rules

            JudgeClient(judge_config(llm_opts)).check_ready()
        if llm_opts.dry_run:
            recording.no_store = True  # a dry run records nothing: it must not become `latest` in the store
    # A server database is opened before the run is recorded: its identity (server version, database, catalog
    # sha256) stands in for a file's sha256 in the run key, so a run resumes only on the same database.
    database = config.open_database() if server else None
    inputs = {"cases": cases, "attempts": attempts, "db": None if server else db, **{f"db:{name}": path for name, path in named.items()}}
    identities = {"db": database.identity()} if database is not None else None
    state: dict[str, Any] = {"first_reason": None}
    report = None
    try:
        with contextlib.ExitStack() as stack:
            writer = None
            if out and not llm_opts.enabled:

                writer = stack.enter_context(ResultsFile(out, out_format))
                writer.begin({"scorer": {"name": AnswerJudge.name, "version": AnswerJudge.version}, "config": config.to_dict()})

            def each(entry: dict[str, Any]) -> None:
                if writer is not None:
                    writer.example(entry)
                if state["first_reason"] is None and entry.get("reason"):
                    state["first_reason"] = entry["reason"]
                if on_example is not None:
                    on_example(entry)

            with recording.recording(
                scorer_name=JUDGE_NAME, scorer_version=JUDGE_VERSION, inputs=inputs,
                config={**config.to_dict(), **llm_opts.run_config()}, judge_version=JUDGE_VERSION,
                rubric_text=rubric_text(cases), dod=gates, identities=identities,
            ) as recorder:
                hold_finish_for_gates(recorder, definition)  # the run is finished once, with its gate report
                if calib is not None and recorder is not None:
                    recorder.hold_finish = True  # ... and with its corrected pass rate
                observer.ready(database, config)
                if llm_opts.enabled:
                    # With an LLM judge the run is finished by the LLM stage: if that stage fails (no key, endpoint
                    # down) the run is left interrupted (resumable), never finished on the rule verdicts alone.

                    results = judge_file(cases, attempts, config=config, recorder=_NoFinish(recorder) if recorder is not None else None,
                                         keep_materials=True, db=database, on_total=observer.total,
                                         progress=observer.progress, slice_by=slice_by)
                    stage = run_llm_stage(results, cases, attempts, llm_opts, answer_config=config, recorder=recorder,
                                          progress=None if llm_opts.dry_run else observer.llm_progress, slice_by=slice_by)
                    observer.llm_stage(stage)
                    if stage.results is None:  # a dry run: the output gets the rule results and the count
                        if out:

                            write_results(results, out, out_format)
                        return Evaluation(results, None, None, False, None, dry_run=True)
                    results = stage.results
                    for entry in results["per_example"]:
                        each(entry)
                else:
                    results = judge_file(cases, attempts, config=config, recorder=recorder, db=database,
                                         keep_per_example=False, on_example=each, on_total=observer.total,
                                         progress=observer.progress, slice_by=slice_by)
                if recording.note:
                    observer.recorded(recording.note)
                if calib is not None:
                    add_corrected_pass_rate(results, corrected_pass_rate(results["aggregate"], calib, judge_version=JUDGE_VERSION))
                    if definition is None and recorder is not None:
                        recorder.hold_finish = False
                        recorder.finish(results)
                observer.summary(results, AnswerJudge)
                report = apply_definition(results, definition, recorder=recorder)
                if report is not None:
                    observer.gates(report)
            recording.stamp(results)  # the top-level "run": {id, arm, store} (absent without a store)
            if writer is not None:
                writer.close(results)
            elif out:

                write_results(results, out, out_format)
    finally:
        if database is not None:
            database.close()
    agg = results["aggregate"]
    problem = None
    if agg.get("n", 0) == 0 or agg.get("unscored", 0) == agg.get("n", 0):
        first = state["first_reason"] or (results["failures"][0]["error"] if results.get("failures") else "no case")
        problem = (f"no case could be judged ({agg.get('n', 0)} cases, {agg.get('unscored', 0)} unscored); the first: "
                   f"{first.rstrip('.')}. Check the argument order (CASES first, then ATTEMPTS) and --db.")
    return Evaluation(results, report, recording.run_id, recording.resumed, problem)
