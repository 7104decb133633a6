"""The semantic_similarity scorer: WordLlama's own published example values reproduced, paraphrases above unrelated
texts on a hand-made set, the weights loaded from the installed package with the network off, the model in the run's
key, sections, gates and the CLI.

Published values: WordLlama README, "Quick Start" (github.com/dleemiller/WordLlama, README.md at commit 071a6569):
``wl.similarity("i went to the car", "i went to the pawn shop")`` prints 0.06641249096796882, and
``wl.rank("i went to the car", [...park, ...shop, ...truck, ...vehicle])`` prints vehicle 0.7441646856486314,
truck 0.2832691551894259, shop 0.19732814982305436, park 0.15101404519322253. (The README's later revisions print the
same numbers rounded to 4 places beside capitalised inputs, "I went to the car"; the numbers are those of the
lowercase inputs: capitalised, this model gives 0.0619 for the first pair.) The embeddings are float32, so the values
are compared to 1e-6.
"""

from __future__ import annotations

import importlib.metadata
import json
import socket
from pathlib import Path

import pytest
from click.testing import CliRunner

from conftest import EXAMPLES
from goldeval.cli import main
from goldeval.errors import InputError
from goldeval.io import read_rows
from goldeval.runs.store import RunStore
from goldeval.scoring.registry import get_scorer

pytest.importorskip("wordllama")  # the `semantic` extra (the `test` extra installs it)

from goldeval.freetext import semantic  # noqa: E402  (after the skip: the module needs the extra to score)
from goldeval.freetext.semantic import semantic_similarity, similarity_pairs  # noqa: E402


@pytest.fixture(scope="module", autouse=True)
def _network_off():
    """No socket may connect while these tests run: the model must come from the installed package."""
    real = socket.socket.connect

    def refuse(self, *args, **kwargs):
        raise OSError("network is off in tests/unit/test_semantic.py")

    socket.socket.connect = refuse
    semantic.load_model.cache_clear()  # loaded here, with the network off, not by an earlier test
    try:
        yield
    finally:
        socket.socket.connect = real


def test_the_readme_example_values_are_reproduced():
    assert semantic_similarity("i went to the car", "i went to the pawn shop") == pytest.approx(0.06641249096796882, abs=1e-6)
    candidates = {"i went to the vehicle": 0.7441646856486314, "i went to the truck": 0.2832691551894259,
                  "i went to the shop": 0.19732814982305436, "i went to the park": 0.15101404519322253}
    got = similarity_pairs(list(candidates), ["i went to the car"] * len(candidates))
    assert got == pytest.approx(list(candidates.values()), abs=1e-6)


def test_the_weights_come_from_the_installed_wheel():
    info = semantic.model_info()
    assert info == {"library": "wordllama", "library_version": importlib.metadata.version("wordllama"),
                    "name": "l2_supercat", "dim": 256, "weights": "wordllama/weights/l2_supercat_256.safetensors"}
    import wordllama

    assert (Path(wordllama.__file__).parent.parent / info["weights"]).is_file()
    assert semantic.load_model().inference.embedding.shape[1] == 256


# A hand-made set. Each paraphrase says the same thing in other words; each unrelated text shares no topic with the
# reference. Expected order: every paraphrase pair scores above every unrelated pair.
REFERENCES = [
    "The patient has had a headache for three days.",
    "Blood pressure is well controlled on the current dose of amlodipine.",
    "The child has a fever and a sore throat.",
    "Return to clinic in two weeks for a follow-up visit.",
]
PARAPHRASES = [
    "For the past three days the patient has suffered from a headache.",
    "Her hypertension is well managed with amlodipine at the present dose.",
    "The kid is running a temperature and has a painful throat.",
    "Follow up in clinic in 2 weeks.",
]
UNRELATED = [
    "The invoice for the kitchen renovation is due on Friday.",
    "Our team won the football match last night.",
    "Please update the software before the meeting.",
    "The recipe needs two cups of flour and an egg.",
]


def test_paraphrases_score_above_unrelated_texts():
    para = similarity_pairs(PARAPHRASES, REFERENCES)
    unrelated = similarity_pairs(UNRELATED, REFERENCES)
    assert min(para) > max(unrelated), (para, unrelated)
    assert similarity_pairs(REFERENCES, REFERENCES) == pytest.approx([1.0] * 4, abs=1e-6)  # a text with itself


def test_negation_is_not_measured():
    # what the score does not measure, as the docs say: opposite findings in the same words score high
    assert semantic_similarity("The patient denies chest pain.", "The patient reports chest pain.") > 0.8


def test_empty_texts_and_bad_arguments():
    assert similarity_pairs(["", "  ", "text"], ["", "text", "\n"]) == [1.0, 0.0, 0.0]
    with pytest.raises(InputError, match=r"references\[0\] must be a str, got NoneType"):
        similarity_pairs(["a"], [None])
    with pytest.raises(InputError, match="1 predictions but 2 references"):
        similarity_pairs(["a"], ["b", "c"])


