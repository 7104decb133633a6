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
"""

from __future__ import annotations

import argparse
import itertools
import math
import random
import sqlite3
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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=100_000)
    ap.add_argument("--width-rows", type=int, default=2_000)
    ap.add_argument("--budget", type=float, default=20.0, help="seconds before the permutation search gives up")
    args = ap.parse_args()

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
        secs, v = timed(lambda: judge_answer("q", golden, {"columns": p_names, "rows": p_rows}))
        cpu = cpu_timed(lambda: judge_answer("q", golden, {"columns": p_names, "rows": p_rows}))
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
        secs, v = timed(lambda: judge_answer("q", golden, {"columns": p_names, "rows": p_rows}))
        assert v.verdict == "match", v.why
        outcome, s_secs, tried = permutation_search(rows, p_rows, args.budget)
        per = s_secs / tried
        est = per * math.factorial(k) / 2
        est_txt = f"{est:,.1f}" if outcome == "gave up" else "—"
        print(f"  {k:>4} {secs:>9.4f} {outcome:>14} {tried:>12,} {s_secs:>10.2f} {est_txt:>20}")


if __name__ == "__main__":
    main()
