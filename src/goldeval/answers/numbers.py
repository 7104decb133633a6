"""The numeric tolerance rule: when a golden number and a predicted number are the same number.

For a golden ``g`` and a predicted ``p`` (float64, NaN for NULL)::

    |p - g| <= max(r * max(|g|, |p|), h)

* ``h`` — half a unit in the last decimal the golden shows (:func:`tolerances`): a golden written ``58.74`` has
  ``h = 0.005`` and accepts ``58.744924``; a ``NUMERIC(12,2)`` value ``1234567.80`` shows two decimals, ``h =
  0.005``; integers, and a golden its canonical query computed without rounding, have ``h = 0``.
* ``r`` — the relative part, for rounding noise, chosen per column pair by what the two columns hold
  (:func:`pair_rel_tol`):

  ======================================================  ===============================================
  the two columns                                         ``r``
  ======================================================  ===============================================
  neither holds a ``Decimal``                             ``rel_tol`` (:data:`REL_TOL` = 1e-6): binary
                                                          floating point carries noise (``0.1 + 0.2``)
  a ``Decimal`` (a database ``NUMERIC`` / ``DECIMAL``)    :data:`FLOAT_NOISE` = 1e-12: the float side's
  against a column of floats                              rounding (a sum of doubles), never a cent of
                                                          ``1234567.80``
  a ``Decimal`` against a ``Decimal``, an integer or      :data:`DECIMAL_RESOLUTION` = 2**-50 (~8.9e-16):
  numeric text                                            none but the float64 the comparison runs in
  ======================================================  ===============================================

  (never more than ``rel_tol``). So *Decimals from a database compare exactly, or within the golden's display
  precision*: ``NUMERIC`` 1234567.80 is not 1234567.00 (1e-6 relative accepted it: 1.23 wide), and is not a float
  1234567.0 either; ``AVG`` 2.3333333333333333 (PostgreSQL ``numeric``) meets the SQLite/DuckDB double
  2.3333333333333335.
* Two whole numbers meet only within ``h`` (the relative part applies only when one side is not whole): 1,000,001
  is not a count of 1,000,000. Integral values from 2**53 on never reach this rule: they compare as their digits
  (:mod:`goldeval.answers.values`).
* NULL (NaN) equals only NULL.

Comparisons run in float64, so a Decimal agrees with another to about 15 significant digits (two
``NUMERIC(38,20)`` values that differ only in the 17th are one number here); identifiers, which are integers, are
exact at any size.

Source: ``DESIGN.md`` "Data answers" ("Tolerance"); goldeval issue 11, item 5 ("Decimals from a database compare
exactly, or within the golden's display precision").
"""

from __future__ import annotations

import math
from typing import Any, Protocol

import numpy as np

try:  # the optional C fast path (see _fast.c); numbers_close stays the definition and the fallback
    from goldeval._fast import all_close as _fast_all_close
except ImportError:  # pragma: no cover - the extension is optional
    _fast_all_close = None

__all__ = [
    "REL_TOL",
    "FLOAT_NOISE",
    "DECIMAL_RESOLUTION",
    "tolerances",
    "half_units",
    "numbers_close",
    "pair_rel_tol",
    "rows_close",
    "rows_all_close",
    "constant_ratio",
    "describe_scale",
    "number_text",
]


class NumberColumn(Protocol):
    """What the tolerances read of a column: :class:`goldeval.answers.values.Column` is one (named by its shape here,
    so that this module, which values.py imports, does not import values.py back)."""

    n: int
    decimal: bool
    binary: bool

    @property
    def decimals(self) -> np.ndarray: ...

    @property
    def cell_types(self) -> set[type] | None: ...

    def cached(self, key: str, make: Any) -> Any: ...

#: Relative tolerance for numbers where neither side is a ``Decimal`` (binary floating-point noise).
REL_TOL = 1e-6

#: Relative tolerance between a ``Decimal`` and a binary float: the float's own rounding (a double has 53 bits,
#: ~1.1e-16 relative per operation; 1e-12 covers a sum of ~10^4 doubles at the worst case) and nothing more.
FLOAT_NOISE = 1e-12

