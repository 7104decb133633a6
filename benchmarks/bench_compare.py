#!/usr/bin/env python3
"""Benchmark: ``goldeval compare`` of two recorded free-text runs of N cases each (default 100,000): wall time, CPU
of the whole process tree and peak RSS, against an anchor measured in the same rounds.

The two runs are ``../shared/bench/make_corpus.py --n N`` with its default seed and with ``--seed 7`` (long
clinical-note pairs, token F1 spread 0.4-0.8, so the per-case differences take ~N distinct values and the paired
bootstrap resamples case indices: 10,000 resamples x N draws), scored once into a store under ``benchmarks/out/``
(cached). Then, interleaved for ``--repeat`` rounds so that load on the machine hits every contender alike, each in
a fresh process:

With ``--short`` the two runs are short rows instead: ``make_short_corpus.py --n N`` with its default seed and with
``--seed 7`` (~12 tokens a row), which ``score`` records as coded blocks (format 3; the script checks every block's
format in the store and prints it). The JSON-line anchor below cannot read a coded block, so for ``--short`` the
**anchor** reads both runs through goldeval's public reader instead (``open_existing_store(db).case_records(run)``,
every record decoded into a map by case id): the cost of reading the rows as goldeval decodes them, not an
independent floor.

* **anchor**: a Python process that reads both runs' case rows from the store (the ``cases`` table's rows and the
  ``case_blocks`` a ``score`` run records its cases in, decompressed: the JSON-line blocks, format 1, that a run of
  long notes gets; the anchor stops with a message on a coded block) and decodes every record with orjson (what any
  comparison must at least do: the issue's "reading both runs' rows");
* **compare**: ``goldeval compare RUN_A RUN_B -q --out cmp.json`` of this tree (default 10,000 resamples);
* **before** (with ``--before SRC``): the same command run from another ``src`` folder, e.g. the tree before this
  change: ``git archive f80b2c3 src | tar -x -C /tmp/base`` then ``--before /tmp/base/src``;
* **report** (with ``--report``): ``goldeval report RUN_A -q --out page.html`` (a page of 20,000 of its 100,000
  cases, texts read back from the corpus), and **report_before** from ``--before``'s tree.

Each figure is read by a small wrapper process around the contender: wall time, ``ru_utime + ru_stime`` of its
waited children (RUSAGE_CHILDREN: the goldeval process and its threads, and any process it started) and their
``ru_maxrss`` (Linux carries it across exec, so it includes the wrapper's own ~10 MB: never less than goldeval's).
Prints median (min-max) of each, the ratios to the anchor and (with ``--before``) to the tree before, the load
average before and after, whether the compare JSONs of this tree and ``--before`` are the same bytes (bootstrap
interval included: the same seeded draws) and whether the two pages are.

Usage::

    python benchmarks/bench_compare.py [--n 100000] [--repeat 5] [--before /tmp/base/src] [--report] [--short]
    python benchmarks/bench_compare.py --kernel [--n 100000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
SHARED = Path(os.environ.get("GOLDEVAL_SHARED", REPO.parent / "shared"))

_WRAPPER = (
    "import json, resource, subprocess, sys, time\n"
    "t = time.perf_counter()\n"
    "p = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL)\n"
    "wall = time.perf_counter() - t\n"
    "ru = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
    "print(json.dumps({'rc': p.returncode, 'wall': wall, 'cpu': ru.ru_utime + ru.ru_stime, 'rss_mib': ru.ru_maxrss / 1024}))\n"
)

_ANCHOR = (
    "import sqlite3, sys, orjson, zstandard\n"
    "db = sqlite3.connect(sys.argv[1])\n"
    "dctx = zstandard.ZstdDecompressor()\n"
    "def rows(run):\n"
    "    yield from db.execute('SELECT case_id, data FROM cases WHERE run_id = ? ORDER BY seq', (run,))\n"
    "    for blob, fmt in db.execute('SELECT data, format FROM case_blocks WHERE run_id = ? ORDER BY seq0', (run,)):\n"
    "        if fmt != 1:\n"
    "            sys.exit(f'anchor: run {run} has a case block of format {fmt}; it reads JSON-line blocks (format 1) only')\n"
    "        for text in dctx.decompress(bytes(blob)).split(b'\\n'):\n"
    "            yield None, text\n"
    "maps = []\n"
    "for run in sys.argv[2:]:\n"
    "    m = {}\n"
    "    for cid, data in rows(run):\n"
    "        rec = orjson.loads(data)\n"
    "        m[rec['id'] if cid is None else cid] = rec\n"
    "    maps.append(m)\n"
    "assert all(len(m) for m in maps)\n"
)

_ANCHOR_READER = (  # --short: coded blocks (format 3), read through goldeval's public reader
    "import sys\n"
    "from goldeval.runs.backends import open_existing_store\n"
    "with open_existing_store(sys.argv[1]) as st:\n"
    "    maps = [dict(st.case_records(run)) for run in sys.argv[2:]]\n"
    "assert all(len(m) for m in maps)\n"
)


def corpus(n: int, seed: int | None, short: bool = False) -> Path:
    stem = "short" if short else "corpus"
    out = HERE / "out" / (f"{stem}_{n}.jsonl" if seed is None else f"{stem}_{n}_seed{seed}.jsonl")
    if not out.exists():
        out.parent.mkdir(parents=True, exist_ok=True)
        gen = HERE / "make_short_corpus.py" if short else SHARED / "bench" / "make_corpus.py"
        if not gen.exists():
            sys.exit(f"bench_compare: {gen} not found; set GOLDEVAL_SHARED.")
        extra = [] if seed is None else ["--seed", str(seed)]
        subprocess.run([sys.executable, str(gen), "--n", str(n), "--out", str(out), *extra], check=True)
    return out


def runs(n: int, env: dict[str, str], short: bool = False) -> tuple[Path, str, str]:
    """The store holding the two runs (scored once, then reused) and their ids."""
    home = HERE / "out" / (f"compare_short_{n}" if short else f"compare_{n}")
    db = home / "goldeval.db"
    env = {**env, "GOLDEVAL_HOME": str(home)}
    ids_file = home / "runs.json"
    if not ids_file.exists():
        ids = []
        for seed in (None, 7):
            path = corpus(n, seed, short)
            subprocess.run([sys.executable, "-m", "goldeval", "score", str(path), "--workers", "1", "-q"], env=env, check=True)
            listed = subprocess.run([sys.executable, "-m", "goldeval", "runs", "list", "--json"], env=env, check=True,
                                    capture_output=True, text=True)
            ids.append(json.loads(listed.stdout)[0]["id"])
        ids_file.write_text(json.dumps(ids))
    a, b = json.loads(ids_file.read_text())
    return db, a, b


def block_formats(db: Path, run: str) -> dict[int, int]:
    """format → number of ``case_blocks`` of *run* in the SQLite store *db*, and -1 → rows in its ``cases`` table."""
    import sqlite3

    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        got = dict(con.execute("SELECT format, count(*) FROM case_blocks WHERE run_id = ? GROUP BY format", (run,)))
        got[-1] = con.execute("SELECT count(*) FROM cases WHERE run_id = ?", (run,)).fetchone()[0]
    finally:
        con.close()
    return got


def measure(cmd: list[str], env: dict[str, str]) -> dict[str, float]:
    # from the corpus's folder: a report reads the texts back from the input path the run recorded
    out = subprocess.run([sys.executable, "-c", _WRAPPER, *cmd], env=env, check=True, capture_output=True, text=True,
                         cwd=HERE / "out")
    res = json.loads(out.stdout.strip().splitlines()[-1])
    if res["rc"] != 0:
        sys.exit(f"bench_compare: {' '.join(cmd)} exited {res['rc']}")
    return res


def fmt(xs: list[float], unit: str) -> str:
    return f"{statistics.median(xs):.2f} {unit} ({min(xs):.2f}-{max(xs):.2f})"


def kernel(n: int, repeat: int) -> None:
    """In this process: 10,000 paired-bootstrap resamples of n continuous differences, drawn as before (NumPy's
    ``default_rng(seed).integers`` in blocks of ~2M cells, a gather and a mean: the code of f80b2c3) and by
    :func:`goldeval.resample.resample_means` on one and on two threads, and by its NumPy definition (what runs
    without the C extension: the same bits), interleaved; CPU of this process (its threads included)."""
    import time

    import numpy as np

    sys.path.insert(0, str(REPO / "src"))
    from goldeval.resample import resample_means, resample_means_numpy

    d = np.random.default_rng(0).random(n) - 0.5

    def before() -> None:
        rng, means, chunk = np.random.default_rng(0), np.empty(10_000), max(1, 2_000_000 // n)
        for start in range(0, 10_000, chunk):
            k = min(chunk, 10_000 - start)
            means[start : start + k] = d[rng.integers(0, n, size=(k, n))].mean(axis=1)

    from goldeval import _fast
    from goldeval.resample import stream_keys

    key, retry = stream_keys(0)

    def scalar() -> None:  # the portable C kernel alone (what a CPU without AVX-512 runs), one thread
        _fast.resample_means(d, key, retry, 0, np.empty(10_000), "scalar")

    ways = {"before (numpy integers)": before, "C scalar kernel, 1 thread": scalar,
            "resample_means, 1 thread": lambda: resample_means(d, 10_000, 0, threads=1),
            "resample_means, 2 threads": lambda: resample_means(d, 10_000, 0, threads=2),
            "NumPy definition (no C)": lambda: resample_means_numpy(d, 10_000, 0)}
    got: dict[str, list[tuple[float, float]]] = {k: [] for k in ways}
    load0 = os.getloadavg()[0]
    for _ in range(repeat):
        for name, f in ways.items():
            t, c = time.perf_counter(), time.process_time()
            f()
            got[name].append((time.perf_counter() - t, time.process_time() - c))
    print(f"bootstrap kernel, 10,000 resamples x {n:,} draws; load average {load0:.2f} before, {os.getloadavg()[0]:.2f} after; "
          f"C kernels on this CPU: {', '.join(_fast.resample_kernels())}")
    base = statistics.median(c for _, c in got["before (numpy integers)"])
    for name, rows in got.items():
        wall, cpu = [w for w, _ in rows], [c for _, c in rows]
        print(f"  {name:26s} wall {fmt(wall, 's')}  cpu {fmt(cpu, 's')}  cpu ratio to before {statistics.median(cpu) / base:.2f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--before", help="another tree's src folder, run the same way (e.g. the tree before a change)")
    ap.add_argument("--report", action="store_true", help="also time `goldeval report RUN_A --out page.html` (and --before's)")
    ap.add_argument("--short", action="store_true",
                    help="runs of short rows (make_short_corpus.py), recorded as coded blocks (format 3); the anchor reads "
                         "them through goldeval's public reader")
    ap.add_argument("--kernel", action="store_true", help="only time the bootstrap kernel in this process (before vs now)")
    args = ap.parse_args()
    if args.kernel:
        kernel(args.n, args.repeat)
        return

    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    db, a, b = runs(args.n, env, args.short)
    for run in (a, b):
        formats = block_formats(db, run)
        print(f"run {run}: {formats.pop(-1)} rows in `cases`, blocks by format: {formats}")
        if args.short and set(formats) != {3}:
            sys.exit(f"bench_compare: --short run {run} is not all format-3 blocks: {formats}")
    home_env = {**env, "GOLDEVAL_HOME": str(db.parent)}
    out_dir = HERE / "out" / ("short" if args.short else ".")
    out_dir.mkdir(parents=True, exist_ok=True)
    contenders = {
        "anchor": ([sys.executable, "-c", _ANCHOR_READER if args.short else _ANCHOR, str(db), a, b], env),
        "compare": ([sys.executable, "-m", "goldeval", "compare", a, b, "-q", "--out", str(out_dir / "cmp_this.json")], home_env),
    }
    if args.before:
        contenders["before"] = ([sys.executable, "-m", "goldeval", "compare", a, b, "-q", "--out", str(out_dir / "cmp_before.json")],
                                {**home_env, "PYTHONPATH": args.before})
    if args.report:
        contenders["report"] = ([sys.executable, "-m", "goldeval", "report", a, "-q", "--out", str(out_dir / "page_this.html")], home_env)
        if args.before:
            contenders["report_before"] = ([sys.executable, "-m", "goldeval", "report", a, "-q", "--out",
                                            str(out_dir / "page_before.html")], {**home_env, "PYTHONPATH": args.before})
    load0 = os.getloadavg()
    got: dict[str, list[dict[str, float]]] = {k: [] for k in contenders}
    for _ in range(args.repeat):
        for name, (cmd, e) in contenders.items():
            got[name].append(measure(cmd, e))
    load1 = os.getloadavg()
    print(f"goldeval compare of two {args.n:,}-case free-text runs ({'short rows, format 3' if args.short else 'long notes'}), {args.repeat} interleaved rounds; "
          f"load average {load0[0]:.2f} before, {load1[0]:.2f} after, on {os.cpu_count()} CPUs")
    anchor = {k: statistics.median(r[k] for r in got["anchor"]) for k in ("wall", "cpu", "rss_mib")}
    for name, rows in got.items():
        wall, cpu, rss = ([r[k] for r in rows] for k in ("wall", "cpu", "rss_mib"))
        print(f"  {name:8s} wall {fmt(wall, 's')}  cpu {fmt(cpu, 's')}  peak {fmt(rss, 'MiB')}  "
              f"ratio to anchor: wall {statistics.median(wall) / anchor['wall']:.2f}, cpu {statistics.median(cpu) / anchor['cpu']:.2f}")
    if args.before:
        for a_name, b_name in (("compare", "before"), ("report", "report_before")):
            if a_name in got and b_name in got:
                ratio = {k: statistics.median(r[k] for r in got[a_name]) / statistics.median(r[k] for r in got[b_name])
                         for k in ("wall", "cpu", "rss_mib")}
                print(f"  {a_name} / {b_name}: wall {ratio['wall']:.2f}, cpu {ratio['cpu']:.2f}, peak {ratio['rss_mib']:.2f}")
        same_bytes = (out_dir / "cmp_this.json").read_bytes() == (out_dir / "cmp_before.json").read_bytes()
        this = json.loads((out_dir / "cmp_this.json").read_text())
        before = json.loads((out_dir / "cmp_before.json").read_text())
        ci_this, ci_before = this["scores"]["bootstrap"], before["scores"]["bootstrap"]
        print(f"  the two JSONs are {'the same bytes' if same_bytes else 'DIFFERENT'} (bootstrap interval included: "
              f"{ci_this['ci']} (this) vs {ci_before['ci']} (before))")
    if args.report and args.before:
        same = (out_dir / "page_this.html").read_bytes() == (out_dir / "page_before.html").read_bytes()
        print(f"  the two pages are {'the same bytes' if same else 'DIFFERENT (the run-F1 interval is drawn from the new stream)'}")


if __name__ == "__main__":
    main()
