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


# --- -o/--out, -q/--quiet and the exit-code line on every command ------------------------------------------------------

import click  # noqa: E402

from goldeval.cli._common import EXIT_CODES_LINE  # noqa: E402

#: Commands that write no file of their own, so no -o (each still takes -q and ends its help with the exit codes).
NO_OUT = {
    "runs delete": "it changes the store only",
    "runs tag": "it changes the store only",
    "runs untag": "it changes the store only",
    "review import": "the file it writes is the regression file, appended by design and named by --regressions",
}


def leaf_commands() -> dict[str, click.Command]:
    ctx = click.Context(main)
    found: dict[str, click.Command] = {}
    for name in main.list_commands(ctx):
        cmd = main.get_command(ctx, name)
        if isinstance(cmd, click.Group):
            for sub in cmd.list_commands(ctx):
                found[f"{name} {sub}"] = cmd.get_command(ctx, sub)
        else:
            found[name] = cmd
    return found


def test_the_command_list_is_the_one_checked_below():
    # a new command is checked by the next test automatically; this pins what "every command" meant when written
    assert sorted(leaf_commands()) == [
        "check-goldens", "compare", "gate", "judge", "labels", "llm-judge", "replay", "report", "review export", "review import",
        "review stats", "runs delete", "runs export", "runs import", "runs list", "runs show", "runs tag", "runs tags",
        "runs untag", "score",
    ]


def test_every_command_takes_o_out_and_q_quiet_and_ends_its_help_with_the_exit_codes():
    missing = []
    for name, cmd in leaf_commands().items():
        opts = {o for p in cmd.params for o in (*p.opts, *p.secondary_opts)}
        want = {"-q", "--quiet"} | (set() if name in NO_OUT else {"-o", "--out"})
        if not want <= opts:
            missing.append((name, sorted(want - opts)))
        assert cmd.help.rstrip().endswith(EXIT_CODES_LINE), name
        shown = " ".join(CliRunner().invoke(main, [*name.split(), "--help"]).output.split())
        assert EXIT_CODES_LINE in shown, name
    assert missing == []
    assert EXIT_CODES_LINE in " ".join(CliRunner().invoke(main, ["--help"]).output.split())


def test_quiet_prints_nothing_and_out_writes_the_file(tmp_path):
    labels = tmp_path / "l.jsonl"
    # by hand: gold/pred = (yes, yes) tp, (yes, no) fn, (no, yes) fp, (no, no) tn → precision 1/2, recall 1/2
    labels.write_text("".join(json.dumps({"id": str(i), "gold": g, "pred": p}) + "\n"
                              for i, (g, p) in enumerate([("yes", "yes"), ("yes", "no"), ("no", "yes"), ("no", "no")])))
    gates = tmp_path / "dod.toml"
    gates.write_text('positive = "yes"\n[gates]\nprecision = { min = 0.5 }\n')
    store = tmp_path / "s.db"
    res = tmp_path / "res.json"
    r = invoke("labels", labels, "--positive", "yes", "--store", store, "-q", "-o", res)
    assert r.exit_code == 0 and r.output == "", r.output
    assert json.loads(res.read_text())["aggregate"]["precision"] == 0.5
    r = invoke("gate", res, "--gates", gates, "-q")
    assert r.exit_code == 0 and r.output == "", r.output
    for args in (("runs", "list"), ("runs", "show", "latest"), ("runs", "export", "latest", "-o", tmp_path / "e.jsonl")):
        r = invoke(*args, "--store", store, "-q")
        assert r.exit_code == 0 and r.output == "", (args, r.output)
    assert len((tmp_path / "e.jsonl").read_text().splitlines()) == 4
    r = invoke("runs", "show", "latest", "--store", store, "-q", "-o", tmp_path / "show.json")
    assert r.exit_code == 0 and json.loads((tmp_path / "show.json").read_text())["aggregate"]["recall"] == 0.5
    r = invoke("runs", "list", "--store", store, "-q", "-o", tmp_path / "runs.json")
    assert [x["scorer_name"] for x in json.loads((tmp_path / "runs.json").read_text())] == ["labels"]
    r = invoke("runs", "list", "--store", store, "--json", "-o", tmp_path / "other.json")
    assert r.exit_code == 2 and "give one of them" in r.output


# --- --*-field and --*-column on score and labels -------------------------------------------------------------------


def test_score_takes_field_and_column_names_alike(tmp_path):
    preds = tmp_path / "p.jsonl"
    preds.write_text('{"key": "a", "p": "x y", "r": "x"}\n{"key": "b", "p": "x", "r": "x"}\n')
    # by hand: a: P 1/2, R 1, F1 2/3; b: F1 1; mean (2/3 + 1) / 2 = 5/6
    means = []
    for names in (("--prediction-field", "--reference-field", "--id-field"),
                  ("--prediction-column", "--reference-column", "--id-column")):
        out = tmp_path / f"{names[0]}.json"
        r = invoke("score", preds, names[0], "p", names[1], "r", names[2], "key", "--no-store", "-q", "-o", out)
        assert r.exit_code == 0, r.output
        agg = json.loads(out.read_text())["aggregate"]
        means.append(agg["whole_note_f1_mean"])
        assert agg["n"] == 2
    assert means[0] == means[1] == pytest.approx(5 / 6, abs=1e-15)


def test_labels_takes_column_and_field_names_alike(tmp_path):
    rows = tmp_path / "l.jsonl"
    # by hand: (yes, yes) tp, (yes, no) fn, (no, yes) fp → precision 1/2, recall 1/2, missed 1
    rows.write_text("".join(json.dumps({"k": str(i), "g": g, "p": p}) + "\n"
                            for i, (g, p) in enumerate([("yes", "yes"), ("yes", "no"), ("no", "yes")])))
    got = []
    for names in (("--id-column", "--gold-column", "--pred-column"), ("--id-field", "--gold-field", "--pred-field")):
        out = tmp_path / f"{names[0]}.json"
        r = invoke("labels", rows, "--positive", "yes", names[0], "k", names[1], "g", names[2], "p", "--no-store", "-q", "-o", out)
        assert r.exit_code == 0, r.output
        a = json.loads(out.read_text())["aggregate"]
        got.append((a["precision"], a["recall"], a["missed"]))
    assert got == [(0.5, 0.5, 1), (0.5, 0.5, 1)]


@pytest.mark.parametrize(("typed", "hint"), [
    ("scor", "No such command 'scor'. Did you mean 'score'?"),
    ("lables", "No such command 'lables'. Did you mean 'labels'?"),
    ("judg", "No such command 'judg'. (Possible commands: judge, llm-judge)"),
    ("zzz", "No such command 'zzz'."),
    ("runs lst", "No such command 'lst'. Did you mean 'list'?"),
    ("review exprt", "No such command 'exprt'. Did you mean 'export'?"),
])
def test_a_mistyped_command_gets_the_hint_a_mistyped_option_gets(typed: str, hint: str) -> None:
    # Found by h-newcomer: `goldeval scor` said only "No such command", while `--posittive` says "Did you mean
    # '--positive'?" (click's option hint). Close matches are difflib's, as click's own for options; the runs and
    # review groups give the same hint for their sub-commands.
    res = CliRunner().invoke(main, [*typed.split(), "x"])
    assert res.exit_code == 2
    assert res.output.strip().splitlines()[-1] == f"Error: {hint}"
    assert ("Did you mean" in res.output or "Possible" in res.output) == (typed != "zzz")
