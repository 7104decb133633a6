"""Spark `local[2]` after start-up and as a whole process, against `goldeval score --workers 2`, interleaved.

Usage (Java 17 and the spark extra installed):

    python benchmarks/make_short_corpus.py --n 1000000 --out /tmp/short_1m.jsonl
    python benchmarks/bench_spark_fold.py /tmp/short_1m.jsonl --rounds 3 [--old] [--rdd-warm]

Each round runs, one after the other (paired: the machine's load falls on both alike):

- ``workers2``: a fresh ``goldeval score FILE --workers 2 --no-store -q --out R --out-format jsonl`` process;
- ``spark``: a fresh process that starts the ``local[2]`` session (:func:`goldeval.engines.spark.session`), runs
  an empty job (one empty task per core through ``mapInArrow``: the JVM, the Python workers started), runs a
  second empty job (``empty``: what any job costs on the warm session), then runs the same ``goldeval score FILE
  --engine spark --no-store ...`` command in-process on that session (``score``). After start-up = ``score`` −
  ``empty``; whole = the process's wall time.
- ``cli``: a fresh ``goldeval score FILE --engine spark --spark-master local[2] --no-store -q --out R --out-format
  jsonl`` process, what a user runs: its session starts while the driver reads the file (issue 31 item 3's "whole
  process" goal is this arm's wall against ``workers2``'s).
- ``--before-src DIR``: also the ``cli`` arm with another tree's code (``PYTHONPATH=DIR``), for a before/after ratio.
- ``--rdd-warm``: also, after ``spark``, the same Spark process once more where a first trivial RDD job (two tasks,
  ``parallelize(range(2), 2).map(...)``: the job kind a fold job is) runs after the empty jobs and before ``score``,
  timed apart (``rdd_first``); its ``score`` − ``empty`` is then the scoring on a session whose RDD path and Python
  workers are warm (the empty jobs are DataFrame/Arrow jobs and leave the RDD path's first-job cost to ``score``).
- ``--old``: also the per-case DataFrame path (``aggregate(score_path(...))``) in the same warm process, timed
  after ``score`` (``old``), for the before/after ratio. The whole-process wall then leaves ``old`` out; its CPU
  and memory do not (run without ``--old`` for those).

CPU and memory are counted over the whole process tree (the JVM, its Python daemon and workers, the local
engine's forkserver and workers) by `benchmarks/measure.py`: CPU from ``RUSAGE_CHILDREN`` of a child subreaper that
waits for every descendant (nothing lost between samples), memory the largest sum of the tree's PSS, sampled every
0.2 s (the figures in benchmarks/README.md's item 3 section were taken before the merge with psutil's per-process
CPU times and the RSS sum, which counts pages shared by forked workers more than once). The 1-minute load average is read before and after each run. Every
run's ``whole_note_f1_mean``, precision and recall must equal the ``--workers 2`` run's to the last digit.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile

from measure import measure

_SPARK = r"""
import json, sys, time
from goldeval.engines import spark as gs
from goldeval.cli import main
t0 = time.perf_counter()
spark = gs.session("local[2]")
spark.sparkContext.setLogLevel("ERROR")
def empty(batches):
    yield from ()
def job():
    t = time.perf_counter()
    spark.range(0, 2, 1, 2).mapInArrow(empty, "id long").collect()
    return time.perf_counter() - t
job()
started = time.perf_counter() - t0
e = job()
rdd = None
if sys.argv[4] == "1":  # --rdd-warm: the session's first RDD job (what a fold job is), timed apart
    t = time.perf_counter()
    spark.sparkContext.parallelize(range(2), 2).map(lambda x: x).collect()
    rdd = time.perf_counter() - t
t = time.perf_counter()
try:
    main(["score", sys.argv[1], "--engine", "spark", "--spark-master", "local[2]", "--no-store", "-q", "--out",
          sys.argv[2], "--out-format", "jsonl"], standalone_mode=False)
except SystemExit as exc:  # the CLI exits with the gates' code
    assert not exc.code, exc.code
s = time.perf_counter() - t
old = None
if sys.argv[3] == "1":
    t = time.perf_counter()
    agg = gs.aggregate(gs.score_path(spark, sys.argv[1], "token_f1"))["aggregate"]
    old = time.perf_counter() - t
    print("OLD_AGG", json.dumps(agg), file=sys.stderr)
