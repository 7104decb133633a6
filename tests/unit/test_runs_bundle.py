"""Run bundles (goldeval.runs.bundle): a finished run out of one store and into another, idempotently."""

from __future__ import annotations

import gzip
import io
import json
import sqlite3
import tarfile

import pytest
from click.testing import CliRunner

from goldeval.cli import main
from goldeval.errors import InputError
from goldeval.runs.bundle import export_bundle, import_bundle, is_bundle, read_bundle
from goldeval.runs.store import RunMeta, RunStore


def a_run(st: RunStore, key: str = "k1") -> str:
    """A finished run of three cases (scores 0.1 + 0.2 and 1/3: doubles whose shortest repr must survive) and one
    review."""
    run_id = st.create_run(RunMeta(run_key=key, scorer_name="judge", scorer_version="3", dataset_hash="d" * 64,
                                   inputs={"cases": {"path": "c.jsonl", "sha256": "e" * 64}}, config={"x": 1}, arm="arm-a"))
    st.write_cases(run_id, [
        ("c1", 0, "scored", "match", 0.1 + 0.2, None, None, '{"id":"c1","verdict":"match","f1":0.30000000000000004}'),
        ("c2", 1, "scored", "no_match", 1 / 3, "wrong rows", "raw\njudge text", '{"id":"c2","verdict":"no_match"}'),
        ("c3", 2, "unscored", None, None, "query failed: é", None, '{"id":"c3","status":"unscored"}'),
    ])
    st.finish_run(run_id, {"aggregate": {"n": 3, "pass_rate": 0.5}, "gates": {"passed": False}})
    st.add_review(run_id, "c2", verdict="match", reviewer="ana", reviewed_at="2026-12-01T10:00:00+00:00",
                  judge_verdict="no_match", note="right after all")
    return run_id


def write(tmp_path, data: bytes, name: str = "run.tar.gz"):
    p = tmp_path / name
    p.write_bytes(data)
    return p


def test_a_bundle_carries_the_run_row_for_row_and_twice_is_one_run(tmp_path):
    with RunStore(tmp_path / "ci.db") as ci:
        run_id = a_run(ci)
        bundle = write(tmp_path, export_bundle(ci, "latest"))
        original = (ci.stored_run(run_id), list(ci.stored_cases(run_id)), ci.stored_reviews(run_id), ci.get_run(run_id))
    assert is_bundle(bundle)
    with RunStore(tmp_path / "laptop.db") as lap:
        first = import_bundle(lap, bundle)
        again = import_bundle(lap, bundle)
        assert first == {"run_id": run_id, "created": True, "n_cases": 3, "n_reviews": 1}
        assert again == {**first, "created": False}
        assert [r["id"] for r in lap.list_runs()] == [run_id]  # one run
        copy = (lap.stored_run(run_id), list(lap.stored_cases(run_id)), lap.stored_reviews(run_id), lap.get_run(run_id))
    assert copy[0] == original[0] and copy[1] == original[1]  # every column, to the last digit (0.30000000000000004)
    assert copy[1][0][4] == 0.1 + 0.2 and copy[1][1][4] == 1 / 3
    assert copy[2] == original[2]  # the review once, with its times
    assert copy[3] == original[3]


def test_the_same_run_exports_the_same_bytes(tmp_path):
    with RunStore(tmp_path / "ci.db") as ci:
        a_run(ci)
        assert export_bundle(ci, "latest") == export_bundle(ci, "latest")


def test_an_unfinished_run_is_not_bundled(tmp_path):
    with RunStore(tmp_path / "ci.db") as ci:
        run_id = ci.create_run(RunMeta(run_key="k", scorer_name="labels", scorer_version="1", dataset_hash="d"))
        with pytest.raises(InputError, match=f"run {run_id} is running, not finished.*Resume it"):
            export_bundle(ci, run_id)


def test_a_store_with_another_run_under_the_same_id_is_left_alone(tmp_path):
    with RunStore(tmp_path / "ci.db") as ci:
        run_id = a_run(ci, key="k1")
        bundle = write(tmp_path, export_bundle(ci, run_id))
        ci.delete_run(run_id)
        ci.db.execute("INSERT INTO runs (id, run_key, created_at, updated_at, status, goldeval_version, scorer_name, "
                      "scorer_version, dataset_hash, inputs, config) VALUES (?, 'other', 't', 't', 'finished', '', 's', '1', "
                      "'d', '{}', '{}')", (run_id,))
        with pytest.raises(InputError, match=f"run {run_id} is already here and is another run"):
            import_bundle(ci, bundle)
        assert list(ci.stored_cases(run_id)) == []


