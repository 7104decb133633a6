"""Multiset matching of encoded rows: which prediction row each golden row takes, cells within tolerance.

The rows come encoded (:mod:`~goldeval.answers.rows`): text cells as integer ids, numbers as float64 with the
golden's display-precision half-units. Rows meet when their text ids are equal and every number is within
tolerance (:func:`~goldeval.answers.values.numbers_close`). They are bucketed by text ids and NULL pattern; a
small bucket is solved exactly (maximum bipartite matching), a large one pairs exactly equal rows first and then
runs the earliest-deadline greedy on the first number (exact for one numeric column).

Speed (issue 15): the greedy is computed in bulk, with the same choices as one golden row at a time. The
candidate windows of every golden row are found with one ``searchsorted``, the tolerance test runs over all
window pairs at once (in chunks), and only the choice among the pairs that met stays a Python loop (usually one
pair a golden row). Columns where tolerance cannot apply (integers on both sides, golden written without
decimals) only meet when equal: they split a bucket into parts that never exchange rows, so a window holds the
candidates of its own part only, and when every number is such a column, nothing is left to find after the exact
pairs. Exactly equal rows are paired with one hash grouping instead of a dictionary of row bytes.

Source: ``DESIGN.md`` "Data answers" (rows are a multiset), goldeval.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import chain, count
from typing import Any

import numpy as np

from goldeval.answers.numbers import numbers_close, rows_close
from goldeval.answers.values import Column, number_texts

try:  # the optional C fast path (see _fast.c); the NumPy code of hash_groups stays the definition and the fallback
    from goldeval._fast import pair_rows as _fast_pair_rows
    from goldeval._fast import row_hashes as _fast_row_hashes
    from goldeval._fast import row_ids as _fast_row_ids
    from goldeval._fast import rows_equal as _fast_rows_equal
except ImportError:  # pragma: no cover - the extension is optional
    _fast_row_hashes = _fast_rows_equal = _fast_pair_rows = _fast_row_ids = None

__all__ = ["argsort_ids", "cell_codes", "group_ids", "hash_groups", "match_rows", "pair_exact", "stack_pairs", "stack_rows",
           "stacked_groups"]

#: Window pairs whose tolerance is tested in one vectorised call (bounds the temporary arrays: ~10 columns ×
#: 8 bytes × this many, a few tens of MB).
_CHUNK_PAIRS = 1 << 20

#: Pairs within tolerance kept to settle the forced ones at once (see :func:`_greedy`).
_KEPT_PAIRS = 1 << 22

#: Largest bucket (golden rows × prediction rows) solved by an exact maximum bipartite matching.
_SMALL_BUCKET = 4096


def group_ids(keys: np.ndarray) -> np.ndarray:
    """``(n,)`` group id per row of an ``(n, k)`` int64 key matrix: equal rows get equal ids, and ids follow the
    lexicographic order of the rows (so they can serve as a sort key)."""
    if keys.dtype == np.int64 and keys.ndim == 2 and 0 < keys.shape[0] <= _SMALL_KEYS and keys.shape[1]:
        inv = _small_group_ids(keys)
        if inv is not None:
            return inv
    lo = keys.min(axis=0)
    span = keys.max(axis=0) - lo + 1
    if float(np.prod(span.astype(float))) < 2.0**62:
        # Mixed-radix code: one int64 per row, then a 1-D unique (much faster than unique over rows).
        code = np.zeros(keys.shape[0], dtype=np.int64)
        for j in range(keys.shape[1]):
            code = code * int(span[j]) + (keys[:, j] - lo[j])
        _, inv = np.unique(code, return_inverse=True)
    else:
        _, inv = np.unique(keys, axis=0, return_inverse=True)
    return inv.reshape(-1)


#: Key matrices of at most this many rows are grouped in plain Python (np.unique's fixed cost is ~30 µs).
_SMALL_KEYS = 64


def _small_group_ids(keys: np.ndarray) -> np.ndarray | None:
    """:func:`group_ids` of a small ``(n, k)`` key matrix (``n, k >= 1``), in plain Python; ``None`` where the
    mixed-radix code would not fit (the general path decides). Where it fits, that code orders the rows
    lexicographically, so its unique inverse is each row's rank among the distinct rows as tuples: computed here."""
    rows = keys.tolist()
    size = 1
    for col in zip(*rows):
        size *= max(col) - min(col) + 1
    if size >= 2**61:  # (exact: the float product group_ids tests is then below 2**62 too)
        return None
    cells = [r[0] for r in rows] if len(rows[0]) == 1 else list(map(tuple, rows))
    rank = {r: i for i, r in enumerate(sorted(set(cells)))}
    return np.array(list(map(rank.__getitem__, cells)), dtype=np.intp)


