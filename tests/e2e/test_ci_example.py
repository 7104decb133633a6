"""The GitHub Actions example (examples/ci/github-actions.yml) and the README's "Teams and CI" lines: the YAML
parses as a workflow and every goldeval command in it exists with every option it passes. The CI line it is built
around runs end to end in tests/e2e/test_runs_tag_cli.py (SQLite) and tests/postgres/test_pg_run_store.py."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import click
import pytest
import yaml

from goldeval.cli import main

REPO = Path(__file__).resolve().parents[2]
WORKFLOW = REPO / "examples" / "ci" / "github-actions.yml"


def goldeval_lines(text: str) -> list[list[str]]:
    """The goldeval command lines of a shell script, as words (``${{ … }}`` and ``$VAR`` as placeholder words)."""
    out = []
    for line in text.splitlines():
        line = re.sub(r"\$\{\{[^}]*\}\}", "X", line.strip())
        if line.startswith("goldeval "):
            out.append(shlex.split(line.replace("$RUN", "RUN"), comments=True)[1:])
    return out


def check_command(words: list[str]) -> None:
    """Fail unless *words* name a goldeval command and pass only options it has (values not checked)."""
    cmd: click.Command = main
    ctx = click.Context(main)
    while isinstance(cmd, click.Group):
        sub = cmd.get_command(ctx, words[0])
        assert sub is not None, f"no command {words[0]!r} in {words}"
        cmd, words = sub, words[1:]
    known = {o for p in cmd.params for o in (*p.opts, *p.secondary_opts)}
    flags = [w for w in words if w.startswith("-") and w != "-"]
    assert [f for f in flags if f not in known] == [], (cmd.name, flags)


def test_the_workflow_parses_and_names_only_commands_and_options_that_exist():
    flow = yaml.safe_load(WORKFLOW.read_text())
    assert flow["name"] == "eval" and set(flow[True]) == {"push", "pull_request"}  # YAML 1.1 reads `on` as true
    steps = flow["jobs"]["eval"]["steps"]
    lines = [words for step in steps if "run" in step for words in goldeval_lines(step["run"])]
    assert [w[:2] for w in lines] == [["judge", "examples/sql/cases.jsonl"], ["runs", "tag"], ["compare", "baseline/main"],
                                      ["runs", "export"]]
    for words in lines:
        check_command(words)
    for words in lines:  # the input files it names are in the repository
        for w in words:
            if w.startswith("examples/"):
                assert (REPO / w).is_file(), w


def test_check_command_refuses_an_option_a_command_lacks():
    with pytest.raises(AssertionError):
        check_command(["compare", "a", "b", "--fail-on-regresion"])
    with pytest.raises(AssertionError):
        check_command(["runs", "retag", "a", "b"])


def test_the_readme_teams_and_ci_lines_name_commands_that_exist():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Teams and CI", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```bash\n(.*?)```", section, flags=re.S)
    lines = [words for block in blocks for words in goldeval_lines(block)]
    assert len(lines) >= 4 and any(w[:1] == ["compare"] and "--fail-on-regression" in w for w in lines)
    for words in lines:
        check_command(words)
