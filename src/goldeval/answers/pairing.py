"""Column pairing: which prediction column carries each golden column's meaning.

Pairing is an assignment problem solved in polynomial time (``scipy.optimize.linear_sum_assignment``, O(k³) for k
columns) over a score that mixes two kinds of evidence:

* **values**: the share of the golden column's cells that the prediction column holds, within the numeric
  tolerance (a rate column may also be read ×100 or ÷100; a count column never);
* **names**: the column names' content tokens (``n_admissions`` ~ ``admission_count``; ``T1.name`` ~ ``Name``).

Names can also *forbid* a pair: two names whose role tags differ (a count against a month, an average against a
maximum) never pair, however many values they share — value overlap alone is not evidence of meaning (a month
column is not a count column even when both hold 12). No column permutation is ever enumerated.

Each pair gets a basis: ``name+values``, ``values`` (names neutral, values agree), ``name`` (names agree, values
do not — the values are then judged wrong), ``values (partial)``, ``elimination`` (the only compatible column
left), or ``repeat of <name>`` (a golden column repeated with the same name and cells reads its first copy's partner). Golden columns with no partner are listed as unpaired, and pairs whose choice the evidence cannot settle
are listed as ambiguous (the row comparison then tries each candidate).

Source: ``DESIGN.md`` "Data answers" (column pairing), goldeval.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from scipy.optimize import linear_sum_assignment

# The value evidence lives in column_agreement (split from this module); its names are re-exported here, where
# callers and tests have always found them.
from goldeval.answers.column_agreement import (  # noqa: F401 - re-exported
    kinds_compatible,
    exact_shares,
    sorted_golden_numbers,
    numeric_containment,
    same_content,
    same_small_ints,
    multiset_share,
    value_agreement,
)
from goldeval.answers.column_pairs import (  # noqa: F401 - re-exported: callers and tests find them here
    Pairing,
    name_score,
    rate_name,
    roles_of,
    settle_pairing,
    unique_names,
)
from goldeval.answers.numbers import REL_TOL
from goldeval.answers.small import small_pair_by_names, small_pair_columns
from goldeval.answers.values import Column, roles_conflict

__all__ = ["Pairing", "pair_columns", "value_agreement", "multiset_share", "name_score", "unique_names"]

_FORBIDDEN = -1e6
_W_VALUES = 2.0
_W_NAME = 1.0
#: Extra weight for the same name (name score ≥ 0.95): the answerer's column called ``n_admissions`` is its answer
#: for ``n_admissions``, even when another column happens to hold the golden's values.
_W_SAME_NAME = 2.0
#: Weight of the multiset share (a tie-breaker: at most 0.25, below any name evidence that counts).
_W_MULTISET = 0.25


def _named_partners(names: np.ndarray, conflict: np.ndarray) -> list[int] | None:
    """For each golden column the one prediction column of its name (name score >= 0.95), if every golden column
    has exactly one, none conflicting and no two the same; else ``None``. ``names``, ``conflict``: ``(k_g, k_p)``."""
    out = []
    for i in range(names.shape[0]):
        c = np.flatnonzero(names[i] >= 0.95)
        if c.size != 1 or conflict[i, c[0]]:
            return None
        out.append(int(c[0]))
    return out if len(set(out)) == len(out) else None


def pair_columns(
    golden: Sequence[Column],
    pred: Sequence[Column],
    *,
    rate_columns: Sequence[str] = (),
    rel_tol: float = REL_TOL,
) -> Pairing:
    """:func:`pair_columns_full` (the definition; its docstring says what a pairing is), through the plain-Python
    paths of :mod:`goldeval.answers.small` where they apply (the same Pairing): ``small_pair_by_names`` where the
    names alone decide, ``small_pair_columns`` for a few columns whose best assignment is unique."""
    out = small_pair_by_names(golden, pred, rate_columns=rate_columns, rel_tol=rel_tol)
    if out is None:
        out = small_pair_columns(golden, pred, rate_columns=rate_columns, rel_tol=rel_tol)
    return out if out is not None else pair_columns_full(golden, pred, rate_columns=rate_columns, rel_tol=rel_tol)


def pair_columns_full(
    golden: Sequence[Column],
    pred: Sequence[Column],
    *,
    rate_columns: Sequence[str] = (),
    rel_tol: float = REL_TOL,
) -> Pairing:
    """Pair each golden column with the prediction column that carries its meaning.

    Args:
        golden: ``(k_g,)`` golden columns.
        pred: ``(k_p,)`` prediction columns (extra columns are fine: containment).
        rate_columns: Golden column names declared as rates (also detected by name).
        rel_tol: Relative numeric tolerance.

    Returns:
        A :class:`Pairing`. Cost: ``-(2·value_share + 1·name_score + 2·[same name] + 0.25·multiset_share)``;
        pairs whose names' roles conflict are forbidden. Solved with ``scipy.optimize.linear_sum_assignment`` (Hungarian-type, polynomial).

    Notes:
        A pair survives when its values agree fully, or its names agree (``name_score ≥ 0.5``), or at least half
        its values agree. A golden column left over pairs by elimination when exactly one compatible,
        non-conflicting prediction column remains for it, unless that column agrees on no value and has no name
        evidence: the golden column is then unpaired (missing), and the candidate is listed in ``rejected`` with
        ``"no_evidence": True``.
    """
    gnames = unique_names([c.name for c in golden])
    pnames = unique_names([c.name for c in pred])
    out = Pairing(gnames, pnames)
    kg, kp = len(golden), len(pred)
    if kg == 0:
        return out
    agree = np.full((kg, kp), np.nan)
    scales = np.ones((kg, kp))
    names = np.zeros((kg, kp))
    conflict = np.zeros((kg, kp), dtype=bool)
    g_roles = [roles_of(c.name) for c in golden]
    p_roles = [roles_of(c.name) for c in pred]
    for i, g in enumerate(golden):
        for j, p in enumerate(pred):
            conflict[i, j] = roles_conflict(g_roles[i], p_roles[j])
            names[i, j] = name_score(g.name, p.name)
    rate_g = [g.name in rate_columns or rate_name(g.name) for g in golden]  # is_rate_name(g.name, rate_columns)
    done: list[tuple[int, int]] = []

    def agreement(i: int, j: int) -> None:
        rate = rate_g[i] or ("count" not in g_roles[i] and rate_name(pred[j].name))
        share, scale = value_agreement(golden[i], pred[j], rate=rate, rel_tol=rel_tol)
        if share is not None:
            agree[i, j] = share
            scales[i, j] = scale
        done.append((i, j))

    # Every golden column has exactly one prediction column of its name (name score >= 0.95), a different one each,
    # and holds all its values: those pairs score >= 5 and every other pair < 3.2 (2 + 0.95 + 0.25 at most), so
    # they are the one best assignment, and nothing the pairing reports reads another pair. The other k² value
    # agreements are then not computed.
    named = _named_partners(names, conflict)
    by_name = named is not None
    for i, j in enumerate(named or ()):
        agreement(i, j)
        if np.isnan(agree[i, j]) or agree[i, j] < 1 - 1e-12:
            by_name = False
            break
    if by_name:
        # The assignment is those pairs (see above: any other one scores less), each full on values and named
        # alike, so its basis is "name+values"; with every golden column paired there is no elimination, repeat,
        # unpaired column, name/value conflict (basis "name" only) or ambiguity (basis values/elimination only)
        # to look for. The same Pairing as the score matrix and linear_sum_assignment below give (test).
        assert named is not None
        for i in range(kg):
            out.basis[gnames[i]] = "name+values"
        for i, j in enumerate(named):
            out.index[i] = j
            out.scale[i] = float(scales[i, j])
            out.agreement[gnames[i]] = float(agree[i, j])
        return out
    exact: dict[tuple[int, int], tuple[float, float]] = {}
    if not by_name:
        seen = set(done)
        rest = [(i, j) for i in range(kg) for j in range(kp) if not conflict[i, j] and (i, j) not in seen]
        # Pairs of whole-number columns, all at once (no rate reading: those pairs also try ×100 and ÷100).
        exact = exact_shares(golden, pred, [(i, j) for i, j in rest if not (
            rate_g[i] or ("count" not in g_roles[i] and rate_name(pred[j].name)))], rel_tol)
        for i, j in rest:
            if (i, j) in exact:
                agree[i, j] = exact[i, j][0]
                done.append((i, j))
            else:
                agreement(i, j)
        done.sort()
    # Tie-break between columns that contain the same set of values: the one that holds them as often (a multiset).
    histo = np.zeros((kg, kp))
    for i, j in done:
        g, p = golden[i], pred[j]
        if g.numeric and p.numeric and not np.isnan(agree[i, j]) and agree[i, j] >= 0.5:
            histo[i, j] = exact[i, j][1] if (i, j) in exact else multiset_share(g, p, scale=float(scales[i, j]), rel_tol=rel_tol)
    score = (_W_VALUES * np.nan_to_num(agree, nan=0.0) + _W_NAME * names + _W_SAME_NAME * (names >= 0.95)
             + _W_MULTISET * histo)
    score[conflict] = _FORBIDDEN
    pairs = list(zip(*(a.tolist() for a in linear_sum_assignment(-score)))) if kp else []
    return settle_pairing(out, golden, pred, pairs, [[None if a != a else a for a in row] for row in agree.tolist()],
                          names.tolist(), conflict.tolist(), scales.tolist(), score.tolist(), g_roles, p_roles, rel_tol)

