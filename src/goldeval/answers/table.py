"""The table rule: a table prediction against a table golden (pairing, rows, ties, order, grain).

``match`` is answered only when every golden row is located under an unambiguous pairing; ``no_match`` only when
the grain is the same (every golden column paired, no extra key column) and the values are wrong, a golden column
is missing, the rows are a shotgun superset, or the asked-for order is wrong; what no rule can tell apart is
``needs_human`` with the reason in ``details["undecided_because"]``.

Source: ``DESIGN.md`` "Data answers", goldeval.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from goldeval.answers.canonical import resolved_tie_pool
from goldeval.answers.doubt import criterion_phrases, selects_star, unasked_columns
from goldeval.answers.exact import exact_rows, named_in_order
from goldeval.answers.gold import worse_status
from goldeval.answers.matching import cell_codes, stack_pairs
from goldeval.answers.multiplicity import question_fixes_multiplicity, same_set
from goldeval.answers.order_keys import apply_order_key, order_keys
from goldeval.answers.pairing import Pairing, pair_columns, unique_names
from goldeval.answers.rows import RELABELLED
from goldeval.answers.rows import compare_rows as _compare_rows
from goldeval.answers.shapes import table_columns, computed_floats
from goldeval.answers.values import Column, name_tokens, role_tags, roles_conflict
from goldeval.answers.verdicts import undecided_verdict, make_verdict
from goldeval.verdict import Verdict

try:  # the optional C fast path (see _fast.c); the NumPy code of _agreement stays the definition and the fallback
    from goldeval._fast import agreement_counts as _fast_agreement_counts
except ImportError:  # pragma: no cover - the extension is optional
    _fast_agreement_counts = None


def _asked_same_set(gcols: list[Column], pcols: list[Column], pairing: Pairing, golden: Mapping[str, Any],
                    rel_tol: float) -> Any:
    """:func:`~goldeval.answers.multiplicity.same_set` on the paired golden columns only (an over-asking golden's
    asked columns), or ``None``."""
    keep = sorted(pairing.index)
    sub = Pairing([pairing.golden_names[i] for i in keep], list(pairing.pred_names),
                  {k: pairing.index[gi] for k, gi in enumerate(keep)}, dict(pairing.basis),
                  {k: pairing.scale[gi] for k, gi in enumerate(keep) if gi in pairing.scale})
    return same_set([gcols[i] for i in keep], pcols, sub, rel_tol=rel_tol, exact_golden=computed_floats(golden))


def judge_table(
    question: str,
    golden: Mapping[str, Any],
    g_names: list[str],
    g_rows: list[list[Any]],
    p_names: list[str],
    p_rows: list[list[Any]],
    *,
    rel_tol: float,
    gold: tuple[str, str | None],
    gcols: list[Column] | None = None,
) -> Verdict:
    rate_cols = list(golden.get("rate_columns") or [])
    exact = _exact_match(golden, g_names, g_rows, p_names, p_rows, rate_cols, gold)
    if exact is not None:
        return exact
    gcols = gcols if gcols is not None else table_columns(g_names, g_rows)
    pcols = table_columns(p_names, p_rows)
    pairing = pair_columns(gcols, pcols, rate_columns=rate_cols, rel_tol=rel_tol)
    common = dict(column_pairing=pairing.mapping, gold_status=gold[0], gold_note=gold[1])
    details: dict[str, Any] = {"pairing": pairing.to_dict(), "golden_shape": [len(g_rows), len(g_names)],
                               "prediction_shape": [len(p_rows), len(p_names)]}
    n_g, n_p = len(g_rows), len(p_rows)
    located_empty = {"golden_rows": n_g, "found": 0, "missing": [], "extra": n_p}
    if n_g == 0:
        if n_p == 0:
            return make_verdict("match", 9, "Both the golden and the prediction are empty results.",
                            located={"golden_rows": 0, "found": 0, "missing": [], "extra": 0}, details=details, **common)
        return make_verdict("no_match", 8, f"The golden result is empty; the prediction returns {n_p} row(s).",
                        located=located_empty, mismatch="rows where the golden has none", details=details, **common)
    if n_p == 0:
        loc = {"golden_rows": n_g, "found": 0, "missing": [dict(zip(g_names, r)) for r in g_rows[:20]], "extra": 0}
        return make_verdict("no_match", 9, f"The prediction returns no rows; the golden has {n_g}.", located=loc,
                        mismatch="empty result", details=details, **common)
    if pairing.unpaired and pairing.index and not pairing.ambiguous:
        # An over-asking golden: every golden column the question asks for is contained, and only columns it does
        # not ask for are missing (a city's population beside the city asked for; SELECT * for "which countries").
        # Only a golden written as a query can over-ask (a golden typed in lists what its author meant to ask).
        unasked = unasked_columns(question, pairing.unpaired, canonical=golden["canonical_query"]) \
            if question and isinstance(golden.get("canonical_query"), str) else []
        if unasked == pairing.unpaired:
            part = _compare_rows(gcols, pcols, pairing, rel_tol=rel_tol)
            # On the asked columns the rows may also repeat differently (the golden lists a student once per pet):
            # both kinds together are still a defensible difference, unless the question fixes the multiplicity.
            mult = None if part.complete or question_fixes_multiplicity(question) else _asked_same_set(gcols, pcols, pairing, golden, rel_tol)
            if part.complete or mult is not None:
                cols = ", ".join(map(repr, unasked))
                note = f"the golden has column(s) {cols} that the question does not ask for (an over-asking golden"
                star = selects_star(golden["canonical_query"])
                criteria = [] if star else criterion_phrases(question)
                if star:
                    note += ": its canonical query selects *, the tables' columns, not the question's"
                elif criteria:
                    named = [p for p in criteria if any(t in name_tokens(p) for c in unasked for t in name_tokens(c))]
                    if named:
                        note += ": the question names " + " and ".join(f"'{p}'" for p in named) + " only as how to choose the rows"
                note += ")"
                common["gold_status"], common["gold_note"] = worse_status((gold[0], gold[1]), ("suspect", note))
                details["unasked_columns"] = unasked
                missing = (f"the golden's {cols} {'is' if len(unasked) == 1 else 'are'} missing, but the question does not ask "
                           f"for {'it' if len(unasked) == 1 else 'them'}")
                if mult is None:
                    return make_verdict("near_match", 7, f"Every golden row is located on the column(s) the question asks for "
                                    f"({_pairs_text(pairing, paired_only=star)}); {missing}.", located=part.located(),
                                    mismatch=f"unasked golden column(s) missing: {cols}", details=details, **common)
                details["multiplicity"] = {"distinct": mult.distinct, "golden_rows": mult.golden_rows, "pred_rows": mult.pred_rows,
                                           "rows_that_differ": mult.n_differ}
                return make_verdict("near_match", 7, f"On the column(s) the question asks for ({_pairs_text(pairing, paired_only=star)}) the rows equal "
                                f"the golden's as a set and only repeat differently, which the question does not fix; {missing}: "
                                f"{mult.describe()}.", located=part.located(),
                                mismatch=f"unasked golden column(s) missing: {cols}; {mult.describe()}", details=details, **common)
    if pairing.unpaired:
        cols = ", ".join(map(repr, pairing.unpaired))
        why = (f"Golden column {cols} has no counterpart" if len(pairing.unpaired) == 1 else f"Golden columns {cols} have no counterpart") \
            + " in the prediction (containment fails)"
        if pairing.rejected:
            r = pairing.rejected[0]
            if r.get("no_evidence"):
                why += f"; the only candidate left, '{r['prediction']}', {r['why']}"
            else:
                why += f"; '{r['prediction']}' shares values with '{r['golden']}' but {r['why'].split(';')[0]}"
        return make_verdict("no_match", 8, why + ".", located={"golden_rows": n_g, "found": 0, "missing": [], "extra": n_p},
                        mismatch="missing column: " + ", ".join(pairing.unpaired), details=details, **common)
    ordered = bool(golden.get("ordered"))
    top_n = golden.get("top_n") or None
    keys = order_keys(golden, g_names) if ordered and not top_n else None

    def compare_rows(gc: list[Column], pc: list[Column], p: Pairing, **kw: Any) -> Any:
        # Rows, then (for an ordered golden with a known key) the order decided by the key.
        out = _compare_rows(gc, pc, p, **kw)
        if kw.get("ordered") and keys:
            apply_order_key(out, pc, p, keys)
        return out

    rc = compare_rows(gcols, pcols, pairing, ordered=ordered, top_n=top_n, rel_tol=rel_tol)
    resolved_by_rows = False
    if pairing.ambiguous:
        tried = [(pairing, rc)]
        by_rows = None if rc.complete else _pair_by_row_signatures(gcols, pcols, pairing)
        if by_rows is not None:
            tried.append((by_rows, compare_rows(gcols, pcols, by_rows, ordered=ordered, top_n=top_n, rel_tol=rel_tol)))
        if not any(r.complete for _, r in tried):
            # Single swaps of the chosen pairing, a bounded number (each is a full row comparison).
            for alt in pairing.alternatives[:_MAX_ALTERNATIVES]:
                p2 = pairing.with_index(alt, "values+rows")
                tried.append((p2, compare_rows(gcols, pcols, p2, ordered=ordered, top_n=top_n, rel_tol=rel_tol)))
                if tried[-1][1].complete:
                    break
            if len(pairing.alternatives) > _MAX_ALTERNATIVES:
                details["alternatives_not_tried"] = len(pairing.alternatives) - _MAX_ALTERNATIVES
        complete = [(p, r) for p, r in tried if r.complete]
        if complete:
            pairing, rc = complete[0]
            resolved_by_rows = True
            common["column_pairing"] = pairing.mapping
            details["pairing"] = pairing.to_dict() | {"ambiguous": [], "resolved_by_rows": True}
        else:
            details["pairing_candidates"] = [p.mapping for p, _ in tried]
            return undecided_verdict(
                "Column pairing is ambiguous: " + "; ".join(f"'{a['golden']}' fits {', '.join([a['chosen'], *a['candidates']])} equally well"
                                                         for a in pairing.ambiguous) + ", and no candidate pairing locates every golden row.",
                "ambiguous pairing", located=rc.located(), mismatch=rc.mismatch, details=details, **common)
    tie_note = None
    if rc.top_n and rc.top_n.get("qualifies") and rc.top_n.get("tie_break_differs"):
        tie_rows = (top_n or {}).get("tie_rows")
        if isinstance(tie_rows, list):
            # Every prediction row must be a golden row or a row tied at the boundary in the golden population.
            pool = table_columns(g_names, [list(r) for r in g_rows] + [list(r) for r in tie_rows if isinstance(r, list) and len(r) == len(g_names)])
            pool_rc = compare_rows(pool, pcols, pairing, rel_tol=rel_tol)
            if pool_rc.extra:
                rc.top_n["qualifies"] = False
                rc.top_n["why"] = (f"{pool_rc.extra} boundary row(s) of the prediction are not tied in the golden population "
                                   f"(checked against the {len(tie_rows)} row(s) at the boundary value)")
                rc.mismatch = "top-N: " + rc.top_n["why"]
            else:
                tie_note = "verified"
        else:
            tie_note = "not verified (no tie rows: run with --db and a canonical_query to check them)"
        rc.top_n["tie_check"] = tie_note
    details["rows"] = {"order": rc.order, "top_n": rc.top_n}
    located = rc.located()
    bases = set(pairing.basis.values())
    scaled = {pairing.golden_names[i]: s for i, s in pairing.scale.items() if s != 1.0}
    if rc.complete:
        conf = 10
        notes = []
        if bases - {"name+values"}:
            conf -= 1
            notes.append("paired by " + ", ".join(sorted(bases - {"name+values"})))
        if "elimination" in bases or resolved_by_rows:
            conf -= 1
        if scaled:
            conf -= 1
            notes.append("rate read as " + ", ".join(f"{k} ×{1 / v:g}" for k, v in scaled.items()))
        if rc.top_n and rc.top_n.get("tie_break_differs"):
            pinned = _tie_break_pinned(golden, g_names)
            if pinned:
                return make_verdict("near_match", 7, f"Top-N: a different tie-break at the boundary value {rc.top_n['boundary']:g}, but "
                                f"the golden pins the tie-break ({pinned}).", located=located,
                                mismatch="top-N: a different tie-break where the golden pins one", details=details, **common)
            conf -= 1 if tie_note == "verified" else 2
            notes.append(f"a different valid tie-break at the boundary value {rc.top_n['boundary']:g}, "
                         + ("tie checked against the golden population" if tie_note == "verified" else "tie as the prediction reports it"))
        if rc.order == "ties reordered":
            conf -= 1
            notes.append("tied rows in another order")
        extra_cols = [n for j, n in enumerate(pairing.pred_names) if j not in pairing.index.values()]
        why = f"Every golden row ({n_g}) is located under the pairing {_pairs_text(pairing)}"
        if extra_cols:
            why += f"; extra column(s) {', '.join(map(repr, extra_cols))} do not reduce a containing answer"
        if notes:
            why += " (" + "; ".join(notes) + ")"
        return make_verdict("match", max(conf, 6), why + ".", located=located, mismatch=rc.mismatch if rc.top_n else None,
                        details=details, **common)
    # The same rows as a set, repeated a different number of times (a join fan-out, DISTINCT on one side only).
    if rc.top_n is None:
        mult = same_set(gcols, pcols, pairing, rel_tol=rel_tol, exact_golden=computed_floats(golden))
        if mult is not None:
            details["multiplicity"] = {"distinct": mult.distinct, "golden_rows": mult.golden_rows, "pred_rows": mult.pred_rows,
                                       "rows_that_differ": mult.n_differ}
            fixed = question_fixes_multiplicity(question)
            if fixed:
                return make_verdict("no_match", 7, f"The rows equal the golden's as a set but repeat differently, and the question fixes "
                                f"the multiplicity ('{fixed}'): {mult.describe()}.", located=located, mismatch=mult.describe(),
                                details=details, **common)
            return make_verdict("near_match", 7, f"The rows equal the golden's as a set; only how often rows repeat differs (a join "
                            f"fan-out or DISTINCT on one side, or distinct entities sharing these values), and the question does not "
                            f"fix it: {mult.describe()}.", located=located, mismatch=mult.describe(), details=details, **common)
    # Not complete. Mislabelled columns? The column named like a golden one is wrong but another holds its values.
    if pairing.name_value_conflicts and rc.top_n is None:
        c = pairing.name_value_conflicts[0]
        return undecided_verdict(
            f"The column named '{c['named']}' does not hold the golden '{c['golden']}' values, but {', '.join(map(repr, c['values_in']))} "
            "does: mislabelled columns or a wrong answer, which rules cannot tell apart.", "names and values disagree",
            located=located, mismatch=rc.mismatch, details=details, **common)
    # Mislabelled columns the names cannot show: each named column holds the right *set* of values, but the rows
    # only line up with the labels swapped (two count columns under each other's names).
    single_cause = ("uniformly scaled", "one column", "extra rows", "missing rows", "different number of rows")
    if (rc.top_n is None and not pairing.ambiguous and len(pairing.index) >= 2 and rc.found < n_g and n_p == n_g
            and not (rc.mismatch or "").startswith(single_cause)):  # a swap of labels shows as several columns off
        swapped, aligned = _row_signature_pairing(gcols, pcols, pairing)
        if swapped is not None and ((aligned and not ordered) or compare_rows(gcols, pcols, swapped, ordered=ordered, rel_tol=rel_tol).complete):
            moved = [f"'{g}' is in '{p}'" for g, p in swapped.mapping.items() if pairing.mapping.get(g) != p]
            details["pairing_by_rows"] = swapped.mapping
            return undecided_verdict(
                f"Under the column names the rows are wrong, but every golden row is there with the labels swapped ({', '.join(moved)}): "
                "mislabelled columns or a wrong answer, which rules cannot tell apart.", "names and values disagree",
                located=located, mismatch=rc.mismatch, details=details, **common)
    # A key column under other labels (names for codes) in every row, all else right: not wrong values by rule.
    if rc.mismatch and rc.mismatch.startswith(RELABELLED) and rc.top_n is None:
        return undecided_verdict(f"The rows are the golden's, but {rc.mismatch.removeprefix(RELABELLED + ': ')}: whether that label "
                          "answers the question (a name where a code was given) is not a rule's call.", "relabelled key column",
                          located=located, mismatch=rc.mismatch, details=details, **common)
    # A canonical ORDER BY … LIMIT with ties beyond the limit: another tie-break may be right.
    tie_pool = resolved_tie_pool(golden.get("tie_pool")) if rc.top_n is None else None  # (deferred: worked out here)
    if isinstance(tie_pool, Mapping) and rc.top_n is None:
        above = [list(r) for r in tie_pool.get("above") or []]
        ties = [list(r) for r in tie_pool.get("ties") or []]
        got_above = compare_rows(table_columns(g_names, above), pcols, pairing, rel_tol=rel_tol).found == len(above) if above else True
        in_pool = compare_rows(table_columns(g_names, above + ties), pcols, pairing, rel_tol=rel_tol).extra == 0
        key = ", ".join(tie_pool.get("order_key") or [])
        details["tie_pool"] = {"above": len(above), "ties": len(ties), "order_key": key}
        if got_above and in_pool and n_p == n_g:
            return make_verdict("match", 8, f"Every prediction row is a golden row or tied with the boundary row on the order key ({key}): "
                            f"a valid tie-break among {len(ties)} tied rows.", located=located,
                            mismatch="a different tie-break at the boundary", details=details, **common)
        if got_above and in_pool and n_p == len(above) + len(ties):
            # The whole tie group contains the golden's answer and every row qualifies (the LIMIT kept one arbitrarily).
            return make_verdict("match", 8, f"The prediction returns every row tied at the boundary on the order key ({key}): "
                            f"{n_p} rows for the {n_g} asked, each of which qualifies (the golden's LIMIT kept {n_g} of "
                            f"{len(ties)} tied rows arbitrarily).", located=located, mismatch="all tied rows returned",
                            details=details, **common)
    if rc.top_n is not None and rc.top_n.get("all_ties"):
        tie_rows = (top_n or {}).get("tie_rows")
        ok = True
        if isinstance(tie_rows, list):
            ok = compare_rows(table_columns(g_names, [list(r) for r in g_rows] + [list(r) for r in tie_rows]), pcols, pairing,
                              rel_tol=rel_tol).extra == 0
        if ok:
            pinned = _tie_break_pinned(golden, g_names)
            if pinned:
                return make_verdict("near_match", 7, f"Top-N: {rc.top_n['why']}, but the golden pins the tie-break ({pinned}).",
                                located=located, mismatch="all tied rows returned where the golden pins a tie-break",
                                details=details, **common)
            checked = "checked against the golden population" if isinstance(tie_rows, list) else \
                "as the prediction reports them (no tie rows: run with --db and a canonical_query to check them)"
            return make_verdict("match", 8 if isinstance(tie_rows, list) else 7,
                            f"Top-N: {rc.top_n['why']}; the whole tie group contains the golden's answer and every row "
                            f"qualifies (ties {checked}).", located=located, mismatch="all tied rows returned",
                            details=details, **common)
    if rc.order == "unknown":
        because = (rc.mismatch or "").split("; ")[0] if keys else "no order key is known (golden.order_by, or a canonical_query with ORDER BY) and the columns show none"
        return undecided_verdict(f"The rows are right but in another order, which cannot be checked: {because}.",
                          "order not checkable", located=located, mismatch=rc.mismatch, details=details, **common)
    extra_keys = [pairing.pred_names[j] for j, c in enumerate(pcols)
                  if j not in pairing.index.values() and not c.numeric and c.kind != "null"]
    if extra_keys and n_p != n_g and rc.found < n_g:
        return undecided_verdict(
            f"The prediction has extra key column(s) {', '.join(map(repr, extra_keys))} and {n_p} rows for the golden's {n_g}: "
            "a different grain, which rules cannot judge.", "different grain", located=located, mismatch=rc.mismatch,
            details=details, **common)
    conf = 8
    if "elimination" in bases or "values (partial)" in bases:
        conf = 7
    if rc.top_n is not None:
        why = f"Top-N answer does not qualify: {rc.top_n.get('why', 'rows differ')}."
    elif rc.order == "different":
        conf = 9
        why = "The rows are right but not in the order the question asks for."
    elif rc.found == n_g and rc.extra:
        conf = 7
        why = f"Every golden row is there, plus {rc.extra} extra row(s): extra rows are not containment."
    else:
        why = f"{rc.found} of {n_g} golden rows located under the pairing {_pairs_text(pairing)}; {rc.extra} prediction row(s) unmatched"
        if rc.mismatch:
            why += f" ({rc.mismatch})"
        why += "."
    return make_verdict("no_match", conf, why, located=located, mismatch=rc.mismatch, details=details, **common)


def _exact_match(golden: Mapping[str, Any], g_names: list[str], g_rows: list[list[Any]], p_names: list[str],
                 p_rows: list[list[Any]], rate_cols: list[str], gold: tuple[str, str | None]) -> Verdict | None:
    """The complete match :func:`judge_table` answers, built without the general machinery, when the prediction is
    the golden exactly: its columns the golden's in order and named alike
    (:func:`~goldeval.answers.exact.named_in_order`), its rows the golden's cell for cell
    (:func:`~goldeval.answers.exact.exact_rows`), and no top-N. The same verdict record as the general path: each
    golden column paired with its namesake by ``name+values`` at agreement 1.0, every row located, confidence 10
    (tests/unit/test_answers_exact.py holds both paths side by side). ``None`` otherwise: the general code decides."""
    if golden.get("top_n") or not named_in_order(g_names, p_names, rate_columns=rate_cols):
        return None
    ordered = bool(golden.get("ordered"))
    if not exact_rows(g_rows, p_rows, len(g_names), ordered=ordered):
        return None
    n, k = len(g_rows), len(g_names)
    pairing = Pairing(unique_names(g_names), unique_names(p_names))
    for i, name in enumerate(pairing.golden_names):
        pairing.index[i] = i
        pairing.scale[i] = 1.0
        pairing.agreement[name] = 1.0
    pairing.basis = {name: "name+values" for name in pairing.golden_names}
    details: dict[str, Any] = {"pairing": pairing.to_dict(), "golden_shape": [n, k], "prediction_shape": [n, k],
                               "rows": {"order": "same" if ordered else None, "top_n": None}}
    return make_verdict("match", 10, f"Every golden row ({n}) is located under the pairing {_pairs_text(pairing)}.",
                        located={"golden_rows": n, "found": n, "missing": [], "extra": 0}, mismatch=None,
                        details=details, column_pairing=pairing.mapping, gold_status=gold[0], gold_note=gold[1])


def _tie_break_pinned(golden: Mapping[str, Any], g_names: list[str]) -> str | None:
    """What pins the tie-break of a top-N golden (a secondary order key), or ``None`` when nothing does."""
    keys = order_keys(golden, g_names)
    if keys and len(keys) > 1:
        return "secondary order key " + ", ".join(f"{c or '(an expression)'} {d}" for c, d in keys[1:])
    return None


#: Most alternative pairings (single swaps) re-compared when a pairing is ambiguous.
_MAX_ALTERNATIVES = 24


def _pair_by_row_signatures(gcols: list[Column], pcols: list[Column], pairing: Pairing) -> Pairing | None:
    """:func:`_row_signature_pairing`'s pairing."""
    return _row_signature_pairing(gcols, pcols, pairing)[0]


