"""matching.group_ids of small key matrices (plain Python, matching._small_group_ids) against its NumPy code (the
mixed-radix unique, or the unique over rows): the same ids, dtype and shape on random matrices, narrow and wide.

Source: goldeval issue 15 (instructions a Spider case: np.unique's fixed cost on tables of a few rows); the
expected ids come from group_ids with the small path turned off.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from goldeval.answers import matching

_BIG = 2**62


def _general(keys: np.ndarray, monkeypatch: pytest.MonkeyPatch) -> np.ndarray:
    with monkeypatch.context() as m:
        m.setattr(matching, "_SMALL_KEYS", 0)
        return matching.group_ids(keys)


@settings(max_examples=500, deadline=None)
@given(st.integers(1, matching._SMALL_KEYS), st.integers(1, 4),
       st.sampled_from([(0, 1), (0, 5), (-3, 3), (0, 10**6), (-2**40, 2**40), (-_BIG, _BIG)]), st.data())
def test_small_key_matrices_group_as_the_numpy_code(n: int, k: int, bounds: tuple[int, int], data: st.DataObject) -> None:
    lo, hi = bounds
    cells = data.draw(st.lists(st.integers(lo, hi), min_size=n * k, max_size=n * k))
    keys = np.array(cells, dtype=np.int64).reshape(n, k)
    with pytest.MonkeyPatch.context() as mp:
        want = _general(keys, mp)
    got = matching.group_ids(keys)
    assert got.dtype == want.dtype and got.shape == want.shape
    assert got.tolist() == want.tolist()


def test_the_small_path_declines_wide_spans() -> None:
    keys = np.array([[0, 0], [2**40, 2**40]], dtype=np.int64)
    assert matching._small_group_ids(keys) is None
    assert matching._small_group_ids(np.array([[3], [1], [3]], dtype=np.int64)).tolist() == [1, 0, 1]
