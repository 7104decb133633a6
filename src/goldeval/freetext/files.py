"""Batch free-text scoring: token F1 of every row of a JSONL file, per example and macro-averaged.

Rows are ``{"id", "prediction", "reference"}`` with strings (whole note) or objects of section name → text
(sections; the whole note is then the pooled text). The output follows upstream Open-Scribe ``run_eval.py``:
``aggregate`` {``n``, ``n_failed``, ``elapsed_sec``, ``whole_note_f1_mean``, ``whole_note_precision_mean``,
``whole_note_recall_mean``} and ``per_example`` [{``id``, ``whole_note``: {``precision``, ``recall``, ``f1``}}],
plus what a user needs: the tokenizer, ``n_scored``, ``n_rows``, ``failures`` with line numbers, section scores.

As upstream, ``n`` counts the scored rows and failed rows are left out of the means (that is how the published
PriMock57 and ACI-Bench figures were computed); unlike upstream, every failure is listed with its line and reason.

The work is done by the one Scorer interface: the row rule and the aggregation are :class:`goldeval.freetext.scorer.TokenF1`,
run by the local engine (:func:`goldeval.engines.local.run`: a first pass for repeated ids, chunks scored in this
process or on every core, the store written beside the scoring). Large files (≥ ``PARALLEL_MIN_ROWS`` rows) are scored
on every core when ``workers`` is ``None``. With ``keep_per_example=False`` (what ``goldeval score`` does: the examples
stream to ``--out`` and to the store) memory does not grow with the file: means are exact running sums, repeated ids
are found by a first pass (see ``goldeval.io.ids``).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from typing import Any

from goldeval.engines.local import PARALLEL_MIN_ROWS, run
from goldeval.freetext.scorer import (
    SCORER_NAME,
    SCORER_VERSION,
    FreeTextConfig,
    TokenF1,
    results_head,
)
from goldeval.freetext.tokens import Tokenizer, get_tokenizer
from goldeval.io.reading import check_input_file

__all__ = ["FreeTextConfig", "results_head", "score_file", "score_rows", "SCORER_NAME", "SCORER_VERSION", "PARALLEL_MIN_ROWS"]


def score_file(
    path: str | os.PathLike[str],
    *,
    prediction_field: str = "prediction",
    reference_field: str = "reference",
    id_field: str = "id",
    tokenizer: str | Tokenizer = "openscribe",
    workers: int | None = 1,
    recorder: Any = None,
    progress: Callable[[int], None] | None = None,
    on_total: Callable[[int], None] | None = None,
    keep_per_example: bool = True,
    on_example: Callable[[dict[str, Any]], None] | None = None,
) -> dict[str, Any]:
    """Token F1 of every row of a JSONL file: the results dict the ``goldeval score`` command writes.

    Memory does not grow with the rows when ``keep_per_example`` is false: the means are exact running sums
    (:class:`goldeval.scoring.sums.ExactSum`, equal to :func:`statistics.mean` to the last digit), ids are checked for
    repeats by a first pass that keeps only the hashes seen twice, and each example goes to ``on_example`` (a
    streaming writer) and to the recorder as it is scored. Only ``failures`` (one entry per row that could not be
    scored) is kept.

    Args:
        path: JSONL file, one ``{"id", <prediction_field>, <reference_field>}`` object per line, UTF-8.
            Each text field is a string (whole note) or an object of section name → text (sections).
        prediction_field, reference_field, id_field: Field names to read.
        tokenizer: Token rule name or object (default ``openscribe``, the published figures' rule).
        workers: Processes to score with (default 1). ``None``: automatic — one below ``PARALLEL_MIN_ROWS`` rows,
            else every core (what the CLI does). More than one worker starts processes, so a script that asks for
            them needs the usual ``if __name__ == "__main__":`` guard (Python's multiprocessing rule). Capped at the
            number of cores.
        recorder: Run-store recorder (``previous()``, ``record(case)``, ``finish(results)``) or ``None``.
            Rows already recorded as scored are taken from it, not scored again. A ``record`` that also takes
            ``status=`` (as :class:`goldeval.Recorder`'s does) is given each scored row with ``status="scored"``;
            otherwise it is given ``{"status": "scored", **row}``.
        progress: Called with the number of rows just finished (for a progress bar).
        on_total: Called once with the number of lines in the file before scoring starts.
        keep_per_example: Keep every example in ``results["per_example"]`` (default). False: that key holds
            ``{"$streamed": true, "n": int, "ids_sha256": str}`` instead (the count of examples and the sha256 of the
            JSON array of their ids, in order, which the run store checks its cases against).
        on_example: Called with each ``per_example`` entry, in order, as soon as it is scored (e.g. the
            ``goldeval score --out`` writer); the entry must not be changed.

    Returns:
        ``{"scorer", "tokenizer", "config", "input", "aggregate", "per_example", "failures"}``. ``aggregate`` has
        ``n`` (= ``n_scored``, rows scored), ``n_failed``, ``n_rows``, ``elapsed_sec``, ``whole_note_f1_mean``,
        ``whole_note_precision_mean``, ``whole_note_recall_mean`` (macro-averages over scored rows, unrounded;
        ``null`` when no row could be scored, as upstream), ``tokenizer``, ``n_with_unreadable_text`` (scored rows
        holding some letters the rule could not read: they are scored on the rest and flagged ``unreadable``;
        under openscribe ``n_with_split_words`` counts those where a word was split at a non-ASCII letter, "Café" →
        caf, with ``first_split_word``),
        ``undefined`` (metric → reason, when no row could be scored), and for sectioned rows
        ``section_f1_mean`` (and precision/recall) with per-section means in ``sections``. ``per_example`` items:
        ``{"id", "line", "whole_note": {"precision", "recall", "f1"}, "tokens": {...}}`` (+ ``sections``,
        ``section_macro``). ``failures``: ``[{"line", "id", "error"}]`` — rows left out of the means.

    Raises:
        InputError: missing, empty or non-UTF-8 file; unknown tokenizer.

    Source:
        Output keys of Open-Scribe ``eval/run_eval.py``; scores as :func:`goldeval.token_f1`.
    """

    p = check_input_file(path)
    scorer = TokenF1()
    config = scorer.configure(prediction_field=prediction_field, reference_field=reference_field, id_field=id_field,
                              tokenizer=get_tokenizer(tokenizer).name, source=p.name)
    return run(scorer, p, config, workers=workers, recorder=recorder, progress=progress, on_total=on_total,
               on_example=on_example, keep_cases=keep_per_example)


def score_rows(
    rows: Iterable[dict[str, Any]],
    *,
    prediction_field: str = "prediction",
    reference_field: str = "reference",
    id_field: str = "id",
    tokenizer: str | Tokenizer = "openscribe",
    recorder: Any = None,
    keep_per_example: bool = True,
    on_example: Callable[[dict[str, Any]], None] | None = None,
) -> dict[str, Any]:
    """:func:`score_file` over in-memory rows (dicts); row numbers in messages count from 1 (``rows:N: ...``). Same
    output, with ``input`` ``{"path": None, "sha256": None, "workers": 1}``. (Ids are kept to find repeats: the rows
    are in memory already.)"""

    scorer = TokenF1()
    config = scorer.configure(prediction_field=prediction_field, reference_field=reference_field, id_field=id_field,
                              tokenizer=get_tokenizer(tokenizer).name, source="rows")
    return run(scorer, rows, config, recorder=recorder, on_example=on_example, keep_cases=keep_per_example,
               extra={"input": {"path": None, "sha256": None, "workers": 1}})
