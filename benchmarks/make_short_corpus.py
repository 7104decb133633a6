#!/usr/bin/env python3
"""Short-row corpora for the memory and speed figures: N rows of about a dozen tokens each, fast enough for 10M.

``../shared/bench/make_corpus.py`` writes long clinical notes (~300 tokens) and takes minutes per million rows; the
memory figures of ``benchmarks/README.md`` need 1M and 10M *short* rows, where the per-row overhead (ids, records,
per_example) dominates, not the tokenizing. Same ``(--n, --seed)`` → byte-identical output (numpy's PCG64).

Each row: ``{"id": "r<number>", "prediction": "...", "reference": "..."}``; the reference has 8–16 tokens drawn from
a 2,000-word vocabulary (words, numbers such as ``138/86`` and ``7.1``, hyphenated terms), the prediction is a noisy
copy (each token replaced with probability 0.3, one token dropped or added), so token F1 spreads over about
0.5–1.0. About 210 bytes a row: 1M rows ≈ 213 MB, 10M ≈ 2.1 GB.

With ``--labels`` it writes a labels file instead: ``{"id", "gold", "pred"}`` with ``--n-labels`` labels (the
prediction equals gold with probability 0.8), for ``goldeval labels``.

Usage:
    python benchmarks/make_short_corpus.py --n 1000000 --out /tmp/short_1m.jsonl
    python benchmarks/make_short_corpus.py --n 10000000 --out /tmp/short_10m.jsonl
    python benchmarks/make_short_corpus.py --labels --n 1000000 --out /tmp/labels_1m.jsonl
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

_BLOCK = 100_000


def _vocabulary(rng: np.random.Generator, size: int = 2000) -> np.ndarray:
    syllables = ["ab", "ca", "de", "fi", "go", "hu", "ja", "ke", "li", "mo", "nu", "pa", "qui", "ro", "su", "ta", "vi",
                 "we", "xo", "yu", "ze"]
    words: list[str] = []
    seen: set[str] = set()
    while len(words) < size:
        kind = rng.random()
        if kind < 0.1:
            w = f"{rng.integers(90, 200)}/{rng.integers(50, 120)}"
        elif kind < 0.2:
            w = f"{rng.integers(1, 40)}.{rng.integers(0, 10)}"
        elif kind < 0.3:
            w = "-".join("".join(rng.choice(syllables, 2)) for _ in range(2))
        else:
            w = "".join(rng.choice(syllables, int(rng.integers(1, 4))))
        if w not in seen:
            seen.add(w)
            words.append(w)
    return np.array(words, dtype=object)


def write_text_rows(n: int, seed: int, out) -> None:
    """Write *n* free-text rows (see the module docstring) to the binary file *out*."""
    rng = np.random.default_rng(seed)
    vocab = _vocabulary(rng)
    done = 0
    while done < n:
        k = min(_BLOCK, n - done)
        lengths = rng.integers(8, 17, size=k)
        ref_idx = rng.integers(0, len(vocab), size=(k, 16))
        replace = rng.random((k, 17)) < 0.3
        swap_idx = rng.integers(0, len(vocab), size=(k, 17))
        edit = rng.integers(0, 3, size=k)  # 0 keep length, 1 drop the last token, 2 add one
        lines = []
        for i in range(k):
            m = int(lengths[i])
            ref = vocab[ref_idx[i, :m]]
            pred_idx = np.where(replace[i, :m], swap_idx[i, :m], ref_idx[i, :m])
            if edit[i] == 1:
                pred_idx = pred_idx[:-1]
            elif edit[i] == 2:
                pred_idx = np.append(pred_idx, swap_idx[i, 16])
            lines.append(
                f'{{"id":"r{done + i}","prediction":"{" ".join(vocab[pred_idx])}","reference":"{" ".join(ref)}"}}\n'
            )
        out.write("".join(lines).encode("ascii"))
        done += k


def write_label_rows(n: int, seed: int, n_labels: int, out) -> None:
    """Write *n* label rows ``{"id", "gold", "pred"}`` with *n_labels* labels to the binary file *out*."""
    rng = np.random.default_rng(seed)
    names = np.array([f"label{j:03d}" for j in range(n_labels)], dtype=object)
    done = 0
    while done < n:
        k = min(_BLOCK, n - done)
        gold = rng.integers(0, n_labels, size=k)
        pred = np.where(rng.random(k) < 0.8, gold, rng.integers(0, n_labels, size=k))
        g, p = names[gold], names[pred]
        out.write("".join(f'{{"id":"r{done + i}","gold":"{g[i]}","pred":"{p[i]}"}}\n' for i in range(k)).encode("ascii"))
        done += k


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, required=True, help="rows to write")
    ap.add_argument("--seed", type=int, default=20261201)
    ap.add_argument("--out", required=True, help="output file ('-' for stdout)")
    ap.add_argument("--labels", action="store_true", help="write a labels file instead of free-text pairs")
    ap.add_argument("--n-labels", type=int, default=20, help="distinct labels (with --labels)")
    args = ap.parse_args(argv)
    if args.n < 1:
        ap.error("--n must be at least 1")
    fh = sys.stdout.buffer if args.out == "-" else open(args.out, "xb")  # never overwrite a file
    try:
        if args.labels:
            write_label_rows(args.n, args.seed, args.n_labels, fh)
        else:
            write_text_rows(args.n, args.seed, fh)
    finally:
        if fh is not sys.stdout.buffer:
            fh.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
