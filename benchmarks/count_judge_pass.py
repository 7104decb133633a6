#!/usr/bin/env python3
"""Instructions of one cold in-process judge pass over a Spider case file, counted by Valgrind on the pass alone
(issue 15): a figure that repeats to the instruction, for changes too small for count_judge_instructions.py
(whose start-up noise is about 0.3 % of a case).

    python benchmarks/count_judge_pass.py [--before OLD/src] [--file dinsql-gpt4]

Each tree is run once under ``valgrind --tool=callgrind --collect-atstart=no --toggle-collect=_operator_call``:
the process judges the file's first case (imports, warm-up: not counted), clears the lru caches, then judges the
whole file inside ``operator.call`` (the only call of it in a judge run), so only that pass is counted. The case
files are the conversion of ``DATA/spider_<file>_cases.jsonl`` (examples/spider/to_cli.convert). The figure
ranks Python changes; it is no CPU time (see count_judge_instructions.py).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO / "examples" / "spider"))
sys.path.insert(0, str(HERE))


#: The counted process: argv = src, cases dir, db dir.
_PASS = """
import operator, sys
sys.path.insert(0, sys.argv[1])
from goldeval.answers import AnswerConfig
from goldeval.pipeline.files import judge_file
work, cfg = sys.argv[2], AnswerConfig(timeout_s=10.0, db_dir=sys.argv[3])
judge_file(work + "/one_cases.jsonl", work + "/one_attempts.jsonl", config=cfg)
for m in list(sys.modules.values()):
    if getattr(m, "__name__", "").startswith(("goldeval", "sqlglot")):
        for v in list(vars(m).values()):
            if hasattr(v, "cache_clear"):
                v.cache_clear()
operator.call(judge_file, work + "/full_cases.jsonl", work + "/full_attempts.jsonl", config=cfg)
"""


def _count(cmd: list[str]) -> int:
    """Instructions of the pass alone (collection toggled on ``operator.call``)."""
    from count_judge_instructions import _count as count

    return count(cmd, ("--collect-atstart=no", "--toggle-collect=_operator_call"))


def main(argv: list[str] | None = None) -> int:
    from judge_spider import DEFAULT_DATA
    from to_cli import convert

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--file", default="dinsql-gpt4", help="spider_<FILE>_cases.jsonl")
    ap.add_argument("--before", type=Path, help="the src folder of an older tree, counted too")
    args = ap.parse_args(argv)
    if shutil.which("valgrind") is None:
        print("valgrind is not installed (apt-get install valgrind); nothing counted.", file=sys.stderr)
        return 2
    path = args.data / f"spider_{args.file}_cases.jsonl"
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    trees = {"after": REPO / "src"} | ({"before": args.before.resolve()} if args.before else {})
    with tempfile.TemporaryDirectory() as tmp:
        for name, subset in (("full", rows), ("one", rows[:1])):
            cases, attempts = convert(subset)
            (Path(tmp) / f"{name}_cases.jsonl").write_text("".join(json.dumps(x) + "\n" for x in cases))
            (Path(tmp) / f"{name}_attempts.jsonl").write_text("".join(json.dumps(x) + "\n" for x in attempts))
        cmds = {t: [sys.executable, "-c", _PASS, str(src), tmp, str(args.data / "database")] for t, src in trees.items()}
        with ThreadPoolExecutor(max_workers=2) as pool:
            counts = dict(zip(cmds, pool.map(_count, cmds.values())))
    print(f"{path.name}: {len(rows)} cases, one cold in-process pass (callgrind, the pass alone)")
    for t, n in counts.items():
        print(f"  {t:6s}: {n / 1e6:,.1f} M instructions, {n / len(rows) / 1e6:.3f} M a case")
    if args.before:
        print(f"  after / before: {counts['after'] / counts['before']:.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
