"""What the gates and the report know of a scorer comes from the scorer (issue 27: "nothing branches on a scorer's
name outside that scorer"): its metric families (``Scorer.gate_families``) and the results names whose inputs are
recorded by sha256 only (``Scorer.inputs_as_hashes``). Each hook is tested both ways: a scorer that declares it is
treated so under its own name, one that does not is not, and the built-ins keep today's behaviour."""

from __future__ import annotations

import pytest

from goldeval.errors import InputError
from goldeval.gates import metrics
from goldeval.gates.definition import parse_gates
from goldeval.gates.evaluate import check_scorer, evaluate_gates
from goldeval.labels.scorer import Labels
from goldeval.pipeline.gating import apply_definition, load_definition
from goldeval.report.sources import input_files
from goldeval.scoring import registry
from goldeval.scoring.registry import gate_families, register_scorer

FREE_TEXT_GATE = "[gates]\nn_scored = { min = 1 }\nwhole_note_f1_mean = { min = 0.2 }\n"
LABELS_GATE = "[gates]\nn_scored = { min = 1 }\nrecall = { min = 0.5 }\n"


@pytest.fixture
def clean_registry(monkeypatch):
    # the registered scorers and results producers of this test only
    monkeypatch.setattr(registry, "_REGISTERED", {})
    monkeypatch.setattr(metrics, "PRODUCERS", dict(metrics.PRODUCERS))


def test_the_built_in_families_come_from_the_scorers(clean_registry):
    # each built-in scorer declares its family; llm_judge results are the answer judge's (AnswerJudge.result_names)
    assert gate_families("token_f1") == {"free_text"}
    assert gate_families("labels") == {"labels"}
    assert gate_families("answer_judge") == {"answers"}
    assert gate_families("llm_judge") == {"answers"}
    # results a command writes without a scorer are the gates' own; an unknown name has none (matched by its keys)
    assert gate_families("golden_health") == {"golden_health"}
    assert gate_families("judge_calibration") == {"calibration"}
    assert gate_families("no_such_scorer") is None and gate_families(None) is None


def test_a_scorer_declaring_its_family_has_other_families_gates_refused(clean_registry, tmp_path):
    @register_scorer
    class Labeler(Labels):
        name = "my_labeler"  # a relabelled copy of the labels scorer: its results hold the labels metrics

    assert gate_families("my_labeler") == {"labels"}
    dod = tmp_path / "dod.toml"
    dod.write_text(FREE_TEXT_GATE)
    # the message check_scorer gives for a built-in (tests/unit/test_gating_option.py), with this scorer's name
    with pytest.raises(InputError, match=r"dod\.toml:3: gate on 'whole_note_f1_mean' \(free_text metric\), but scorer "
                                         r"'my_labeler' never produces it; it can gate: .*recall"):
        load_definition(str(dod), scorer="my_labeler")
    dod.write_text(LABELS_GATE)
    assert load_definition(str(dod), scorer="my_labeler") is not None  # its own family: accepted
    # on its results too, even when their aggregate holds no key of the family (it is not guessed from the keys)
    results = {"scorer": {"name": "my_labeler"}, "aggregate": {"n_scored": 3, "undefined": {}}}
    with pytest.raises(InputError, match="comes from scorer 'my_labeler', which never produces it"):
        apply_definition(results, parse_gates(FREE_TEXT_GATE))


def test_a_scorer_declaring_no_family_is_not_checked(clean_registry):
    @register_scorer
    class Quiet(Labels):
        name = "quiet_labeler"
        gate_families = ()

    assert gate_families("quiet_labeler") is None
    check_scorer(parse_gates(FREE_TEXT_GATE), "quiet_labeler")  # nothing declared: nothing refused before the run
    # after the run, the results are matched by their keys: a free-text aggregate takes a free-text gate
    agg = {"n_scored": 2, "whole_note_f1_mean": 0.25, "undefined": {}}
    report = evaluate_gates({"scorer": {"name": "quiet_labeler"}, "aggregate": agg}, parse_gates(FREE_TEXT_GATE))
    assert [g.status for g in report.results] == ["pass", "pass"]  # by hand: 2 >= 1, 0.25 >= 0.2


def test_a_misspelt_family_is_refused_with_the_families_there_are(clean_registry):
    class Typo(Labels):
        name = "typo_labeler"
        gate_families = ("label",)

    with pytest.raises(InputError, match=r"scorer 'typo_labeler': gate_families \['label'\]: .*no gateable metric "
                                         r"belongs to family label; the families are: answers, .*labels"):
        register_scorer(Typo)


def test_registering_a_producer_is_what_the_gates_read(clean_registry):
    assert metrics.families_of("made_up") is None
    metrics.register_producer("made_up", ["free_text"])
    assert metrics.families_of("made_up") == {"free_text"}
    with pytest.raises(InputError, match="scorer 'made_up' never produces it"):
        check_scorer(parse_gates(LABELS_GATE), "made_up")


RUN_INPUTS = {"cases": "cases.jsonl", "attempts": "attempts.jsonl", "cases_sha256": "c" * 64,
              "attempts_sha256": "a" * 64}
HASHED_INPUTS = {"cases": "c" * 64, "attempts": "a" * 64, "rules": "r" * 64}


def test_inputs_by_hash_only_where_the_scorer_says_so(clean_registry):
    # `goldeval llm-judge --out` names each input by its sha256 (AnswerJudge.inputs_as_hashes = ("llm_judge",))
    assert input_files({"scorer": {"name": "llm_judge"}, "inputs": HASHED_INPUTS}, None) == {
        role: {"path": None, "sha256": HASHED_INPUTS[role]} for role in ("cases", "attempts", "rules")}
    # the judge's own results name paths, with their sha256 beside
    assert input_files({"scorer": {"name": "answer_judge"}, "inputs": RUN_INPUTS}, None) == {
        "cases": {"path": "cases.jsonl", "sha256": "c" * 64}, "attempts": {"path": "attempts.jsonl", "sha256": "a" * 64}}

    @register_scorer
    class Hasher(Labels):
        name = "my_hasher"
        inputs_as_hashes = ("my_hasher",)

    # a scorer that declares it is read the same way under its own name; one that does not, as paths
    assert input_files({"scorer": {"name": "my_hasher"}, "inputs": HASHED_INPUTS}, None)["rules"] == {
        "path": None, "sha256": "r" * 64}
    assert input_files({"scorer": {"name": "labels"}, "inputs": RUN_INPUTS}, None)["cases"] == {
        "path": "cases.jsonl", "sha256": "c" * 64}


def test_results_whose_scorer_is_not_an_object_are_gated_by_their_keys(clean_registry):
    # a hand-edited results file: no scorer to ask, so no crash (exit 3) but the keys' families, as evaluate_gates does
    results = {"scorer": "labels", "aggregate": {"n_scored": 4, "recall": 0.75, "undefined": {}}}
    report = apply_definition(results, parse_gates(LABELS_GATE))
    assert [g.status for g in report.results] == ["pass", "pass"]  # by hand: 4 >= 1, 0.75 >= 0.5
    with pytest.raises(InputError, match="comes from scorer None, which never produces it"):
        apply_definition({**results, "gates": None}, parse_gates(FREE_TEXT_GATE))