def argsort_ids(ids: np.ndarray, n_ids: int) -> np.ndarray:
    """Stable argsort of ``(n,)`` non-negative integer ids below *n_ids*: the same permutation as
    ``np.argsort(ids, kind="stable")``.

    Each id is packed with its position into one int64 (``id << bits | position``) and the keys are sorted by value,
    which NumPy does several times faster than an argsort; ties of ids are then in position order, as a stable sort
    leaves them. Falls back to the argsort when the two do not fit in 62 bits."""
    n = ids.size
    bits = max(int(n - 1).bit_length(), 1)
    if n and n_ids > 0 and int(n_ids - 1).bit_length() + bits <= 62:
        key = (ids.astype(np.int64) << bits) | np.arange(n, dtype=np.int64)
        key.sort()
        return key & ((1 << bits) - 1)
    return np.argsort(ids, kind="stable")


def stack_rows(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The rows of ``(n1, k)`` *a* then ``(n2, k)`` *b*, as an ``(n1 + n2, k)`` array laid out column by column (the
    layout :func:`hash_groups` reads without a copy)."""
    return np.concatenate([a.T, b.T], axis=1).T


def hash_groups(keys: np.ndarray) -> np.ndarray:
    """``(n,)`` group id per row of an ``(n, k)`` int64 matrix, equal rows equal ids, in no particular order.

    One 64-bit mix of the columns (column by column, each column contiguous), the rows sorted by the mix (its high
    bits packed with the row's position, one sort by value), then checked: if two different rows share a group (a
    collision), the exact row-wise unique is used instead."""
    n = keys.shape[0]
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    bits = max(int(n - 1).bit_length(), 1)
    fast = _fast_row_hashes is not None and keys.ndim == 2 and keys.dtype == np.int64
    cols = () if fast else np.ascontiguousarray(keys.T).view(np.uint64)  # (k, n): each column contiguous
    with np.errstate(over="ignore"):
        h = np.full(n, 0x9E3779B97F4A7C15, dtype=np.uint64)
        if fast:
            _fast_row_hashes(keys, h)  # the same mix, in one C pass over the rows in their layout
        else:
            x = np.empty(n, dtype=np.uint64)
            t = np.empty(n, dtype=np.uint64)
            for c in cols:
                np.right_shift(c, np.uint64(31), out=x)
                np.bitwise_xor(x, c, out=x)
                np.multiply(x, np.uint64(0xBF58476D1CE4E5B9), out=x)
                np.right_shift(h, np.uint64(29), out=t)
                np.bitwise_xor(h, x, out=h)
                np.bitwise_xor(h, t, out=h)
                np.multiply(h, np.uint64(0x94D049BB133111EB), out=h)
        np.right_shift(h, np.uint64(bits), out=h)
        np.left_shift(h, np.uint64(bits), out=h)
        np.bitwise_or(h, np.arange(n, dtype=np.uint64), out=h)
    h.sort()
    order = (h & np.uint64((1 << bits) - 1)).astype(np.int64)
    np.right_shift(h, np.uint64(bits), out=h)  # the hash's high bits, sorted
    new = np.ones(n, dtype=bool)
    np.not_equal(h[1:], h[:-1], out=new[1:])
    group = np.cumsum(new) - 1
    inv = np.empty(n, dtype=np.int64)
    inv[order] = group
    rep = order[np.flatnonzero(new)][inv]  # the first row of each row's group
    if not (_fast_rows_equal(keys, rep) if fast else all(np.array_equal(c, c[rep]) for c in cols)):
        _, inv = np.unique(keys, axis=0, return_inverse=True)
        inv = inv.reshape(-1)
    return inv


def stacked_groups(gkeys: np.ndarray, pkeys: np.ndarray) -> np.ndarray:
    """``(n_g + n_p,)`` group id per row of ``(n_g, k)`` *gkeys* then ``(n_p, k)`` *pkeys* (int64): the partition
    :func:`hash_groups` gives of the two stacked (equal rows equal ids, ids ``0 … n_ids - 1``; their numbering is
    no part of the contract).

    With the C extension: one hash table of the rows, read in place (no stacked copy, no sort; ids in the order of
    each group's first row). Without it: ``hash_groups(stack_rows(gkeys, pkeys))``, the definition."""
    if _fast_row_ids is not None and gkeys.ndim == pkeys.ndim == 2 and gkeys.dtype == pkeys.dtype == np.int64 \
            and gkeys.shape[1] == pkeys.shape[1]:
        ids = np.empty(gkeys.shape[0] + pkeys.shape[0], dtype=np.int64)
        _fast_row_ids(gkeys, pkeys, ids)
        return ids
    return hash_groups(stack_rows(gkeys, pkeys))


def cell_codes(golden: Sequence[Column], pred: Sequence[Column]) -> tuple[np.ndarray, np.ndarray]:
    """Integer codes of the cells of several columns, shared by all of them and by both sides: two cells get the
    same code exactly when their canonical text (:attr:`~goldeval.answers.values.Column.text`) is equal, NULL only
    meeting NULL.

    Args:
        golden: ``(k,)`` golden columns, each ``(n_g,)``.
        pred: ``(k2,)`` prediction columns, each ``(n_p,)``.

    Returns:
        ``(n_g, k)`` and ``(n_p, k2)`` int64 codes.

    When every column is numeric the codes come from the numbers themselves (a number's text is a function of its
    float value, ``12.0`` and ``12`` both ``"12"``, ``-0.0`` and ``0.0`` both ``"0"``), with no string built;
    otherwise from the texts, one dictionary look-up a cell.
    """
    cols = list(golden) + list(pred)
    n_g = golden[0].n if golden else 0
    n_p = pred[0].n if pred else 0
    if not cols:
        return np.zeros((n_g, 0), dtype=np.int64), np.zeros((n_p, 0), dtype=np.int64)
    if all(c.numeric for c in cols):
        # The numbers' own bits, -0.0 read as 0.0 and every NaN (NULL) as one NaN, written in place into the two
        # tables (no temporary the size of all cells: at 1e4 rows fresh memory costs more than the arithmetic).
        return _number_codes(golden, n_g), _number_codes(pred, n_p)
    if any(c.numeric or c.numberlike is not None for c in cols):
        mixed = _mixed_codes(cols)
        if mixed is not None:
            g = np.stack(mixed[: len(golden)], axis=1) if golden else np.zeros((n_g, 0), dtype=np.int64)
            p = np.stack(mixed[len(golden):], axis=1) if pred else np.zeros((n_p, 0), dtype=np.int64)
            return g, p
    # Codes in the order each text first occurs (one C-level pass to number them, one to read them).
    texts = [c.text.tolist() for c in cols]
    vocab: dict[Any, int] = dict(zip(dict.fromkeys(chain.from_iterable(texts)), count()))
    codes = np.fromiter(map(vocab.__getitem__, chain.from_iterable(texts)), dtype=np.int64, count=sum(c.n for c in cols))
    sizes = [c.n for c in cols]
    parts = np.split(codes, np.cumsum(sizes)[:-1])
    g = np.stack(parts[: len(golden)], axis=1) if golden else np.zeros((n_g, 0), dtype=np.int64)
    p = np.stack(parts[len(golden):], axis=1) if pred else np.zeros((n_p, 0), dtype=np.int64)
    return g, p


#: The code of a NULL cell: the bits of NumPy's NaN (what :func:`_number_codes` gives a NULL number).
_NULL_CODE = int(np.array([np.nan]).view(np.int64)[0])


def _mixed_codes(cols: Sequence[Column]) -> list[np.ndarray] | None:
    """:func:`cell_codes` of columns some of which hold numbers (numeric columns, or text columns with cells that
    spell numbers), one ``(n,)`` int64 array a column; ``None`` when a text cell could spell a number's text (the
    caller then codes every cell by its text).

    A number is coded by its bits (``x + 0.0``, as :func:`_number_codes`): its text (``12`` → ``"12"``, else
    ``repr``) is a one-to-one function of its value, so equal bits, equal text. A NULL is NaN's bits. A text cell
    gets a NaN with a payload, ``NaN + 1 + i`` for the *i*-th distinct text: never the bits of a number (every NaN
    of a number column is the one NULL NaN). A text meets a number only if it is that number's text, i.e. it reads
    as a float whose text it is: checked on the distinct texts, and then these codes are not used. No number
    column's text is built (1e5 numbers: ~0.15 s of ``repr`` each)."""
    out: list[np.ndarray] = []
    vocab: dict[Any, int] = {}
    fresh = count()  # one id a distinct text (setdefault takes one for a text seen before too: the ids skip, never repeat)
    for c in cols:
        if c.numeric:
            v = c.nums + 0.0
            np.copyto(v, np.nan, where=np.isnan(v))
            out.append(v.view(np.int64))
            continue
        codes = np.full(c.n, _NULL_CODE, dtype=np.int64)
        is_text = ~c.null
        if c.numberlike is not None:
            is_num = ~np.isnan(c.numberlike)
            v = c.numberlike[is_num] + 0.0
            codes[is_num] = v.view(np.int64)
            is_text &= ~is_num
        at = np.flatnonzero(is_text)
        if at.size:
            texts = c.text[at].tolist()
            ids = np.fromiter(map(vocab.setdefault, texts, fresh), dtype=np.int64, count=at.size)
            codes[at] = _NULL_CODE + 1 + ids
        out.append(codes)
    if any(_spells_a_number(t) for t in vocab):
        return None
    return out


def _spells_a_number(text: Any) -> bool:
    """True when *text* is the canonical text of a number (:func:`~goldeval.answers.values.number_texts`)."""
    try:
        x = float(text)
    except (TypeError, ValueError):
        return False
    return bool(number_texts(np.array([x]))[0] == text)


def _number_codes(cols: Sequence[Column], n: int) -> np.ndarray:
    """``(n, k)`` int64 codes of numeric columns' cells (:func:`cell_codes`): the bits of ``x + 0.0``, NULL one NaN."""
    out = np.empty((n, len(cols)))
    for j, c in enumerate(cols):
        out[:, j] = c.num
    out += 0.0
    np.copyto(out, np.nan, where=np.isnan(out))
    return out.view(np.int64)


def stack_pairs(gkeys: np.ndarray, pkeys: np.ndarray, *, gnum: np.ndarray | None = None,
                pnum: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Pair golden and prediction rows with equal keys, as a multiset: ``(a, b)``, golden row ``a[i]`` with
    prediction row ``b[i]``, ``a`` ascending.

    Args:
        gkeys: ``(n_g, k)`` int64 keys.
        pkeys: ``(n_p, k)`` int64 keys.
        gnum, pnum: Optional ``(n_g, m)`` / ``(n_p, m)`` float64 cells that extend each row's key by their exact
            keys (:func:`exact_keys`: NaN read as +inf, -0.0 as 0.0); both or neither.

    Among equal keys the prediction rows form a stack in their order: the first golden row takes the last
    prediction row, the next one the row before it (what a ``dict`` of lists with ``pop()`` gives)."""
    if (gnum is None) != (pnum is None):
        raise ValueError("stack_pairs: gnum and pnum must both be given or both be None")
    n1 = gkeys.shape[0]
    if n1 == 0 or pkeys.shape[0] == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    if _fast_pair_rows is not None and gkeys.ndim == pkeys.ndim == 2 and gkeys.dtype == pkeys.dtype == np.int64 \
            and gkeys.shape[1] == pkeys.shape[1] and (gnum is None or (
                pnum is not None and gnum.ndim == pnum.ndim == 2 and gnum.dtype == pnum.dtype == np.float64
                and gnum.shape[1] == pnum.shape[1])):
        # The same pairs from one hash table of the prediction rows, a stack per distinct row (C; no sort, and the
        # float cells read in place).
        a = np.empty(n1, dtype=np.int64)
        b = np.empty(n1, dtype=np.int64)
        k = _fast_pair_rows(gkeys, pkeys, gnum, pnum, a, b)
        return a[:k], b[:k]
    if gnum is not None and pnum is not None:  # (both or neither: checked above)
        gkeys = np.concatenate([gkeys, exact_keys(gnum)], axis=1)
        pkeys = np.concatenate([pkeys, exact_keys(pnum)], axis=1)
    ids = hash_groups(stack_rows(gkeys, pkeys))
    gk, pk = ids[:n1], ids[n1:]
    n_ids = int(ids.max()) + 1
    p_count = np.bincount(pk, minlength=n_ids)
    p_sort = argsort_ids(pk, n_ids)
    p_start = np.concatenate([[0], np.cumsum(p_count)[:-1]])
    g_count = np.bincount(gk, minlength=n_ids)
    g_sort = argsort_ids(gk, n_ids)
    g_start = np.concatenate([[0], np.cumsum(g_count)[:-1]])
    key_sorted = gk[g_sort]
    rank = np.arange(n1) - g_start[key_sorted]          # position of each golden row among its equals
    took = rank < p_count[key_sorted]
    a = g_sort[took]
    b = p_sort[p_start[key_sorted[took]] + p_count[key_sorted[took]] - 1 - rank[took]]
    # In golden row order (the rows of *a* are distinct: placed by position, no sort).
    hit = np.zeros(n1, dtype=bool)
    hit[a] = True
    partner = np.empty(n1, dtype=np.int64)
    partner[a] = b
    a = np.flatnonzero(hit)
    return a, partner[a]


#: Most golden × prediction row pairs of small buckets tested at once by :func:`_forced_small`.
_FORCED_CHUNK = 1 << 20


def _forced_small(buckets: np.ndarray, g_order: np.ndarray, p_order: np.ndarray, g_start: np.ndarray,
                  p_start: np.ndarray, g_count: np.ndarray, p_count: np.ndarray, ng: np.ndarray, np_: np.ndarray,
                  half: np.ndarray, rel_tol: float | np.ndarray, out: np.ndarray) -> np.ndarray:
    """The small buckets of :func:`match_rows` whose matching is forced, decided together: writes their pairs into
    *out* and returns those buckets (the others are left to the maximum bipartite matching, one by one).

    A bucket's "within tolerance" graph in which every golden row and every prediction row meets at most one row
    has exactly one maximum matching, its edges (any maximum matching algorithm returns it: the same pairs as
    Hopcroft–Karp, whose scipy call costs ~1 ms a bucket). The edges of all buckets are tested in one vectorised
    pass (``numbers_close`` of every golden × prediction pair of a bucket, as the per-bucket code does), in chunks
    of at most :data:`_FORCED_CHUNK` pairs."""
    sizes = g_count[buckets] * p_count[buckets]
    done: list[np.ndarray] = []
    lo = 0
    ends = np.cumsum(sizes)
    while lo < buckets.size:
        base = int(ends[lo - 1]) if lo else 0
        hi = max(int(np.searchsorted(ends, base + _FORCED_CHUNK, side="right")), lo + 1)
        bk, sz = buckets[lo:hi], sizes[lo:hi]
        which = np.repeat(np.arange(bk.size), sz)  # each pair's bucket (position in bk)
        k = np.arange(which.size) - np.repeat(np.cumsum(sz) - sz, sz)  # the pair's rank within its bucket
        pc = p_count[bk][which]
        grow = g_order[g_start[bk][which] + k // pc]
        prow = p_order[p_start[bk][which] + k % pc]
        close = numbers_close(ng[grow], np_[prow], half[grow], rel_tol=rel_tol).all(axis=1)
        gdeg = np.bincount(grow[close], minlength=ng.shape[0])
        pdeg = np.bincount(prow[close], minlength=np_.shape[0])
        branching = close & ((gdeg[grow] > 1) | (pdeg[prow] > 1))
        forced = np.bincount(which[branching], minlength=bk.size) == 0
        take = close & forced[which]
        out[grow[take]] = prow[take]
        done.append(bk[forced])
        lo = hi
    return np.concatenate(done) if done else np.zeros(0, dtype=np.int64)


def exact_keys(values: np.ndarray) -> np.ndarray:
    """int64 bit patterns of float cells for exact grouping: NaN read as +inf (NULL meets NULL), -0.0 as 0.0."""
    v = values + 0.0  # a copy, -0.0 read as 0.0
    np.copyto(v, np.inf, where=np.isnan(v))
    return np.ascontiguousarray(v).view(np.int64)


def pair_exact(ng: np.ndarray, np_: np.ndarray, g_rows: np.ndarray, p_rows: np.ndarray, out: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Pair golden and prediction rows whose numbers are exactly equal (NaN meets NaN), as a multiset.

    Writes the pairs into *out* (golden row → prediction row) and returns the rows left on each side, in their
    given order. Among equal rows, the first golden row takes the last prediction row, the second the one before
    it, and so on (a stack per distinct row). Exact equality is within every tolerance, so this only takes pairs
    the window search would accept."""
    if g_rows.size == 0 or p_rows.size == 0:
        return g_rows.astype(np.int64), p_rows.astype(np.int64)
    whole_g = g_rows.size == ng.shape[0] and bool((g_rows == np.arange(g_rows.size)).all())  # every row, in order
    whole_p = p_rows.size == np_.shape[0] and bool((p_rows == np.arange(p_rows.size)).all())
    gn, pn = ng if whole_g else ng[g_rows], np_ if whole_p else np_[p_rows]
    a, b = stack_pairs(np.zeros((gn.shape[0], 0), dtype=np.int64), np.zeros((pn.shape[0], 0), dtype=np.int64), gnum=gn, pnum=pn)
    out[g_rows[a]] = p_rows[b]
    g_hit = np.zeros(g_rows.size, dtype=bool)
    g_hit[a] = True
    p_hit = np.zeros(p_rows.size, dtype=bool)
    p_hit[b] = True
    return g_rows[~g_hit].astype(np.int64), p_rows[~p_hit].astype(np.int64)


def _exact_only(g: np.ndarray, h: np.ndarray, p: np.ndarray) -> bool:
    """True when golden column *g* (half-units *h*) and prediction column *p* can only meet where equal: every
    value a finite whole number (or NULL), the golden written without decimals. ``numbers_close`` then allows no
    slack at all (whole numbers meet exactly)."""
    with np.errstate(invalid="ignore"):
        gf = g[~np.isnan(g)]
        pf = p[~np.isnan(p)]
        return bool((h == 0).all() and np.isfinite(gf).all() and np.isfinite(pf).all()
                    and (gf == np.floor(gf)).all() and (pf == np.floor(pf)).all())


def _greedy(ng: np.ndarray, np_: np.ndarray, half: np.ndarray, g_left: np.ndarray, p_left: np.ndarray,
            out: np.ndarray, rel_tol: float | np.ndarray, exact_only: bool | None = None) -> None:
    """The earliest-deadline greedy on the first numeric column, for the rows of one large bucket left after the
    exact pairs: golden rows by the right end of their tolerance interval, each taking the free prediction row of
    smallest first value (ties in given order) inside its window that is within tolerance in every column.

    Same choices as visiting one golden row at a time (which took ~9 s for 2,000 rows of small integers, where
    every window holds a tenth of the rows): windows from one ``searchsorted``, the tolerance test over every
    window pair at once, the choice a loop over the pairs that met."""
    m = ng.shape[1]
    if exact_only is None:
        exact_only = all(_exact_only(ng[:, c], half[:, c], np_[:, c]) for c in range(m))
    if exact_only:
        return  # every number of the tables meets only its equal (so does every row left), and those are paired
    rels = np.broadcast_to(np.asarray(rel_tol, dtype=float), (m,))  # one relative tolerance per column
    r0 = float(rels[0])  # the first column's: the window
    gs, hs, ps = ng[g_left], half[g_left], np_[p_left]
    exact_cols = [c for c in range(m) if _exact_only(gs[:, c], hs[:, c], ps[:, c])]
    if len(exact_cols) == m:
        return  # every number meets only its equal, and the equal rows are already paired
    tol_cols = [c for c in range(m) if c not in exact_cols]
    if exact_cols:
        # Parts of the bucket that agree on every exact-only column: rows of different parts never meet.
        part = hash_groups(stack_rows(exact_keys(gs[:, exact_cols]), exact_keys(ps[:, exact_cols])))
        g_part, p_part = part[: g_left.size], part[g_left.size:]
    else:
        g_part = np.zeros(g_left.size, dtype=np.int64)
        p_part = np.zeros(p_left.size, dtype=np.int64)
    first = ps[:, 0]
    order = np.lexsort((np.where(np.isnan(first), np.inf, first), p_part))  # by part, then value; stable
    cand = p_left[order]
    vals = np_[cand, 0]
    c_part = p_part[order]
    g0 = gs[:, 0]
    right = np.where(np.isnan(g0), np.inf, g0 + np.maximum(r0 * np.abs(g0), hs[:, 0]))
    visit = np.argsort(right, kind="stable")          # positions in g_left, in the order they choose
    x = g0[visit]
    vp = g_part[visit]
    seg_lo = np.searchsorted(c_part, vp, "left")
    seg_hi = np.searchsorted(c_part, vp, "right")
    if np.isnan(vals).any() or np.isnan(x).any():
        # NULL first cells (the whole bucket shares its NULL pattern): every row of the part is in the window.
        lo, hi = seg_lo, seg_hi
    else:
        lim = np.maximum(r0 * np.abs(x) * 2, hs[visit, 0]) * (1 + 1e-9) + 1e-300
        with np.errstate(invalid="ignore"):
            lo_v, hi_v = x - lim, x + lim
        # Within a part the candidates are sorted by value: the window [x - lim, x + lim] of that part is found
        # on one sorted key (part, rank of the value).
        uniq = np.unique(vals)
        width = uniq.size + 1
        ckey = c_part * width + np.searchsorted(uniq, vals, "left")
        lo = np.searchsorted(ckey, vp * width + np.searchsorted(uniq, lo_v, "left"), "left")
        hi = np.searchsorted(ckey, vp * width + np.searchsorted(uniq, hi_v, "right"), "left")
        lo = np.maximum(lo, seg_lo)
        hi = np.minimum(hi, seg_hi)
    sizes = np.maximum(hi - lo, 0)
    checks = [c for c in tol_cols if c != 0] + [c for c in tol_cols if c == 0]
    used = bytearray(cand.size)
    take_v: list[int] = []
    take_c: list[int] = []

    def choose(who: np.ndarray, pos: np.ndarray) -> None:
        # In visiting order, each golden row takes its first candidate still free.
        last = -1
        for v, c in zip(who.tolist(), pos.tolist()):
            if v == last or used[c]:
                continue
            used[c] = 1
            last = v
            take_v.append(v)
            take_c.append(c)

    # The pairs within tolerance are kept (up to _KEPT_PAIRS of them) so that the forced ones can be settled at
    # once: a golden row whose only candidate no other golden row can take gets it whatever the order. Past that
    # many, the choice runs chunk by chunk (same choices, bounded memory).
    kept_v: list[np.ndarray] = []
    kept_c: list[np.ndarray] = []
    n_kept = 0
    in_order = False
    ends = np.cumsum(sizes)
    start_v = 0
    while start_v < visit.size:
        # A chunk of visiting golden rows whose windows hold about _CHUNK_PAIRS pairs.
        base = int(ends[start_v - 1]) if start_v else 0
        stop_v = int(np.searchsorted(ends, base + _CHUNK_PAIRS, "right"))
        stop_v = max(stop_v, start_v + 1)
        sz = sizes[start_v:stop_v]
        total = int(sz.sum())
        if total:
            who = np.repeat(np.arange(start_v, stop_v), sz)
            offs = np.arange(total) - np.repeat(np.cumsum(sz) - sz, sz)
            pos = lo[who] + offs
            # Column by column, keeping only the pairs still within tolerance (the first column last: the
            # window already holds its nearby values, so it rules out the fewest).
            for c in checks:
                a = g_left[visit[who]]
                ok = numbers_close(ng[a, c], np_[cand[pos], c], half[a, c], rel_tol=float(rels[c]))
                who, pos = who[ok], pos[ok]
                if not who.size:
                    break
            if in_order:
                choose(who, pos)
            else:
                kept_v.append(who)
                kept_c.append(pos)
                n_kept += who.size
                if n_kept > _KEPT_PAIRS:
                    in_order = True
                    choose(np.concatenate(kept_v), np.concatenate(kept_c))
                    kept_v, kept_c = [], []
        start_v = stop_v
    if kept_v:
        who = np.concatenate(kept_v)
        pos = np.concatenate(kept_c)
        per_row = np.bincount(who, minlength=visit.size)
        per_cand = np.bincount(pos, minlength=cand.size)
        forced = (per_row[who] == 1) & (per_cand[pos] == 1)
        take_v.extend(who[forced].tolist())
        take_c.extend(pos[forced].tolist())
        choose(who[~forced], pos[~forced])
    if take_v:
        out[g_left[visit[np.array(take_v, dtype=np.int64)]]] = cand[np.array(take_c, dtype=np.int64)]


def match_rows(tg: np.ndarray, tp: np.ndarray, ng: np.ndarray, np_: np.ndarray, half: np.ndarray,
               rel_tol: float | np.ndarray, *, exact_only: bool | None = None) -> np.ndarray:
    """Multiset matching: ``(n_g,)`` index of the prediction row each golden row took, or -1.

    Args:
        tg, tp: ``(n_g, t)`` / ``(n_p, t)`` int64 text ids (equal ids, equal text; -1 NULL).
        ng, np_: ``(n_g, m)`` / ``(n_p, m)`` float64 numbers (NaN NULL), the prediction already scaled.
        half: ``(n_g, m)`` display-precision half-units of the golden numbers.
        rel_tol: Relative tolerance: one, or ``(m,)`` one per numeric column
            (:func:`~goldeval.answers.numbers.pair_rel_tol`).
        exact_only: What the caller already knows of these tables: ``True`` when every numeric column can only
            meet its equal (finite whole numbers or NULL on both sides, no half-unit), ``False`` when not;
            ``None``: checked here.

    Rows meet when their text ids are equal and every number is within tolerance. Rows are bucketed by text ids
    and NULL pattern. A small bucket is solved exactly (maximum bipartite matching); a large one by the
    earliest-deadline greedy on the first number (exact for one numeric column), after exactly equal rows.
    """
    n_g, n_p = tg.shape[0], tp.shape[0]
    out = np.full(n_g, -1, dtype=np.int64)
    if n_g == 0 or n_p == 0:
        return out
    if tg.shape[1] == 0 and not np.isnan(ng).any() and not np.isnan(np_).any():
        # No text column and no NULL: every row is in the one bucket, in its own order (what the grouping gives).
        g_count, p_count = np.array([n_g]), np.array([n_p])
        g_order, p_order = np.arange(n_g), np.arange(n_p)
    else:
        kg = np.concatenate([tg, np.isnan(ng).astype(np.int64)], axis=1)
        kp = np.concatenate([tp, np.isnan(np_).astype(np.int64)], axis=1)
        if kg.shape[1] == 0:
            kg = np.zeros((n_g, 1), dtype=np.int64)
            kp = np.zeros((n_p, 1), dtype=np.int64)
        inv = group_ids(np.concatenate([kg, kp]))
        gid, pid = inv[:n_g], inv[n_g:]
        n_groups = int(inv.max()) + 1
        g_count = np.bincount(gid, minlength=n_groups)
        p_count = np.bincount(pid, minlength=n_groups)
        g_order = np.argsort(gid, kind="stable")
        p_order = np.argsort(pid, kind="stable")
    g_start = np.concatenate([[0], np.cumsum(g_count)[:-1]])
    p_start = np.concatenate([[0], np.cumsum(p_count)[:-1]])
    m = ng.shape[1]
    # Buckets with one golden and one prediction row (unique keys): decided in one vectorised pass.
    single = np.flatnonzero((g_count == 1) & (p_count == 1))
    if single.size:
        a, b = g_order[g_start[single]], p_order[p_start[single]]
        ok = rows_close(ng[a], np_[b], half[a], rel_tol)
        out[a[ok]] = b[ok]
    rest = (g_count > 0) & (p_count > 0) & ~((g_count == 1) & (p_count == 1))
    if m:
        small = np.flatnonzero(rest & (g_count * p_count <= _SMALL_BUCKET))
        if small.size:
            rest[_forced_small(small, g_order, p_order, g_start, p_start, g_count, p_count, ng, np_, half, rel_tol, out)] = False
    for gi_group in np.flatnonzero(rest).tolist():
        g_rows = g_order[g_start[gi_group]: g_start[gi_group] + g_count[gi_group]]
        p_rows = p_order[p_start[gi_group]: p_start[gi_group] + p_count[gi_group]]
        if m == 0:
            k = min(g_rows.size, p_rows.size)
            out[g_rows[:k]] = p_rows[:k]
            continue
        if g_rows.size * p_rows.size <= _SMALL_BUCKET:
            # Small bucket: a maximum bipartite matching (Hopcroft–Karp) over the "within tolerance" graph.
            close = numbers_close(ng[g_rows][:, None, :], np_[p_rows][None, :, :], half[g_rows][:, None, :], rel_tol=rel_tol).all(axis=2)
            if close.any():
                from scipy.sparse import csr_matrix  # start-up: numpy / scipy load only when this runs
                # start-up: numpy / scipy load only when this runs
                from scipy.sparse.csgraph import maximum_bipartite_matching

                m_idx = maximum_bipartite_matching(csr_matrix(close.astype(np.int8)), perm_type="column")
                hit = m_idx >= 0
                out[g_rows[hit]] = p_rows[m_idx[hit]]
            continue
        # Large bucket: exactly equal rows pair off first (one hash grouping), then the rest by the greedy.
        g_left, p_left = pair_exact(ng, np_, g_rows, p_rows, out)
        if g_left.size and p_left.size:
            _greedy(ng, np_, half, g_left, p_left, out, rel_tol, exact_only)
    return out
