"""What the resume fixes (hF, issue 31 follow-up) cost an uninterrupted run: none is expected (the warnings of reused
cases are read again only when a run is resumed; the worker count is only recorded), and this checks it.

Two source trees side by side, interleaved (A B A B…), each round on a fresh store: ``goldeval labels`` (store on)
of N label rows of which 1 in 20 has no prediction (each warns), and ``goldeval score --workers 2 --no-texts`` of
N/10 free-text rows. Printed: the median and range of the per-round ratios new/old of wall and of CPU over the
whole process tree (:mod:`measure`), and the load.

    python benchmarks/bench_resume_paths.py OLD_SRC NEW_SRC [--rows 400000] [--rounds 5]

OLD_SRC, NEW_SRC: the ``src`` directories of the two trees (e.g. a ``git archive`` of the base commit with its
``_fast`` build copied in, and this worktree's ``src``).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from measure import load_average, measure, paired_ratios  # noqa: E402


def _inputs(tmp: Path, rows: int) -> tuple[Path, Path]:
    rng = random.Random(31)
    labels, score = tmp / "labels.jsonl", tmp / "score.jsonl"
    with labels.open("w") as fh:
        for i in range(rows):
            row = {"id": f"c{i:07d}", "gold": rng.choice(("pos", "neg"))}
            if i % 20 != 7:
                row["pred"] = rng.choice(("pos", "neg"))
            fh.write(json.dumps(row) + "\n")
    vocab = [f"w{i}" for i in range(500)]
    with score.open("w") as fh:
        for i in range(rows // 10):
            ref = rng.choices(vocab, k=30)
            fh.write(json.dumps({"id": f"r{i}", "prediction": " ".join(ref[:20]), "reference": " ".join(ref)}) + "\n")
    return labels, score


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("old_src")
    ap.add_argument("new_src")
    ap.add_argument("--rows", type=int, default=400_000)
    ap.add_argument("--rounds", type=int, default=5)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        labels, score = _inputs(tmp, a.rows)
        commands = {"labels": ["labels", str(labels), "--positive", "pos", "-q"],
                    "score": ["score", str(score), "--workers", "2", "--no-texts", "-q"]}
        got: dict[str, dict[str, list]] = {k: {"old": [], "new": []} for k in commands}
        print("load before:", load_average())
        for r in range(a.rounds):
            for name, args in commands.items():
                for arm, src in (("old", a.old_src), ("new", a.new_src)) if r % 2 == 0 else (("new", a.new_src), ("old", a.old_src)):
                    db = tmp / f"{name}-{arm}-{r}.db"
                    env = {**os.environ, "PYTHONPATH": src}
                    m = measure([sys.executable, "-m", "goldeval", *args, "--store", str(db)], env)
                    if m.exit_code != 0:
                        raise SystemExit(f"{name} ({arm}) exited {m.exit_code}")
                    got[name][arm].append(m)
        print("load after:", load_average())
        print("| command | rounds | wall new/old, median (range) | CPU new/old, median (range) |")
        print("|---|---|---|---|")
        for name, arms in got.items():
            w = paired_ratios([m.wall_s for m in arms["new"]], [m.wall_s for m in arms["old"]])
            c = paired_ratios([m.cpu_s for m in arms["new"]], [m.cpu_s for m in arms["old"]])
            print(f"| {name} | {a.rounds} | {w[0]:.3f} ({w[1]:.3f}–{w[2]:.3f}) | {c[0]:.3f} ({c[1]:.3f}–{c[2]:.3f}) |")


if __name__ == "__main__":
    main()
