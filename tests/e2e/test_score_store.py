"""Free-text runs in the store: per_example is stored once (as cases) and rebuilt exactly on read."""

from __future__ import annotations

import json
import sqlite3

from click.testing import CliRunner

from conftest import EXAMPLES
from goldeval.cli import main
from goldeval.runs.store import RunStore


def test_per_example_is_stored_once_and_rebuilt_exactly(tmp_path):
    store = tmp_path / "g.db"
    out = tmp_path / "r.json"
    src = str(EXAMPLES / "openscribe_acibench_predictions.jsonl")  # 35 scored, 5 failed (null predictions)
    res = CliRunner().invoke(main, ["score", src, "--store", str(store), "--out", str(out), "-q"])
    assert res.exit_code == 0, res.output
    written = json.loads(out.read_text())
    # the run row holds a reference, not a second copy of the 35 entries
    raw = sqlite3.connect(store).execute("SELECT results FROM runs").fetchone()[0]
    assert json.loads(raw)["per_example"]["$cases"] is True
    # reading the run gives back exactly what the command wrote (entries, order, failures apart)
    with RunStore(store) as st:
        results = st.get_run("latest")["results"]
    assert results["per_example"] == written["per_example"]
    assert results["failures"] == written["failures"] and len(results["failures"]) == 5
    assert results["aggregate"]["whole_note_f1_mean"] == written["aggregate"]["whole_note_f1_mean"]
