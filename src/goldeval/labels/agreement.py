"""Agreement of two annotators (or of a model with gold): raw agreement, Cohen's kappa, the disagreements.

Raw agreement is the share of cases given the same label. Cohen's kappa corrects it for chance::

    kappa = (p_o - p_e) / (1 - p_e),   p_o = raw agreement,   p_e = sum over labels k of p_a(k) * p_b(k)

Kappa is the correctly rounded float of the exact rational value ``(n * agreed - S) / (n**2 - S)`` with
``S = sum_k row_k * col_k``, read off the integer pair counts — scikit-learn's ``cohen_kappa_score`` (unweighted)
computes the same quantity in floating point (the tests check the two agree), whose arithmetic lands an ulp off (a kappa of exactly 2/5 comes out 0.3999999999999999),
which would fail an inclusive ``kappa = { min = 0.4 }`` and the agreement line between two equal kappas. It is 0/0 — undefined — when there are no
cases or when both lists give every case one and the same label (``p_e = 1``); it then scores 0.0 and the reason
is listed in ``undefined``, as every empty denominator in goldeval is.

A ``None`` label (no label given) is its own category: it agrees only with another ``None``.

Source: Cohen, J. (1960) "A coefficient of agreement for nominal scales", Educational and Psychological
Measurement 20(1):37–46; scikit-learn ``sklearn.metrics.cohen_kappa_score``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from fractions import Fraction
from typing import Any

from goldeval.errors import InputError, shorten

__all__ = ["Agreement", "agreement", "cohen_kappa", "kappa_from_pairs"]


@dataclass(frozen=True, slots=True)
class Agreement:
    """Agreement of two label lists.

    Attributes:
        n: Number of cases.
        agreement: Raw agreement in [0, 1] (0.0 and undefined when ``n == 0``).
        kappa: Cohen's kappa in [-1, 1] (0.0 and undefined when ``n == 0`` or chance agreement is 1).
        disagreements: ``[{"id", "a", "b"}]`` in input order — the cases to adjudicate.
        undefined: metric → reason, for ``agreement`` / ``kappa`` when their denominator was empty.
    """

    n: int
    agreement: float
    kappa: float
    disagreements: list[dict[str, Any]] = field(default_factory=list)
    undefined: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def kappa_from_pairs(counts: Mapping[tuple[Any, Any], int]) -> tuple[float, str | None]:
    """Cohen's kappa from ``(label_a, label_b) → count`` pairs: ``(kappa, None)`` or ``(0.0, reason)``.

    Computed exactly from the integer counts and rounded once (see the module docstring): the value
    scikit-learn's ``cohen_kappa_score`` gives on the same labels, to within its own rounding (an ulp at most; the
    tests compare the two). No library is imported: the labels path stays fast and light.
    """
    n = sum(counts.values())
    if n == 0:
        return 0.0, "there are no cases"
    categories = {a for a, _ in counts} | {b for _, b in counts}
    if len(categories) == 1:
        (only,) = categories
        return 0.0, f"every case carries the same label {only!r} in both lists: chance agreement is 1, so kappa is 0/0"
    exact = _exact_kappa(counts, n)
    if exact is None:  # several labels, yet chance agreement 1: impossible with n > 0, kept as a guard
        return 0.0, "chance agreement is 1, so kappa is 0/0"
    return float(exact), None


def _exact_kappa(counts: Mapping[tuple[Any, Any], int], n: int) -> Fraction | None:
    """Unweighted Cohen's kappa as an exact fraction: ``(n * agreed - S) / (n**2 - S)``, ``S = sum_k row_k * col_k``."""
    rows: Counter = Counter()
    cols: Counter = Counter()
    agreed = 0
    for (x, y), c in counts.items():
        rows[x] += c
        cols[y] += c
        if x == y:
            agreed += c
    chance = sum(r * cols[k] for k, r in rows.items())
    if n * n == chance:
        return None
    return Fraction(n * agreed - chance, n * n - chance)


def _pairs(a: Sequence[Hashable | None], b: Sequence[Hashable | None]) -> Counter:
    if len(a) != len(b):
        raise InputError(
            f"agreement: the first list has {len(a)} labels but the second has {len(b)}; they must pair case by case. "
            "Align them by case id."
        )
    try:
        return Counter(zip(a, b))
    except TypeError:
        bad = next(i for i, x in enumerate(zip(a, b)) if not all(isinstance(v, Hashable) for v in x))
        raise InputError(f"agreement: case {bad}: labels must be strings, got {shorten(a[bad])} and {shorten(b[bad])}.") from None


def cohen_kappa(a: Sequence[Hashable | None], b: Sequence[Hashable | None]) -> tuple[float, str | None]:
    """Cohen's kappa of two label lists of shape ``(n_cases,)``: ``(kappa, None)`` or ``(0.0, reason undefined)``.

    Raises:
        InputError: lists of different lengths (both counts named).
    """
    return kappa_from_pairs(_pairs(a, b))


def agreement(
    a: Sequence[Hashable | None],
    b: Sequence[Hashable | None],
    *,
    ids: Sequence[str] | None = None,
) -> Agreement:
    """Raw agreement, Cohen's kappa and the list of disagreements of two annotators' labels for the same cases.

    Args:
        a: First annotator's labels, shape ``(n_cases,)``.
        b: Second annotator's labels, shape ``(n_cases,)``, same case order.
        ids: Case ids, shape ``(n_cases,)``; default the 0-based positions as strings.

    Returns:
        :class:`Agreement`. The model's agreement with gold is the same computation with ``a = gold``, ``b = pred``;
        gate it against the annotators' (``kappa = { min = "annotator_kappa" }``) to draw "the agreement line".

    Raises:
        InputError: lists (or ``ids``) of different lengths.
    """
    counts = _pairs(a, b)
    if ids is not None and len(ids) != len(a):
        raise InputError(f"agreement: {len(ids)} ids for {len(a)} cases; give one id per case.")
    n = len(a)
    undefined: dict[str, str] = {}
    if n == 0:
        raw = 0.0
        undefined["agreement"] = "there are no cases"
    else:
        raw = sum(c for (x, y), c in counts.items() if x == y) / n
    kappa, why = kappa_from_pairs(counts)
    if why:
        undefined["kappa"] = why
    case_ids = ids if ids is not None else [str(i) for i in range(n)]
    disagreements = [{"id": i, "a": x, "b": y} for i, x, y in zip(case_ids, a, b) if x != y]
    return Agreement(n=n, agreement=raw, kappa=kappa, disagreements=disagreements, undefined=undefined)
