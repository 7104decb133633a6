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

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import numpy as np
from scipy.optimize import linear_sum_assignment

# The value evidence lives in column_agreement (split from this module); its names are re-exported here, where
# callers and tests have always found them.
from goldeval.answers.column_agreement import (  # noqa: F401 - re-exported
    _compatible, _exact_shares, _golden_sorted, _numeric_containment, _same_content, _same_small_ints, multiset_share,
    value_agreement)
from goldeval.answers.numbers import REL_TOL
from goldeval.answers.values import Column, is_rate_name, name_tokens, role_tags, roles_conflict

__all__ = ["Pairing", "pair_columns", "value_agreement", "multiset_share", "name_score", "unique_names"]

_FORBIDDEN = -1e6
_W_VALUES = 2.0
_W_NAME = 1.0
#: Extra weight for the same name (name score ≥ 0.95): the answerer's column called ``n_admissions`` is its answer
#: for ``n_admissions``, even when another column happens to hold the golden's values.
_W_SAME_NAME = 2.0
#: Weight of the multiset share (a tie-breaker: at most 0.25, below any name evidence that counts).
_W_MULTISET = 0.25


@dataclass(slots=True)
class Pairing:
    """The outcome of pairing golden columns with prediction columns.

    Attributes:
        golden_names: Golden column names, made unique (a repeated name gets ``#2``, ``#3``…).
        pred_names: Prediction column names, made unique the same way.
        index: golden column index → prediction column index, for paired columns.
        basis: golden name → basis of its pair (see the module docstring).
        scale: golden index → factor applied to the prediction's values (1; 0.01 or 100 for a rate read as a
            percentage or a fraction).
        agreement: golden name → share of its cells found in the paired column (``None`` without golden rows).
        unpaired: golden names with no partner.
        rejected: pairs refused because the names' roles conflict: ``{"golden", "prediction", "why"}``.
        ambiguous: ``{"golden", "candidates": [...]}`` where other columns fit as well as the chosen one.
        name_value_conflicts: ``{"golden", "named", "values_in"}`` where the column named like the golden one
            disagrees with it while other columns hold its values (mislabelled columns?).
    """

    golden_names: list[str]
    pred_names: list[str]
    index: dict[int, int] = field(default_factory=dict)
    basis: dict[str, str] = field(default_factory=dict)
    scale: dict[int, float] = field(default_factory=dict)
    agreement: dict[str, float | None] = field(default_factory=dict)
    unpaired: list[str] = field(default_factory=list)
    rejected: list[dict[str, Any]] = field(default_factory=list)
    ambiguous: list[dict[str, Any]] = field(default_factory=list)
    alternatives: list[dict[int, int]] = field(default_factory=list, repr=False)
    name_value_conflicts: list[dict[str, Any]] = field(default_factory=list)

    @property
    def mapping(self) -> dict[str, str | None]:
        """golden name → prediction name (``None`` when unpaired), in golden column order."""
        return {g: (self.pred_names[self.index[i]] if i in self.index else None) for i, g in enumerate(self.golden_names)}

    def with_index(self, index: dict[int, int], basis: str) -> Pairing:
        """A copy that uses another assignment (one of ``alternatives``), with *basis* for the changed pairs."""
        out = Pairing(list(self.golden_names), list(self.pred_names), dict(index), dict(self.basis), dict(self.scale),
                      dict(self.agreement), list(self.unpaired), list(self.rejected), [], [], list(self.name_value_conflicts))
        for gi, pj in index.items():
            if self.index.get(gi) != pj:
                out.basis[self.golden_names[gi]] = basis
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "pairs": self.mapping,
            "basis": dict(self.basis),
            "scale": {self.golden_names[i]: s for i, s in self.scale.items() if s != 1.0},
            "agreement": dict(self.agreement),
            "unpaired": list(self.unpaired),
            "rejected": list(self.rejected),
            "ambiguous": list(self.ambiguous),
            "name_value_conflicts": list(self.name_value_conflicts),
        }