print("TIMES", json.dumps({"startup": started, "empty": e, "score": s, "old": old, "rdd_first": rdd}), file=sys.stderr)
"""


def _last_line(path: str) -> bytes:
    with open(path, "rb") as fh:
        fh.seek(0, os.SEEK_END)
        size = fh.tell()
        fh.seek(max(0, size - (1 << 16)))
        return fh.read().rstrip(b"\n").rsplit(b"\n", 1)[-1]


def _tree_run(cmd: list[str], env: dict | None = None) -> dict:
    """Run *cmd*; wall seconds, CPU seconds of its whole process tree (every descendant waited for: the JVM, Python
    workers, a forkserver's children), peak memory (MiB, the sampled PSS sum over the tree) and its stderr, measured
    by :func:`measure.measure`."""
    load0 = os.getloadavg()[0]
    m = measure(cmd, env, interval=0.2)
    if m.exit_code != 0:
        raise SystemExit(f"{cmd}: exit {m.exit_code}\n{m.stderr[-3000:]}")
    return {"wall": m.wall_s, "cpu": m.cpu_s, "peak_mib": m.tree_pss_mib, "load": (load0, os.getloadavg()[0]),
            "stderr": m.stderr}


def _figures(out: str) -> tuple:
    agg = json.loads(_last_line(out))["aggregate"]
    return agg["whole_note_f1_mean"], agg["whole_note_precision_mean"], agg["whole_note_recall_mean"], agg["n_rows"]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("file")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--before-src", metavar="DIR", help="also the `cli` arm with PYTHONPATH=DIR (another tree's src, "
                    "e.g. `git archive COMMIT src | tar -x -C DIR/..` with its _fast built), after this tree's")
    ap.add_argument("--rdd-warm", action="store_true", help="also the Spark process with a first RDD job before score")
    ap.add_argument("--old", action="store_true", help="also time the per-case DataFrame path in the Spark process")
    args = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "r.jsonl")
        for r in range(args.rounds):
            w = _tree_run([sys.executable, "-m", "goldeval", "score", args.file, "--workers", "2", "--no-store", "-q",
                           "--out", out, "--out-format", "jsonl"])
            wf = _figures(out)
            os.remove(out)
            s = _tree_run([sys.executable, "-c", _SPARK, args.file, out, "1" if args.old else "0", "0"])
            sf = _figures(out)
            os.remove(out)
            assert sf == wf, f"Spark {sf} != --workers 2 {wf}"
            warm = None
            if args.rdd_warm:
                sw = _tree_run([sys.executable, "-c", _SPARK, args.file, out, "0", "1"])
                swf = _figures(out)
                os.remove(out)
                assert swf == wf, f"Spark (RDD path warm) {swf} != --workers 2 {wf}"
                warm = json.loads(next(x for x in sw["stderr"].splitlines() if x.startswith("TIMES ")).split(" ", 1)[1])
            cli = [sys.executable, "-m", "goldeval", "score", args.file, "--engine", "spark", "--spark-master", "local[2]",
                   "--no-store", "-q", "--out", out, "--out-format", "jsonl"]
            c = _tree_run(cli)
            cf = _figures(out)
            os.remove(out)
            assert cf == wf, f"Spark command {cf} != --workers 2 {wf}"
            b = None
            if args.before_src:
                b = _tree_run(cli, {**os.environ, "PYTHONPATH": os.path.abspath(args.before_src)})
                bf = _figures(out)
                os.remove(out)
                assert bf == wf, f"Spark command (before) {bf} != --workers 2 {wf}"
            times = json.loads(next(x for x in s["stderr"].splitlines() if x.startswith("TIMES ")).split(" ", 1)[1])
            if args.old:
                old = json.loads(next(x for x in s["stderr"].splitlines() if x.startswith("OLD_AGG ")).split(" ", 1)[1])
                assert (old["whole_note_f1_mean"], old["whole_note_precision_mean"], old["whole_note_recall_mean"],
                        old["n_rows"]) == wf
            after = times["score"] - times["empty"]
            s["wall"] -= times["old"] or 0  # (the old path's run is not part of the whole process a user runs)
            row = {"round": r + 1, "workers2": w, "spark": s, "cli": c, "before": b, "times": times, "after": after,
                   "warm": warm}
            rows.append(row)
            print(f"round {r + 1}: --workers 2 {w['wall']:.1f} s wall, {w['cpu']:.1f} s CPU, {w['peak_mib']:.0f} MiB "
                  f"(load {w['load'][0]:.1f}->{w['load'][1]:.1f}) | spark whole {s['wall']:.1f} s wall, {s['cpu']:.1f} s "
                  f"CPU, {s['peak_mib']:.0f} MiB (load {s['load'][0]:.1f}->{s['load'][1]:.1f}); start-up "
                  f"{times['startup']:.1f} s, empty job {times['empty']:.2f} s, score {times['score']:.1f} s, after "
                  f"start-up {after:.1f} s = {after / w['wall']:.2f}x; whole {s['wall'] / w['wall']:.2f}x"
                  + (f"; old path {times['old']:.1f} s = {times['old'] / times['score']:.2f}x the new" if args.old else "")
                  + f" | spark command {c['wall']:.1f} s wall, {c['cpu']:.1f} s CPU, {c['peak_mib']:.0f} MiB (load "
                  f"{c['load'][0]:.1f}->{c['load'][1]:.1f}) = {c['wall'] / w['wall']:.2f}x wall, {c['cpu'] / w['cpu']:.2f}x CPU"
                  + (f" | before: {b['wall']:.1f} s wall, {b['cpu']:.1f} s CPU (load {b['load'][0]:.1f}->{b['load'][1]:.1f}) = "
                     f"{b['wall'] / w['wall']:.2f}x wall, {b['cpu'] / w['cpu']:.2f}x CPU" if b else "")
                  + (f" | RDD path warm: first RDD job {warm['rdd_first']:.2f} s, score {warm['score']:.2f} s, empty "
                     f"{warm['empty']:.2f} s, after start-up {warm['score'] - warm['empty']:.2f} s = "
                     f"{(warm['score'] - warm['empty']) / w['wall']:.2f}x" if warm else ""),
                  flush=True)
    med = statistics.median
    loads = [x for row in rows for k in ("workers2", "spark", "cli", "before") if row[k] for x in row[k]["load"]]
    print()
    print(f"{os.path.basename(args.file)}, {wf[3]:,} rows, {args.rounds} paired rounds; whole_note_f1_mean {wf[0]!r} "
          "on both, every round")
    print(f"after start-up / --workers 2 wall: median {med(r['after'] / r['workers2']['wall'] for r in rows):.2f} "
          f"({min(r['after'] / r['workers2']['wall'] for r in rows):.2f}-{max(r['after'] / r['workers2']['wall'] for r in rows):.2f})")
    print(f"whole process / --workers 2 wall: median {med(r['spark']['wall'] / r['workers2']['wall'] for r in rows):.2f}; "
          f"CPU {med(r['spark']['cpu'] / r['workers2']['cpu'] for r in rows):.2f}; peak tree RSS "
          f"{med(r['spark']['peak_mib'] for r in rows):.0f} MiB vs {med(r['workers2']['peak_mib'] for r in rows):.0f} MiB")
    print(f"spark command (a fresh `goldeval score --engine spark` process) / --workers 2: wall median "
          f"{med(r['cli']['wall'] / r['workers2']['wall'] for r in rows):.2f} ("
          f"{min(r['cli']['wall'] / r['workers2']['wall'] for r in rows):.2f}-"
          f"{max(r['cli']['wall'] / r['workers2']['wall'] for r in rows):.2f}); CPU median "
          f"{med(r['cli']['cpu'] / r['workers2']['cpu'] for r in rows):.2f}; peak tree "
          f"{med(r['cli']['peak_mib'] for r in rows):.0f} MiB")
    if args.before_src:
        print(f"spark command with --before-src's code / --workers 2: wall median "
              f"{med(r['before']['wall'] / r['workers2']['wall'] for r in rows):.2f} ("
              f"{min(r['before']['wall'] / r['workers2']['wall'] for r in rows):.2f}-"
              f"{max(r['before']['wall'] / r['workers2']['wall'] for r in rows):.2f}); CPU median "
              f"{med(r['before']['cpu'] / r['workers2']['cpu'] for r in rows):.2f}")
    if args.rdd_warm:
        ratios = [(r["warm"]["score"] - r["warm"]["empty"]) / r["workers2"]["wall"] for r in rows]
        print(f"after start-up with the RDD path warm / --workers 2 wall: median {med(ratios):.2f} "
              f"({min(ratios):.2f}-{max(ratios):.2f}); the first RDD job itself: median "
              f"{med(r['warm']['rdd_first'] for r in rows):.2f} s")
    if args.old:
        print(f"old per-case path / new: median {med(r['times']['old'] / r['times']['score'] for r in rows):.2f}")
    print(f"1-minute load average around the runs: median {med(loads):.1f}, {min(loads):.1f}-{max(loads):.1f}")


if __name__ == "__main__":
    main()
