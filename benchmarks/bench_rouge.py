#!/usr/bin/env python3
"""ROUGE and semantic similarity at 100,000 pairs: goldeval's scorers against Google's rouge-score, interleaved (issue 30).

    python benchmarks/bench_rouge.py [--n 100000] [--rounds 2] [--sample rouge2=2000,rougeL=500,rougeLsum=500]
        [--semantic] [--work DIR]

Corpus: ``/work/shared/bench/make_corpus.py --n N`` (seed 20240501; notes of ~250-300 words, ~4 KB a pair;
``GOLDEVAL_SHARED`` moves the folder). Each arm runs in a fresh process, measured by ``os.wait4`` from a small
process that is a child subreaper (``PR_SET_CHILD_SUBREAPER``), so the CPU seconds (user + system) of the whole
process tree count: goldeval's scoring workers and rouge-score-rs's threads included.

Arms, per ROUGE variant:

- **goldeval**: ``goldeval score CORPUS --scorer VARIANT --no-store -q --out FILE`` over all N pairs (the CLI end to
  end: reading, per-case records, the exact means, the results file);
- **rouge-score**: a Python loop over the same JSONL, ``RougeScorer([VARIANT]).score(reference, prediction)``, the
  F-measures kept: over all N pairs for ``rouge1``, and over the first ``--sample`` pairs for the others, whose
  pure-Python cost is too high for N (rouge-score's LCS takes ~40 ms a pair on these notes: 100,000 pairs of
  ``rougeL`` would take more than an hour).

The speed ratio is rouge-score's CPU seconds per pair (its loop only: reading and scoring, its start-up left out)
over goldeval's (the whole process tree, start-up included) (both measured on the same machine in the same
rounds, ABBA order). The numbers are checked in the same run: every F-measure rouge-score computed equals goldeval's
per-example ``whole_note.f1`` of the same row, to the last digit (exit 1 otherwise). ``--semantic`` adds one
``goldeval score --scorer semantic_similarity`` run over all N pairs (no baseline: its speed on 100,000 pairs).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from measure import measure

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
SHARED = Path(os.environ.get("GOLDEVAL_SHARED", REPO.parent / "shared"))
VARIANTS = ("rouge1", "rouge2", "rougeL", "rougeLsum")

#: rouge-score over the first argv[3] pairs of argv[1] (variant argv[2]); the F-measures and the CPU seconds of the
#: loop (reading and scoring, without the interpreter's and rouge-score's start-up) to argv[4] as JSON.
_ROUGE_SCORE = (
    "import itertools, json, sys, time\n"
    "from rouge_score import rouge_scorer\n"
    "t = time.process_time()\n"
    "path, kind, n, out = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]\n"
    "sc = rouge_scorer.RougeScorer([kind], use_stemmer=False)\n"
    "f = []\n"
    "with open(path, encoding='utf-8') as fh:\n"
    "    for line in itertools.islice(fh, n):\n"
    "        row = json.loads(line)\n"
    "        f.append(sc.score(row['reference'], row['prediction'])[kind].fmeasure)\n"
    "json.dump({'f': f, 'loop_cpu': time.process_time() - t}, open(out, 'w'))\n"
)


def run_once(cmd: list[str]) -> tuple[float, float, float]:
    """``(wall s, CPU s of the process tree, peak RSS MiB of its largest process)`` of *cmd* (:func:`measure.measure`);
    raises when it fails."""
    m = measure(cmd, {**os.environ, "PYTHONPATH": str(REPO / "src")})
    if m.exit_code != 0:
        raise SystemExit(f"bench_rouge: {' '.join(cmd)} exited {m.exit_code}\n{m.stderr[-3000:]}")
    return m.wall_s, m.cpu_s, m.largest_rss_mib


def spread(xs: list[float], fmt: str = ".1f") -> str:
    return f"{statistics.median(xs):{fmt}} ({min(xs):{fmt}}–{max(xs):{fmt}})"


def load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--sample", default="rouge2=2000,rougeL=500,rougeLsum=500",
                    help="rouge-score's pairs per variant (default N for a variant not named)")
    ap.add_argument("--variants", default=",".join(VARIANTS))
    ap.add_argument("--semantic", action="store_true", help="also time semantic_similarity over the N pairs")
    ap.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "goldeval_bench_rouge")
    args = ap.parse_args(argv)
    args.work.mkdir(parents=True, exist_ok=True)
    corpus = args.work / f"corpus_{args.n}.jsonl"
    if not corpus.exists():
        subprocess.run([sys.executable, str(SHARED / "bench" / "make_corpus.py"), "--n", str(args.n), "--out", str(corpus)],
                       check=True)
    sample = {k: int(v) for k, v in (kv.split("=") for kv in args.sample.split(",") if kv)}
    variants = [v for v in args.variants.split(",") if v]
    goldeval = [sys.executable, "-m", "goldeval"]
    print(f"corpus: {corpus} ({args.n:,} pairs, {corpus.stat().st_size / 1e6:.0f} MB); {args.rounds} rounds, ABBA; "
          f"CPU {os.cpu_count()}; load {load()}")
    res: dict[tuple[str, str], list[tuple[float, float, float]]] = {}
    ok = True
    loops: dict[str, list[float]] = {}
    for rnd in range(args.rounds):
        for variant in variants:
            k = min(sample.get(variant, args.n), args.n)
            out = args.work / f"gold_{variant}.json"
            ref_out = args.work / f"rs_{variant}.json"
            arms = {
                "goldeval": goldeval + ["score", str(corpus), "--scorer", variant, "--no-store", "-q", "--out", str(out)],
                "rouge-score": [sys.executable, "-c", _ROUGE_SCORE, str(corpus), variant, str(k), str(ref_out)],
            }
            order = list(arms) if rnd % 2 == 0 else list(arms)[::-1]
            for arm in order:
                if arm == "goldeval" and out.exists():
                    out.unlink()  # (an output never overwrites a file: goldeval refuses an existing one only if it is an input)
                res.setdefault((variant, arm), []).append(run_once(arms[arm]))
                print(f"  round {rnd + 1} {variant:9s} {arm:11s} wall {res[(variant, arm)][-1][0]:7.1f} s  "
                      f"CPU {res[(variant, arm)][-1][1]:7.1f} s", flush=True)
            # the same numbers: rouge-score's F of each of its rows equals goldeval's whole_note.f1 of that row
            got = json.loads(ref_out.read_text())
            theirs = got["f"]
            loops.setdefault(variant, []).append(got["loop_cpu"])
            ours = [e["whole_note"]["f1"] for e in json.loads(out.read_text())["per_example"][:len(theirs)]]
            same = ours == theirs
            ok = ok and same
            print(f"  round {rnd + 1} {variant:9s} equal to rouge-score on its {len(theirs):,} rows: {same}", flush=True)
    print(f"load after: {load()}")
    print()
    print("| variant | rouge-score pairs | rouge-score CPU s, process (loop) | ms/pair (loop) | goldeval pairs | goldeval CPU s "
          "| ms/pair | goldeval wall s | goldeval peak RSS | speed-up, CPU per pair (loop only) |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for variant in variants:
        k = min(sample.get(variant, args.n), args.n)
        rs, gd = res[(variant, "rouge-score")], res[(variant, "goldeval")]
        rs_cpu, gd_cpu, loop = [r[1] for r in rs], [g[1] for g in gd], loops[variant]
        # rouge-score's loop only (its start-up left out, goldeval's counted): the ratio errs against goldeval
        ratio = [(a / k) / (b / args.n) for a, b in zip(loop, gd_cpu)]
        print(f"| {variant} | {k:,} | {spread(rs_cpu)} ({spread(loop)}) | {1000 * statistics.median(loop) / k:.2f} | {args.n:,} | "
              f"{spread(gd_cpu)} | {1000 * statistics.median(gd_cpu) / args.n:.3f} | {spread([g[0] for g in gd])} | "
              f"{statistics.median([g[2] for g in gd]):.0f} MiB | {spread(ratio)}× |")
    if args.semantic:
        out = args.work / "gold_semantic.json"
        if out.exists():
            out.unlink()
        wall, cpu, rss = run_once(goldeval + ["score", str(corpus), "--scorer", "semantic_similarity", "--no-store", "-q",
                                              "--out", str(out)])
        mean = json.loads(out.read_text())["aggregate"]["semantic_similarity_mean"]
        print(f"\nsemantic_similarity over {args.n:,} pairs: wall {wall:.1f} s, CPU {cpu:.1f} s "
              f"({1000 * cpu / args.n:.2f} ms/pair), peak RSS {rss:.0f} MiB; mean {mean:.4f}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
