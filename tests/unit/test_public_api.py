"""The public surface: ``goldeval.__all__`` is pinned (adding a name is a decision; renaming one breaks users),
every name resolves, and ``import goldeval`` stays cheap."""

from __future__ import annotations

import subprocess
import sys

import goldeval

PUBLIC = [
    "Agreement", "AnswerConfig", "CaseOutcome", "DefinitionOfDone", "Evaluation", "ExactSum", "GateReport", "GoldevalError", "InputError",
    "JudgeCache", "JudgeConfig", "JudgeError", "LabelScore", "OPENSCRIBE", "Overlap", "PassRate", "ReadOnlyDatabase",
    "Recorder", "RunStore", "SectionOverlap", "StoreError", "Tokenizer", "UNICODE", "UnreadableTextError", "Verdict",
    "__version__", "agreement", "cohen_kappa", "compare_runs", "confusion_matrix", "evaluate", "evaluate_gates", "get_tokenizer",
    "judge_answer", "judge_answer_file", "judge_cases", "load_gates", "parse_gates", "parse_judge_output", "pass_rate",
    "per_label_table", "replay_regressions", "score_file", "score_label_file", "score_labels", "score_rows",
    "section_f1", "start_run", "token_f1",
]


def test_all_is_pinned_and_sorted():
    assert goldeval.__all__ == sorted(PUBLIC)


def test_every_public_name_resolves():
    for name in goldeval.__all__:
        assert getattr(goldeval, name) is not None, name


def test_public_functions_have_docstrings():
    for name in goldeval.__all__:
        obj = getattr(goldeval, name)
        if callable(obj) and not isinstance(obj, type(goldeval.OPENSCRIBE)):
            assert (obj.__doc__ or "").strip(), f"{name} has no docstring"


def test_import_is_cheap():
    code = "import sys, goldeval\nprint([m for m in ('numpy', 'scipy', 'sqlglot', 'openai', 'sklearn', 'rich') if m in sys.modules])"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "[]"


def test_exception_hierarchy():
    assert issubclass(goldeval.InputError, ValueError) and issubclass(goldeval.InputError, goldeval.GoldevalError)
    assert issubclass(goldeval.UnreadableTextError, goldeval.InputError)
    assert issubclass(goldeval.JudgeError, goldeval.GoldevalError) and issubclass(goldeval.StoreError, goldeval.GoldevalError)


def _type_checking_imports() -> dict[str, str]:
    """name -> module of the ``if TYPE_CHECKING:`` block of goldeval/__init__.py."""
    import ast
    from pathlib import Path

    tree = ast.parse(Path(goldeval.__file__).read_text(encoding="utf-8"))
    out: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
            for imp in node.body:
                assert isinstance(imp, ast.ImportFrom), ast.unparse(imp)
                out.update({a.asname or a.name: imp.module for a in imp.names})
    return out


def test_lazy_names_are_typed_for_a_type_checker():
    # each name loaded on first use is also imported statically under TYPE_CHECKING (else a type checker sees Any),
    # from a module that gives the very object the lazy load gives
    import importlib

    static = _type_checking_imports()
    assert sorted(static) == sorted(goldeval._LAZY)
    for name, module in static.items():
        assert getattr(importlib.import_module(module), name) is getattr(goldeval, name), name


def test_py_typed_is_shipped():
    # PEP 561: the marker in the package, and in the wheel through pyproject's package-data
    import tomllib
    from pathlib import Path

    from conftest import REPO

    assert (Path(goldeval.__file__).parent / "py.typed").is_file()
    package_data = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]
    assert "py.typed" in package_data["goldeval"]
