#!/usr/bin/env python3
"""Texts kept with the run (issue 29 item 6): the store's bytes per case with and without the texts, and what
keeping them costs `goldeval score`.

Size: ``goldeval score`` of ``--n-size`` short rows (``make_short_corpus.py``: ~13 tokens a text, ~210 bytes a row)
into a fresh store, once with ``--no-texts`` (today's store: numbers and verdicts) and once without (the input file
kept, zstd level 3, in the ``run_inputs`` table); the store's file size after a WAL checkpoint, and the kept bytes.

Time: ``goldeval score`` of ``--n-time`` short rows, each command in its own process as a user runs it (``--out
/dev/null -q``), a fresh store every time; ``--no-store`` (anchor), ``--store --no-texts`` (the store before this
change) and ``--store`` (texts kept), interleaved round by round; wall seconds and the CPU seconds of the process
tree (``RUSAGE_CHILDREN``). Read the ratios: the machine is shared.

Usage:
    python benchmarks/bench_texts.py --n-size 1000000 --n-time 100000 --repeat 5
"""

from __future__ import annotations

import argparse
import os
import resource
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def corpus(n: int, folder: Path) -> Path:
    out = folder / f"short_{n}.jsonl"
    subprocess.run([sys.executable, str(HERE / "make_short_corpus.py"), "--n", str(n), "--out", str(out)], check=True)
    return out


def score(path: Path, store: Path | None, *extra: str) -> tuple[float, float]:
    """(wall s, CPU s of the process tree) of one ``goldeval score``."""
    args = [sys.executable, "-m", "goldeval", "score", str(path), "--out", os.devnull, "-q", *extra]
    args += ["--no-store"] if store is None else ["--store", str(store)]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(args, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def store_bytes(db: Path) -> tuple[int, int, int]:
    """(file bytes after a WAL checkpoint, kept input bytes compressed, kept input bytes as read)."""
    con = sqlite3.connect(db)
    con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    kept = con.execute("SELECT COALESCE(SUM(LENGTH(data)), 0), COALESCE(SUM(size), 0) FROM run_inputs").fetchone()
    con.close()
    return db.stat().st_size, int(kept[0]), int(kept[1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n-size", type=int, default=1_000_000)
    ap.add_argument("--n-time", type=int, default=100_000)
    ap.add_argument("--repeat", type=int, default=5)
    a = ap.parse_args()
    print(f"load average at start: {os.getloadavg()}")
    with tempfile.TemporaryDirectory(prefix="goldeval-bench-texts-") as tmp:
        folder = Path(tmp)
        if a.n_size:
            big = corpus(a.n_size, folder)
            print(f"\n## size: {a.n_size:,} short rows, input {big.stat().st_size:,} bytes")
            print("| store | file bytes | bytes a case | kept (compressed) | kept (as read) | wall s |")
            print("|---|---|---|---|---|---|")
            for label, extra in (("--no-texts", ("--no-texts",)), ("texts kept", ())):
                db = folder / f"size_{label.strip('-').replace(' ', '_')}.db"
                wall, _ = score(big, db, *extra)
                size, kept, plain = store_bytes(db)
                print(f"| {label} | {size:,} | {size / a.n_size:.1f} | {kept:,} | {plain:,} | {wall:.1f} |")
                db.unlink()
            big.unlink()
        if a.n_time:
            small = corpus(a.n_time, folder)
            modes = {"--no-store (anchor)": None, "store --no-texts": ("--no-texts",), "store, texts kept": ()}
            walls: dict[str, list[float]] = {m: [] for m in modes}
            cpus: dict[str, list[float]] = {m: [] for m in modes}
            for r in range(a.repeat):
                for m, extra in modes.items():
                    db = None if extra is None else folder / f"t{r}_{len(walls[m])}_{abs(hash(m))}.db"
                    w, c = score(small, db, *(extra or ()))
                    walls[m].append(w)
                    cpus[m].append(c)
            print(f"\n## time: {a.n_time:,} short rows, median of {a.repeat} (min–max); load average at end {os.getloadavg()}")
            print("| run | wall s | CPU s (process tree) | wall / anchor | wall / store --no-texts | CPU / store --no-texts |")
            print("|---|---|---|---|---|---|")
            base_w = statistics.median(walls["store --no-texts"])
            base_c = statistics.median(cpus["store --no-texts"])
            anchor = statistics.median(walls["--no-store (anchor)"])
            for m in modes:
                w, c = statistics.median(walls[m]), statistics.median(cpus[m])
                print(f"| {m} | {w:.2f} ({min(walls[m]):.2f}–{max(walls[m]):.2f}) | {c:.2f} | {w / anchor:.2f} | "
                      f"{w / base_w:.2f} | {c / base_c:.2f} |")


if __name__ == "__main__":
    main()