def test_a_damaged_or_foreign_file_is_refused_before_anything_is_written(tmp_path):
    with RunStore(tmp_path / "ci.db") as ci:
        a_run(ci)
        good = export_bundle(ci, "latest")
    raw = tarfile.open(fileobj=io.BytesIO(good), mode="r:gz")
    parts = {m.name: raw.extractfile(m).read() for m in raw.getmembers()}

    def repack(**changes: bytes) -> bytes:
        out = io.BytesIO()
        with tarfile.open(fileobj=out, mode="w") as tar:
            for name, data in {**parts, **changes}.items():
                info = tarfile.TarInfo(name)
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
        return gzip.compress(out.getvalue())

    edited = parts["cases.jsonl"].replace(b"no_match", b"match")
    cases = [
        (repack(**{"cases.jsonl": edited}), "does not match the sha256 and count"),
        (repack(**{"bundle.json": json.dumps({**json.loads(parts["bundle.json"]), "version": 2}).encode()}), "version 2"),
        (repack(**{"bundle.json": b'{"format": "something else"}'}), "not a goldeval run bundle's"),
        (gzip.compress(b"plain text"), "not a goldeval run bundle"),
    ]
    with RunStore(tmp_path / "laptop.db") as lap:
        for data, why in cases:
            with pytest.raises(InputError, match=why):
                import_bundle(lap, write(tmp_path, data, "bad.tar.gz"))
        assert lap.list_runs() == []
    assert not is_bundle(write(tmp_path, b"PAR1....", "cases.parquet"))
    assert read_bundle(io.BytesIO(good))["run"]["arm"] == "arm-a"


def test_the_cli_round_trip_and_its_refusals(tmp_path):
    store, other = str(tmp_path / "ci.db"), str(tmp_path / "laptop.db")
    with RunStore(store) as ci:
        run_id = a_run(ci)
    bundle = str(tmp_path / "run.tar.gz")
    res = CliRunner().invoke(main, ["runs", "export", "latest", "--store", store, "--bundle", bundle])
    assert res.exit_code == 0 and f"run {run_id} exported as a bundle to {bundle}" in res.output, res.output
    for verb in ("imported as run", "already in the store: merged into run"):
        res = CliRunner().invoke(main, ["runs", "import", bundle, "--store", other])
        assert res.exit_code == 0 and f"3 case(s) and 1 review(s) {verb} {run_id}" in res.output, res.output
    res = CliRunner().invoke(main, ["runs", "import", bundle, "--store", other, "--arm", "x"])
    assert res.exit_code == 2 and "--arm and --gates apply to a per-case Parquet only" in res.output
    res = CliRunner().invoke(main, ["runs", "export", "latest", "--store", store, "--bundle", bundle, "--format", "csv"])
    assert res.exit_code == 2 and "Give one of them" in res.output
    listed = json.loads(CliRunner().invoke(main, ["runs", "list", "--store", other, "--json"]).stdout)
    assert [(r["id"], r["n_recorded"], r["status"]) for r in listed] == [(run_id, 3, "finished")]