#: Relative tolerance between a ``Decimal`` and an exact number (``Decimal``, integer, numeric text): the float64
#: the comparison runs in (4 units in the last place), so two decimals rounded at different scales beyond 15
#: significant digits (``2.3333333333333333`` and ``2.33333333333333333333``) are one number.
DECIMAL_RESOLUTION = 2.0**-50


def tolerances(golden: NumberColumn, *, rel_tol: float = REL_TOL) -> np.ndarray:
    """Absolute half-width accepted around each golden number: ``(n,)`` float, the display-precision part only.

    The relative part (``r * max(|g|, |p|)``, see :func:`pair_rel_tol`) depends on the prediction and is added
    where values meet. A value written with ``d > 0`` decimals (a ``Decimal``: its scale) accepts half a unit of
    its last decimal, ``0.5 * 10**-d``; integers (``d = 0``) accept nothing beyond the relative tolerance.
    Computed once per column. ``rel_tol`` is accepted for symmetry and not used.
    """
    return golden.cached("tolerances", lambda: _tolerances(golden))


def _tolerances(golden: NumberColumn) -> np.ndarray:
    types = golden.cell_types
    if types is not None and types <= {int, type(None)}:
        # Python ints and NULLs only (as the C typing saw them): no cell carries decimals, so every half-unit is 0
        # (what half_units of the zero decimals gives), without the decimals pass and four NumPy calls.
        return np.zeros(golden.n)
    return half_units(golden.decimals)


def half_units(decimals: np.ndarray) -> np.ndarray:
    """Half a unit in the last decimal per cell, ``0.5 * 10**-d`` (0 where ``d`` is 0), with a hair of slack:
    :func:`tolerances` of cells written with *decimals* (``(n,)`` int)."""
    if not decimals.any():
        return np.zeros(decimals.shape)  # what the lines below give where every d is 0 (0.0 * (1 + 1e-9) is 0.0)
    if decimals.dtype.kind in "iu" and decimals.size > _HALF_TABLE_MIN and 0 <= decimals.min() and decimals.max() < 400:
        # Whole decimals in a short range: the same expression on each value once, then looked up per cell (the
        # power is the costly part, and a column holds a handful of distinct decimals).
        return _half_units(np.arange(int(decimals.max()) + 1))[decimals]
    return _half_units(decimals)


#: Cells from which half_units looks the values up in a table of the distinct decimals.
_HALF_TABLE_MIN = 64


def _half_units(decimals: np.ndarray) -> np.ndarray:
    d = decimals.astype(float)
    half = np.where(d > 0, 0.5 * np.power(10.0, -d), 0.0)
    # A hair of slack so that 58.745 (exactly half a unit off, in binary floating point) is still accepted.
    return half * (1 + 1e-9)


def pair_rel_tol(golden: NumberColumn, pred: NumberColumn, rel_tol: float = REL_TOL) -> float:
    """The relative tolerance ``r`` for one golden column against one predicted column (module docstring table).

    Args:
        golden: Golden column.
        pred: Predicted column.
        rel_tol: The tolerance for binary floating point (the judge's ``rel_tol``); the ``Decimal`` cases use the
            smaller of it and their own.

    Returns:
        ``rel_tol`` when neither column holds a ``Decimal``; else ``min(rel_tol, FLOAT_NOISE)`` when either holds a
        float, else ``min(rel_tol, DECIMAL_RESOLUTION)``.
    """
    if not (golden.decimal or pred.decimal):
        return rel_tol
    return min(rel_tol, FLOAT_NOISE if (golden.binary or pred.binary) else DECIMAL_RESOLUTION)


