"""Issue 10 item 11 (h-cli): words a new user tripped on, and newcomer findings F8 / F10 on exit codes.

- ``runs delete`` answered "n" says it did nothing and exits 0; with no answer at all (stdin closed, no terminal)
  it says to pass --yes (exit 2); it never said "no terminal?" to a user who had answered.
- ``--store ''`` is a usage error naming the option and what to pass (it was "run store .: cannot open it", exit 3).
- A store on a read-only mount (or folder) says so and what to do (it was "unable to open database file").
- A reading command with no store at all (``report latest``, ``runs show``) is the user's missing file: exit 2.
- F8: ``replay`` with the attempts file given as --cases is exit 2 ("none could be replayed"), not 1 with every
  case "changed" to unscored.

Every expected message below was read off the code path by hand (the message templates in ``goldeval.cli.runs``,
``goldeval.cli._store`` and ``goldeval.runs.store``); the counts come from the inputs written in each test.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from goldeval.cli import main

REPO = Path(__file__).resolve().parents[2]
SQL = REPO / "examples" / "sql"
TWO_ROWS = '{"id": "a", "prediction": "x y", "reference": "x"}\n{"id": "b", "prediction": "x", "reference": "x"}\n'


def invoke(*args, input=None, env=None):
    return CliRunner().invoke(main, [str(a) for a in args], input=input, env=env)


def one_run(tmp_path: Path) -> tuple[Path, str]:
    preds = tmp_path / "p.jsonl"
    preds.write_text(TWO_ROWS)
    store = tmp_path / "s.db"
    r = invoke("score", preds, "--store", store, "-q")
    assert r.exit_code == 0, r.output
    listed = json.loads(invoke("runs", "list", "--store", store, "--json").stdout)
    return store, listed[0]["id"]


def n_runs(store: Path) -> int:
    return len(json.loads(invoke("runs", "list", "--store", store, "--json").stdout))


# --- runs delete: "n", no answer, "y" -------------------------------------------------------------------------------


def test_runs_delete_answered_no_does_nothing_and_exits_0(tmp_path):
    store, run_id = one_run(tmp_path)
    r = invoke("runs", "delete", run_id, "--store", store, input="n\n")
    assert r.exit_code == 0, r.output
    assert f"goldeval: nothing deleted: run {run_id} is kept (the answer was not yes)." in r.stderr
    assert "no terminal" not in r.output
    assert n_runs(store) == 1


def test_runs_delete_with_no_answer_says_to_pass_yes(tmp_path):
    store, run_id = one_run(tmp_path)
    r = invoke("runs", "delete", run_id, "--store", store, input="")  # EOF at the prompt: no terminal, nothing piped
    assert r.exit_code == 2, r.output
    assert (f"runs delete {run_id}: the confirmation got no answer (stdin is closed or not a terminal), so nothing "
            f"was deleted. To delete without a question, pass --yes: goldeval runs delete {run_id} --yes") in r.stderr
    assert n_runs(store) == 1


def test_runs_delete_answered_yes_deletes(tmp_path):
    store, run_id = one_run(tmp_path)
    r = invoke("runs", "delete", run_id, "--store", store, input="y\n")
    assert r.exit_code == 0 and f"goldeval: deleted run {run_id}" in r.stderr
    assert n_runs(store) == 0


# --- --store '' and a read-only store -------------------------------------------------------------------------------


@pytest.mark.parametrize("args", [("score", "P"), ("labels", "P", "--positive", "x"), ("runs", "list"),
                                  ("runs", "show", "latest"), ("compare", "a", "b"), ("report", "latest", "-o", "r.html")])
def test_an_empty_store_path_is_a_usage_error_that_says_what_to_pass(tmp_path, args):
    preds = tmp_path / "p.jsonl"
    preds.write_text(TWO_ROWS)
    args = [str(preds) if a == "P" else a for a in args]
    r = invoke(*args, "--store", "")
    assert r.exit_code == 2, r.output
    text = " ".join(r.stderr.split())
    assert "Invalid value for '--store'" in text
    assert "expected the path of the run store's SQLite file (e.g. --store runs.db), got '' (an empty path" in text
    assert "drop --store to use $GOLDEVAL_HOME/goldeval.db" in text


@pytest.fixture()
def read_only_folder(tmp_path):
    """A folder holding a store (one run) that is then made read-only: a read-only bind mount when this process may
    mount (root in CI), else the permission bits (a non-root user). Yields (folder, what the message names)."""
    folder = tmp_path / "ro"
    folder.mkdir()
    preds = tmp_path / "p.jsonl"
    preds.write_text(TWO_ROWS)
    assert invoke("score", preds, "--store", folder / "s.db", "-q").exit_code == 0
    if os.geteuid() == 0:
        mounted = shutil.which("mount") and subprocess.run(["mount", "--bind", str(folder), str(folder)], capture_output=True).returncode == 0
        if mounted and subprocess.run(["mount", "-o", "remount,ro,bind", str(folder)], capture_output=True).returncode == 0:
            try:
                yield folder, f"{folder / 's.db'} is on a read-only file system (a read-only mount)"
            finally:
                subprocess.run(["umount", "-l", str(folder)], check=True)
            return
        if mounted:
            subprocess.run(["umount", "-l", str(folder)], check=True)
        pytest.skip("root without the right to mount: neither a read-only mount nor permission bits bind root")
    folder.chmod(0o555)
    (folder / "s.db").chmod(0o444)
    try:
        yield folder, f"the file {folder / 's.db'} is read-only for this user"
    finally:
        folder.chmod(0o755)
        (folder / "s.db").chmod(0o644)


def test_a_store_on_a_read_only_mount_says_so_and_what_to_do(tmp_path, read_only_folder):
    folder, why = read_only_folder
    preds = tmp_path / "p.jsonl"
    r = invoke("score", preds, "--store", folder / "s.db", "-q")
    assert r.exit_code == 3, r.output  # a store error, as documented (0 / 1 / 2 bad input / 3 store)
    text = " ".join(r.stderr.split())
    assert f"run store {folder / 's.db'}: cannot record a run there: {why}." in text
    assert "pass --store with a path on a writable disk (or set GOLDEVAL_HOME to a writable folder), or add --no-store" in text
    # reading it still works, and the run it holds is listed
    assert n_runs(folder / "s.db") == 1
    # deleting from it says why it cannot
    r = invoke("runs", "delete", "latest", "--store", folder / "s.db", "--yes")
    assert r.exit_code == 3 and why in " ".join(r.stderr.split()), r.output


def test_a_new_store_below_a_read_only_folder_says_so(tmp_path, read_only_folder):
    folder, _ = read_only_folder
    preds = tmp_path / "p.jsonl"
    target = folder / "sub" / "new.db"
    r = invoke("score", preds, "--store", target, "-q")
    assert r.exit_code == 3, r.output
    text = " ".join(r.stderr.split())
    assert f"run store {target}: cannot record a run there: " in text and str(folder) in text
    assert "read-only" in text and "--no-store" in text


# --- no store at all: the user's missing file, exit 2 ----------------------------------------------------------------


@pytest.mark.parametrize("args", [("report", "latest", "--out", "x.html"), ("runs", "show", "latest"),
                                  ("runs", "export", "latest"), ("compare", "latest~1", "latest"),
                                  ("review", "export", "latest")])
def test_reading_a_store_that_does_not_exist_is_exit_2(tmp_path, args):
    home = tmp_path / "none"
    r = invoke(*args, env={"GOLDEVAL_HOME": str(home)})
    assert r.exit_code == 2, r.output
    assert (f"goldeval: error: run store {home / 'goldeval.db'}: no such file, so no run was recorded there. Pass --store "
            "with the database the scoring commands wrote (or set GOLDEVAL_HOME), or score something first.") in r.stderr
    assert not home.exists()


# --- F8: replay with the wrong --cases file ---------------------------------------------------------------------------


def test_replay_with_the_attempts_file_as_cases_is_exit_2(tmp_path):
    # One settled verdict on q01; --cases is given arm_a.jsonl (attempts: no "golden"), as in the newcomer's try.
    reg = tmp_path / "reg.jsonl"
    reg.write_text(json.dumps({"id": "q01", "verdict": "match", "answer": {"rows": [[1]]}, "reviewer": "ann"}) + "\n")
    r = invoke("replay", reg, "--cases", SQL / "arm_a.jsonl", "--db", SQL / "clinic.sqlite")
    assert r.exit_code == 2, r.output
    text = " ".join(r.output.split())
    # by hand: 1 entry, 0 replayed (its case has no golden), so 0 unchanged, 0 changed, 1 not replayed
    assert "0 unchanged, 0 changed, 1 not replayed" in text
    assert f"replay {reg}: none of its 1 settled verdict(s) could be replayed" in text
    assert "case 'q01' could not be judged now (case 'q01': 'golden' must be an object, got None." in text
    assert "Check --cases and --db." in text
    assert "now unscored" not in text
