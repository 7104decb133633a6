"""Every handed case file (../shared/cases/*.jsonl, or the vendored copy) is loaded, and every case in it is a test.

The handed cases are loaded by scorer, not by file (``conftest.load_handed_cases``), so a new file, or a case of
a scorer no test reads, would otherwise be skipped without a word. This check reads each file line by line and
finds each ``case_id`` among the parameters of the test that judges its scorer:

    public_cases.jsonl          token_f1, section_f1, classification, gate, answer_judge, llm_judge_parse
    seed_answer_judge.jsonl     answer_judge
    seed_classification.jsonl   classification, gate
    seed_token_f1_sample.jsonl  token_f1, token_f1_batch

(the file -> scorer list as handed on 2026-12-01; the test below reads the files, not this list).
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from conftest import handed_case_dir

TESTS = Path(__file__).resolve().parents[1]

#: scorer -> (test module under tests/, test function) that parametrizes over that scorer's handed cases.
LOADED_BY = {
    "token_f1": ("cases/test_handed_freetext.py", "test_token_f1_case"),
    "token_f1_batch": ("cases/test_handed_freetext.py", "test_token_f1_batch_case"),
    "section_f1": ("cases/test_handed_freetext.py", "test_section_f1_case"),
    "classification": ("cases/test_labels_cases.py", "test_handed_classification"),
    "gate": ("cases/test_labels_cases.py", "test_handed_gate"),
    "answer_judge": ("cases/test_answers_cases.py", "test_handed_answer_judge"),
    "llm_judge_parse": ("unit/test_judge_parse.py", "test_handed_llm_judge_parse"),
}


def _handed_files() -> list[Path]:
    return sorted(handed_case_dir().glob("*.jsonl"))


def _param_ids(module: str, function: str) -> set[str]:
    """The pytest ids of ``function``'s ``case`` parameters, read from its parametrize mark."""
    spec = importlib.util.spec_from_file_location(f"_handed_coverage_{Path(module).stem}", TESTS / module)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    marks = [m for m in getattr(getattr(mod, function), "pytestmark", []) if m.name == "parametrize"]
    assert marks, f"{module}::{function} is not parametrized over handed cases"
    return {p.id for m in marks for p in m.args[1]}


def test_there_are_handed_files():
    assert [f.name for f in _handed_files()], f"no *.jsonl under {handed_case_dir()}"


@pytest.mark.parametrize("path", _handed_files(), ids=lambda p: p.name)
def test_every_case_of_the_file_is_a_test(path: Path):
    cases = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if line.strip():
            case = json.loads(line)
            assert case.get("case_id"), f"{path.name}:{n}: no case_id"
            assert case.get("scorer") in LOADED_BY, (
                f"{path.name}:{n}: scorer {case.get('scorer')!r} is read by no test; add one and list it in LOADED_BY"
            )
            cases.append(case)
    assert cases, f"{path.name} holds no case"
    ids: dict[tuple[str, str], set[str]] = {}
    for case in cases:
        where = LOADED_BY[case["scorer"]]
        if where not in ids:
            ids[where] = _param_ids(*where)
        assert case["case_id"] in ids[where], (
            f"{path.name}: {case['case_id']} is not a parameter of {where[0]}::{where[1]}"
        )


def test_case_ids_are_unique_across_files():
    # A repeated id would make two tests share one pytest id, and a reader could not tell which one failed.
    seen: dict[str, str] = {}
    for path in _handed_files():
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                cid = json.loads(line)["case_id"]
                assert cid not in seen, f"{cid} is in both {seen[cid]} and {path.name}"
                seen[cid] = path.name