def _row_signature_pairing(gcols: list[Column], pcols: list[Column], pairing: Pairing) -> tuple[Pairing | None, bool]:
    """Resolve an ambiguous pairing from whole rows: a row's sorted cells do not depend on the column order, so
    golden and prediction rows with the same sorted cells are aligned first, and each golden column then takes the
    prediction column that agrees with it most often on the aligned rows (an assignment again, O(k³)).

    Columns that hold the same multiset of values (k permutations of 1…n) tie on every column-wise score; single
    swaps of one arbitrary pairing cannot undo a k-cycle, but the aligned rows show which column is which.
    Returns ``(pairing, aligned)``: the pairing is ``None`` when it cannot help (repeated golden columns, no
    aligned row, or the same pairing). ``aligned`` is True only when the rows are the golden's under that pairing,
    read from their codes: as many rows on both sides, each golden row met one to one by a prediction row equal in
    every paired cell (the alignment itself when every aligned pair agrees everywhere, else one pairing of equal
    code rows), every column numeric (equal codes are equal numbers, or both NULL), no golden infinity (``inf``
    never meets ``inf``) and no scale. Those rows then match within any tolerance, so ``compare_rows`` under the
    pairing, unordered, is complete (what ``aligned`` spares computing).
    """
    from scipy.optimize import linear_sum_assignment  # start-up: numpy / scipy load only when this runs


    cols = sorted(set(pairing.index.values()))
    kg = len(gcols)
    if len(cols) != kg or kg < 2 or not gcols[0].n:
        return None, False

    # Shared codes of the cells (equal code, equal text), each row's codes sorted: its multiset of cells.
    g_codes, p_codes = cell_codes(gcols, [pcols[j] for j in cols])
    ga, pb = stack_pairs(np.sort(g_codes, axis=1), np.sort(p_codes, axis=1))
    if not ga.size:
        return None, False
    agree = _agreement(g_codes, p_codes, ga, pb)  # (kg, len(cols)): the share of aligned rows where they agree
    full = agree == 1.0  # before the role conflicts below: equal cells are equal whatever their names
    p_roles = [role_tags(name_tokens(pcols[j].name)) for j in cols]  # once a column, not once a pair
    for i, g in enumerate(gcols):
        g_roles = role_tags(name_tokens(g.name))
        for jj in range(len(cols)):
            if roles_conflict(g_roles, p_roles[jj]):
                agree[i, jj] = -1e6
    rows_i, cols_i = linear_sum_assignment(-agree)
    index = {int(i): cols[int(jj)] for i, jj in zip(rows_i, cols_i) if agree[i, jj] > 0}
    if len(index) != kg or index == pairing.index:
        return None, False
    out = pairing.with_index(index, "values+rows")
    aligned = (gcols[0].n == pcols[0].n and all(c.numeric for c in gcols) and all(pcols[j].numeric for j in cols)
               and all(out.scale.get(i, 1.0) == 1.0 for i in index) and not any(np.isinf(c.nums).any() for c in gcols))
    if aligned and not (ga.size == gcols[0].n and all(bool(full[i, jj]) for i, jj in zip(rows_i, cols_i))):
        # Rows with the same cells in another arrangement may have been aligned with each other: the rows under
        # the new pairing, as a multiset, are then compared on their codes (one pairing of equal rows).
        order = np.argsort(rows_i)
        a, _ = stack_pairs(g_codes, np.ascontiguousarray(p_codes[:, cols_i[order]]))
        aligned = a.size == gcols[0].n
    return out, aligned


