"""One scoring run end to end: inputs → engine → store → aggregate → gates → outputs (:func:`evaluate`).

``goldeval score`` is a thin client of it (parse options, call :func:`evaluate`, render, exit); a Python user gets
the same run, with the same resume policy, records, gate decision and results file::

    ev = goldeval.evaluate("token_f1", "preds.jsonl", gates="dod.toml", out="results.json")
    ev.aggregate["whole_note_f1_mean"], ev.gate_report.passed, ev.run_id, ev.exit_code
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
from goldeval.io.outputs import check_outputs
from goldeval.io.resultsfile import ResultsFile
from goldeval.scoring.registry import get_scorer
from goldeval.scoring.slices import sliced

__all__ = ["evaluate"]


def evaluate(
    scorer: str | Any,
    source: str | os.PathLike[str],
    *,
    options: Mapping[str, Any] | None = None,
    gates: str | os.PathLike[str] | None = None,
    store: str | None = None,
    arm: str | None = None,
    resume: str | None = None,
    record: bool = True,
    texts: bool = True,
    recording: RunRecording | None = None,
    out: str | None = None,
    out_format: str = "json",
    workers: int | None = None,
    engine: str = "local",
    spark_master: str = "local[2]",
    per_case: str | None = None,
    keep_cases: bool = True,
    on_example: Callable[[dict[str, Any]], None] | None = None,
    observer: Observer | None = None,
    guard: Mapping[str, Any] | None = None,
    batch_kernel: bool = True,
    definition: Any = None,
    input_role: str = "predictions",
    slice_by: str | None = None,
) -> Evaluation:
    """Run *scorer* over *source* with the run store, resume, gates and outputs; return what it decided.

    Args:
        scorer: A scorer's name (``"token_f1"``, ``"labels"``, ``"answer_judge"``, an entry point's name) or a
            :class:`~goldeval.scoring.protocol.Scorer` instance.
        source: The input file (JSONL, CSV or Parquet; with ``engine="spark"`` any path Spark reads).
        options: The scorer's options (``scorer.options`` names them), e.g. ``{"positive": "escalate"}``. A
            definition of done that agrees a ``positive`` label gives it to a scorer that takes one.
        gates: A definition of done (TOML). A gate on a metric this scorer never produces is refused before any
            scoring.
        store, arm, resume, record: Where the run is recorded (default ``$GOLDEVAL_HOME/goldeval.db``, else
            ``./.goldeval/goldeval.db``), its arm, the id of a run to resume; ``record=False`` records nothing. An
            unfinished run of the same inputs, scorer, configuration and arm is resumed.
        texts: Keep the input file (the case texts) with the finished run in the store, compressed, so that a report
            shows them after the file moved (:mod:`goldeval.runs.texts`); ``False`` is the CLI's ``--no-texts``.
        recording: A :class:`~goldeval.pipeline.recording.RunRecording` to use instead of those five (the CLI's).
        out, out_format: A results file (``'-'``: stdout), ``json`` or ``jsonl``; the per-example entries stream
            to it as they are scored. An output that is an input, the gates or the store is refused.
        workers: Processes for the local engine (default: every core for 10k rows or more).
        engine, spark_master, per_case: ``"local"`` or ``"spark"``; the Spark master; with Spark, a Parquet path
            for the per-case DataFrame.
        keep_cases: Keep ``per_example`` in the returned results (local engine; the store and *out* have every
            case either way).
        on_example: Called with each ``per_example`` entry as it is scored (local engine).
        observer: An :class:`~goldeval.pipeline.result.Observer` (progress, the run's note, summary, gate report).
        guard: More outputs of the caller (role → path) to check against the inputs and each other before any work.
        batch_kernel: Score a local file with the scorer's batch kernel when it has one
            (:meth:`~goldeval.scoring.protocol.Scorer.score_path`: the labels scorer's C reader) and ``workers`` is ``None``
            or 1; ``False`` scores it row by row on the local engine (``goldeval score``).
        definition: The definition of done already loaded from *gates* (it is not read again).
        input_role: The input's role in the run's record and key (``predictions``; ``goldeval labels``: ``labels``).
        slice_by: A case field (``difficulty``, a tag column): every metric also per value of it, under
            ``results["slices"]`` (:func:`goldeval.scoring.slices.sliced`), and gates under ``[gates.slices.NAME]``
            read them. ``None``: no slices; a definition of done with slice gates is then refused before scoring.

    Returns:
        An :class:`~goldeval.pipeline.result.Evaluation`: the results, the gate report, the run id, the exit
        decision (0 pass, 1 a gate fails, 2 nothing could be scored).

    Raises:
        InputError: bad input (a missing file, an unknown scorer or option, a bad gates file, an output over an
            input, no positive label for ``labels``). StoreError: the store cannot be written.

    Example:
        >>> import json, tempfile, os
        >>> d = tempfile.mkdtemp()
        >>> path = os.path.join(d, "p.jsonl")
        >>> with open(path, "w") as fh:
        ...     _ = fh.write(json.dumps({"id": "a", "prediction": "bp 138/86", "reference": "bp 138/86"}) + "\\n")
        >>> evaluate("token_f1", path, record=False).aggregate["whole_note_f1_mean"]
        1.0
    """

    observer = observer if observer is not None else Observer()
    if recording is None:
        recording = RunRecording(store=store, no_store=not record, no_texts=not texts, arm=arm, resume=resume)
    file = os.fspath(source)
    out_path = None if out is None else os.fspath(out)
    if engine == "spark":

        name = scorer if isinstance(scorer, str) else scorer.name
        from goldeval.pipeline.spark import score_on_spark  # start-up: the Spark path loads the judge (numpy, scipy)
        return score_on_spark(name, file, dict(options or {}), master=spark_master, per_case=per_case, out=out_path,
                              out_format=out_format, gates=gates, recording=recording, observer=observer, guard=guard,
                              slice_by=slice_by)
    if engine != "local":
        raise InputError(f"evaluate: engine must be 'local' or 'spark', got {engine!r}.")
    if per_case is not None:
        raise InputError("--per-case writes the per-case Parquet of a Spark run: give it with --engine spark.")

    # an output that is the input, the gates or the store, or that cannot be written, fails before any scoring
    check_outputs({"--out": out_path, **(guard or {})}, {"FILE": file, "--gates": gates, "--store": recording.files()})
    scorer = get_scorer(scorer) if isinstance(scorer, str) else scorer  # registers its metrics with the gates
    if scorer.one_file_hint is not None:
        raise InputError(f"the {scorer.name} scorer does not score one file's rows: {scorer.one_file_hint}")
    opts = dict(options or {})
    # a bad gates file, or a gate on a metric this scorer never produces, fails before any scoring
    if definition is None:
        definition = load_definition(gates, scorer=scorer.name)
    check_slice_gates(definition, slice_by)
    if slice_by is not None:
        scorer = sliced(scorer, slice_by)  # (no batch kernel: the rows are scored one by one, each read for its slice)
    if "positive" in scorer.options and definition is not None and getattr(definition, "positive", None) is not None:
        # as `goldeval labels` does: the agreed positive label of the definition of done is the run's
        if opts.get("positive") is not None and opts["positive"] != definition.positive:
            raise InputError(f"-O positive={opts['positive']}: the definition of done {gates} agreed positive = "
                             f"{definition.positive!r}. Drop -O positive or use the gates file for this label.")
        opts["positive"] = definition.positive
    config = scorer.configure(**opts, source=os.path.basename(file))
    kernel = batch_kernel and scorer.has_batch_kernel and workers in (None, 1)
    if not kernel:  # (a kernel reads the whole input and says what it shows: the labels it saw, for a positive)
        scorer.check_run_config(config)  # refused before anything is read or recorded (no run is left behind)
    gate_report = None
    with contextlib.ExitStack() as stack:
        writer = None
        if out_path:

            writer = stack.enter_context(ResultsFile(out_path, out_format))
            writer.begin(scorer.results_head(config))

        def to_writer_and_caller(entry: dict[str, Any]) -> None:
            if writer is not None:
                writer.example(entry)
            on_example(entry)  # type: ignore[misc]  # (only set when on_example is given)

        def to_writer_and_caller_batch(entries: list[dict[str, Any]]) -> None:
            if writer is not None:
                writer.examples(entries, flat=True)  # (a kernel's entries hold scalars only)
            if on_example is not None:
                for entry in entries:
                    on_example(entry)

        # without a caller's on_example the entries go to the file as the JSON the scoring process (or the kernel's
        # reader) wrote
        sink: dict[str, Any] = {}
        if on_example is not None:
            sink = {"on_examples": to_writer_and_caller_batch} if kernel else {"on_example": to_writer_and_caller}
        elif writer is not None:
            sink = {"on_example_lines": writer.example_lines}  # (a kernel's, or the pool's workers' bodies of entries)
        with recording.recording(
            scorer_name=scorer.name, scorer_version=scorer.version, inputs={input_role: file},
            config=scorer.store_config(config), tokenizer=config.get("tokenizer"), dod=gates,
        ) as recorder:
            hold_finish_for_gates(recorder, definition)  # the run is finished once, with its gate report
            if kernel:
                results = scorer.score_path(file, config, recorder=recorder, keep_cases=keep_cases,
                                            on_total=observer.total, progress=observer.progress, **sink)
            else:
                # (here, not above: the engine loads multiprocessing, which a batch kernel never needs)

                from goldeval.engines.local import run  # start-up: multiprocessing loads only for row-by-row scoring
                # (record_blocks: nothing records a case of this run again, so its scored cases may go as blocks)
                results = run(scorer, file, config, workers=workers, recorder=recorder, progress=observer.progress,
                              on_total=observer.total, keep_cases=keep_cases, record_blocks=True, **sink)
            if recording.note:
                observer.recorded(recording.note)
            observer.summary(results, scorer)
            gate_report = apply_definition(results, definition, recorder=recorder)
            if gate_report is not None:
                observer.gates(gate_report)
        recording.stamp(results)  # the top-level "run": {id, arm, store} (absent without a store)
        if writer is not None:
            writer.close(results)
    return Evaluation(results, gate_report, recording.run_id, recording.resumed, _nothing_scored(results, file))


def _nothing_scored(results: Mapping[str, Any], file: str) -> str | None:
    """Why no row of *file* could be scored, or ``None`` when one was."""
    agg = results["aggregate"]
    if agg.get("n_scored", agg.get("n")) != 0:
        return None
    first = results["failures"][0]["error"] if results.get("failures") else "no rows"
    return f"no row of {file} could be scored ({agg.get('n_failed', 0)} failed); the first: {first}"

