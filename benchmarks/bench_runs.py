#!/usr/bin/env python3
"""Benchmark: does recording a run in the run store slow free-text scoring of 100k rows by more than 20%?

Scores the same corpus with ``goldeval score FILE --no-store`` (the anchor) and ``goldeval score FILE --store
<fresh db>`` (recording every case, batched commits), alternating A/B for ``--repeat`` rounds so that load on
the machine hits both alike, and prints each time, the medians, the minima and their ratios. Also times the
library call alone (``score_file(..., recorder=None)`` vs with a Recorder whose writer process commits the
batches, as the CLI records large inputs), without process start-up.

The corpus is made by ``../shared/bench/make_corpus.py`` (deterministic; ``--n 100000``) and cached under
``benchmarks/out/``. Usage::

    python benchmarks/bench_runs.py [--n 100000] [--repeat 5] [--corpus PATH]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
SHARED = Path(os.environ.get("GOLDEVAL_SHARED", REPO.parent / "shared"))


def corpus(n: int, path: str | None) -> Path:
    if path:
        return Path(path)
    out = HERE / "out" / f"corpus_{n}.jsonl"
    if not out.exists():
        out.parent.mkdir(parents=True, exist_ok=True)
        gen = SHARED / "bench" / "make_corpus.py"
        if not gen.exists():
            sys.exit(f"bench_runs: {gen} not found; pass --corpus PATH or set GOLDEVAL_SHARED.")
        print(f"generating {out} with {gen} --n {n} …", file=sys.stderr)
        subprocess.run([sys.executable, str(gen), "--n", str(n), "--out", str(out)], check=True)
    return out


_TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _proc_table() -> dict[int, tuple[int, float]]:
    """pid -> (parent pid, user + system CPU seconds so far), from /proc (Linux)."""
    out: dict[int, tuple[int, float]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as fh:
                stat = fh.read().decode()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()
        out[int(entry)] = (int(fields[1]), (int(fields[11]) + int(fields[12])) / _TICK)
    return out


def cli_time(args: list[str]) -> tuple[float, float | None, float | None]:
    """Wall seconds of one CLI run, the CPU seconds of its whole process tree (the scorer, its worker processes,
    the run store's writer process) and of the scorer's own (main) process, sampled from /proc every 20 ms — less
    sensitive to other load on the machine than wall time. CPU is ``None`` where /proc is not available."""
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-c", "from goldeval.cli import main; main()", *args], stdout=subprocess.DEVNULL)
    if not os.path.isdir("/proc"):
        proc.wait()
        return time.perf_counter() - t0, None, None
    seen: dict[int, float] = {}
    while proc.poll() is None:
        table = _proc_table()
        tree = {proc.pid}
        grew = True
        while grew:
            grew = False
            for pid, (ppid, _) in table.items():
                if ppid in tree and pid not in tree:
                    tree.add(pid)
                    grew = True
        for pid in tree:
            if pid in table:
                seen[pid] = max(seen.get(pid, 0.0), table[pid][1])
        time.sleep(0.02)
    wall = time.perf_counter() - t0
    if proc.returncode:
        sys.exit(f"bench_runs: goldeval {' '.join(args)} exited {proc.returncode}")
    return wall, sum(seen.values()), seen.get(proc.pid)


def lib_time(path: Path, db: Path | None, workers: int | None) -> float:
    from goldeval.pipeline.files import score_file

    if db is None:
        t0 = time.perf_counter()
        score_file(path, workers=workers)
        return time.perf_counter() - t0
    from goldeval.runs.recorder import start_run
    from goldeval.runs.store import RunMeta, RunStore

    with RunStore(db) as store:
        t0 = time.perf_counter()
        # as the CLI records a large input: a writer process commits the batches beside the scoring
        rec = start_run(store, RunMeta(run_key="bench", scorer_name="token_f1", scorer_version="1", dataset_hash="-"), background="process")
        score_file(path, recorder=rec, workers=workers)
        rec.close()
        return time.perf_counter() - t0


def report(name: str, plain: list[float], rec: list[float]) -> None:
    mp, mr = statistics.median(plain), statistics.median(rec)
    print(f"{name}: without store {', '.join(f'{t:.2f}' for t in plain)} s; with store {', '.join(f'{t:.2f}' for t in rec)} s")
    print(f"{name}: median {mp:.2f} s → {mr:.2f} s, ratio {mr / mp:.3f}; min {min(plain):.2f} s → {min(rec):.2f} s, ratio {min(rec) / min(plain):.3f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--corpus", default=None)
    ap.add_argument("--skip-cli", action="store_true")
    ap.add_argument("--skip-lib", action="store_true")
    ap.add_argument("--workers", type=int, default=None, help="scoring processes (default: every core, as the CLI)")
    a = ap.parse_args()
    path = corpus(a.n, a.corpus)
    print(f"corpus {path} ({path.stat().st_size / 1e6:.0f} MB), {os.cpu_count()} cores, workers {a.workers or 'all'}, "
          f"repeat {a.repeat}, load average {os.getloadavg()[0]:.2f}")
    extra = [] if a.workers is None else ["--workers", str(a.workers)]
    with tempfile.TemporaryDirectory() as tmp:
        if not a.skip_lib:
            plain: list[float] = []
            rec: list[float] = []
            for i in range(a.repeat):
                plain.append(lib_time(path, None, a.workers))
                rec.append(lib_time(path, Path(tmp) / f"lib{i}.db", a.workers))
            report("library score_file", plain, rec)
        if not a.skip_cli:
            plain, rec, plain_cpu, rec_cpu, plain_main, rec_main = [], [], [], [], [], []
            for i in range(a.repeat):
                w, c, m = cli_time(["score", str(path), "--no-store", "-q", *extra])
                plain.append(w)
                plain_cpu.append(c)
                plain_main.append(m)
                w, c, m = cli_time(["score", str(path), "--store", str(Path(tmp) / f"cli{i}.db"), "-q", *extra])
                rec.append(w)
                rec_cpu.append(c)
                rec_main.append(m)
            report("CLI goldeval score (wall)", plain, rec)
            if None not in plain_cpu + rec_cpu:
                report("CLI goldeval score (CPU of the process tree)", plain_cpu, rec_cpu)
            if None not in plain_main + rec_main:
                report("CLI goldeval score (CPU of the scorer's main process)", plain_main, rec_main)
    print(f"load average at the end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
