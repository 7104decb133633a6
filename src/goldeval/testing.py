"""Gates in a test suite: ``from goldeval.testing import assert_gates``.

::

    from goldeval.testing import assert_gates

    def test_the_claims_model_meets_what_was_signed():
        assert_gates("results.json", "dod.toml")
        # AssertionError: FAIL: 4 escalations missed (10.0 per 100) against the agreed 2 per 100; ...

The pytest plugin (entry point ``pytest11``, :mod:`goldeval.pytest_plugin`) adds the fixture ``goldeval_gates``:
the same check, with the decision recorded on the test (``record_property``) so that pytest's own
``--junitxml`` report carries it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

__all__ = ["assert_gates", "load_results"]


def load_results(results_or_path: Mapping[str, Any] | str | os.PathLike[str]) -> Mapping[str, Any]:
    """A results dict as given, or read from the JSON file a goldeval command wrote.

    Raises:
        InputError: the file is missing, not JSON, not a JSON object, or one without an ``aggregate`` object.
    """
    if isinstance(results_or_path, Mapping):
        return results_or_path
    from goldeval.io.resultsfile import read_results  # start-up: the pytest plugin imports this module in every session

    return read_results(os.fspath(results_or_path), gateable=True)


def assert_gates(results_or_path: Mapping[str, Any] | str | os.PathLike[str], gates: Any) -> Any:
    """Apply a definition of done to a run's results and fail the test when a gate fails.

    Args:
        results_or_path: A results dict (what ``goldeval.score_file``, ``score_label_file`` or ``judge_answer_file``
            return) or the path of a results JSON a goldeval command wrote (``--out``).
        gates: The definition of done: a path to its TOML file, or a :class:`goldeval.gates.definition.DefinitionOfDone`.

    Returns:
        The :class:`goldeval.gates.evaluate.GateReport` when every gate passes.

    Raises:
        AssertionError: a gate fails; the message is the plain decision line the CLI prints (``"FAIL: …"``). A gate
            on an undefined value or with no evidence on this set fails too (it never passes on no evidence).
        InputError: the results or the gates file cannot be used (a usage error, not a failing gate).

    Source: :func:`goldeval.gates.evaluate.evaluate_gates`, the same evaluation as ``goldeval gate``.
    """
    # start-up: the pytest plugin imports this module in every session; the gates load when a test asks
    from goldeval.gates.definition import DefinitionOfDone, load_gates
    from goldeval.gates.evaluate import evaluate_gates
    from goldeval.scoring.registry import register_plugin_metrics

    register_plugin_metrics()  # a third-party scorer's metrics are gateable too
    results = load_results(results_or_path)
    dod = gates if isinstance(gates, DefinitionOfDone) else load_gates(gates)
    report = evaluate_gates(results, dod)
    if not report.passed:
        raise AssertionError(report.summary)
    return report
