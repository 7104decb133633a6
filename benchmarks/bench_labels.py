"""Benchmark: scoring 1e6 string labels for one positive label, against scikit-learn measured in the same run.

    python benchmarks/bench_labels.py [--n 1000000] [--repeat 3]

Anchor: ``sklearn.metrics.precision_recall_fscore_support(gold, pred, average="binary", pos_label="escalate")``
on the same Python lists of strings. goldeval: ``goldeval.score_labels(gold, pred, positive="escalate")``.
The values must be identical (precision, recall, F1 compared with ==); the script prints the best-of-N times and
the ratio (anchor / goldeval: > 1 means goldeval is faster). Exit status 1 if the values differ or goldeval is
slower than the anchor.
"""

from __future__ import annotations

import argparse
import random
import sys
import time


def make_labels(n: int, seed: int = 20261102) -> tuple[list[str], list[str]]:
    """Two labels (sklearn's binary mode needs two), 20 % gold escalations; the model catches 90 % of them and
    escalates 4 % of the approvals."""
    rnd = random.Random(seed)
    gold, pred = [], []
    for _ in range(n):
        g = "escalate" if rnd.random() < 0.2 else "approve"
        if g == "escalate":
            p = "escalate" if rnd.random() < 0.9 else "approve"
        else:
            p = "escalate" if rnd.random() < 0.04 else g
        gold.append(g)
        pred.append(p)
    return gold, pred


def best_of(repeat: int, fn) -> tuple[float, object]:
    best, out = float("inf"), None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()

    from sklearn.metrics import precision_recall_fscore_support

    from goldeval.labels import score_labels

    gold, pred = make_labels(args.n)
    t_sk, sk = best_of(args.repeat, lambda: precision_recall_fscore_support(gold, pred, average="binary", pos_label="escalate"))
    t_ge, ge = best_of(args.repeat, lambda: score_labels(gold, pred, positive="escalate"))
    same = (ge.precision, ge.recall, ge.f1) == (float(sk[0]), float(sk[1]), float(sk[2]))
    print(f"n = {args.n:,} string labels (escalate / approve, positive 'escalate'), best of {args.repeat}")
    print(f"  scikit-learn precision_recall_fscore_support (binary, pos_label): {t_sk * 1000:8.1f} ms")
    print(f"  goldeval score_labels:                                            {t_ge * 1000:8.1f} ms")
    print(f"  ratio sklearn / goldeval: {t_sk / t_ge:.2f}x")
    print(f"  values identical: {same}  (precision {ge.precision!r}, recall {ge.recall!r}, f1 {ge.f1!r})")
    if not same:
        print(f"  sklearn gave {sk[:3]!r}", file=sys.stderr)

    # secondary: the full confusion matrix (all labels) against sklearn.metrics.confusion_matrix
    from sklearn.metrics import confusion_matrix as sk_confusion_matrix

    from goldeval.labels import confusion_matrix

    t_skm, skm = best_of(args.repeat, lambda: sk_confusion_matrix(gold, pred, labels=["approve", "escalate"]))
    t_gem, gem = best_of(args.repeat, lambda: confusion_matrix(gold, pred))
    same_m = gem.labels == ["approve", "escalate"] and gem.matrix == skm.tolist()
    print(f"  scikit-learn confusion_matrix: {t_skm * 1000:8.1f} ms; goldeval confusion_matrix: {t_gem * 1000:8.1f} ms; "
          f"ratio {t_skm / t_gem:.2f}x; identical: {same_m}")
    return 0 if same and same_m and t_ge <= t_sk else 1


if __name__ == "__main__":
    sys.exit(main())