def _agreement(g_codes: np.ndarray, p_codes: np.ndarray, ga: np.ndarray, pb: np.ndarray) -> np.ndarray:
    """``(kg, kp)`` float: for each golden column *i* and prediction column *j*, the share of the aligned rows
    (golden row ``ga[t]`` with prediction row ``pb[t]``, ``(m,)`` each, m > 0) where their codes are equal.

    The C extension counts them in one pass over the aligned rows (no gathered copies); the NumPy code below is
    the definition and the fallback (the same floats: a count of equal cells over m, one division)."""
    kg, kp = g_codes.shape[1], p_codes.shape[1]
    if _fast_agreement_counts is not None and g_codes.dtype == p_codes.dtype == np.int64:
        counts = np.empty((kg, kp), dtype=np.int64)
        _fast_agreement_counts(g_codes, p_codes, ga.astype(np.int64, copy=False), pb.astype(np.int64, copy=False), counts)
        return counts / float(ga.size)
    g_arr = [g_codes[ga, i] for i in range(kg)]
    p_arr = [p_codes[pb, jj] for jj in range(kp)]
    p_stack = np.stack(p_arr, axis=1) if p_arr else np.zeros((ga.size, 0), dtype=np.int64)
    return np.array([(p_stack == g[:, None]).mean(axis=0) for g in g_arr]).reshape(kg, kp)


def _pairs_text(p: Pairing, *, paired_only: bool = False) -> str:
    parts = []
    for g, pr in p.mapping.items():
        if paired_only and pr is None:
            continue
        b = p.basis.get(g, "")
        parts.append(f"{g}→{pr}" + (f" [{b}]" if b and b != "name+values" else ""))
    return ", ".join(parts)

