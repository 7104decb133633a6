#!/usr/bin/env python3
"""Token F1 on one and two workers, whole process, interleaved with the SQuAD-style anchor (issue 31 items 2 and 7).

    python benchmarks/bench_freetext_scale.py [--corpus long|short] [--rounds 3] [--before OLD/src] [--store]
    python benchmarks/bench_freetext_scale.py --store-cost [--corpus short] [--rounds 3] [--before OLD/src]

Corpora (written once into ``--work``): ``long`` = ``../shared/bench/make_corpus.py --n 100000`` (seed 20240501,
~250-token references, ~300-token predictions, 417 MB); ``short`` = ``make_short_corpus.py --n 1000000`` (a dozen
tokens a row, 213 MB). ``--n`` changes the row count.

Arms, each a fresh process measured from a small process that is a child subreaper (``PR_SET_CHILD_SUBREAPER``), so
wall seconds, the CPU seconds (user + system) of the **whole process tree** (the pool's workers, the forkserver and
the store's writer included) and the peak RSS of the largest process all count:

- **squad**: the SQuAD v1.1 script's ``normalize_answer`` and ``f1_score`` (its code, the punctuation set built once a
  call as the script does), streaming the file with orjson and summing, over the first ``--anchor-rows`` rows (the
  anchor is 10-40 times slower; its per-row time is scaled to the file's rows, start-up excluded);
- **w1** / **w2**: ``goldeval score FILE --workers 1|2 -q --out FILE`` with ``--no-store`` (``--store``: also with a
  fresh store, ``GOLDEVAL_HOME`` in ``--work``), this tree's ``src``; with ``--before OLD/src`` the same arms of
  that tree too (``b1`` / ``b2``).

Each round runs every arm once, the order rotated round to round. Printed per arm: median (min-max) wall and tree
CPU, the anchor's scaled time over goldeval's (× squad, higher is faster) for wall and for CPU, the 2-worker
speed-up (w1 wall / w2 wall) and CPU per case at each worker count; the load average before each round. The scores
are checked in the same run: every arm's aggregate and per_example (``elapsed_sec`` aside) equal w1's, to the last
digit (exit 1 otherwise).

Store cost (``--store-cost``, issue 31 item 1): ``goldeval score FILE -q`` (the default workers) recording the run in
a fresh store with the texts kept (the default) and with ``--no-texts``, against ``--no-store``, interleaved (the
order reversed every other round); ratios per round. With ``--before OLD/src`` also that tree's store arms. Bytes a
case: the ``--no-texts`` store after ``VACUUM`` less the same store after ``VACUUM`` with its cases deleted, over the
cases recorded. The three arms' results files must hold the same aggregate and per_example (exit 1 otherwise).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from measure import measure as tree_measure
from squad import SQUAD_FUNCTIONS

import orjson

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
SHARED = Path(os.environ.get("GOLDEVAL_SHARED", REPO.parent / "shared"))

#: The SQuAD v1.1 evaluation script's normalisation and F1 (its code), streaming argv[1]'s first argv[2] rows; prints
#: the rows read and the seconds of the loop (process time and wall; start-up excluded).
SQUAD = SQUAD_FUNCTIONS + r'''
import sys, time, orjson
limit = int(sys.argv[2])
c, w = time.process_time(), time.perf_counter()
total = n = 0
with open(sys.argv[1], "rb") as fh:
    for line in fh:
        if n >= limit:
            break
        row = orjson.loads(line)
        total += f1_score(row["prediction"], row["reference"]); n += 1
print(n, time.process_time() - c, time.perf_counter() - w, total / n)
'''


def load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def measure(cmd: list[str], env: dict[str, str]) -> tuple[float, float, float, str]:
    """``(wall s, CPU s of the process tree, peak RSS MiB of its largest process, stdout of cmd)``
    (:func:`measure.measure`); raises when *cmd* fails."""
    m = tree_measure(cmd, env, stdout=subprocess.PIPE)
    if m.exit_code != 0:
        raise SystemExit(f"bench_freetext_scale: {' '.join(cmd)} exited {m.exit_code}: {m.stderr[-2000:]}")
    return m.wall_s, m.cpu_s, m.largest_rss_mib, m.stdout.strip()


def corpus(kind: str, n: int, work: Path) -> Path:
    out = work / f"{kind}_{n}.jsonl"
    if not out.exists():
        if kind == "long":
            cmd = [sys.executable, str(SHARED / "bench" / "make_corpus.py"), "--n", str(n), "--out", str(out)]
        else:
            cmd = [sys.executable, str(HERE / "make_short_corpus.py"), "--n", str(n), "--out", str(out)]
        subprocess.run(cmd, check=True)
    return out


def results_of(path: Path) -> tuple[dict, list]:
    """A results file's aggregate (without ``elapsed_sec``) and per_example."""
    res = orjson.loads(path.read_bytes())
    agg = {k: v for k, v in res["aggregate"].items() if k != "elapsed_sec"}
    return agg, res["per_example"]