def test_missing_package_is_a_clear_error(monkeypatch):
    def absent(name):
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(importlib.metadata, "version", absent)
    with pytest.raises(InputError, match=r"needs the optional package 'wordllama'.*pip install 'goldeval\[semantic\]'"):
        get_scorer("semantic_similarity").configure()


def test_scorer_records_sections_and_aggregate():
    rows = [
        {"id": "p", "prediction": PARAPHRASES[0], "reference": REFERENCES[0]},
        {"id": "u", "prediction": UNRELATED[0], "reference": REFERENCES[0]},
        {"id": "s", "prediction": {"plan": PARAPHRASES[3], "hpi": PARAPHRASES[2]},
         "reference": {"hpi": REFERENCES[2], "plan": REFERENCES[3], "exam": ""}},
        {"id": "e", "prediction": "", "reference": "x"},
        {"id": "n", "prediction": None, "reference": "x"},
    ]
    scorer = get_scorer("semantic_similarity")
    config = scorer.configure()
    recs = list(scorer.score_batch(rows, config))
    assert [r["status"] for r in recs] == ["scored"] * 4 + ["unscored"]
    p, u, s, e = (r["whole_note"]["similarity"] for r in recs[:4])
    assert p == pytest.approx(semantic_similarity(PARAPHRASES[0], REFERENCES[0]))
    assert s == pytest.approx(semantic_similarity(PARAPHRASES[2] + "\n" + PARAPHRASES[3] + "\n",
                                                  REFERENCES[2] + "\n" + REFERENCES[3] + "\n"))  # sections in the reference's order
    assert list(recs[2]["sections"]) == ["hpi", "plan", "exam"] and recs[2]["sections_empty_both"] == ["exam"]
    hpi, plan = recs[2]["sections"]["hpi"]["similarity"], recs[2]["sections"]["plan"]["similarity"]
    assert recs[2]["section_macro"]["similarity"] == pytest.approx((hpi + plan) / 2)
    assert (e, recs[3]["empty"]) == (0.0, "prediction")
    results = scorer.aggregate(recs, config)
    agg = results["aggregate"]
    assert agg["semantic_similarity_mean"] == pytest.approx((p + u + s + e) / 4)
    assert agg["semantic_similarity_section_mean"] == recs[2]["section_macro"]["similarity"]
    assert (agg["n"], agg["n_failed"], agg["n_with_empty_text"]) == (4, 1, 1)
    assert results["model"]["name"] == "l2_supercat"


def test_the_model_is_in_the_run_key_and_the_stored_run(tmp_path):
    scorer = get_scorer("semantic_similarity")
    stored = scorer.store_config(scorer.configure(source="x.jsonl"))
    assert stored["model"]["library_version"] == importlib.metadata.version("wordllama") and "source" not in stored
    store, out = tmp_path / "g.db", tmp_path / "r.json"
    res = CliRunner().invoke(main, ["score", str(EXAMPLES / "openscribe_primock57_predictions.jsonl"), "--scorer",
                                    "semantic_similarity", "--store", str(store), "--out", str(out), "-q"])
    assert res.exit_code == 0, res.output
    with RunStore(store) as st:
        run = st.get_run("latest")
    assert run["config"]["model"] == stored["model"]
    written = json.loads(out.read_text())
    assert run["results"]["aggregate"]["semantic_similarity_mean"] == written["aggregate"]["semantic_similarity_mean"]
    assert written["aggregate"]["n"] == 57


def test_gates_on_the_mean_accept_a_cosine_range(tmp_path):
    path = tmp_path / "p.jsonl"
    path.write_text("".join(json.dumps({"id": str(i), "prediction": p, "reference": r}) + "\n"
                            for i, (p, r) in enumerate(zip(PARAPHRASES, REFERENCES))))
    mean = sum(similarity_pairs(PARAPHRASES, REFERENCES)) / 4
    for bound, code in ((round(mean, 3) - 0.001, 0), (round(mean, 3) + 0.001, 1), (-0.5, 0)):
        dod = tmp_path / "dod.toml"
        dod.write_text(f"[gates]\nsemantic_similarity_mean = {{ min = {bound} }}\n")  # a cosine may be negative
        res = CliRunner().invoke(main, ["score", str(path), "--scorer", "semantic_similarity", "--gates", str(dod),
                                        "--no-store", "-q"])
        assert res.exit_code == code, res.output
    dod.write_text("[gates]\nsemantic_similarity_mean = { min = 1.5 }\n")
    res = CliRunner().invoke(main, ["score", str(path), "--scorer", "semantic_similarity", "--gates", str(dod), "--no-store"])
    assert res.exit_code == 2


def test_any_split_merges_to_the_same_results():
    scorer = get_scorer("semantic_similarity")
    config = scorer.configure(source="acibench")
    records = list(scorer.score_batch(read_rows(EXAMPLES / "openscribe_acibench_predictions.jsonl"), config))
    whole = scorer.aggregate(records, config)
    parts = [scorer.new_partial(config).update(records[a:b]) for a, b in ((0, 11), (11, 23), (23, len(records)))]
    for part in parts[1:]:
        parts[0].merge(part)
    assert scorer.finish(parts[0], config) == whole
    assert whole["aggregate"]["n"] == 35