def test_a_bundle_imported_into_the_store_that_recorded_its_run_in_blocks_is_still_one_run(tmp_path):
    """``goldeval labels`` records its cases in blocks (``case_blocks``); the same run's bundle imported back into
    that store (a CI job's artifact imported into the team's store that already holds it) merges into it: the
    200 cases of examples/labels/pilot_claims.jsonl (wc -l) stay 200, not 200 rows plus 200 in blocks."""
    store, bundle = str(tmp_path / "team.db"), str(tmp_path / "run.tar.gz")
    res = CliRunner().invoke(main, ["labels", "examples/labels/pilot_claims.jsonl", "--positive", "escalate",
                                    "--store", store, "--out", str(tmp_path / "r.json")])
    assert res.exit_code in (0, 1), res.output
    with RunStore(store) as st:
        run_id = st.resolve("latest")
        before = (st.get_run(run_id)["n_recorded"], list(st.stored_cases(run_id)))
    assert before[0] == 200
    with sqlite3.connect(store) as db:  # the case this test is about: the run's cases are in blocks, not rows
        assert db.execute("SELECT count(*) FROM cases").fetchone()[0] == 0
        assert db.execute("SELECT sum(n) FROM case_blocks").fetchone()[0] == 200
    assert CliRunner().invoke(main, ["runs", "export", run_id, "--store", store, "--bundle", bundle]).exit_code == 0
    for _ in range(2):
        res = CliRunner().invoke(main, ["runs", "import", bundle, "--store", store])
        assert res.exit_code == 0 and f"200 case(s) and 0 review(s) already in the store: merged into run {run_id}" in res.output, res.output
    with RunStore(store) as st:
        assert st.get_run(run_id)["n_recorded"] == 200
        assert list(st.stored_cases(run_id)) == before[1]  # the same rows, each once, in the same order
    listed = json.loads(CliRunner().invoke(main, ["runs", "list", "--store", store, "--json"]).stdout)
    assert [(r["id"], r["n_recorded"]) for r in listed] == [(run_id, 200)]


def test_a_bundle_over_the_runs_input_is_refused_naming_bundle(tmp_path):
    """`runs export RUN --bundle FILE` where FILE is the run's own input: refused (exit 2, the file byte-equal), and
    the message names --bundle, the option given (there is no --out on that command line)."""
    labels, store = tmp_path / "claims.jsonl", str(tmp_path / "s.db")
    labels.write_bytes(open("examples/labels/pilot_claims.jsonl", "rb").read())
    before = labels.read_bytes()
    res = CliRunner().invoke(main, ["labels", str(labels), "--positive", "escalate", "--store", store, "-q"])
    assert res.exit_code in (0, 1), res.output
    res = CliRunner().invoke(main, ["runs", "export", "latest", "--store", store, "--bundle", str(labels)])
    assert res.exit_code == 2, res.output
    assert f"--bundle {labels}: is the run's labels input" in res.output and "Choose another path for --bundle" in res.output
    assert "--out" not in res.output
    assert labels.read_bytes() == before
    # another path is written
    res = CliRunner().invoke(main, ["runs", "export", "latest", "--store", store, "--bundle", str(tmp_path / "run.tar.gz")])
    assert res.exit_code == 0 and is_bundle(tmp_path / "run.tar.gz"), res.output


@pytest.mark.parametrize("forged_id", ["baseline/main", "latest", "latest~1", " 20261201-100000-abcdef", ""])
def test_a_bundle_whose_run_id_is_no_run_id_is_refused(tmp_path, forged_id):
    """A bundle is a CI artifact: one edited so that its run's id is ``baseline/main`` was imported, and the exact
    id wins over a tag in RunStore.resolve, so ``compare baseline/main RUN --fail-on-regression`` compared against
    the forged run, not the baseline. Every id goldeval makes is ``YYYYmmdd-HHMMSS-xxxxxx`` (RunStore.create_run);
    a bundle naming any other is refused, nothing imported, the tag still names its run."""
    with RunStore(tmp_path / "ci.db") as ci:
        a_run(ci)
        good = export_bundle(ci, "latest")
    raw = tarfile.open(fileobj=io.BytesIO(good), mode="r:gz")
    parts = {m.name: raw.extractfile(m).read() for m in raw.getmembers()}
    head = json.loads(parts["bundle.json"])
    head["run"]["id"] = forged_id
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w") as tar:
        for name, data in {**parts, "bundle.json": json.dumps(head).encode()}.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    forged = write(tmp_path, gzip.compress(out.getvalue()), "forged.tar.gz")
    with RunStore(tmp_path / "team.db") as team:
        baseline = a_run(team, key="base")
        team.tag(baseline, "baseline/main")
        with pytest.raises(InputError, match=r"is not a run id goldeval makes \(YYYYmmdd-HHMMSS-xxxxxx\)"):
            import_bundle(team, forged)
        assert [r["id"] for r in team.list_runs()] == [baseline] and team.resolve("baseline/main") == baseline
        # healthy: the bundle as exported imports
        assert import_bundle(team, write(tmp_path, good, "good.tar.gz"))["created"] is True
