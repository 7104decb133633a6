#!/usr/bin/env python3
"""Speed of the rule-based answer judge (issue 4).

    python benchmarks/bench_answers.py [--rows 100000] [--width-rows 2000] [--budget 20]

1. A 1e5-row × 10-column prediction against its golden, rows and columns shuffled, judged end to end
   (``goldeval.answers.judge_answer``: typing every cell, pairing, multiset row comparison). Target: under 1 s on
   one core. Anchor measured in the same run: ``np.array`` over the same Python cells (the floor for touching
   every cell once) and a plain ``sorted()`` of the row tuples (what a naive multiset compare costs).
2. Growing width (3, 6, 9, 12, 20 columns; neutral column names so that only values can pair them): the judge
   beside a permutation-search comparator written here (Spider test-suite style: try column permutations of the
   prediction until one makes the row multisets equal). The search gives up past ``--budget`` seconds; its full
   cost is then estimated from the measured time per permutation × k!/2 (the expected position of the right one).

    python benchmarks/bench_answers.py --near-misses [--near-rows 10000,100000] [--rounds 5] [--widths 5,20,40]

3. Near misses (issue 15), 10 columns at each of ``--near-rows``: ten integer columns sharing the domain 0..9
   with two labels swapped (names kept), the same with neutral names and one cell off, duplicated rows (a 1 %
   fan-out of rows over the domain 0..2), all-equal columns (every other column the constant 7) with one cell
   off, and floats needing tolerance (a golden rounded to 2 decimals against the unrounded values). Beside each,
   in the same rounds, interleaved: the anchor ``hash_signature_judge`` (a typed hash-signature comparison in a
   page of plain Python: typed cells, one multiset signature per column, columns paired by signature, row
   multisets compared). CPU seconds per call; median and min–max over the rounds; ratio judge / anchor per
   round.
4. Width scaling of the same-domain label swap at ``--width-rows`` (1e4) rows and ``--widths`` columns: the
   judge and the anchor as in 3, and once the Spider-style permutation search (gives up after
   ``--search-budget`` seconds; full cost estimated as in 2).
"""

from __future__ import annotations

import argparse
import itertools
import math
import random
import sqlite3
import statistics
import time
from collections import Counter

import numpy as np

from goldeval.answers import judge_answer


def make_table(n: int, k: int, seed: int) -> tuple[list[str], list[list]]:
    """n rows × k columns: a unique text key, a 20-value category, an ISO date, then ints and 2-decimal floats."""
    rng = random.Random(seed)
    kinds = ["key", "cat", "date"] + ["int" if i % 2 else "float" for i in range(max(0, k - 3))]
    kinds = kinds[:k]
    cats = [f"ward-{i:02d}" for i in range(20)]
    cols = []
    for j, kind in enumerate(kinds):
        if kind == "key":
            cols.append([f"P{i:07d}" for i in range(n)])
        elif kind == "cat":
            cols.append([rng.choice(cats) for _ in range(n)])
        elif kind == "date":
            cols.append([f"2024-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}" for _ in range(n)])
        elif kind == "int":
            cols.append([rng.randint(0, 10**6) + j for _ in range(n)])
        else:
            cols.append([round(rng.uniform(0, 10**5), 2) + j for _ in range(n)])
    names = [f"{kind}_{j}" for j, kind in enumerate(kinds)]
    return names, [list(r) for r in zip(*cols)]


def shuffled(names: list[str], rows: list[list], seed: int, rename: bool) -> tuple[list[str], list[tuple]]:
    """The prediction as a re-executed query returns it: columns and rows shuffled, fetched from an in-memory SQLite
    database (fresh tuples, as ``cursor.fetchall()`` gives them)."""
    rng = random.Random(seed)
    perm = list(range(len(names)))
    rng.shuffle(perm)
    out_rows = [[r[i] for i in perm] for r in rows]
    rng.shuffle(out_rows)
    out_names = [f"c{j}" for j in range(len(names))] if rename else [names[i] for i in perm]
    con = sqlite3.connect(":memory:")
    cols = ", ".join(f'"{n}"' for n in out_names)
    con.execute(f"CREATE TABLE p ({cols})")
    con.executemany(f"INSERT INTO p VALUES ({', '.join('?' * len(out_names))})", out_rows)
    fetched = con.execute("SELECT * FROM p ORDER BY rowid").fetchall()
    con.close()
    return out_names, fetched


