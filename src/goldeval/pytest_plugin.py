"""goldeval's pytest plugin (entry point group ``pytest11``): the fixture ``goldeval_gates``.

::

    def test_release_candidate(goldeval_gates):
        goldeval_gates("results.json", "dod.toml")     # fails with the plain decision line when a gate fails

The fixture is :func:`goldeval.testing.assert_gates`, and it records the decision (``goldeval_decision``) and the run
id (``goldeval_run``, when the results name one) on the test with ``record_property``, so ``pytest --junitxml``
carries them. Importing this module imports nothing heavy (numpy and friends load on the first call).
"""

from __future__ import annotations

from typing import Any

import pytest

__all__ = ["goldeval_gates"]


@pytest.fixture
def goldeval_gates(record_property: Any):
    """``goldeval_gates(results_or_path, gates) -> GateReport``: :func:`goldeval.testing.assert_gates`, with the
    decision recorded as the test's ``goldeval_decision`` property (pass or fail)."""
    from goldeval.testing import assert_gates, load_results  # start-up: pytest loads this plugin in every session

    def check(results_or_path: Any, gates: Any) -> Any:
        results = load_results(results_or_path)
        run = results.get("run") if isinstance(results.get("run"), dict) else None
        if run and run.get("id"):
            record_property("goldeval_run", run["id"])
        try:
            report = assert_gates(results, gates)
        except AssertionError as exc:
            record_property("goldeval_decision", str(exc))
            raise
        record_property("goldeval_decision", report.summary)
        return report

    return check
