"""Benchmark: scoring string labels for one positive label, against scikit-learn measured in the same run.

    python benchmarks/bench_labels.py [--sizes 200,1000000] [--rounds 7]
    python benchmarks/bench_labels.py --cli FILE --positive LABEL [--rounds 5]
    python benchmarks/bench_labels.py --parts FILE --positive LABEL [--rounds 3]
    python benchmarks/bench_labels.py --store-cost FILE --positive LABEL [--rounds 5] [--before OLD/src]

Library (default): ``goldeval.score_labels(gold, pred, positive="escalate")`` against the anchor
``sklearn.metrics.precision_recall_fscore_support(gold, pred, average="binary", pos_label="escalate")`` on the same
Python lists of strings, at each of ``--sizes``. The two are interleaved (alternating which goes first), each
timed over enough calls to take ~0.2 s; the report gives the median and min–max over ``--rounds`` rounds of each
and of the per-round ratio anchor / goldeval (> 1: goldeval faster). The values must be identical (precision,
recall, F1 compared with ==); exit status 1 if they differ.

Command (``--cli``): ``goldeval labels FILE --positive LABEL --no-store --out /dev/null`` (and the same without
``--out``: the console summary only) in a fresh process, wall and CPU
seconds, against the anchor of reading the same file with orjson and scoring it with scikit-learn's
``precision_recall_fscore_support`` and ``cohen_kappa_score`` (what the command reports), interleaved, medians and
min–max. Files: ``make_short_corpus.py --labels``.

Parts (``--parts``): in-process CPU seconds of the pieces of that command, each alone, median (min–max) over
``--rounds``: the id pass (``scan_jsonl_ids``), the scoring pass (reading + pair counts) without per_example, the
same with the per_example JSON handed to a sink that drops it, and the whole ``score_label_path`` writing --out to
/dev/null; each with the C paths and, for comparison, without them (the Python definitions).

Store cost (``--store-cost``): ``goldeval labels FILE --positive LABEL -q`` recording the run (a fresh store each
round: the default, texts kept; and ``--no-texts``) against the same with ``--no-store``, interleaved (the order
alternates), each in a fresh process. Wall seconds; CPU of the whole process tree (the command, its forkserver and
the store's writer process) and the peak PSS summed over the tree, both from ``benchmarks/measure.py`` (a child
subreaper: every descendant is waited for and counted). Ratios store / no-store per round, median (min–max). Bytes a
case: the ``--no-texts`` store after ``VACUUM`` less an empty store after ``VACUUM``, over the cases recorded. Each
command runs with its modules' bytecode cached, as an installed goldeval (``PYTHONDONTWRITEBYTECODE`` is dropped from
its environment). ``--before SRC`` adds the same three arms run from another tree's ``src`` (``PYTHONPATH``), in the
same interleaved rounds, and their ratios.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time

from measure import measure


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


def _timed(fn, min_seconds: float = 0.2) -> tuple[float, object]:
    """Seconds per call of *fn*, over enough calls to take *min_seconds* (at least one), and its result."""
    calls, out = 0, None
    t0 = time.perf_counter()
    while True:
        out = fn()
        calls += 1
        took = time.perf_counter() - t0
        if took >= min_seconds:
            return took / calls, out


def _spread(xs: list[float], scale: float = 1.0, fmt: str = ".3g") -> str:
    return f"{statistics.median(xs) * scale:{fmt}} ({min(xs) * scale:{fmt}}–{max(xs) * scale:{fmt}})"


def library(sizes: list[int], rounds: int) -> bool:
    from sklearn.metrics import precision_recall_fscore_support

    from goldeval.labels import score_labels

    ok = True
    print(f"score_labels against sklearn precision_recall_fscore_support (binary, pos_label), {rounds} rounds, interleaved")
    print(f"  {'labels':>10} {'sklearn ms':>24} {'goldeval ms':>24} {'sklearn / goldeval':>22}  identical")
    for n in sizes:
        gold, pred = make_labels(n)
        t_sk, t_ge, ratio = [], [], []
        same = True
        for r in range(rounds):
            order = ("sk", "ge") if r % 2 == 0 else ("ge", "sk")
            got = {}
            for which in order:
                if which == "sk":
                    got[which] = _timed(lambda g=gold, p=pred: precision_recall_fscore_support(g, p, average="binary", pos_label="escalate"))
                else:
                    got[which] = _timed(lambda g=gold, p=pred: score_labels(g, p, positive="escalate"))
            (a, sk), (b, ge) = got["sk"], got["ge"]
            t_sk.append(a)
            t_ge.append(b)
            ratio.append(a / b)
            same = same and (ge.precision, ge.recall, ge.f1) == (float(sk[0]), float(sk[1]), float(sk[2]))
        ok = ok and same
        print(f"  {n:>10,} {_spread(t_sk, 1000):>24} {_spread(t_ge, 1000):>24} {_spread(ratio, 1, '.1f'):>22}  {same}")
    return ok


_ANCHOR = r"""
import sys, orjson
from sklearn.metrics import cohen_kappa_score, precision_recall_fscore_support
gold, pred = [], []
with open(sys.argv[1], "rb") as fh:
    for line in fh:
        row = orjson.loads(line)
        gold.append(row["gold"]); pred.append(row["pred"])
