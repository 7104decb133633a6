"""The README runs as written (issue 29 item 8): every fenced ``bash`` and ``python`` block, in README order, in one
fresh folder with one fresh run store, as a new user types them.

How a block is run:

* a ``bash`` block is one bash script (so ``eval``/``export``/``S=…`` carry from line to line), with each command's
  exit status recorded; ``pip install`` lines are left out (the test environment has the extras installed);
* a ``python`` block is written to a file and run by the venv's Python (the pytest example as a pytest file);
* the README's placeholders are bound to real things: ``RUN`` to a recorded run of the right kind, ``RUN_A``/``RUN_B``
  to two comparable runs, ``preds.jsonl`` / ``labels.jsonl`` / ``dod.toml`` to the bundled files copied under those
  names, the hosted model to the loopback fake OpenAI server (``GOLDEVAL_JUDGE_BASE_URL``), the team store
  ``$GOLDEVAL_STORE`` to a second SQLite store (its PostgreSQL form is tested in tests/postgres);
* the exit status each command must give is pinned in :data:`PLANS` (0 unless the README's comment says the gate
  fails), and where the README's comment states a figure (``0.4465 over 35``, ``19 match / 19 decided``) the
  command's output must show it.

A block this test does not know fails the test: a new README block must be added to :data:`PLANS`, with how it runs
or why it cannot (only: it reads from cloud storage, or the machine lacks what it needs, said in the skip).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "postgres"))

from fake_openai_server import FakeOpenAI  # noqa: E402
from pgserver import missing_reason  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
README = REPO / "README.md"
BIN = Path(sys.executable).parent


def _person_reviews(cwd: Path) -> None:
    """The README's "a person fills verdict, reviewer, note": every exported case gets a verdict (the first half
    match, the rest no_match: a reviewer who disagrees with some of the judge's calls)."""
    for name in ("review.jsonl", "audit.jsonl"):
        path = cwd / name
        if not path.is_file():
            continue
        rows = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]
        assert rows, f"{name}: the README's export wrote no case to review"
        for i, row in enumerate(rows):
            row.update(verdict="match" if i < (len(rows) + 1) // 2 else "no_match", reviewer="readme-test", note="checked")
        path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


def _slice_dod(cwd: Path) -> None:
    """The README's "dod.toml: the TOML below": the first ``toml`` block after the slices section's command block,
    written where the command reads it."""
    text = README.read_text(encoding="utf-8")
    at = text.index("### Per-slice metrics and gates")
    toml = re.search(r"^```toml\n(.*?)^```", text[at:], flags=re.S | re.M)
    assert toml, "the slices section has no toml block"
    (cwd.parent / "spider-din" / "dod.toml").write_text(toml.group(1), encoding="utf-8")


def _corrected_dod(cwd: Path) -> None:
    """The gate the README's comment names: ``pass_rate_corrected_low = { min = 0.7 }``."""
    (cwd / "corrected-dod.toml").write_text("[gates]\npass_rate_corrected_low = { min = 0.7 }\n", encoding="utf-8")


@dataclass
class Plan:
    """How one README block runs: exit statuses by command index (default 0), substitutions, figures its output
    must show (by command index), and a skip reason when it cannot run here."""

    exits: dict[int, int] = field(default_factory=dict)
    subs: dict[str, str] = field(default_factory=dict)
    shows: dict[int, list[str]] = field(default_factory=dict)
    skip: str | None = None
    needs: str | None = None  # "java" | "postgres" | "spider"
    #: What the README leaves to a person between two commands, done by the test after command *i* (the block then
    #: runs one command at a time).
    between: dict[int, Callable[[Path], None]] = field(default_factory=dict)


#: Every README block, keyed by its first command line's start. RUN-like placeholders are bound in ``subs`` (a
#: ``{judge_run}`` is filled in at run time with the latest recorded `judge` run).
PLANS: dict[str, Plan] = {
    # the set-up block: the venv and `pip install` are the test environment itself; the score is run
    "python3 -m venv .venv": Plan(subs={"python3 -m venv .venv && . .venv/bin/activate && pip install -e \".[test]\" && ": "",
                                        "python -m pytest": "true  # (the suite itself: not run from inside it)"},
                                  shows={0: ["0.279"]}),
    "goldeval score examples/data/openscribe_primock57_predictions.jsonl            #":
        Plan(shows={1: ["0.4465", "35"], 2: ["1.0"]}),
    "import goldeval\ngoldeval.token_f1": Plan(),
    "goldeval score examples/data/openscribe_acibench_predictions.jsonl --scorer rougeL":
        Plan(shows={0: ["rougeL_f1_mean", "0.292"], 1: ["0.309"], 2: ["0.597"]}),  # the screen rounds to 3 digits
    "from goldeval.freetext.rouge import rouge": Plan(),
    "goldeval labels examples/labels/pilot_claims.jsonl --gates examples/labels/dod.toml --out results.json":
        Plan(exits={0: 1, 1: 1}, shows={0: ["4 escalations missed", "0.722"]}),
    "goldeval judge examples/sql/cases.jsonl examples/sql/arm_a.jsonl --db examples/sql/clinic.sqlite --out a.json":
        Plan(exits={1: 1}, shows={0: ["19 match / 19 decided"]}),
    # ../shared is the shared data beside the checkout (a link in the test's folder); dod.toml: the README's TOML
    "python examples/spider/to_cli.py": Plan(needs="spider", subs={"/tmp/spider-din": "{tmp}/spider-din"},
                                             between={0: _slice_dod}, shows={1: ["world_1", "0.868", "0.911"]}),
    # cases.jsonl/attempts.jsonl: the clinic example; the calibration is what the review blocks above recorded
    "goldeval judge cases.jsonl attempts.jsonl --calibration": Plan(
        subs={"cases.jsonl attempts.jsonl": "examples/sql/cases.jsonl examples/sql/arm_a.jsonl --db examples/sql/clinic.sqlite",
              "--calibration RUN": "--calibration {rules_run}", "--gates dod.toml": "--gates corrected-dod.toml"},
        between={0: _corrected_dod}, shows={0: ["corrected"], 3: ["no better than chance"]},
        exits={3: 1}),  # the test's reviewer disagrees with the judge: no better than chance, so the gate fails
    "goldeval check-goldens": Plan(shows={0: ["21 healthy / 22 cases"]}),
    "eval \"$(python tests/postgres/pgserver.py start": Plan(needs="postgres", shows={4: ["19 match / 19 decided"]},
                                                          subs={"/tmp/goldeval-pg": "{tmp}/pg", "/tmp/clinic": "{tmp}/clinic"}),
    "export OPENAI_API_KEY=": Plan(),
    "goldeval llm-judge examples/sql/cases.jsonl examples/sql/arm_a.jsonl --rules rules.json": Plan(),
    "from goldeval.io import read_rows": Plan(),
    "import goldeval\nev = goldeval.evaluate": Plan(),
    "goldeval score examples/data/openscribe_primock57_predictions.jsonl --engine spark":
        Plan(needs="java", shows={0: ["0.279"]}),
    "from goldeval.engines import spark as gs": Plan(skip="reads s3a://bucket/preds.parquet, a cloud bucket; the same "
                                                          "calls on a local Parquet file are tests/spark/test_spark_engine.py's"),
    "goldeval score examples/data/openscribe_primock57_predictions.jsonl --arm openscribe-rule":
        Plan(exits={4: 2},  # --resume of a finished run: refused, as its comment says
             subs={"--resume RUN": "--resume {preds_run}", "RUN_A RUN_B": "{judge_pair}",
                   "runs delete RUN": "runs delete {unicode_run}"}),
    # the CI line compares verdicts: "latest" there is a judged run (after the runs section, the newest is a score)
    "goldeval runs tag latest baseline/main": Plan(subs={"runs tag latest baseline/main": "runs tag {judge_prev} baseline/main",
                                                         "compare baseline/main latest": "compare baseline/main {judge_run}"}),
    # the person said no_match where the (fake) LLM says match: replay reports the change, exit 1 as its comment says
    "goldeval review export RUN --out review.jsonl": Plan(subs={"RUN": "{rules_run}"}, between={0: _person_reviews}, exits={2: 1}),
    "goldeval replay examples/spider/regressions": Plan(shows={0: ["33 unchanged"]}),
    "goldeval review export RUN --all": Plan(subs={"[RUN ...] ": "", "[--regressions judge-regressions.jsonl]": "--regressions judge-regressions.jsonl",
                                                   "RUN": "{rules_run}"}, between={0: _person_reviews},
                                             # the test's reviewer disagrees with half the judge's calls (kappa 0.1),
                                             # and no case was the LLM's: the judge's definition of done fails
                                             exits={3: 1}, shows={3: ["judge_kappa", "FAIL"]}),
    # compare two runs of one kind: the newest two judged (the newest runs before this block mix scorers)
    "goldeval report latest --out report.html": Plan(subs={"RUN": "{judge_run}",
                                                           "report latest~1 --compare latest": "report {judge_prev} --compare {judge_run}",
                                                           "--arm arm-b": "--arm openscribe-rule"}),  # an arm this README recorded
    "goldeval labels examples/labels/pilot_claims.jsonl --gates examples/labels/dod.toml --junit":
        # 3: arm A → arm B, 15 passes became fails; 4: the test reviewer settled half the cases no_match
        Plan(exits={0: 1, 1: 1, 3: 1, 4: 1}, subs={"RUN_A RUN_B": "{judge_pair}"}),
    "goldeval judge examples/sql/cases.jsonl examples/sql/arm_b.jsonl --db examples/sql/clinic.sqlite --store":
        Plan(subs={"runs tag RUN": "runs tag {team_run}", "baseline/main RUN": "baseline/main {team_run}",
                   "runs export RUN": "runs export {judge_run}"}),  # the bundle: a run of the local store (no server)
    "# test_release.py": Plan(),
}


@dataclass
class Block:
    lang: str
    line: int
    text: str

    @property
    def key(self) -> str:
        code = "\n".join(commands(self.text))
        for key in PLANS:
            if code.startswith(key) or self.text.lstrip().startswith(key):
                return key
        return ""


def readme_blocks() -> list[Block]:
    text = README.read_text(encoding="utf-8")
    out = []
    for m in re.finditer(r"^```(bash|python)\n(.*?)^```", text, flags=re.S | re.M):
        out.append(Block(m.group(1), text.count("\n", 0, m.start()) + 1, m.group(2)))
    return out


def commands(text: str) -> list[str]:
    """The block's commands: continuations joined, comment-only and `pip install` lines left out."""
    out = []
    for line in text.replace("\\\n", " ").splitlines():
        if line.strip() and not line.lstrip().startswith("#") and not line.startswith("pip install"):
            out.append(line)
    return out


def test_every_readme_block_is_known_to_this_test():
    blocks = readme_blocks()
    assert len(blocks) >= 20
    unknown = [f"README line {b.line}: {b.text.splitlines()[0]}" for b in blocks if not b.key]
    assert not unknown, "README blocks this test does not run (add each to PLANS):\n" + "\n".join(unknown)
    keys = [b.key for b in blocks]
    assert len(set(keys)) == len(keys), "two README blocks share a PLANS key"
    assert sorted(set(keys)) == sorted(PLANS), f"PLANS keys no README block has: {sorted(set(PLANS) - set(keys))}"


def _run_ids(env: dict[str, str], cwd: Path) -> list[dict]:
    r = subprocess.run([str(BIN / "goldeval"), "runs", "list", "--json", "--limit", "0"], cwd=cwd, env=env,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


#: Placeholders bound once per README run (the run the review blocks reviewed is the one later blocks calibrate with).
_BOUND: dict[str, str] = {}


def _fill(text: str, env: dict[str, str], cwd: Path) -> str:
    runs = _run_ids(env, cwd)

    def newest(pred) -> str:
        for run in runs:
            if pred(run):
                return run["id"]
        raise AssertionError(f"no recorded run fits ({text!r}); runs: {[(r['id'], r.get('scorer_name'), r.get('arm')) for r in runs]}")

    fills = {"tmp": str(cwd.parent)}
    if "{judge_run}" in text:
        fills["judge_run"] = newest(lambda r: r.get("scorer_name") == "answer_judge")
    if "{judge_pair}" in text:  # RUN_A RUN_B of --fail-on-regression: two runs with verdicts (the newest two judged)
        judged = [r["id"] for r in runs if r.get("scorer_name") == "answer_judge" and r.get("status") == "finished"]
        assert len(judged) >= 2, runs
        fills["judge_pair"] = f"{judged[1]} {judged[0]}"
    if "{rules_run}" in text and "rules_run" in _BOUND:  # the run the README's reviews were recorded for
        fills["rules_run"] = _BOUND["rules_run"]
    elif "{rules_run}" in text:  # a judged run the LLM did not finish: its needs_human cases are a person's to review
        fills["rules_run"] = _BOUND["rules_run"] = newest(lambda r: r.get("scorer_name") == "answer_judge" and "gpt-4o-mini" not in json.dumps(r.get("config")))
    if "{judge_prev}" in text:
        fills["judge_prev"] = [r["id"] for r in runs if r.get("scorer_name") == "answer_judge"][1]
    if "{preds_run}" in text:
        fills["preds_run"] = newest(lambda r: r.get("arm") == "openscribe-rule")
    if "{unicode_run}" in text:
        fills["unicode_run"] = newest(lambda r: r.get("arm") == "unicode-rule")
    if "{team_run}" in text:
        team = json.loads((cwd / "results.json").read_text())
        fills["team_run"] = team["run"]["id"]
    for k, v in fills.items():
        text = text.replace("{" + k + "}", v)
    return text


def _bash(cmds: list[str], plan: Plan, env: dict[str, str], cwd: Path, line: int) -> None:
    """Run the block's commands; one bash script (variables carry), or, when a placeholder names a run an earlier
    command of the block records, one bash per command, each filled just before it runs."""
    head = ["exec 2>&1", "export PATH=" + str(BIN) + ":$PATH"]
    cmds = [cmd.replace("{tmp}", str(cwd.parent)) for cmd in _subbed(cmds, plan)]
    lazy = bool(plan.between) or any(re.search(r"\{[a-z_]+\}", cmd) for cmd in cmds)
    parts = [[i] for i in range(len(cmds))] if lazy else [list(range(len(cmds)))]
    stdout = ""
    for part in parts:
        script = list(head)
        for i in part:
            cmd = _fill(cmds[i], env, cwd) if re.search(r"\{[a-z_]+\}", cmds[i]) else cmds[i]
            script += [f"echo '@@begin {i}'", cmd, f"echo \"@@rc {i} $?\""]
        r = subprocess.run(["bash", "-c", "\n".join(script)], cwd=cwd, env=env, capture_output=True, text=True, timeout=900)
        stdout += r.stdout
        for i in part:
            if i in plan.between:
                plan.between[i](cwd)
    outputs: dict[int, str] = {}
    codes: dict[int, int] = {}
    current = None
    for ln in stdout.splitlines():
        m = re.fullmatch(r"@@begin (\d+)", ln)
        if m:
            current = int(m.group(1))
            outputs[current] = ""
            continue
        m = re.fullmatch(r"@@rc (\d+) (\d+)", ln)
        if m:
            codes[int(m.group(1))] = int(m.group(2))
            continue
        if current is not None:
            outputs[current] += ln + "\n"
    for i, cmd in enumerate(cmds):
        assert i in codes, f"README line {line}: command {i} ({cmd}) did not run:\n{stdout[-3000:]}"
        want = plan.exits.get(i, 0)
        assert codes[i] == want, (f"README line {line}: `{cmd}` exited {codes[i]}, the README says {want}:\n"
                                  f"{outputs.get(i, '')[-3000:]}")
        seen = outputs.get(i, "")
        out = re.search(r"--out (\S+)", cmd)  # a figure the README gives to more digits than the screen is in --out
        if out and (cwd / out.group(1)).is_file():
            seen += (cwd / out.group(1)).read_text(errors="replace")
        for figure in plan.shows.get(i, []):
            assert figure in seen, f"README line {line}: `{cmd}` does not show {figure!r}:\n{outputs.get(i, '')[-3000:]}"


def _subbed(cmds: list[str], plan: Plan) -> list[str]:
    out = []
    for cmd in cmds:
        for old, new in plan.subs.items():
            cmd = cmd.replace(old, new)
        out.append(cmd)
    return out


def _python(block: Block, plan: Plan, env: dict[str, str], cwd: Path) -> None:
    text = block.text
    for old, new in plan.subs.items():
        text = text.replace(old, new)
    if text.startswith("# test_release.py"):
        (cwd / "test_release.py").write_text(text)
        # its results.json is the pilot's labels results (the README's labels block wrote it; later blocks wrote
        # other runs' results there): written again as that block did
        r = subprocess.run([str(BIN / "goldeval"), "labels", "examples/labels/pilot_claims.jsonl", "--gates",
                            "examples/labels/dod.toml", "--out", "results.json", "--no-store", "-q"], cwd=cwd, env=env, capture_output=True, text=True, timeout=300)
        assert r.returncode == 1, r.stderr  # its gate fails, as in the README
        r = subprocess.run([str(BIN / "python"), "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_release.py"], cwd=cwd,
                           env=env, capture_output=True, text=True, timeout=300)
        # results.json is the pilot's labels results: the gate fails, as the README's comment shows
        assert r.returncode == 1, r.stdout[-3000:]
        assert "FAIL: 4 escalations missed (10.0 per 100) against the agreed 2 per 100" in r.stdout, r.stdout[-3000:]
        assert "2 failed" in r.stdout, r.stdout[-3000:]
        return
    path = cwd / f"readme_block_{block.line}.py"
    path.write_text(text)
    r = subprocess.run([str(BIN / "python"), str(path)], cwd=cwd, env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, f"README line {block.line}: python block failed:\n{r.stdout[-2000:]}\n{r.stderr[-3000:]}"


@pytest.fixture(scope="module")
def fake_llm():
    with FakeOpenAI() as srv:
        yield srv


def test_every_readme_block_runs_as_written(tmp_path: Path, fake_llm: FakeOpenAI):
    """The whole README in one folder, in order (later blocks use the runs earlier ones recorded)."""
    _BOUND.clear()
    work = tmp_path / "repo"
    work.mkdir()
    shutil.copytree(REPO / "examples", work / "examples")
    (work / "tests" / "postgres").mkdir(parents=True)
    shutil.copy2(REPO / "tests" / "postgres" / "pgserver.py", work / "tests" / "postgres" / "pgserver.py")
    # the README's placeholder file names, bound to the bundled files
    shutil.copy2(REPO / "examples" / "data" / "openscribe_primock57_predictions.jsonl", work / "preds.jsonl")
    shutil.copy2(REPO / "examples" / "labels" / "pilot_claims.jsonl", work / "labels.jsonl")
    shutil.copy2(REPO / "examples" / "labels" / "dod.toml", work / "dod.toml")
    # the README's ../shared (the data beside the checkout): a link to it beside the test's folder
    shared = Path(os.environ.get("GOLDEVAL_SHARED", REPO.parent / "shared")).resolve()
    if shared.is_dir():
        (tmp_path / "shared").symlink_to(shared)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GOLDEVAL_", "PG", "OPENAI_"))}
    env.update({"GOLDEVAL_HOME": str(tmp_path / "home"), "GOLDEVAL_JUDGE_BASE_URL": fake_llm.base_url,
                "OPENAI_API_KEY": "sk-test", "GOLDEVAL_STORE_TEAM": str(tmp_path / "team.db"),
                "GOLDEVAL_STORE": "", "GOLDEVAL_SPARK_CDS": "off", "PYTHONPATH": os.pathsep.join(str(Path(p).resolve()) for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p), "COLUMNS": "200"})
    env["PATH"] = f"{BIN}:{env.get('PATH', '')}"
    ran, skipped = [], []
    for block in readme_blocks():
        plan = PLANS[block.key]
        if plan.skip:
            skipped.append((block.line, plan.skip))
            continue
        if plan.needs == "spider" and not (shared / "data" / "spider" / "database").is_dir():
            skipped.append((block.line, f"the Spider data is absent ({shared}/data/spider)"))
            continue
        if plan.needs == "java" and shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
            skipped.append((block.line, "Java is absent (the Spark engine needs it)"))
            continue
        if plan.needs == "postgres" and (missing_reason() or shutil.which("psql") is None or shutil.which("createdb") is None):
            skipped.append((block.line, missing_reason() or "psql/createdb are absent"))
            continue
        if block.lang == "python":
            _python(block, plan, env, work)
        else:
            cmds = commands(block.text)
            if any("$GOLDEVAL_STORE" in c for c in cmds):
                cmds = [c.replace('"$GOLDEVAL_STORE"', '"$GOLDEVAL_STORE_TEAM"') for c in cmds]
            _bash(cmds, plan, env, work, block.line)
        ran.append(block.line)
    assert len(ran) >= 18, (ran, skipped)
    assert all(line for line, _ in skipped)
    print(f"README blocks run: {len(ran)}; skipped: {skipped}")
