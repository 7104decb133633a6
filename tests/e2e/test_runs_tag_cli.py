"""``goldeval runs tag`` and the CI line ``goldeval compare baseline/main latest --fail-on-regression``, as a user
runs them on a SQLite store (tests/postgres runs the same lines on a server)."""

from __future__ import annotations

import json

from click.testing import CliRunner

from goldeval.cli import main


def labels(path, wrong: set[int]) -> str:
    """Ten label rows, gold 'yes' on even rows; the prediction is wrong on the rows in *wrong*."""
    with open(path, "w") as f:
        for i in range(10):
            gold = "yes" if i % 2 == 0 else "no"
            pred = gold if i not in wrong else ("no" if gold == "yes" else "yes")
            f.write(json.dumps({"id": f"c{i}", "gold": gold, "pred": pred}) + "\n")
    return str(path)


def run(*args: str):
    return CliRunner().invoke(main, list(args))


def test_the_ci_line_fails_on_a_regression_against_the_tagged_baseline(tmp_path):
    store = str(tmp_path / "runs.db")
    main_run = labels(tmp_path / "main.jsonl", wrong={1})
    branch = labels(tmp_path / "branch.jsonl", wrong={1, 4})  # c4 was right on main: one pass → fail
    fixed = labels(tmp_path / "fixed.jsonl", wrong=set())  # c1 fixed, nothing broken
    assert run("labels", main_run, "--positive", "yes", "--store", store, "-q").exit_code == 0
    res = run("runs", "tag", "latest", "baseline/main", "--store", store)
    assert res.exit_code == 0 and "baseline/main now names run" in res.output, res.output
    assert run("labels", branch, "--positive", "yes", "--store", store, "-q").exit_code == 0

    res = run("compare", "baseline/main", "latest", "--store", store, "--fail-on-regression", "--out", "-", "-q")
    assert res.exit_code == 1, res.output
    cmp = json.loads(res.output)
    assert cmp["regressions"] == ["c4"]
    assert cmp["runs"]["a"]["ref"] == "baseline/main" and cmp["runs"]["a"]["tags"] == ["baseline/main"]
    assert cmp["runs"]["b"]["ref"] == "latest" and cmp["runs"]["b"]["tags"] == []
    res = run("compare", "baseline/main", "latest", "--store", store)
    assert "A: baseline/main = run" in res.output and "recorded just now" in res.output, res.output

    assert run("labels", fixed, "--positive", "yes", "--store", store, "-q").exit_code == 0
    res = run("compare", "baseline/main", "latest", "--store", store, "--fail-on-regression", "-q")
    assert res.exit_code == 0, res.output  # silent on a healthy branch


def test_a_tag_moves_only_with_move_and_the_tags_are_listed(tmp_path):
    store = str(tmp_path / "runs.db")
    for name in ("a", "b"):
        assert run("labels", labels(tmp_path / f"{name}.jsonl", wrong=set()), "--positive", "yes", "--arm", name,
                   "--store", store, "-q").exit_code == 0
    assert run("runs", "tag", "latest~1", "baseline/main", "--store", store).exit_code == 0
    res = run("runs", "tag", "latest", "baseline/main", "--store", store)
    assert res.exit_code == 2 and "a tag moves only when told. Pass --move" in res.output, res.output
    first = json.loads(run("runs", "tags", "--store", store, "--json").output)
    res = run("runs", "tag", "latest", "baseline/main", "--move", "--store", store)
    assert res.exit_code == 0 and "moved from run" in res.output, res.output
    now = json.loads(run("runs", "tags", "--store", store, "--json").output)
    assert [t["name"] for t in now] == ["baseline/main"] and now[0]["run_id"] != first[0]["run_id"]
    shown = json.loads(run("runs", "show", "baseline/main", "--store", store, "--out", "-", "-q").output)
    assert shown["run"]["id"] == now[0]["run_id"]
    assert run("runs", "untag", "baseline/main", "--store", store).exit_code == 0
    res = run("runs", "show", "baseline/main", "--store", store)
    assert res.exit_code == 2 and "no run 'baseline/main'" in res.output, res.output
