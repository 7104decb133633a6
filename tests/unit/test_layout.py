"""The one-house layout (issue 27; README "Architecture"): the import graph of ``goldeval`` has no circle, no import
from a lower layer to a higher one (the layers contract in pyproject.toml, checked by import-linter), nothing below
``cli`` imports it, and a domain package (freetext, labels, answers, llm) imports no engine, pipeline, CLI or another
domain's Scorer. Imports inside functions are counted like any other (grimp reads them); only ``if TYPE_CHECKING:``
imports are left out, since they never run.

The KNOWN_* sets name what still breaks a rule and who removes it; each is checked both ways (a known exception that
is gone fails the test, so the list is emptied when the work lands, as an xfail(strict=True) would).
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import grimp
import pytest

from conftest import REPO

SRC = REPO / "src"
DOMAINS = ("goldeval.freetext", "goldeval.labels", "goldeval.answers", "goldeval.llm")

# h6 moves the run pipeline out of cli/ (the LLM stage, Spark orchestration): then these are gone.
KNOWN_CIRCLES: set[frozenset[str]] = set()
KNOWN_CLI_USERS: set[tuple[str, str]] = set()
# score_file / judge_file, which run a scorer over a file on the local engine, are goldeval.pipeline.files' (their old
# domain paths answer through goldeval._compat.moved_attribute, an import by dotted name the graph does not see)
KNOWN_DOMAIN_IMPORTS: set[tuple[str, str]] = set()


KNOWN_PRIVATE_IMPORTS: set[tuple[str, str, str]] = set()


@pytest.fixture(scope="module")
def graph() -> grimp.ImportGraph:
    g = grimp.build_graph("goldeval", cache_dir=None, exclude_type_checking_imports=True)
    # `import goldeval._fast` (the C extension, no Python source) reads as an import of the package root: not one
    for importer in g.find_modules_that_directly_import("goldeval"):
        details = g.get_import_details(importer=importer, imported="goldeval")
        if details and all("goldeval._fast" in d["line_contents"] for d in details):
            g.remove_import(importer=importer, imported="goldeval")
    return g


def circles(graph: grimp.ImportGraph) -> set[frozenset[str]]:
    """The import circles of *graph*: its strongly connected components of two modules or more (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on: set[str] = set()
    stack: list[str] = []
    found: set[frozenset[str]] = set()
    counter = 0
    for root in sorted(graph.modules):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.find_modules_directly_imported_by(root))))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on.add(root)
        while work:
            v, children = work[-1]
            for w in children:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph.find_modules_directly_imported_by(w)))))
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    comp = set()
                    while True:
                        w = stack.pop()
                        on.discard(w)
                        comp.add(w)
                        if w == v:
                            break
                    if len(comp) > 1:
                        found.add(frozenset(comp))
    return found


def imports_into(graph: grimp.ImportGraph, importers: str, imported: str) -> set[tuple[str, str]]:
    """``(importer, imported)`` pairs: a module under *importers* importing one under *imported*."""
    out = set()
    for m in graph.modules:
        if m == importers or m.startswith(importers + "."):
            for t in graph.find_modules_directly_imported_by(m):
                if t == imported or t.startswith(imported + "."):
                    out.add((m, t))
    return out


def _toy(edges: list[tuple[str, str]]) -> grimp.ImportGraph:
    g = grimp.ImportGraph()
    for a, b in edges:
        g.add_import(importer=a, imported=b)
    return g


def test_circle_finder_fires_on_a_circle_and_stays_silent_on_a_chain():
    # by hand: a -> b -> c -> a is one circle; d -> e is none; f -> f is not a circle of two modules
    assert circles(_toy([("p.a", "p.b"), ("p.b", "p.c"), ("p.c", "p.a"), ("p.d", "p.e")])) == {frozenset({"p.a", "p.b", "p.c"})}
    assert circles(_toy([("p.a", "p.b"), ("p.b", "p.c"), ("p.d", "p.c")])) == set()


def test_no_import_circle(graph):
    found = circles(graph)
    assert found - KNOWN_CIRCLES == set(), "import circles (break them by moving the shared piece down)"
    assert KNOWN_CIRCLES - found == set(), "a known circle is gone: remove it from KNOWN_CIRCLES"


def test_in_function_imports_count_in_the_graph(graph):
    # grimp reads imports made inside functions: goldeval.engines.spark imports pyspark only inside functions, and
    # goldeval.io.reading its pyarrow reader likewise; an in-function goldeval import is an edge like any other.
    # goldeval.pipeline.run imports the Spark pipeline only inside evaluate() (start-up: it loads the judge)
    details = graph.get_import_details(importer="goldeval.pipeline.run", imported="goldeval.pipeline.spark")
    assert details and all(d["line_contents"].startswith("from goldeval.pipeline.spark import") for d in details)


def test_nothing_below_cli_imports_cli(graph):
    users = {(m, t) for (m, t) in imports_into(graph, "goldeval", "goldeval.cli")
             if not m.startswith("goldeval.cli") and m != "goldeval.__main__"}
    assert users - KNOWN_CLI_USERS == set()
    assert KNOWN_CLI_USERS - users == set(), "a known CLI import is gone: remove it from KNOWN_CLI_USERS"


