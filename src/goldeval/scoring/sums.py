"""Exact running sums: means that are correctly rounded, kept in bounded memory, and mergeable across processes.

A macro-average over a million examples must not need a list of a million floats, and a mean computed from
partial sums on several workers (processes, Spark executors) must equal the mean of the whole list to the last
digit. :class:`ExactSum` does both: every value is added *exactly* (no rounding at all), so the order of the
values and the way they are split between accumulators cannot change the result, and :meth:`ExactSum.mean`
rounds once, at the end, to the float nearest the exact mean.

Definition: the state is the exact rational sum of the values added so far, kept as Python's
``statistics._sum`` keeps it — a map of power-of-two denominator → integer numerator, built from each float's
``as_integer_ratio()``. :meth:`ExactSum.mean` is ``float(Fraction(total) / n)``, which is what
:func:`statistics.mean` returns for the same values (the function the published Open-Scribe figures were computed
with: PriMock57 macro F1 0.27861937781204515). Memory is bounded: at most one entry per binary exponent
(≤ 2,098), whatever the count.

Serialised form (:meth:`ExactSum.to_state`) is plain JSON: the count and the exact sum as a short list of
non-overlapping floats whose exact (unrounded) sum is the total (Shewchuk's "partials", as inside
:func:`math.fsum`; usually 1–3 floats, at most about 40). Any number of states merge exactly on a driver::

    acc = ExactSum.merged(ExactSum.from_state(s) for s in partial_states)
    acc.mean()   # == statistics.mean(all values), to the last digit

Non-finite values (``nan``, ``±inf``) are not rounded away: they are summed as floats beside the exact part, and
once one is present :meth:`sum` / :meth:`mean` return that float sum (``inf``, ``-inf`` or ``nan``), as
:func:`statistics.mean` does.
"""

from __future__ import annotations

import math
import numbers
import sys
from collections.abc import Iterable
from fractions import Fraction
from typing import Any

from goldeval.errors import InputError, shorten

__all__ = ["ExactSum"]

_MAX = sys.float_info.max