def spread(xs: list[float], fmt: str = ".2f") -> str:
    return f"{statistics.median(xs):{fmt}} ({min(xs):{fmt}}–{max(xs):{fmt}})"


def bytes_a_case(db: Path) -> float:
    """Bytes a recorded case takes in the store *db*: its size after VACUUM less its size after VACUUM with every
    case (rows and blocks) deleted, the run rows kept, over the cases recorded."""
    import sqlite3

    con = sqlite3.connect(db, isolation_level=None)
    try:
        blocks = con.execute("SELECT 1 FROM sqlite_master WHERE name = 'case_blocks'").fetchone() is not None
        n = con.execute("SELECT count(*) FROM cases").fetchone()[0]
        if blocks:
            n += con.execute("SELECT coalesce(sum(n), 0) FROM case_blocks").fetchone()[0]
        sizes = []
        for step in ("full", "empty"):
            if step == "empty":
                con.execute("DELETE FROM cases")
                if blocks:
                    con.execute("DELETE FROM case_blocks")
            out = f"{db}.{step}"
            con.execute("VACUUM INTO ?", (out,))
            sizes.append(os.path.getsize(out))
            os.unlink(out)
    finally:
        con.close()
    return (sizes[0] - sizes[1]) / n


def store_cost(path: Path, n: int, rounds: int, work: Path, before: Path | None) -> int:
    """The ``--store-cost`` comparison (see the module docstring); 0 when every arm's results are equal."""
    trees = {"": REPO / "src"} | ({"before ": before.resolve()} if before is not None else {})
    arms: dict[str, tuple[list[str], dict[str, str], Path]] = {}
    for tag, src in trees.items():
        env = {**os.environ, "PYTHONPATH": str(src)}
        for name, extra in (("store (texts kept)", []), ("store --no-texts", ["--no-texts"]), ("--no-store", ["--no-store"])):
            if tag and name == "--no-store":
                continue
            out = work / f"cost_{len(arms)}.json"
            arms[tag + name] = ([sys.executable, "-m", "goldeval", "score", str(path), "-q", *extra, "--out", str(out)],
                                env, out)
    names = list(arms)
    head = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    print(f"corpus: {path} ({n:,} rows, {path.stat().st_size / 1e6:.0f} MB); goldeval score -q, default workers; "
          f"{rounds} rounds interleaved; {os.cpu_count()} CPUs; HEAD {head}")
    wall: dict[str, list[float]] = {a: [] for a in names}
    cpu: dict[str, list[float]] = {a: [] for a in names}
    rss: dict[str, list[float]] = {a: [] for a in names}
    per_case: dict[str, list[float]] = {a: [] for a in names if "--no-texts" in a}
    loads = []
    for rnd in range(rounds):
        loads.append(load())
        for a in (names if rnd % 2 == 0 else names[::-1]):
            cmd, env, _ = arms[a]
            home = work / "cost_home"
            shutil.rmtree(home, ignore_errors=True)
            w, c, r, _ = measure(cmd, {**env, "GOLDEVAL_HOME": str(home)})
            wall[a].append(w)
            cpu[a].append(c)
            rss[a].append(r)
            if a in per_case:
                per_case[a].append(bytes_a_case(home / "goldeval.db"))
            shutil.rmtree(home, ignore_errors=True)
        print(f"round {rnd + 1}: load before {loads[-1]}; " + ", ".join(f"{a} {wall[a][-1]:.2f}s/{cpu[a][-1]:.2f}s" for a in names),
              flush=True)
    base = results_of(arms["--no-store"][2])
    ok = True
    for a in names:
        same = results_of(arms[a][2]) == base
        ok &= same
        print(f"{a}: aggregate and per_example equal to --no-store's: {same}")
    print(f"\nload average before each round: {'; '.join(loads)}; after: {load()}")
    print(f"{'arm':<28}{'wall s':>22}{'tree CPU s':>22}{'largest RSS MiB':>17}")
    for a in names:
        print(f"{a:<28}{spread(wall[a]):>22}{spread(cpu[a]):>22}{max(rss[a]):>17.0f}")
    for a in names:
        if a == "--no-store":
            continue
        rw = [x / y for x, y in zip(wall[a], wall["--no-store"], strict=True)]
        rc = [x / y for x, y in zip(cpu[a], cpu["--no-store"], strict=True)]
        print(f"{a} / --no-store (per round): wall {spread(rw)}, CPU {spread(rc)}")
    for a, xs in per_case.items():
        print(f"{a}: bytes a case in the store (after VACUUM, less the store without its cases): {spread(xs, '.1f')}")
    return 0 if ok else 1


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", choices=("long", "short"), default="long")
    ap.add_argument("--n", type=int, default=None, help="rows (default 100,000 long or 1,000,000 short)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--anchor-rows", type=int, default=None, help="rows the anchor reads (default N/5)")
    ap.add_argument("--before", type=Path, default=None, help="another tree's src folder: its w1/w2 arms too")
    ap.add_argument("--store", action="store_true", help="also w1/w2 with a fresh run store (texts kept)")
    ap.add_argument("--store-cost", action="store_true",
                    help="goldeval score with the store (texts kept, --no-texts) against --no-store, and bytes a case")
    ap.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "goldeval_bench_scale")
    args = ap.parse_args(argv)
    n = args.n or (100_000 if args.corpus == "long" else 1_000_000)
    anchor_rows = args.anchor_rows or n // 5
    args.work.mkdir(parents=True, exist_ok=True)
    path = corpus(args.corpus, n, args.work)
    if args.store_cost:
        return store_cost(path, n, args.rounds, args.work, args.before)
    squad = args.work / "squad_anchor.py"
    squad.write_text(SQUAD)

    trees = {"w": REPO / "src"}
    if args.before is not None:
        trees["b"] = args.before.resolve()
    arms: dict[str, tuple[list[str], dict[str, str], Path | None]] = {
        "squad": ([sys.executable, str(squad), str(path), str(anchor_rows)], dict(os.environ), None)}
    for tag, src in trees.items():
        env = {**os.environ, "PYTHONPATH": str(src)}
        for w in (1, 2):
            out = args.work / f"{tag}{w}.json"
            arms[f"{tag}{w}"] = ([sys.executable, "-m", "goldeval", "score", str(path), "--workers", str(w), "-q",
                                  "--no-store", "--out", str(out)], env, out)
            if args.store:
                home = args.work / f"home_{tag}{w}"
                arms[f"{tag}{w}s"] = ([sys.executable, "-m", "goldeval", "score", str(path), "--workers", str(w), "-q",
                                       "--out", str(args.work / f"{tag}{w}s.json")], {**env, "GOLDEVAL_HOME": str(home)},
                                      args.work / f"{tag}{w}s.json")
    names = list(arms)
    print(f"corpus: {path} ({n:,} rows, {path.stat().st_size / 1e6:.0f} MB); anchor on {anchor_rows:,} rows, scaled; "
          f"{args.rounds} rounds, order rotated; {os.cpu_count()} CPUs; HEAD "
          f"{subprocess.run(['git', '-C', str(REPO), 'rev-parse', '--short', 'HEAD'], capture_output=True, text=True).stdout.strip()}")
    wall: dict[str, list[float]] = {a: [] for a in names}
    cpu: dict[str, list[float]] = {a: [] for a in names}
    rss: dict[str, list[float]] = {a: [] for a in names}
    loads = []
    for rnd in range(args.rounds):
        order = names[rnd % len(names):] + names[:rnd % len(names)]
        loads.append(load())
        for a in order:
            cmd, env, _ = arms[a]
            if "GOLDEVAL_HOME" in env:
                shutil.rmtree(env["GOLDEVAL_HOME"], ignore_errors=True)
            w, c, r, out = measure(cmd, env)
            if a == "squad":  # the loop's own seconds, scaled to the file's rows
                rows, loop_cpu, loop_wall, _ = out.split()
                w, c = float(loop_wall) * n / int(rows), float(loop_cpu) * n / int(rows)
            wall[a].append(w)
            cpu[a].append(c)
            rss[a].append(r)
        print(f"round {rnd + 1}: load before {loads[-1]}; " + ", ".join(f"{a} {wall[a][-1]:.1f}s/{cpu[a][-1]:.1f}s" for a in order),
              flush=True)
    ok = True
    base = results_of(arms["w1"][2])  # type: ignore[arg-type]
    for a in names[1:]:
        same = results_of(arms[a][2]) == base  # type: ignore[arg-type]
        ok &= same
        print(f"{a}: aggregate and per_example equal to w1's: {same}")
    sq_w, sq_c = statistics.median(wall["squad"]), statistics.median(cpu["squad"])
    print(f"\nload average before each round: {'; '.join(loads)}; after: {load()}")
    print(f"{'arm':<7}{'wall s':>22}{'tree CPU s':>22}{'peak RSS MiB':>14}{'× squad wall':>14}{'× squad CPU':>13}{'CPU µs/row':>12}")
    for a in names:
        mw, mc = statistics.median(wall[a]), statistics.median(cpu[a])
        print(f"{a:<7}{spread(wall[a]):>22}{spread(cpu[a]):>22}{max(rss[a]):>14.0f}{sq_w / mw:>14.2f}{sq_c / mc:>13.2f}"
              f"{mc / n * 1e6:>12.1f}")
    for tag in trees:
        for suffix in ("", "s") if args.store else ("",):
            one, two = f"{tag}1{suffix}", f"{tag}2{suffix}"
            ratios = [a / b for a, b in zip(wall[one], wall[two], strict=True)]
            print(f"{two} over {one}: wall speed-up {spread(ratios)} (paired by round); CPU {two}/{one} "
                  f"{statistics.median(cpu[two]) / statistics.median(cpu[one]):.2f}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
