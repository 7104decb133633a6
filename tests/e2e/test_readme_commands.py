"""The README's commands as a new user runs them from the repository root (issue 10 item 11):

* no command ``cd``s into a folder, where a second store ``./.goldeval`` would appear;
* every file a command writes into the repository (``--out``, ``--junit``, ``--summary-md``, ``--per-case``,
  ``--regressions``) is one ``git status`` does not show (gitignored), so the checkout stays clean;
* ``goldeval runs export`` runs as written (the README once showed ``--format jsonl|csv|json``, which no shell
  runs), in each of the formats its comment names.

The whole list was also run by hand from a fresh clone (see the h-cli note); this keeps the three rules true.
"""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from goldeval.cli import main

REPO = Path(__file__).resolve().parents[2]
README = REPO / "README.md"
PRIMOCK = REPO / "examples" / "data" / "openscribe_primock57_predictions.jsonl"
#: Options whose value is a file the command writes.
WRITES = ("--out", "-o", "--junit", "--summary-md", "--per-case", "--regressions")


def readme_commands() -> list[str]:
    """Every command line of the README's ``bash`` blocks, continuations joined, comments dropped."""
    blocks = re.findall(r"```bash\n(.*?)```", README.read_text(encoding="utf-8"), flags=re.S)
    out: list[str] = []
    for block in blocks:
        for cmd in block.replace("\\\n", " ").splitlines():
            cmd = re.sub(r"\s+#.*$", "", cmd).strip()
            if cmd and not cmd.startswith("#"):
                out.append(cmd)
    return out


def written_files(cmd: str) -> list[str]:
    words = shlex.split(cmd.replace("$S", "examples/sql"))
    return [words[i + 1] for i, w in enumerate(words[:-1]) if w in WRITES and words[i + 1] != "-"]


def test_the_readme_has_the_commands_checked_below():
    cmds = readme_commands()
    assert len(cmds) > 40
    assert any(c.startswith("goldeval runs export") for c in cmds)


def test_no_readme_command_changes_folder():
    for cmd in readme_commands():
        assert not re.search(r"(^|[;&|]\s*)(cd|pushd)\s", cmd), cmd


@pytest.mark.skipif(shutil.which("git") is None or not (REPO / ".git").exists(), reason="not a git checkout")
def test_every_file_a_readme_command_writes_in_the_repository_is_gitignored():
    paths = sorted({p for cmd in readme_commands() for p in written_files(cmd) if not Path(p).is_absolute()})
    assert {"results.json", "a.json", "b.json", "run-cases.jsonl", "report.html", "junit.xml"} <= set(paths)
    shown = [p for p in paths
             if subprocess.run(["git", "-C", str(REPO), "check-ignore", "-q", "--no-index", p]).returncode != 0]
    assert shown == [], f"README commands write files that git status would show: {shown}"


def test_runs_export_runs_as_written_in_each_format(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the store is $GOLDEVAL_HOME (tests/conftest.py), the --out path relative to here
    assert CliRunner().invoke(main, ["score", str(PRIMOCK), "-q"]).exit_code == 0
    # the per-case export line (the other, in "Teams and CI", writes a --bundle)
    (line,) = [c for c in readme_commands() if c.startswith("goldeval runs export") and "--bundle" not in c]
    words = shlex.split(line)[1:]
    assert words[:2] == ["runs", "export"] and "--format" in words
    for fmt in ("jsonl", "csv", "json"):  # the comment: "or --format csv / json"
        args = [fmt if prev == "--format" else w for prev, w in zip(["", *words], words)]
        r = CliRunner().invoke(main, args)
        assert r.exit_code == 0, (args, r.output)
        out = Path(args[args.index("--out") + 1])
        text = out.read_text(encoding="utf-8")
        # PriMock57: 57 cases (a JSONL line each; a CSV header and a line each; one JSON object)
        if fmt == "jsonl":
            assert len(text.splitlines()) == 57
        elif fmt == "csv":
            assert len(text.splitlines()) == 58
        else:
            assert text.lstrip().startswith("{")