class ExactSum:
    """An exact sum of numbers (floats or ints) with its count; the mean rounded once.

    Examples:
        >>> import statistics
        >>> acc = ExactSum()
        >>> acc.update([0.1, 0.2, 0.3])
        >>> acc.mean() == statistics.mean([0.1, 0.2, 0.3])   # 0.2 exactly rounded, not 0.20000000000000004
        True
        >>> a, b = ExactSum([0.1]), ExactSum([0.2, 0.3]); a.merge(b); a.mean() == acc.mean()
        True

    Attributes:
        count: How many values were added (ints; merged accumulators add their counts).

    Notes:
        Adding is about as fast as :func:`statistics.mean` per value (one ``as_integer_ratio`` and one dict
        update), in O(1) memory. ``bool`` and non-numeric values are refused (:class:`InputError`): a stray
        ``True`` or ``"0.5"`` must not become a score.

    Source:
        The exact-ratio accumulation of CPython's ``statistics._sum`` (3.11); the partials of
        J. R. Shewchuk, "Adaptive Precision Floating-Point Arithmetic", 1997 (as in :func:`math.fsum`).
    """

    __slots__ = ("count", "_partials", "_special", "_all_int")

    def __init__(self, values: Iterable[float | int] = ()) -> None:
        self.count: int = 0
        self._partials: dict[int, int] = {}  # denominator (a power of two) -> numerator
        self._special: float | None = None  # float sum of the non-finite values, None when there are none
        self._all_int = True  # only ints so far: the mean is an int when it is whole (statistics.mean's type rule)
        if values:
            self.update(values)

    # -- adding --------------------------------------------------------------------------------------------------

    def add(self, value: float | int) -> None:
        """Add one value exactly.

        Raises:
            InputError: *value* is not an int or float (``bool`` included).
        """
        self.update((value,))

    def update(self, values: Iterable[float | int]) -> None:
        """Add every value of *values* exactly (one pass; the iterable is not kept).

        Raises:
            InputError: a value is not an int or float (``bool`` included); the values before it stay added.
        """
        partials = self._partials
        get = partials.get
        count = self.count
        all_int = self._all_int
        try:
            for x in values:
                t = type(x)
                if t is not float and t is not int:
                    if isinstance(x, float):  # a float subclass (numpy.float64)
                        x, t = float(x), float
                    elif isinstance(x, numbers.Integral) and not isinstance(x, bool):  # numpy.int64
                        x, t = int(x), int
                    else:
                        raise InputError(
                            f"ExactSum: expected a number (int or float), got {shorten(x)}. Pass the score itself, "
                            "not a string, a bool or None."
                        )
                if t is float:
                    all_int = False
                    try:
                        n, d = x.as_integer_ratio()
                    except (OverflowError, ValueError):  # inf or nan
                        self._special = x if self._special is None else self._special + x
                        count += 1
                        continue
                    partials[d] = get(d, 0) + n
                else:
                    partials[1] = get(1, 0) + x  # type: ignore[assignment]  # t is int here, so x is (mypy cannot narrow by t)
                count += 1
        finally:
            self.count = count
            self._all_int = all_int

    def add_float(self, value: float) -> None:
        """Add one float exactly (the fast path for callers that know the type)."""
        try:
            n, d = value.as_integer_ratio()
        except (OverflowError, ValueError):
            self._special = value if self._special is None else self._special + value
        else:
            self._partials[d] = self._partials.get(d, 0) + n
        self.count += 1
        self._all_int = False

    def add_ratios(self, count: int, ratios: Iterable[tuple[int, int]]) -> None:
        """Add *count* finite floats given by their exact ratios, summed by denominator: for each ``(d, n)`` in
        *ratios*, *n* is the sum of the numerators of the values whose ``as_integer_ratio()`` has denominator *d*
        (a power of two). The same state as :meth:`add_float` of each value (a compiled scorer sums its values
        so, e.g. ``goldeval._fast.f1_lines``).

        Args:
            count: How many values the ratios sum (an int >= 0).
            ratios: ``(denominator, numerator sum)`` pairs of ints.

        Examples:
            >>> a, b = ExactSum(), ExactSum()
            >>> for x in (0.5, 0.25, 0.75): a.add_float(x)
            >>> b.add_ratios(3, [(2, 1), (4, 1 + 3)])
            >>> a == b and a.mean() == 0.5
            True
        """
        partials = self._partials
        for d, n in ratios:
            partials[d] = partials.get(d, 0) + n
        self.count += count
        if count:
            self._all_int = False

    def merge(self, other: ExactSum) -> None:
        """Add everything *other* holds (exactly; *other* is not changed).

        Raises:
            InputError: *other* is not an :class:`ExactSum`.
        """
        if not isinstance(other, ExactSum):
            raise InputError(f"ExactSum.merge: expected an ExactSum, got {shorten(other)}.")
        partials = self._partials
        for d, n in other._partials.items():
            partials[d] = partials.get(d, 0) + n
        self.count += other.count
        self._all_int = self._all_int and other._all_int
        if other._special is not None:
            self._special = other._special if self._special is None else self._special + other._special

    @classmethod
    def merged(cls, parts: Iterable[ExactSum]) -> ExactSum:
        """A new accumulator holding the exact sum of all *parts* (e.g. one per worker)."""
        out = cls()
        for p in parts:
            out.merge(p)
        return out

    # -- reading -------------------------------------------------------------------------------------------------

    def total(self) -> Fraction:
        """The exact sum of the finite values added, as a :class:`~fractions.Fraction` (0 when none)."""
        return sum((Fraction(n, d) for d, n in self._partials.items()), Fraction(0))

    def sum(self) -> float | int:
        """The sum rounded once to the nearest float (an int when only ints were added); the non-finite float sum
        when a ``nan`` or ``inf`` was added.

        Raises:
            OverflowError: the exact sum is finite but beyond the float range.
        """
        if self._special is not None:
            return self._special
        t = self.total()
        if self._all_int:
            return int(t)
        return float(t)

    def mean(self) -> float | int | None:
        """The mean, correctly rounded: ``float(total / count)``, equal to :func:`statistics.mean` of the same values
        to the last digit (an int when only ints were added and the mean is whole, as there). ``None`` when nothing
        was added — the caller says why the mean is undefined.
        """
        if self.count == 0:
            return None
        if self._special is not None:
            return self._special
        m = self.total() / self.count
        if self._all_int and m.denominator == 1:
            return int(m)
        return float(m)

    def __len__(self) -> int:
        return self.count

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ExactSum):
            return NotImplemented
        same_special = (self._special is None and other._special is None) or (
            self._special is not None and other._special is not None
            and (self._special == other._special or (math.isnan(self._special) and math.isnan(other._special)))
        )
        return (self.count == other.count and self.total() == other.total() and same_special
                and self._all_int == other._all_int)

    def __repr__(self) -> str:
        try:
            total: object = self.sum()
        except OverflowError:
            total = self.total()
        return f"ExactSum(count={self.count}, sum={total!r})"

    # -- serialising ---------------------------------------------------------------------------------------------

    def to_state(self) -> dict[str, Any]:
        """A JSON-ready snapshot: ``{"count": int, "partials": [float, ...], "special": float | None,
        "all_int": bool}``. ``partials`` are non-overlapping floats, largest first, whose exact sum is the exact
        total (no rounding: ``from_state(to_state())`` equals the original). ``special`` is the float sum of the
        non-finite values (``nan``/``inf`` are not JSON: write the state with a writer that allows them, or check
        ``special`` is ``None``).
        """
        return {"count": self.count, "partials": _as_partials(self.total()), "special": self._special,
                "all_int": self._all_int}

    @classmethod
    def from_state(cls, state: dict[str, Any]) -> ExactSum:
        """The accumulator :meth:`to_state` described.

        Raises:
            InputError: *state* lacks a key, or holds a value of the wrong type.
        """
        try:
            count, partials, special, all_int = state["count"], state["partials"], state["special"], state["all_int"]
        except (KeyError, TypeError):
            raise InputError(
                f"ExactSum.from_state: expected {{'count', 'partials', 'special', 'all_int'}}, got {shorten(state)}. "
                "Pass what ExactSum.to_state() returned."
            ) from None
        if isinstance(count, bool) or not isinstance(count, int) or count < 0 or not isinstance(partials, list) \
                or not all(type(p) is float and math.isfinite(p) for p in partials) \
                or not (special is None or isinstance(special, float)) or not isinstance(all_int, bool):
            raise InputError(
                f"ExactSum.from_state: count must be a whole number >= 0, partials a list of finite floats, special "
                f"a float or None and all_int a bool; got {shorten(state)}. Pass what ExactSum.to_state() returned."
            )
        out = cls()
        acc = out._partials
        for p in partials:
            n, d = p.as_integer_ratio()
            acc[d] = acc.get(d, 0) + n
        out.count, out._special, out._all_int = count, special, all_int
        return out

    def __getstate__(self) -> dict[str, Any]:
        return {"count": self.count, "partials": dict(self._partials), "special": self._special, "all_int": self._all_int}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.count = state["count"]
        self._partials = state["partials"]
        self._special = state["special"]
        self._all_int = state["all_int"]


def _as_partials(total: Fraction) -> list[float]:
    """Non-overlapping floats, largest magnitude first, whose exact sum is *total* (a dyadic rational)."""
    out: list[float] = []
    rest = total
    while rest:
        try:
            f = float(rest)
        except OverflowError:  # beyond the float range: peel off the largest float of its sign
            f = _MAX if rest > 0 else -_MAX
        out.append(f)
        rest -= Fraction(f)
    return out