precision_recall_fscore_support(gold, pred, labels=[sys.argv[2]], average=None, zero_division=0.0)  # one positive against the rest, as goldeval labels
cohen_kappa_score(gold, pred)
"""


def command(path: str, positive: str, rounds: int) -> None:
    import resource
    import subprocess

    cli = [sys.executable, "-c", "from goldeval.cli import main; main()", "labels", path, "--positive", positive, "--no-store"]
    runs = {
        "goldeval labels --no-store": cli + ["--out", "/dev/null"],
        "  the same without --out": cli,
        "orjson + sklearn (anchor)": [sys.executable, "-c", _ANCHOR, path, positive],
    }
    times: dict[str, list[float]] = {k: [] for k in runs}
    cpu: dict[str, list[float]] = {k: [] for k in runs}
    for r in range(rounds):
        for name in (list(runs) if r % 2 == 0 else list(runs)[::-1]):
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            t0 = time.perf_counter()
            subprocess.run(runs[name], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            times[name].append(time.perf_counter() - t0)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu[name].append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    print(f"{path}: seconds, median (min–max) of {rounds} rounds, interleaved; 1-minute load average {os.getloadavg()[0]:.1f}")
    print(f"  {'':30s} {'wall':>22} {'CPU (user + system)':>22}")
    for name, xs in times.items():
        print(f"  {name:30s} {_spread(xs, 1, '.2f'):>22} {_spread(cpu[name], 1, '.2f'):>22}")
    a, g = times["orjson + sklearn (anchor)"], times["goldeval labels --no-store"]
    print(f"  ratio anchor / goldeval (wall): {_spread([x / y for x, y in zip(a, g)], 1, '.2f')}")


def _tree_run(cmd: list[str], env: dict[str, str]) -> tuple[float, float, int]:
    """Run *cmd*; ``(wall seconds, CPU seconds of its process tree, peak PSS bytes summed over the tree)``
    (:func:`measure.measure`)."""
    m = measure(cmd, env)
    if m.exit_code != 0:
        raise SystemExit(f"{' '.join(cmd)}: exit {m.exit_code}\n{m.stderr[-3000:]}")
    return m.wall_s, m.cpu_s, int(m.tree_pss_mib * 2**20)


def store_cost(path: str, positive: str, rounds: int, before: str | None = None) -> None:
    import shutil
    import tempfile

    cli = [sys.executable, "-c", "from goldeval.cli import main; main()", "labels", path, "--positive", positive, "-q"]
    runs = {"store (texts kept)": cli, "store --no-texts": cli + ["--no-texts"], "--no-store": cli + ["--no-store"]}
    # each arm starts as an installed goldeval does: its modules' bytecode cached (compiled once, not every run)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    envs = {name: env for name in runs}
    if before is not None:  # the same arms of another tree (its src folder), in the same interleaved rounds
        for name in list(runs):
            runs[f"before: {name}"] = runs[name]
            envs[f"before: {name}"] = {**env, "PYTHONPATH": os.path.abspath(before)}
    wall: dict[str, list[float]] = {k: [] for k in runs}
    cpu: dict[str, list[float]] = {k: [] for k in runs}
    rss: dict[str, list[float]] = {k: [] for k in runs}
    per_case: list[float] = []
    loads = []
    for r in range(rounds):
        for name in (list(runs) if r % 2 == 0 else list(runs)[::-1]):
            home = tempfile.mkdtemp(prefix="goldeval-bench-")
            try:
                w, c, m = _tree_run(runs[name], {**envs[name], "GOLDEVAL_HOME": home})
                wall[name].append(w)
                cpu[name].append(c)
                rss[name].append(m / 2**20)
                if name == "store --no-texts":
                    per_case.append(_bytes_a_case(os.path.join(home, "goldeval.db")))
            finally:
                shutil.rmtree(home, ignore_errors=True)
            loads.append(os.getloadavg()[0])
    print(f"{path}: goldeval labels -q, {rounds} rounds interleaved; 1-minute load average {min(loads):.1f}–{max(loads):.1f}")
    print(f"  {'':30s} {'wall s':>20} {'CPU s (tree)':>20} {'peak PSS MiB (tree)':>22}")
    for name in runs:
        print(f"  {name:30s} {_spread(wall[name], 1, '.2f'):>20} {_spread(cpu[name], 1, '.2f'):>20} {_spread(rss[name], 1, '.0f'):>22}")
    for prefix in ("", "before: ") if before is not None else ("",):
        base_w, base_c = wall[prefix + "--no-store"], cpu[prefix + "--no-store"]
        for name in (prefix + "store (texts kept)", prefix + "store --no-texts"):
            print(f"  {name} / {prefix}--no-store: wall {_spread([a / b for a, b in zip(wall[name], base_w)], 1, '.2f')}, "
                  f"CPU {_spread([a / b for a, b in zip(cpu[name], base_c)], 1, '.2f')}")
    print(f"  bytes a case in the store (--no-texts, after VACUUM, less the empty store): {_spread(per_case, 1, '.1f')}")


def _bytes_a_case(db: str) -> float:
    """Bytes a recorded case takes in the store *db*: its size after VACUUM less its size after VACUUM with every
    case deleted (the run rows kept), over the cases recorded."""
    import sqlite3

    con = sqlite3.connect(db, isolation_level=None)
    try:
        (n,) = con.execute("SELECT (SELECT count(*) FROM cases) + (SELECT coalesce(sum(n), 0) FROM case_blocks)").fetchone()
        sizes = []
        for step in ("full", "empty"):
            if step == "empty":
                con.execute("DELETE FROM cases")
                con.execute("DELETE FROM case_blocks")
            out = f"{db}.{step}"
            con.execute("VACUUM INTO ?", (out,))
            sizes.append(os.path.getsize(out))
    finally:
        con.close()
    return (sizes[0] - sizes[1]) / n


def parts(path: str, positive: str, rounds: int) -> None:
    from goldeval.io import ids
    from goldeval.labels import reader as labelfile
    from goldeval.io.resultsfile import ResultsFile

    fields = ("id", "gold", "pred")

    def scan(c: bool):
        return ids.scan_jsonl_ids(path, "id", labelfile.label_id, slow_decode=labelfile._strict_or_none, ids_as_text=c)[2]

    def stream(repeated, sink):
        rows = labelfile.JsonlLabelRows(path, fields, repeated)
        return labelfile.score_label_stream(rows, positive=positive, repeated=repeated, keep_per_example=False,
                                            on_example_lines=sink)

    def whole():
        with ResultsFile("/dev/null", "json") as w:
            w.begin({})
            w.close(labelfile.score_label_path(path, positive=positive, keep_per_example=False, refuse_empty=True,
                                               on_example_lines=w.example_lines))

    kernels = {m: {n: getattr(m, n) for n in names} for m, names in
               ((ids, ("_fast_scan_ids", "_fast_partition", "_fast_repeated_of")), (labelfile, ("_fast_label_lines",)))}

    def use_c(on: bool) -> None:
        for m, saved in kernels.items():
            for n, f in saved.items():
                setattr(m, n, f if on else None)

    print(f"{path}: in-process CPU seconds of the parts, median (min–max) of {rounds} rounds; "
          f"1-minute load average {os.getloadavg()[0]:.1f}")
    for c in (True, False):
        use_c(c)
        repeated = scan(c)
        jobs = {"id pass (scan_jsonl_ids)": lambda c=c: scan(c),
                "scoring pass, no per_example": lambda r=repeated: stream(r, None),
                "scoring pass + per_example JSON": lambda r=repeated: stream(r, lambda body, n: None),
                "score_label_path, --out /dev/null": whole}
        cpu: dict[str, list[float]] = {k: [] for k in jobs}
        for _ in range(rounds):
            for name, job in jobs.items():
                t0 = time.process_time()
                job()
                cpu[name].append(time.process_time() - t0)
        print(f"  {'C paths' if c else 'Python definitions (no C)'}:")
        for name, xs in cpu.items():
            print(f"    {name:36s} {_spread(xs, 1, '.2f'):>20}")
    use_c(True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="200,1000000")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--cli", metavar="FILE", help="time the goldeval labels command on FILE instead")
    ap.add_argument("--parts", metavar="FILE", help="in-process CPU of the parts of that command on FILE")
    ap.add_argument("--store-cost", metavar="FILE", help="goldeval labels on FILE with the store against --no-store")
    ap.add_argument("--before", metavar="SRC", help="with --store-cost: also the same arms run from this src folder "
                    "(another tree's, e.g. an export of main with its _fast built), interleaved")
    ap.add_argument("--positive", default="label003")
    ap.add_argument("--matrix", action="store_true", help="also time confusion_matrix against sklearn's (1e6 labels)")
    args = ap.parse_args()
    if args.cli:
        command(args.cli, args.positive, args.rounds)
        return 0
    if args.parts:
        parts(args.parts, args.positive, args.rounds)
        return 0
    if args.store_cost:
        store_cost(args.store_cost, args.positive, args.rounds, args.before)
        return 0
    ok = library([int(x) for x in args.sizes.split(",")], args.rounds)
    if args.matrix:
        from sklearn.metrics import confusion_matrix as sk_confusion_matrix

        from goldeval.labels import confusion_matrix

        gold, pred = make_labels(1_000_000)
        t_skm, skm = _timed(lambda: sk_confusion_matrix(gold, pred, labels=["approve", "escalate"]))
        t_gem, gem = _timed(lambda: confusion_matrix(gold, pred))
        same_m = gem.labels == ["approve", "escalate"] and gem.matrix == skm.tolist()
        print(f"  confusion_matrix 1e6: sklearn {t_skm * 1000:.1f} ms, goldeval {t_gem * 1000:.1f} ms, ratio {t_skm / t_gem:.2f}x, identical {same_m}")
        ok = ok and same_m
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
