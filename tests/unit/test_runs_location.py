"""Where a run store lives (goldeval.runs.location): a file, a postgresql:// server, or a URL of a scheme goldeval
does not serve, which is refused (exit 2) instead of becoming a local folder named after the scheme."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from goldeval.cli import main
from goldeval.errors import InputError
from goldeval.runs.location import check_store_target, is_server_store, store_label, store_scheme
from goldeval.runs.backends import open_store
from goldeval.runs.store import RunStore


@pytest.mark.parametrize("target, scheme", [
    ("postgresql://ci@db/evals", "postgresql"), ("POSTGRES://ci@db/evals", "postgres"), ("mysql://u:pw@h/db", "mysql"),
    ("sqlite:///tmp/x.db", "sqlite"), ("s3+https://bucket/x", "s3+https"),
    ("runs/goldeval.db", None), ("C:\\runs\\g.db", None), ("./postgresql:", None), ("a:b.db", None),
])
def test_a_store_is_a_url_only_when_it_starts_with_scheme_slash_slash(target, scheme):
    assert store_scheme(target) == scheme


@pytest.mark.parametrize("target", ["mysql://u:s3cret@h/db", "sqlite:///tmp/x.db", "s3://bucket/runs"])
def test_a_scheme_goldeval_does_not_serve_is_refused_without_the_rest_of_the_url(target):
    with pytest.raises(InputError, match=r"not in a \w+:// store. Give a file path or a postgresql:// URL") as exc:
        check_store_target(target)
    assert "s3cret" not in str(exc.value)
    with pytest.raises(InputError):
        RunStore(target)  # the library refuses too, before any folder is made
    with pytest.raises(InputError, match=r"not in a \w+:// store"):
        open_store(target)


def test_the_sqlite_store_class_names_open_store_for_a_server_url(tmp_path, monkeypatch):
    """RunStore is the SQLite store; a postgresql:// URL given to it is refused with the function that opens it
    (open_store picks the backend), never made a local folder named 'postgresql:'."""
    monkeypatch.chdir(tmp_path)
    with pytest.raises(InputError, match=r"open_store\(\)") as exc:
        RunStore("postgresql://ci:s3cret@db/evals")
    assert "s3cret" not in str(exc.value)
    with pytest.raises(InputError, match=r"open_existing_store\(\)"):
        RunStore.open_existing("postgresql://ci:s3cret@db/evals")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("target", ["postgresql://ci@db/evals", "postgres://ci@db/evals", "runs.db", "./mysql/x.db"])
def test_served_stores_and_paths_pass(target):
    check_store_target(target)  # no exception
    assert is_server_store(target) == target.startswith("postgres")


def test_a_server_store_is_named_without_its_password_and_a_file_by_its_absolute_path(tmp_path, monkeypatch):
    assert store_label("postgresql://ci:s3cret@db.example:5432/evals?password=x2&sslmode=require") == (
        "postgresql://ci@db.example:5432/evals?sslmode=require")
    monkeypatch.chdir(tmp_path)
    assert store_label("runs.db") == str(tmp_path / "runs.db")


@pytest.mark.parametrize("args", [
    ["labels", "{file}", "--positive", "yes", "--store", "mysql://ci:s3cret@db/evals"],
    ["runs", "list", "--store", "mysql://ci:s3cret@db/evals"],
    ["compare", "latest~1", "latest", "--store", "mysql://ci:s3cret@db/evals"],
])
def test_the_cli_refuses_an_unserved_scheme_with_exit_2_and_makes_no_folder(tmp_path, monkeypatch, args):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("GOLDEVAL_STORE", raising=False)
    f = tmp_path / "p.jsonl"
    f.write_text(json.dumps({"id": "a", "gold": "yes", "pred": "yes"}) + "\n")
    res = CliRunner().invoke(main, [a.replace("{file}", str(f)) for a in args])
    assert res.exit_code == 2, res.output
    assert "not in a mysql:// store" in res.output and "s3cret" not in res.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p.jsonl"]  # no 'mysql:' folder, no store file


def test_goldeval_store_names_the_store_and_an_unserved_scheme_there_is_refused(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GOLDEVAL_HOME", str(tmp_path / "home"))
    f = tmp_path / "p.jsonl"
    f.write_text(json.dumps({"id": "a", "gold": "yes", "pred": "yes"}) + "\n")
    monkeypatch.setenv("GOLDEVAL_STORE", str(tmp_path / "team.db"))
    res = CliRunner().invoke(main, ["labels", str(f), "--positive", "yes", "-q"])
    assert res.exit_code == 0, res.output
    assert (tmp_path / "team.db").is_file() and not (tmp_path / "home").exists()
    monkeypatch.setenv("GOLDEVAL_STORE", "mysql://ci:s3cret@db/evals")
    for args in (["labels", str(f), "--positive", "yes", "-q"], ["runs", "list"]):
        res = CliRunner().invoke(main, args)
        assert res.exit_code == 2 and "(--store or $GOLDEVAL_STORE)" in res.output and "s3cret" not in res.output, res.output
    assert not (tmp_path / "mysql:").exists()
