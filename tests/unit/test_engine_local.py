"""The local engine records each case as soon as its scorer yields it (goldeval.engines.local.run, in this
process): an interrupt (KeyboardInterrupt, as Ctrl-C raises it) loses only the case in flight, on every path the
engine takes — a fresh file (records folded where they are scored), a file with a repeated id and a resumed run
(records taken one by one), rows in memory."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from goldeval.engines.local import run
from goldeval.freetext.scorer import TokenF1


class _Interrupting(TokenF1):
    """Token F1 that raises KeyboardInterrupt when it reaches the row with id ``boom`` (the case in flight)."""

    def score_batch(self, rows: Iterable[Any], config: Mapping[str, Any]) -> Iterator[dict[str, Any]]:
        for rec in super().score_batch(rows, config):
            if rec.get("id") == "boom":
                raise KeyboardInterrupt
            yield rec


class _Recorder:
    """The recorder protocol (previous / record / finish), keeping what is recorded in order."""

    def __init__(self, previous: dict[str, dict[str, Any]] | None = None) -> None:
        self._previous = previous or {}
        self.recorded: list[dict[str, Any]] = []
        self.finished = False

    def previous(self) -> dict[str, dict[str, Any]]:
        return self._previous

    def record(self, case: dict[str, Any]) -> None:
        self.recorded.append(dict(case))

    def finish(self, results: dict[str, Any]) -> None:
        self.finished = True


def _rows(ids: list[str]) -> list[dict[str, str]]:
    return [{"id": i, "prediction": "chest pain", "reference": "chest pain"} for i in ids]


def _write(path: Path, rows: list[dict[str, str]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _interrupted(source: Any, recorder: _Recorder) -> list[tuple[str, str]]:
    scorer = _Interrupting()
    config = scorer.configure(source="p.jsonl")
    with pytest.raises(KeyboardInterrupt):
        run(scorer, source, config, recorder=recorder)
    assert not recorder.finished
    return [(c["id"], c["status"]) for c in recorder.recorded]


def test_a_fresh_file_keeps_every_case_scored_before_the_interrupt(tmp_path: Path) -> None:
    # no repeated id: the chunk is folded where it is scored; a, b were scored before boom (same chunk of 500)
    f = _write(tmp_path / "p.jsonl", _rows(["a", "b", "boom", "c"]))
    assert _interrupted(f, _Recorder()) == [("a", "scored"), ("b", "scored")]


def test_a_file_with_a_repeated_id_keeps_every_case_scored_before_the_interrupt(tmp_path: Path) -> None:
    # a repeats on line 3: records taken one by one; the repeat is never recorded under the id
    f = _write(tmp_path / "p.jsonl", _rows(["a", "b", "a", "c", "boom"]))
    assert _interrupted(f, _Recorder()) == [("a", "scored"), ("b", "scored"), ("c", "scored")]


def test_a_resumed_run_keeps_every_new_case_scored_before_the_interrupt(tmp_path: Path) -> None:
    # a was recorded by the interrupted run (line 1): reused, not recorded again; b and c are new
    f = _write(tmp_path / "p.jsonl", _rows(["a", "b", "c", "boom"]))
    prev = {"a": {"status": "scored", "id": "a", "line": 1,
                  "whole_note": {"precision": 1.0, "recall": 1.0, "f1": 1.0}}}
    assert _interrupted(f, _Recorder(prev)) == [("b", "scored"), ("c", "scored")]


def test_rows_in_memory_keep_every_case_scored_before_the_interrupt() -> None:
    assert _interrupted(_rows(["a", "b", "boom"]), _Recorder()) == [("a", "scored"), ("b", "scored")]
