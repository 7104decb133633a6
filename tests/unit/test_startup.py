"""Start-up stays light: which modules `goldeval --help` and the labels path load (a list of modules, never a
timing). Heavy libraries (numpy, scipy, scikit-learn, sqlglot, rich, openai, pyarrow, duckdb, matplotlib, jinja2)
are imported only by the code that uses them."""

from __future__ import annotations

import json
import subprocess
import sys

from conftest import REPO

HEAVY = ("numpy", "scipy", "sklearn", "sqlglot", "rich", "openai", "pyarrow", "duckdb", "psycopg", "matplotlib", "jinja2")


def _loaded(code: str) -> list[str]:
    probe = code + f"\nimport sys, json\nprint(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def test_import_goldeval_loads_no_heavy_library():
    assert _loaded("import goldeval") == []


def test_help_loads_no_heavy_library():
    code = ("from goldeval.cli import main\n"
            "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n")
    assert _loaded(code) == []


def test_every_command_help_loads_no_heavy_library():
    code = ("from goldeval.cli import main\n"
            "for cmd in ('score', 'labels', 'judge', 'gate', 'runs', 'compare'):\n"
            "    try:\n        main([cmd, '--help'])\n    except SystemExit:\n        pass\n")
    assert _loaded(code) == []


def test_the_labels_path_does_not_import_scikit_learn():
    # kappa is read off the pair counts exactly (goldeval.labels.agreement); tests/unit/test_agreement.py compares it with
    # sklearn's cohen_kappa_score
    pilot = REPO / "examples" / "labels"
    files = sorted(p for p in pilot.glob("*.jsonl"))
    assert files, "examples/labels holds a labels file"
    code = (f"from goldeval.labels import score_label_file\n"
            f"r = score_label_file({str(files[0])!r}, positive='escalate', require_positive=False)\n"
            "assert 'kappa' in r['aggregate']\n")
    assert "sklearn" not in _loaded(code)
