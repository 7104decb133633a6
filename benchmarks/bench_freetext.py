"""Free-text scoring speed, measured in one run against the anchors a user would otherwise pick.

Usage (from the repo root, after `pip install -e ".[bench]"`):

    python benchmarks/bench_freetext.py            # 100k pairs (generated once into benchmarks/out/)
    python benchmarks/bench_freetext.py --n 20000  # smaller

The corpus comes from ../shared/bench/make_corpus.py (seeded; ~250-token references, ~300-token predictions).
Anchors, measured here in the same run (these machines are noisy, so only ratios are reported):
  - squad: a SQuAD-v1.1-style token F1 (normalize_answer + Counter), written below as that script does it;
  - rouge1: rouge-score's rouge1 F-measure (no stemming);
  - tokenize-only: the openscribe regex over both texts, no counting (the issue's "limit to approach");
  - straightforward: regex tokens + Counter intersection of our own rule, the correctness reference (max abs
    difference of every per-row F1 must be <= 1e-12).
Also: peak RSS of `goldeval score` on the file (streamed), and `goldeval --help` wall time.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import re
import statistics
import string
import subprocess
import sys
import time
from pathlib import Path

import orjson

HERE = Path(__file__).resolve().parent
SHARED = Path(os.environ.get("GOLDEVAL_SHARED", HERE.parent.parent / "shared"))


def corpus(n: int) -> Path:
    out = HERE / "out" / f"corpus_{n}.jsonl"
    if not out.exists():
        out.parent.mkdir(exist_ok=True)
        subprocess.run([sys.executable, str(SHARED / "bench" / "make_corpus.py"), "--n", str(n), "--out", str(out)], check=True)
    return out


# --- anchors ---------------------------------------------------------------------------------------------------

def _squad_normalize(s: str) -> str:
    s = s.lower()
    exclude = set(string.punctuation)
    s = "".join(ch for ch in s if ch not in exclude)
    s = re.sub(r"\b(a|an|the)\b", " ", s)
    return " ".join(s.split())


def squad_f1(prediction: str, reference: str) -> float:
    p = _squad_normalize(prediction).split()
    g = _squad_normalize(reference).split()
    common = collections.Counter(p) & collections.Counter(g)
    same = sum(common.values())
    if same == 0:
        return 0.0
    pr, rc = same / len(p), same / len(g)
    return 2 * pr * rc / (pr + rc)


_RULE = re.compile(r"[a-z0-9]+(?:[.'/-][a-z0-9]+)*")


def straightforward_f1(prediction: str, reference: str) -> float:
    p = _RULE.findall(prediction.lower())
    g = _RULE.findall(reference.lower())
    if not p and not g:
        return 1.0
    if not p or not g:
        return 0.0
    same = sum((collections.Counter(p) & collections.Counter(g)).values())
    if same == 0:
        return 0.0
    pr, rc = same / len(p), same / len(g)
    return 2 * pr * rc / (pr + rc)


def rate(fn, path: Path, limit: int) -> tuple[float, list[float]]:
    """pairs/s of fn over the first *limit* rows, reading and decoding the JSONL as part of the work."""
    out = []
    t = time.perf_counter()
    with path.open("rb") as fh:
        for i, line in enumerate(fh):
            if i >= limit:
                break
            row = orjson.loads(line)
            out.append(fn(row["prediction"], row["reference"]))
    return len(out) / (time.perf_counter() - t), out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--anchor-rows", type=int, default=20_000, help="rows the slower anchors are timed on")
    args = ap.parse_args()
    from goldeval.pipeline.files import score_file

    path = corpus(args.n)
    res: dict[str, float] = {}
    # Peak RSS of the CLI scoring the file, measured inside a fresh process (RUSAGE_SELF) so that neither this
    # process's memory nor a fork of it is counted (Linux keeps the
    # high-water mark across exec, so this runs first, while this process is still small); the workers (each holds one 500-row chunk) are reported apart.
    probe = (
        "import resource, sys\nfrom goldeval.cli import main\n"
        f"sys.argv = ['goldeval', 'score', {str(path)!r}, '-q', '--out', {str(HERE / 'out' / 'bench_results.json')!r}]\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
    )
    rss = subprocess.run([sys.executable, "-c", probe], check=True, capture_output=True, text=True).stdout.split()
    peak_mb, child_mb = int(rss[-2]) / 1024, int(rss[-1]) / 1024

    res["squad"], _ = rate(squad_f1, path, args.anchor_rows)
    try:
        from rouge_score import rouge_scorer

        sc = rouge_scorer.RougeScorer(["rouge1"], use_stemmer=False)
        res["rouge1"], _ = rate(lambda p, r: sc.score(r, p)["rouge1"].fmeasure, path, args.anchor_rows // 4)
    except ImportError:
        print("rouge-score not installed (pip install -e '.[bench]'): rouge1 anchor skipped", file=sys.stderr)
    res["tokenize_only"], _ = rate(lambda p, r: (_RULE.findall(p.lower()), _RULE.findall(r.lower())), path, args.anchor_rows)

    t = time.perf_counter()
    one = score_file(path, workers=1)
    res["goldeval_1_core"] = args.n / (time.perf_counter() - t)
    t = time.perf_counter()
    two = score_file(path, workers=2)
    res["goldeval_2_cores"] = args.n / (time.perf_counter() - t)

    res["straightforward"], ref = rate(straightforward_f1, path, args.n)
    got = [r["whole_note"]["f1"] for r in one["per_example"]]
    assert len(got) == len(ref) == args.n, (len(got), len(ref))
    max_diff = max(abs(a - b) for a, b in zip(got, ref, strict=True))
    same_parallel = one["per_example"] == two["per_example"]

    helps = []
    for _ in range(5):
        t = time.perf_counter()
        subprocess.run([sys.executable, "-m", "goldeval", "--help"], check=True, capture_output=True)
        helps.append(time.perf_counter() - t)

    sq = res["squad"]
    print(f"corpus: {path.name} ({args.n} pairs); anchors timed on {args.anchor_rows} rows (rouge1 on a quarter)")
    print(f"{'what':<20}{'pairs/s':>12}{'× squad':>10}")
    for k, v in res.items():
        print(f"{k:<20}{v:>12,.0f}{v / sq:>10.2f}")
    print(f"goldeval 1 core / tokenize-only: {res['goldeval_1_core'] / res['tokenize_only']:.2f}")
    print(f"max |F1 goldeval - straightforward| over {args.n} rows: {max_diff:.3g} (must be <= 1e-12)")
    print(f"parallel per-example results identical to one core: {same_parallel}")
    print(f"peak RSS of `goldeval score --out` on the file: {peak_mb:.0f} MB main process (must stay < 200 MB); "
          f"largest worker/child {child_mb:.0f} MB")
    print(f"`goldeval --help`: median {statistics.median(helps) * 1000:.0f} ms over 5 runs (must be < 500 ms)")
    verdicts = {
        "1 core >= 3x squad": res["goldeval_1_core"] >= 3 * sq,
        "2 cores >= 5x squad": res["goldeval_2_cores"] >= 5 * sq,
        "max diff <= 1e-12": max_diff <= 1e-12,
        "peak RSS < 200 MB": peak_mb < 200,
        "--help < 0.5 s": statistics.median(helps) < 0.5,
    }
    for k, ok in verdicts.items():
        print(f"  [{'ok' if ok else 'FAIL'}] {k}")
    (HERE / "out").mkdir(exist_ok=True)
    (HERE / "out" / "bench_freetext.json").write_text(json.dumps({"rates": res, "max_diff": max_diff, "peak_rss_mb": peak_mb,
                                                                  "help_ms": statistics.median(helps) * 1000, "checks": verdicts}, indent=2))
    sys.exit(0 if all(verdicts.values()) else 1)


if __name__ == "__main__":
    main()
