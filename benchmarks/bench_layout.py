#!/usr/bin/env python3
"""Two trees, the same commands, interleaved: speed and memory of `score`, `labels`, `judge --db-dir` (issue 27).

    python benchmarks/bench_layout.py --before OLD/src [--after NEW/src] [--rounds 5] [--corpus-n 100000]
        [--label-rows 1000000] [--help-reps 10] [--data ../shared/data/spider] [--work DIR] [--only score,labels]

Issue 27 moved every module of the package (one package per concept) and asks that the commands keep today's speed
and memory. Every command below runs once per round from each tree, in a fresh process, with ``PYTHONPATH`` set to
that tree's ``src`` and the tree checked (``goldeval.__file__`` must lie in it, in the process that runs the CLI):

- ``score`` on PriMock57 (57 notes), on Open-Scribe's ACI-Bench predictions (40 notes), and on a corpus of
  ``/work/shared/bench/make_corpus.py --n N`` (seed 20240501: long notes; 100,000 rows take about 3 s), all
  ``--no-store``; the corpus also with the run store on (``--store`` a fresh file each run);
- ``labels`` on ``make_short_corpus.py --labels --n 1000000`` with the store on and ``--no-store``;
- ``judge --db-dir`` on one Spider prediction file converted by ``examples/spider/to_cli.py`` (343 cases, six
  databases), ``--no-store``;
- ``goldeval --help`` (start-up), ``--help-reps`` times a round.

Order: within a round each command runs before then after, and the next round after then before (ABBA), so a
drift of the machine's load falls on both trees alike. Each run is measured by ``os.wait4`` on the process:

- wall seconds;
- CPU seconds (user + system) of the whole process tree: the measuring process is a child subreaper
  (``PR_SET_CHILD_SUBREAPER``), so the processes a forkserver started (scoring workers, the run store's writer)
  come back to it when the forkserver ends, and it waits for every one; ``RUSAGE_CHILDREN`` then holds them all. A
  plain ``wait4`` on the command misses them: they are the forkserver's children, never waited for (7 s of a
  ``labels --store`` run's 18 s were the writer's, not counted);
- peak RSS: ``ru_maxrss`` of the same, the largest process of the tree (not the sum). Linux carries it
  across ``exec``, so it is never below the small measuring process's own size (printed; about 10 MiB).

The report: per command and tree, median (min–max); after/before as the ratio of medians and, per round, the
median (min–max) of the paired ratios (a round's two runs are next to each other, so that ratio is the fair one
on a shared machine). The load average is printed before and after.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from measure import measure

HERE = Path(__file__).resolve().parent
REPO = HERE.parent

#: Runs goldeval's CLI from the tree whose ``src`` is argv[1] (checked), with the remaining arguments.
_RUN = (
    "import sys; src = sys.argv.pop(1); sys.path.insert(0, src)\n"
    "import goldeval\n"
    "assert goldeval.__file__.startswith(src), goldeval.__file__\n"
    "from goldeval.cli import main\n"
    "sys.argv[0] = 'goldeval'\n"
    "main()\n"
)


def run_once(cmd: list[str], env: dict[str, str]) -> tuple[float, float, float, int]:
    """(wall s, CPU s of the process tree, peak RSS MiB of its largest process, exit code) of one run of *cmd*
    (:func:`measure.measure`)."""
    m = measure(cmd, env)
    if m.exit_code not in (0, 1):
        raise SystemExit(f"{' '.join(cmd[3:])}: exit {m.exit_code}\n{m.stderr[-3000:]}")
    return m.wall_s, m.cpu_s, m.largest_rss_mib, m.exit_code


def floor_mib() -> float:
    """Peak RSS MiB of the measuring process around ``python -c pass``: the floor of every peak reported."""
    return run_once([sys.executable, "-c", "pass"], dict(os.environ))[2]


def spread(xs: list[float], fmt: str = ".2f") -> str:
    return f"{statistics.median(xs):{fmt}} ({min(xs):{fmt}}–{max(xs):{fmt}})"


def load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", type=Path, required=True, help="the src folder of the reference tree")
    ap.add_argument("--after", type=Path, default=REPO / "src", help="the src folder of the tree measured (this one)")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--corpus-n", type=int, default=100_000, help="rows of make_corpus.py's corpus")
    ap.add_argument("--label-rows", type=int, default=1_000_000)
    ap.add_argument("--help-reps", type=int, default=10, help="`goldeval --help` runs per tree and round")
    ap.add_argument("--data", type=Path, default=Path("/work/shared/data/spider"), help="Spider folder (database/, *_cases.jsonl)")
    ap.add_argument("--spider-file", default="spider_dinsql-gpt4_cases.jsonl")
    ap.add_argument("--make-corpus", type=Path, default=Path("/work/shared/bench/make_corpus.py"))
    ap.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "goldeval-bench-layout",
                    help="folder for the generated inputs (kept between invocations) and the outputs")
    ap.add_argument("--only", default="", help="comma-separated command prefixes to run, e.g. 'score,labels'")
    args = ap.parse_args(argv)
    work = args.work
    work.mkdir(parents=True, exist_ok=True)
    trees = {"before": args.before.resolve(), "after": args.after.resolve()}

    corpus = work / f"corpus_{args.corpus_n}.jsonl"
    if not corpus.exists():
        subprocess.run([sys.executable, str(args.make_corpus), "--n", str(args.corpus_n), "--out", str(corpus)], check=True)
    labels = work / f"labels_{args.label_rows}.jsonl"
    if not labels.exists():
        subprocess.run([sys.executable, str(HERE / "make_short_corpus.py"), "--labels", "--n", str(args.label_rows),
                        "--out", str(labels)], check=True)
    sys.path.insert(0, str(REPO / "examples" / "spider"))
    from to_cli import convert  # the Spider rows as the CLI's cases and attempts files

    rows = [json.loads(line) for line in (args.data / args.spider_file).read_text(encoding="utf-8").splitlines() if line.strip()]
    cases, attempts = convert(rows)
    (work / "spider_cases.jsonl").write_text("".join(json.dumps(x) + "\n" for x in cases))
    (work / "spider_attempts.jsonl").write_text("".join(json.dumps(x) + "\n" for x in attempts))

    data = REPO / "examples" / "data"
    out = str(work / "out.json")
    commands: dict[str, list[str]] = {
        "score PriMock57 (57 notes)": ["score", str(data / "openscribe_primock57_predictions.jsonl"), "--no-store"],
        "score ACI-Bench (40 notes)": ["score", str(data / "openscribe_acibench_predictions.jsonl"), "--no-store"],
        f"score corpus {args.corpus_n:,} --no-store": ["score", str(corpus), "--no-store", "-q"],
        f"score corpus {args.corpus_n:,} store": ["score", str(corpus), "-q", "--store", "STORE"],
        f"labels {args.label_rows:,} --no-store": ["labels", str(labels), "--positive", "label003", "--no-store"],
        f"labels {args.label_rows:,} store": ["labels", str(labels), "--positive", "label003", "--store", "STORE"],
        f"judge --db-dir Spider ({len(rows)} cases)": [
            "judge", str(work / "spider_cases.jsonl"), str(work / "spider_attempts.jsonl"),
            "--db-dir", str(args.data / "database"), "--timeout", "10", "--no-store", "-q"],
        "goldeval --help": ["--help"],
    }
    if args.only:
        wanted = [w.strip() for w in args.only.split(",")]
        commands = {k: v for k, v in commands.items() if any(k.startswith(w) for w in wanted)}
    base_env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    print(f"load average before: {load()}; peak RSS floor (the measuring process) {floor_mib():.0f} MiB", flush=True)

    # Warm-up, not timed: each tree's bytecode caches written, files in the page cache.
    (work / "warm_cases.jsonl").write_text("".join(json.dumps(x) + "\n" for x in cases[:5]))
    (work / "warm_attempts.jsonl").write_text("".join(json.dumps(x) + "\n" for x in attempts[:5]))
    warm_labels = work / "warm_labels.jsonl"
    with labels.open("rb") as fh:
        warm_labels.write_bytes(b"".join(line for _, line in zip(range(1000), fh)))
    warm = [["score", str(data / "openscribe_primock57_predictions.jsonl"), "-q", "--store", "STORE"],
            ["labels", str(warm_labels), "--positive", "label003", "--store", "STORE"],
            ["judge", str(work / "warm_cases.jsonl"), str(work / "warm_attempts.jsonl"), "--db-dir",
             str(args.data / "database"), "--no-store", "-q"], ["--help"]]
    for src in map(str, trees.values()):
        for cli in warm:
            full = [str(work / f"store-warm-{time.monotonic_ns()}.db") if a == "STORE" else a for a in cli]
            run_once([sys.executable, "-c", _RUN, src, *full], {**base_env, "PYTHONPATH": src})
    for p in work.glob("store-*.db*"):
        p.unlink()
    for p in (corpus, labels):
        with p.open("rb") as fh:
            while fh.read(1 << 24):
                pass

    res: dict[tuple[str, str], list[tuple[float, float, float]]] = {}
    for r in range(args.rounds):
        order = list(trees) if r % 2 == 0 else list(trees)[::-1]
        for name, cli in commands.items():
            reps = args.help_reps if cli == ["--help"] else 1
            for tree in order:
                for _ in range(reps):
                    full = list(cli)
                    if "STORE" in full:
                        db = work / f"store-{tree}-{time.monotonic_ns()}.db"
                        full[full.index("STORE")] = str(db)
                    if cli != ["--help"]:
                        full += ["--out", out]
                        Path(out).unlink(missing_ok=True)
                    src = str(trees[tree])
                    wall, cpu, rss, _ = run_once([sys.executable, "-c", _RUN, src, *full], {**base_env, "PYTHONPATH": src})
                    res.setdefault((name, tree), []).append((wall, cpu, rss))
                    for p in work.glob("store-*.db*"):
                        p.unlink()
        print(f"round {r + 1}/{args.rounds} done, load {load()}", flush=True)

    print(f"load average after: {load()}")
    print(f"\n{args.rounds} rounds; median (min–max); ratio = after/before of the medians, then the paired ratios a round\n")
    print("| command | measure | before | after | ratio of medians | paired ratio, median (min–max) |")
    print("|---|---|---|---|---|---|")
    for name in commands:
        b, a = res[(name, "before")], res[(name, "after")]
        for i, (what, fmt) in enumerate((("wall s", ".3f"), ("CPU s, process tree", ".3f"), ("peak RSS MiB", ".0f"))):
            bv, av = [x[i] for x in b], [x[i] for x in a]
            paired = [y / x for x, y in zip(bv, av)]
            print(f"| {name} | {what} | {spread(bv, fmt)} | {spread(av, fmt)} | "
                  f"{statistics.median(av) / statistics.median(bv):.3f} | {spread(paired, '.3f')} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