def test_domain_packages_import_no_engine_pipeline_cli_or_other_scorer(graph):
    bad = set()
    for domain in DOMAINS:
        for upper in ("goldeval.engines", "goldeval.pipeline", "goldeval.cli", "goldeval.runs", "goldeval.report"):
            bad |= imports_into(graph, domain, upper)
        for other in DOMAINS:
            if other != domain:
                bad |= imports_into(graph, domain, other + ".scorer")
    assert bad - KNOWN_DOMAIN_IMPORTS == set()
    assert KNOWN_DOMAIN_IMPORTS - bad == set(), "a known import is gone: remove it from KNOWN_DOMAIN_IMPORTS"


def test_the_protocol_imports_no_engine_and_no_domain(graph):
    bad = set()
    for upper in ("goldeval.engines", "goldeval.pipeline", "goldeval.cli", *DOMAINS):
        bad |= imports_into(graph, "goldeval.scoring", upper)
    assert bad == set()  # the registry names the built-in scorers as strings and imports them when asked


def test_layers_contract_holds():
    # the layers of pyproject.toml's [tool.importlinter] (its ignore_imports are the KNOWN_* pairs above)
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    code = "import sys; from importlinter.cli import lint_imports; sys.exit(lint_imports(config_filename='pyproject.toml'))"
    res = subprocess.run([sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "KEPT" in res.stdout and "BROKEN" not in res.stdout


def test_layers_contract_names_every_package():
    # a new top-level package or module must be placed in a layer, or the contract silently ignores it
    import tomllib

    layers = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"][0]["layers"]
    placed = {name.strip(" ()") for layer in layers for part in layer.split("|") for name in part.split(":")}
    tops = {"goldeval." + (p.stem if p.is_file() else p.name) for p in (SRC / "goldeval").iterdir()
            if (p.suffix == ".py" and p.stem != "__init__") or (p.is_dir() and (p / "__init__.py").exists())}
    assert tops - placed == set()


def _in_function_imports(path: Path):
    source = path.read_text(encoding="utf-8")
    lines = source.split("\n")
    tree = ast.parse(source)
    parents = {c: p for p in ast.walk(tree) for c in ast.iter_child_nodes(p)}
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            p = parents.get(node)
            while p is not None and not isinstance(p, (ast.FunctionDef, ast.AsyncFunctionDef)):
                p = parents.get(p)
            if p is not None:
                # the reason is on the line, or above it (over the other imports of the same group)
                says, j = "#" in lines[node.lineno - 1], node.lineno - 2
                while not says and j >= 0:
                    above = lines[j].strip()
                    says = "#" in above
                    if not above.startswith(("from ", "import ")):
                        break
                    j -= 1
                yield node.lineno, lines[node.lineno - 1].strip(), says


def test_every_import_inside_a_function_says_why():
    # an import inside a function is for an optional heavy dependency or start-up time only, and says which;
    # cli/ too: a command's library modules load when it runs, so that `goldeval --help` stays fast
    silent = [f"{p.relative_to(SRC)}:{n}: {text}" for p in sorted((SRC / "goldeval").rglob("*.py"))
              for n, text, says in _in_function_imports(p) if not says]
    assert silent == []


def test_the_comment_rule_fires_on_a_silent_import(tmp_path):
    f = tmp_path / "m.py"
    f.write_text("def f():\n    import json\n    return json\n\n\ndef g():\n    import numpy  # start-up: heavy\n\n\n"
                 "def h():\n    # optional heavy dependency: both\n    import pyarrow\n    import pyspark\n")
    assert [(n, says) for n, _, says in _in_function_imports(f)] == [(2, False), (7, True), (12, True), (13, True)]


def private_imports(root: Path) -> set[tuple[str, str, str]]:
    """``(file, module, name)`` for each ``from goldeval.X import _name`` under *root* (the C extension aside)."""
    out = set()
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("goldeval") \
                    and not node.module.startswith("goldeval._fast"):
                out |= {(path.relative_to(root.parent).as_posix(), node.module, a.name) for a in node.names
                        if a.name.startswith("_") and not a.name.startswith("__")}
    return out


def test_no_private_name_is_imported_across_modules():
    # a name another module needs is public in its module
    found = private_imports(SRC / "goldeval")
    assert found - KNOWN_PRIVATE_IMPORTS == set()
    assert KNOWN_PRIVATE_IMPORTS - found == set(), "a known private import is gone: remove it from the list"


def test_the_private_import_rule_fires_and_stays_silent(tmp_path):
    pkg = tmp_path / "goldeval"
    pkg.mkdir()
    (pkg / "a.py").write_text("from goldeval.b import _hidden, shown\nfrom goldeval._fast import _x\n")
    (pkg / "c.py").write_text("from goldeval.b import shown as _local\n")  # a public name under a local alias: fine
    assert private_imports(pkg) == {("goldeval/a.py", "goldeval.b", "_hidden")}
