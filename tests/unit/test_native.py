"""The C extension is used only when it was built from the _fast.c beside it (goldeval/_native.py).

The failure this guards against happened here: a checkout fast-forwarded over a new _fast.c without rerunning
``pip install -e .`` kept its old in-place build; the functions it lacked fell back silently, and a kernel whose
meaning had changed would have run with its old meaning.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
import types
from pathlib import Path

import pytest

from goldeval import _native
from conftest import REPO

SOURCE = REPO / "src" / "goldeval" / "_fast.c"


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_build_from_this_source_is_used(tmp_path):
    source = tmp_path / "_fast.c"
    source.write_bytes(b"int x;\n")
    built = types.SimpleNamespace(SOURCE_SHA256=_digest(source))
    assert _native.stale_reason(built, source) is None


def test_a_build_from_another_source_is_not(tmp_path):
    source = tmp_path / "_fast.c"
    source.write_bytes(b"int x;\n")
    older = types.SimpleNamespace(SOURCE_SHA256=hashlib.sha256(b"int y;\n").hexdigest())
    reason = _native.stale_reason(older, source)
    assert reason is not None and older.SOURCE_SHA256[:12] in reason and _digest(source)[:12] in reason


def test_a_build_without_a_recorded_digest_is_not(tmp_path):
    source = tmp_path / "_fast.c"
    source.write_bytes(b"int x;\n")
    assert "before goldeval recorded" in _native.stale_reason(types.SimpleNamespace(), source)


def test_without_the_source_beside_it_the_shipped_build_is_used(tmp_path):
    # a wheel ships the compiled extension and no _fast.c: nothing to compare
    assert _native.stale_reason(types.SimpleNamespace(), tmp_path / "absent.c") is None


def _built_extension() -> Path:
    built = sorted((REPO / "src" / "goldeval").glob("_fast*.so"))
    if not built:  # .ci/run and the README install with `pip install -e .`, which builds it in place
        pytest.fail("no in-place build of goldeval._fast in src/goldeval: install with pip install -e .")
    return built[0]


def test_this_checkout_has_a_current_build():
    import goldeval._fast as fast

    assert fast.SOURCE_SHA256 == _digest(SOURCE), "rerun pip install -e . : the C extension is older than _fast.c"


def _run(package_root: Path, code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code], cwd=package_root, capture_output=True, text=True,
                          env={"PYTHONPATH": str(package_root), "PATH": "/usr/bin:/bin"}, timeout=120)


# The token counts of "the cat sat" against "the cat the": 3 prediction tokens, 3 reference tokens, multiset overlap
# min(1,2) for "the" + 1 for "cat" = 2 (worked by hand); F1 = 2·(2/3)·(2/3)/(4/3) = 2/3.
_SCORE = ("import sys, goldeval\nfrom goldeval.freetext.overlap import token_f1\n"
          "o = token_f1('the cat sat', 'the cat the')\n"
          "print(sys.modules.get('goldeval._fast') is None, o.f1)\n")


def test_a_stale_build_is_hidden_with_a_warning_and_the_scores_stay(tmp_path):
    shutil.copytree(REPO / "src" / "goldeval", tmp_path / "goldeval", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(_built_extension(), tmp_path / "goldeval")
    current = _run(tmp_path, _SCORE)
    assert current.returncode == 0, current.stderr
    assert current.stdout.split() == ["False", str(2 / 3)] and "out of date" not in current.stderr

    with open(tmp_path / "goldeval" / "_fast.c", "a") as source:  # what a git pull that changes _fast.c leaves
        source.write("\n/* a newer revision */\n")
    stale = _run(tmp_path, _SCORE)
    assert stale.returncode == 0, stale.stderr
    assert stale.stdout.split() == ["True", str(2 / 3)]
    assert "C extension" in stale.stderr and "out of date" in stale.stderr and "pip install -e ." in stale.stderr


def test_the_stale_warning_is_given_once_per_process_tree(tmp_path):
    # A fresh-user run: `score --workers 2` on a stale build printed the warning twice, the second time from
    # "multiprocessing/forkserver.py:178" (each worker imports goldeval again). A process started by one that warned
    # hides the extension too (its scores take the pure-Python path) and says nothing.
    shutil.copytree(REPO / "src" / "goldeval", tmp_path / "goldeval", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(_built_extension(), tmp_path / "goldeval")
    with open(tmp_path / "goldeval" / "_fast.c", "a") as source:
        source.write("\n/* a newer revision */\n")
    code = ("import subprocess, sys, goldeval\n"
            "child = subprocess.run([sys.executable, '-c', " + repr(_SCORE) + "], capture_output=True, text=True)\n"
            "print(child.stdout.strip()); sys.stderr.write(child.stderr)\n")
    done = _run(tmp_path, code)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["True", str(2 / 3)]  # the child hid the extension too
    assert done.stderr.count("out of date") == 1, done.stderr
