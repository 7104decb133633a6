"""constant_ratio on infinite cells (found on a fresh clone: SQLite's `SELECT 1e999` is inf, and the ratio inf/inf
printed numpy's "RuntimeWarning: invalid value encountered in subtract" on the user's stderr)."""

from __future__ import annotations

import warnings

import numpy as np

from goldeval.answers.numbers import constant_ratio


def test_a_uniform_scale_is_found():
    # 11.5 * 100 = 1150, 0.25 * 100 = 25: the ratio is 100 in every cell
    assert constant_ratio(np.array([11.5, 0.25]), np.array([1150.0, 25.0])) == 100.0


def test_an_infinite_cell_is_no_ratio_and_warns_nothing():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert constant_ratio(np.array([1e308]), np.array([np.inf])) is None
        assert constant_ratio(np.array([5.0, 1.0]), np.array([np.inf, np.inf])) is None
        assert constant_ratio(np.array([1e-308]), np.array([1e308])) is None  # the division overflows to inf