def timed(fn, repeat: int = 3) -> tuple[float, object]:
    """Best wall-clock seconds of *repeat* runs (and the last result)."""
    best, result = math.inf, None
    for _ in range(repeat):
        t = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - t)
    return best, result


def cpu_timed(fn, repeat: int = 3) -> float:
    """Best CPU seconds of this process (one core; robust to other processes sharing the machine)."""
    best = math.inf
    for _ in range(repeat):
        t = time.process_time()
        fn()
        best = min(best, time.process_time() - t)
    return best


def permutation_search(g_rows: list[list], p_rows: list[list], budget: float) -> tuple[str, float, int]:
    """Try prediction column permutations until the row multisets are equal. Returns (outcome, seconds, tried)."""
    k = len(g_rows[0])
    target = Counter(map(tuple, g_rows))
    start = time.perf_counter()
    tried = 0
    for perm in itertools.permutations(range(k)):
        tried += 1
        if Counter(tuple(r[i] for i in perm) for r in p_rows) == target:
            return "found", time.perf_counter() - start, tried
        if time.perf_counter() - start > budget:
            return "gave up", time.perf_counter() - start, tried
    return "no permutation", time.perf_counter() - start, tried


# --- near misses (issue 15) -----------------------------------------------------------------------------------

#: Column names with no shared tokens and no role tags, so that names pair columns (or, replaced, nothing does).
WORDS = ("amber basil coral delta ember flint grove hazel iris jade kelp lotus maple nova onyx pearl quartz raven "
         "sage topaz umber vale willow xenon yarrow zinc aspen brook cliff dune fern glade heath inlet juniper knoll "
         "larch marsh nettle oak").split()


def _fetched(names: list[str], rows: list[list], rng: random.Random, rename: bool = False) -> tuple[list[str], list[tuple]]:
    """Columns and rows shuffled, as a re-executed query returns them (fresh tuples from SQLite)."""
    perm = list(range(len(names)))
    rng.shuffle(perm)
    out = [[r[i] for i in perm] for r in rows]
    rng.shuffle(out)
    out_names = [f"c{j}" for j in range(len(names))] if rename else [names[i] for i in perm]
    con = sqlite3.connect(":memory:")
    con.execute(f"CREATE TABLE p ({', '.join(repr(n) for n in out_names)})")
    con.executemany(f"INSERT INTO p VALUES ({', '.join('?' * len(out_names))})", out)
    fetched = con.execute("SELECT * FROM p ORDER BY rowid").fetchall()
    con.close()
    return out_names, fetched


def near_miss_domain_swap(n: int, k: int, seed: int) -> tuple[list[str], list[list], list[str], list[tuple]]:
    """k integer columns sharing the domain 0..9; the prediction has two columns' labels swapped (names kept)."""
    rng = random.Random(seed)
    names = WORDS[:k]
    rows = [[rng.randrange(10) for _ in range(k)] for _ in range(n)]
    pred = [list(r) for r in rows]
    for r in pred:
        r[1], r[k - 2] = r[k - 2], r[1]
    return (names, rows, *_fetched(names, pred, rng))