def unique_names(names: Sequence[str]) -> list[str]:
    """Names with repeats suffixed ``#2``, ``#3``… (SQL results may repeat a column name)."""
    if len(set(names)) == len(names):
        return list(names)  # no repeat: the names as they are (what the loop below gives)
    seen: Counter[str] = Counter()
    out = []
    for n in names:
        seen[n] += 1
        out.append(n if seen[n] == 1 else f"{n}#{seen[n]}")
    return out


@lru_cache(maxsize=4096)
def roles_of(name: str) -> frozenset[str]:
    """``role_tags(name_tokens(name))``, once per name (a pure function of the string; a pairing asks it per column)."""
    return frozenset(role_tags(name_tokens(name)))


@lru_cache(maxsize=4096)
def rate_name(name: str) -> bool:
    """``is_rate_name(name)`` with nothing declared, once per name (a pure function of the string)."""
    return is_rate_name(name)


@lru_cache(maxsize=4096)
def name_score(a: str, b: str) -> float:
    """Name evidence in [0, 1]: 1 same tokens, 0.8 one token set inside the other, less for partial overlap.
    A pure function of the two strings, remembered per pair (a pairing asks it for every golden × prediction)."""
    if a.strip().lower() == b.strip().lower():
        return 1.0
    ta, tb = name_tokens(a), name_tokens(b)
    if not ta or not tb:
        return 0.0
    if ta == tb:
        return 1.0
    sa, sb = set(ta), set(tb)
    if sa == sb:
        return 0.95
    inter = sa & sb
    if not inter:
        return 0.0
    if sa <= sb or sb <= sa:
        return 0.8
    return 0.5 * len(inter) / len(sa | sb)


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
    from goldeval.answers.small import small_pair_by_names, small_pair_columns

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
        exact = _exact_shares(golden, pred, [(i, j) for i, j in rest if not (
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


def settle_pairing(out: Pairing, golden: Sequence[Column], pred: Sequence[Column], pairs: Sequence[tuple[int, int]],
                   agree: list[list[float | None]], names: list[list[float]], conflict: list[list[bool]],
                   scales: list[list[float]], score: list[list[float]], g_roles: Sequence[Any], p_roles: Sequence[Any],
                   rel_tol: float) -> Pairing:
    """The steps of :func:`pair_columns_full` after the assignment, on *out* (its names set, nothing paired yet):
    which assigned pairs stand and on what basis, elimination, repeated golden columns, unpaired and rejected
    columns, name/value conflicts, ambiguity and its alternatives. Shared by the plain-Python small path
    (:func:`goldeval.answers.small.small_pair_columns`), so the two cannot drift apart.

    Args:
        out: The Pairing to fill (``golden_names``, ``pred_names`` set).
        golden, pred: The ``(k_g,)`` and ``(k_p,)`` columns.
        pairs: The assignment, ``(golden index, prediction index)`` pairs.
        agree: ``(k_g, k_p)`` value shares, ``None`` where not computed or undefined (NaN in the matrix).
        names: ``(k_g, k_p)`` name scores; conflict: role conflicts; scales: value scales; score: the assignment's
            scores (all nested lists of Python values).
        g_roles, p_roles: The columns' role tags.
        rel_tol: Relative numeric tolerance.

    Returns:
        *out*, filled.
    """
    kg, kp = len(golden), len(pred)
    gnames, pnames = out.golden_names, out.pred_names
    assigned: dict[int, int] = {}
    for i, j in pairs:
        if conflict[i][j]:
            continue
        a = agree[i][j]
        full = a is not None and a >= 1 - 1e-12
        if full:
            out.basis[gnames[i]] = "name+values" if names[i][j] >= 0.5 else "values"
        elif names[i][j] >= 0.5:
            out.basis[gnames[i]] = "name"
        elif a is not None and a >= 0.5:
            out.basis[gnames[i]] = "values (partial)"
        else:
            continue
        assigned[i] = j
    # Elimination: a golden column left alone takes the one compatible, non-conflicting column left for it.
    free = [j for j in range(kp) if j not in assigned.values()]
    no_evidence: list[tuple[int, int]] = []
    for i in range(kg):
        if i in assigned:
            continue
        cands = [j for j in free if not conflict[i][j] and _compatible(golden[i], pred[j])]
        if len(cands) == 1:
            others = [i2 for i2 in range(kg) if i2 != i and i2 not in assigned
                      and not conflict[i2][cands[0]] and _compatible(golden[i2], pred[cands[0]])]
            c = cands[0]
            if not others and agree[i][c] == 0 and names[i][c] == 0:
                # The one column left agrees on no value and its name is no evidence (golden id, name against
                # predicted id, age): not a partner, the golden column is missing (issue 11, item 6).
                no_evidence.append((i, c))
            elif not others:
                assigned[i] = cands[0]
                free.remove(cands[0])
                out.basis[gnames[i]] = "elimination"
    # A golden column repeated in the golden (``SELECT id, …, id``: the same name, the same cells) is read from the
    # prediction column of its first copy: the answer need not repeat a column to contain it.
    twins: dict[int, int] = {}
    for i in range(kg):
        if i in assigned:
            continue
        for i2 in sorted(assigned):
            if golden[i].name.strip().lower() == golden[i2].name.strip().lower() and _same_content(golden[i], golden[i2]):
                twins[i] = i2
                break
    for i in range(kg):
        if i in twins:
            i2 = twins[i]
            out.index[i] = assigned[i2]
            out.scale[i] = float(scales[i2][assigned[i2]])
            out.basis[gnames[i]] = f"repeat of {gnames[i2]}"
            a = agree[i2][assigned[i2]]
            out.agreement[gnames[i]] = None if a is None else float(a)
        elif i in assigned:
            j = assigned[i]
            out.index[i] = j
            out.scale[i] = float(scales[i][j])
            a = agree[i][j]
            out.agreement[gnames[i]] = None if a is None else float(a)
        else:
            out.unpaired.append(gnames[i])
            for j in range(kp):
                if conflict[i][j]:
                    share, _ = value_agreement(golden[i], pred[j], rel_tol=rel_tol)
                    why = f"roles differ ({'/'.join(sorted(g_roles[i]))} vs {'/'.join(sorted(p_roles[j]))})"
                    if share:
                        why += f"; shared values ({share:.0%}) are not evidence of meaning"
                    out.rejected.append({"golden": gnames[i], "prediction": pnames[j], "why": why})
            for i2, j in no_evidence:
                if i2 == i:
                    out.rejected.append({"golden": gnames[i], "prediction": pnames[j], "no_evidence": True,
                                         "why": "agrees on no value and its name is no evidence"})
    # Names against values: the column named like the golden one disagrees, another column holds the golden's values.
    settled = {j2 for i2, j2 in out.index.items() if out.basis[gnames[i2]] == "name+values"}  # already right by name and values
    for i, j in out.index.items():
        if out.basis[gnames[i]] != "name":
            continue
        holders = [j2 for j2 in range(kp) if j2 != j and j2 not in settled and not conflict[i][j2]
                   and (a := agree[i][j2]) is not None and a >= 1 - 1e-12]
        if holders:
            out.name_value_conflicts.append({"golden": gnames[i], "named": pnames[j], "values_in": [pnames[j2] for j2 in holders]})
    # Ambiguity: another column fits this golden column exactly as well and holds different values.
    for i, j in out.index.items():
        if out.basis[gnames[i]] not in ("values", "values (partial)", "elimination"):
            continue
        cands = [j2 for j2 in range(kp) if j2 != j and not conflict[i][j2]
                 and abs(score[i][j2] - score[i][j]) <= 1e-9 and not _same_content(pred[j2], pred[j])]
        if cands:
            out.ambiguous.append({"golden": gnames[i], "chosen": pnames[j], "candidates": [pnames[j2] for j2 in cands]})
            for j2 in cands:
                alt = dict(out.index)
                other = next((i2 for i2, jj in alt.items() if jj == j2), None)
                alt[i] = j2
                if other is not None:
                    if conflict[other][j]:
                        continue
                    alt[other] = j
                out.alternatives.append(alt)
    return out
