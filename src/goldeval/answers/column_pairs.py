"""What a column pairing is, and the parts both pairing paths share (the general assignment of
:mod:`goldeval.answers.pairing` and the plain-Python small path of :mod:`goldeval.answers.small`): the
:class:`Pairing` result, the name evidence (:func:`name_score`, :func:`roles_of`, :func:`rate_name`,
:func:`unique_names`) and :func:`settle_pairing`, the steps after the assignment. Kept apart so that both paths
import it and neither imports the other's caller.

Source: ``DESIGN.md`` "Data answers" (column pairing), goldeval.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from goldeval.answers.column_agreement import (
    kinds_compatible,
    same_content,
    value_agreement,
)
from goldeval.answers.values import Column, is_rate_name, name_tokens, role_tags

__all__ = ["Pairing", "name_score", "rate_name", "roles_of", "settle_pairing", "unique_names"]


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
        cands = [j for j in free if not conflict[i][j] and kinds_compatible(golden[i], pred[j])]
        if len(cands) == 1:
            others = [i2 for i2 in range(kg) if i2 != i and i2 not in assigned
                      and not conflict[i2][cands[0]] and kinds_compatible(golden[i2], pred[cands[0]])]
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
            if golden[i].name.strip().lower() == golden[i2].name.strip().lower() and same_content(golden[i], golden[i2]):
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
                 and abs(score[i][j2] - score[i][j]) <= 1e-9 and not same_content(pred[j2], pred[j])]
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
