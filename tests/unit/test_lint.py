"""ruff and mypy, configured in pyproject.toml ([tool.ruff], [tool.mypy]), are clean on src/, so the README's test
command checks what `.ci/run` checks. Each tool is also shown to read that configuration: a probe with a fault of a
selected rule is reported (the tool fires), the package is not (it is silent on healthy code).

Skipped, with the reason, only where the tool is not installed (it comes with the `test` extra)."""

from __future__ import annotations

import importlib.util
import subprocess
import sys

import pytest

from conftest import REPO


def _tool(name: str) -> list[str]:
    if importlib.util.find_spec(name) is None:
        pytest.skip(f"{name} is not installed (pip install -e '.[test]' installs it)")
    return [sys.executable, "-m", name]


def _run(args: list[str], stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(args, cwd=REPO, input=stdin, capture_output=True, text=True, timeout=600)


def test_ruff_is_clean_on_src():
    res = _run([*_tool("ruff"), "check", "src"])
    assert res.returncode == 0, res.stdout + res.stderr


def test_ruff_reports_the_selected_rules():
    # F401 (pyflakes), B006 (bugbear), UP017 (pyupgrade for 3.11), W291 (pycodestyle): each rule family the
    # configuration selects fires on a file under src/; E501 is not selected (a 130-character line passes).
    probe = ("import os\nimport datetime\n\n\ndef f(x=[]):  \n    return x, datetime.timezone.utc\n\n\n"
             f"LONG = {'1' * 120!r}\n")
    res = _run([*_tool("ruff"), "check", "--no-cache", "--output-format", "concise", "--stdin-filename",
                "src/goldeval/_probe.py", "-"], stdin=probe)
    assert res.returncode == 1
    found = {line.split(" ")[1] for line in res.stdout.splitlines() if line.startswith("src/goldeval/_probe.py:")}
    assert found == {"F401", "B006", "UP017", "W291"}, res.stdout


def test_mypy_is_clean_on_src():
    res = _run([*_tool("mypy")])  # files, strictness and per-library settings: [tool.mypy] in pyproject.toml
    assert res.returncode == 0, res.stdout + res.stderr
    assert "Success: no issues found" in res.stdout


def test_mypy_checks_unannotated_functions_as_configured(tmp_path):
    # check_untyped_defs: an error inside a function without annotations is reported, not skipped (a file given on
    # the command line replaces `files`; the rest of [tool.mypy] applies)
    probe = tmp_path / "probe.py"
    probe.write_text("def f():\n    x: int = 'one'\n    return x\n")
    res = _run([*_tool("mypy"), "--no-incremental", str(probe)])
    assert res.returncode == 1
    assert 'Incompatible types in assignment (expression has type "str", variable has type "int")' in res.stdout