def numbers_close(g: np.ndarray, p: np.ndarray, half: np.ndarray, *, rel_tol: float | np.ndarray = REL_TOL) -> np.ndarray:
    """Elementwise tolerance test; NULL (NaN) equals only NULL. Shapes broadcast; returns bool.

    Args:
        g: Golden numbers (float64, NaN for NULL).
        p: Predicted numbers, same or broadcastable shape.
        half: The golden's display-precision half-widths (:func:`tolerances`), broadcastable.
        rel_tol: The relative tolerance ``r``: a float, or ``(m,)`` per column of ``(…, m)`` arrays (one
            :func:`pair_rel_tol` per column pair).

    The relative tolerance absorbs rounding noise, so it applies only when one side is not a whole number: two
    whole numbers meet exactly or within the golden's display precision (1,000,001 is not a count of 1,000,000,
    and order 1234567890999 is not order 1234567890123, although both are within 1e-6 relative)."""
    with np.errstate(invalid="ignore"):
        diff = np.abs(g - p)
        rel = rel_tol * np.maximum(np.abs(g), np.abs(p))
        whole = (g == np.floor(g)) & (p == np.floor(p))
        lim = np.maximum(np.where(whole, 0.0, rel), half)
        close = diff <= lim
    return np.where(np.isnan(g) | np.isnan(p), np.isnan(g) & np.isnan(p), close)


def rows_close(ng: np.ndarray, np_: np.ndarray, half: np.ndarray, rel_tol: float | np.ndarray) -> np.ndarray:
    """``(n,)`` bool: every numeric cell of aligned rows within tolerance (``ng``, ``np_``, ``half``: ``(n, m)``;
    ``rel_tol``: a float or ``(m,)``). With no numeric column every row is close."""
    if ng.shape[1] == 0:
        return np.ones(ng.shape[0], dtype=bool)
    return np.asarray(numbers_close(ng, np_, half, rel_tol=rel_tol).all(axis=1))


def rows_all_close(ng: np.ndarray, np_: np.ndarray, half: np.ndarray, rel_tol: float | np.ndarray) -> bool:
    """``rows_close(ng, np_, half, rel_tol).all()``: every numeric cell of the aligned rows within tolerance (the
    optional C fast path checks cell by cell and stops at the first that is not; the rule is the same)."""
    if ng.shape[1] == 0 or ng.shape[0] == 0:
        return True
    if _fast_all_close is not None and ng.dtype == np_.dtype == half.dtype == np.float64:
        rel = np.ascontiguousarray(np.broadcast_to(np.asarray(rel_tol, dtype=float), (ng.shape[1],)))
        return bool(_fast_all_close(ng, np_, half, rel))
    return bool(rows_close(ng, np_, half, rel_tol).all())


def constant_ratio(g: np.ndarray, p: np.ndarray) -> float | None:
    """The one ratio ``p / g`` every aligned pair of cells has (within 1e-6 of the median), or ``None``.

    NULLs must sit in the same places; a golden 0 must be a predicted 0. Used to describe "uniformly scaled ×100".
    """
    ok = ~np.isnan(g) & ~np.isnan(p) & (g != 0)
    if not ok.any() or (np.isnan(g) != np.isnan(p)).any():
        return None
    with np.errstate(over="ignore", invalid="ignore"):  # an inf cell (SQLite's 1e999) is no ratio: no numpy warning on stderr
        r = p[ok] / g[ok]
    if not np.isfinite(r).all():
        return None
    lo, hi = float(r.min()), float(r.max())
    if not hi - lo <= 2e-6 * max(abs(lo), abs(hi)):
        return None  # every ratio within 1e-6·|k| of one k spans at most 2e-6·|k| ≤ 2e-6·max(|lo|, |hi|): not constant
    k = float(np.median(r))
    if k == 0 or not np.all(np.abs(r - k) <= 1e-6 * abs(k)):
        return None
    if np.any((g == 0) & (p != 0)):
        return None
    return k


def describe_scale(k: float) -> str:
    """``×100``, ``×0.01``, ``×1.583`` — a ratio as the mismatch text shows it."""
    if k > 0:
        e = round(math.log10(k))
        if abs(k - 10.0**e) <= 1e-9 * 10.0**e:
            return f"×{10.0**e:g}"
    return f"×{k:.4g}"


def number_text(x: float) -> str:
    """A number for a message: integers without a decimal point, others to 10 significant digits."""
    if math.isfinite(x) and x == int(x) and abs(x) < 1e16:
        return str(int(x))
    return f"{x:.10g}"