def near_miss_domain_neutral(n: int, k: int, seed: int) -> tuple[list[str], list[list], list[str], list[tuple]]:
    """The same domain, neutral prediction names (c0…, values only), one cell off."""
    rng = random.Random(seed)
    names = WORDS[:k]
    rows = [[rng.randrange(10) for _ in range(k)] for _ in range(n)]
    pred = [list(r) for r in rows]
    pred[n // 3][2] = (pred[n // 3][2] + 1) % 10
    return (names, rows, *_fetched(names, pred, rng, rename=True))


def near_miss_duplicated(n: int, k: int, seed: int) -> tuple[list[str], list[list], list[str], list[tuple]]:
    """Rows over the domain 0..2 (many repeats); the prediction repeats 1 % of them once more (a fan-out)."""
    rng = random.Random(seed)
    names = WORDS[:k]
    rows = [[rng.randrange(3) for _ in range(k)] for _ in range(n)]
    pred = rows + [list(rows[rng.randrange(n)]) for _ in range(n // 100)]
    return (names, rows, *_fetched(names, pred, rng))


def near_miss_all_equal(n: int, k: int, seed: int) -> tuple[list[str], list[list], list[str], list[tuple]]:
    """Every other column the constant 7, the rest integers 0..999; one cell off in the prediction."""
    rng = random.Random(seed)
    names = WORDS[:k]
    rows = [[7 if j % 2 == 0 else rng.randrange(1000) for j in range(k)] for _ in range(n)]
    pred = [list(r) for r in rows]
    pred[n // 2][1] += 1
    return (names, rows, *_fetched(names, pred, rng))


def near_miss_floats(n: int, k: int, seed: int) -> tuple[list[str], list[list], list[str], list[tuple]]:
    """Floats needing tolerance: the golden rounded to 2 decimals, the prediction the unrounded values."""
    rng = random.Random(seed)
    names = WORDS[:k]
    exact = [[rng.uniform(0, 100) for _ in range(k)] for _ in range(n)]
    rows = [[round(x, 2) for x in r] for r in exact]
    return (names, rows, *_fetched(names, exact, rng))


def near_miss_typed(n: int, k: int, seed: int) -> tuple[list[str], list[list], list[str], list[tuple]]:
    """A typed table (integer, 2-decimal and word columns in turn); one integer cell of the prediction is an unseen
    text, which makes that column text (issue 31 item 4: "the typed near miss")."""
    rng = random.Random(seed)
    names = WORDS[:k]

    def cell(j: int) -> object:
        kind = j % 3
        if kind == 0:
            return rng.randrange(100_000)
        return round(rng.uniform(0, 1000), 2) if kind == 1 else rng.choice(WORDS)

    rows = [[cell(j) for j in range(k)] for _ in range(n)]
    pred = [list(r) for r in rows]
    pred[n // 2][0] = "unseen"
    return (names, rows, *_fetched(names, pred, rng))


NEAR_MISSES = {
    "same domain, labels swapped": near_miss_domain_swap,
    "same domain, neutral names, one cell off": near_miss_domain_neutral,
    "duplicated rows (1 % fan-out)": near_miss_duplicated,
    "all-equal columns, one cell off": near_miss_all_equal,
    "floats needing tolerance": near_miss_floats,
    "typed, one cell an unseen text": near_miss_typed,
}


def hash_signature_judge(g_names: list[str], g_rows: list, p_names: list[str], p_rows: list) -> str:
    """Anchor: a typed hash-signature comparison in plain Python (no tolerance, no explanation).

    Cells are typed (NULL; a number, bools and ints and floats as one float; text stripped and lower-cased), each
    column gets the hash of its multiset of typed cells, each golden column takes a free prediction column with
    the same signature (the same name first), and the row multisets are compared under that pairing. Returns
    ``match`` or ``no_match: <why>``."""
    def typed(v):
        if v is None:
            return None
        if isinstance(v, (bool, int, float)):
            return float(v)
        return str(v).strip().lower()

    g_cols = [list(map(typed, c)) for c in zip(*g_rows)] if g_rows else [[] for _ in g_names]
    p_cols = [list(map(typed, c)) for c in zip(*p_rows)] if p_rows else [[] for _ in p_names]
    g_sig = [hash(frozenset(Counter(c).items())) for c in g_cols]
    p_sig = [hash(frozenset(Counter(c).items())) for c in p_cols]
    free = list(range(len(p_cols)))
    pairing = []
    for i, sig in enumerate(g_sig):
        cands = [j for j in free if p_sig[j] == sig]
        if not cands:
            return f"no_match: no column holds the values of '{g_names[i]}'"
        j = next((j for j in cands if p_names[j] == g_names[i]), cands[0])
        pairing.append(j)
        free.remove(j)
    g_multiset = Counter(zip(*g_cols))
    p_multiset = Counter(zip(*[p_cols[j] for j in pairing]))
    if g_multiset == p_multiset:
        return "match"
    missing = sum((g_multiset - p_multiset).values())
    return f"no_match: {missing} of {len(g_rows)} golden rows not found"


def _spread(xs: list[float]) -> str:
    return f"{statistics.median(xs):.3f} ({min(xs):.3f}–{max(xs):.3f})"


def _interleaved(judge, anchor, rounds: int) -> tuple[list[float], list[float], object, object]:
    """CPU seconds of *judge* and *anchor* over *rounds* rounds, alternating which goes first."""
    tj, ta = [], []
    vj = va = None
    for r in range(rounds):
        for which in (("j", "a") if r % 2 == 0 else ("a", "j")):
            t = time.process_time()
            if which == "j":
                vj = judge()
                tj.append(time.process_time() - t)
            else:
                va = anchor()
                ta.append(time.process_time() - t)
    return tj, ta, vj, va


def near_misses(sizes: list[int], rounds: int, widths: list[int], width_rows: int, budget: float) -> None:
    """Sections 3 and 4 of the module docstring."""
    print(f"near misses, 10 columns: judge_answer against the hash-signature anchor, CPU s, median (min–max) of {rounds} rounds")
    print(f"  {'case':42s} {'rows':>8} {'judge s':>22} {'anchor s':>22} {'judge/anchor':>20}  verdicts (judge | anchor)")
    for n in sizes:
        for label, make in NEAR_MISSES.items():
            gn, gr, pn, pr = make(n, 10, seed=1)
            golden = {"kind": "value", "columns": gn, "rows": gr}
            tj, ta, v, a = _interleaved(lambda g=golden, pn=pn, pr=pr: judge_answer("q", g, {"columns": pn, "rows": pr}),
                                        lambda gn=gn, gr=gr, pn=pn, pr=pr: hash_signature_judge(gn, gr, pn, pr), rounds)
            ratios = [x / y for x, y in zip(tj, ta)]
            print(f"  {label:42s} {n:>8,} {_spread(tj):>22} {_spread(ta):>22} {_spread(ratios):>20}  {v.verdict} | {a.split(':')[0]}")
    print(f"\nwidth scaling, same domain with labels swapped, {width_rows:,} rows (CPU s, median (min–max) of {rounds} rounds)")
    print(f"  {'cols':>4} {'judge s':>22} {'anchor s':>22} {'judge/anchor':>20} {'search':>14} {'tried':>10} {'est. full search s':>20}")
    for k in widths:
        gn, gr, pn, pr = near_miss_domain_swap(width_rows, k, seed=3)
        golden = {"kind": "value", "columns": gn, "rows": gr}
        tj, ta, v, _ = _interleaved(lambda g=golden, pn=pn, pr=pr: judge_answer("q", g, {"columns": pn, "rows": pr}),
                                    lambda gn=gn, gr=gr, pn=pn, pr=pr: hash_signature_judge(gn, gr, pn, pr), rounds)
        ratios = [x / y for x, y in zip(tj, ta)]
        # The permutation search looks for a column order that makes the row multisets equal: with the labels
        # swapped one exists (the values), so it is "found" or it gives up.
        p_idx = [pn.index(nm) for nm in gn]
        aligned = [[r[i] for i in p_idx] for r in pr]
        outcome, s_secs, tried = permutation_search(gr, aligned, budget)
        est = s_secs / tried * math.factorial(k) / 2
        est_txt = f"{est:,.3g}" if outcome == "gave up" else "—"
        print(f"  {k:>4} {_spread(tj):>22} {_spread(ta):>22} {_spread(ratios):>20} {outcome:>14} {tried:>10,} {est_txt:>20}  ({v.verdict})")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=100_000)
    ap.add_argument("--width-rows", type=int, default=2_000)
    ap.add_argument("--budget", type=float, default=20.0, help="seconds before the permutation search gives up")
    ap.add_argument("--near-misses", action="store_true", help="run sections 3 and 4 (issue 15) instead of 1 and 2")
    ap.add_argument("--near-rows", default="10000,100000", help="row counts of section 3, comma-separated")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--widths", default="5,20,40")
    ap.add_argument("--search-budget", type=float, default=5.0)
    args = ap.parse_args()
    if args.near_misses:
        near_misses([int(x) for x in args.near_rows.split(",")], args.rounds, [int(x) for x in args.widths.split(",")],
                    10_000 if args.width_rows == 2_000 else args.width_rows, args.search_budget)
        return

    # 1. 1e5 × 10, rows and columns shuffled, names kept (the usual case) and names replaced (values only).
    names, rows = make_table(args.rows, 10, seed=1)
    golden = {"kind": "value", "columns": names, "rows": rows}
    p0_names, p0_rows = shuffled(names, rows, seed=2, rename=False)
    # Anchors: reading every cell of both tables once into column arrays (the floor for any judge that looks at
    # every value), and Python's sorted() of both tables' row tuples (a naive multiset compare, no typing at all).
    anchor_np, _ = timed(lambda: [np.array([r[j] for r in t], dtype=object) for t in (rows, p0_rows) for j in range(10)])
    anchor_sort, _ = timed(lambda: (sorted(map(tuple, rows)), sorted(p0_rows, key=lambda r: tuple(map(str, r)))))
    print(f"{args.rows:,} rows × 10 columns (3 text, 7 numeric), rows and columns shuffled (fetched from SQLite)")
    print(f"  anchor: every cell of both tables into columns {anchor_np:.3f} s; sorted() of both tables' rows {anchor_sort:.3f} s")
    for rename in (False, True):
        p_names, p_rows = shuffled(names, rows, seed=2, rename=rename)
        secs, v = timed(lambda pn=p_names, pr=p_rows: judge_answer("q", golden, {"columns": pn, "rows": pr}))
        cpu = cpu_timed(lambda pn=p_names, pr=p_rows: judge_answer("q", golden, {"columns": pn, "rows": pr}))
        label = "names replaced (c0…c9)" if rename else "names kept"
        print(f"  judge, {label:24s} wall {secs:.3f} s, CPU {cpu:.3f} s  verdict {v.verdict}  ({secs / anchor_np:.1f}× the np.array "
              f"anchor, {secs / anchor_sort:.1f}× the sort anchor){'  UNDER 1 s' if cpu < 1 else '  OVER 1 s'}")
    # A wrong prediction (one column scaled ×100) takes the slower path that also describes the mismatch.
    p_names, p_rows = shuffled(names, rows, seed=3, rename=False)
    j = p_names.index("int_4")
    p_rows = [r[:j] + (r[j] * 100,) + r[j + 1:] for r in p_rows]
    secs, v = timed(lambda: judge_answer("q", golden, {"columns": p_names, "rows": p_rows}), repeat=1)
    print(f"  judge, one column ×100       {secs:.3f} s  verdict {v.verdict}: {v.mismatch}")

    # 2. Growing width.
    print(f"\nwidth scaling: {args.width_rows:,} rows, neutral column names (values only), rows and columns shuffled")
    print(f"  {'cols':>4} {'judge s':>9} {'search':>14} {'tried':>12} {'search s':>10} {'est. full search s':>20}")
    for k in (3, 6, 9, 12, 20):
        names, rows = make_table(args.width_rows, k, seed=10 + k)
        golden = {"kind": "value", "columns": names, "rows": rows}
        p_names, p_rows = shuffled(names, rows, seed=20 + k, rename=True)
        secs, v = timed(lambda g=golden, pn=p_names, pr=p_rows: judge_answer("q", g, {"columns": pn, "rows": pr}))
        assert v.verdict == "match", v.why
        outcome, s_secs, tried = permutation_search(rows, p_rows, args.budget)
        per = s_secs / tried
        est = per * math.factorial(k) / 2
        est_txt = f"{est:,.1f}" if outcome == "gave up" else "—"
        print(f"  {k:>4} {secs:>9.4f} {outcome:>14} {tried:>12,} {s_secs:>10.2f} {est_txt:>20}")


if __name__ == "__main__":
    main()
