"""Progress of the long commands as a user sees it: a bar on stderr under a pseudo-terminal (``judge``,
``llm-judge``, ``labels``, ``replay``), plain lines every ``$GOLDEVAL_PROGRESS_INTERVAL`` seconds when stderr is not
a terminal (a CI log), nothing with ``-q``, and never a byte of it on stdout (the results are piped from there)."""

from __future__ import annotations

import json
import os
import pty
import re
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest
from fake_openai_server import FakeOpenAI, Reply

ROOT = Path(__file__).resolve().parents[2]
SQL = ROOT / "examples" / "sql"
LABELS = ROOT / "examples" / "labels" / "pilot_claims.jsonl"
SPIDER = ROOT / "examples" / "spider" / "regressions"
#: The rich bar's cursor hiding and the control sequence that starts each redraw.
ESC = re.compile(rb"\x1b\[[0-9;?]*[A-Za-z]")


def goldeval(*args: object) -> list[str]:
    return [sys.executable, "-c", "from goldeval.cli import main; main()", *[str(a) for a in args]]


def quiet_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("NO_COLOR", "FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE", "GOLDEVAL_PROGRESS_INTERVAL")}
    return {**env, "GOLDEVAL_HOME": str(tmp_path / "home"), "TERM": "xterm", "COLUMNS": "200", **extra}


def on_pty(args: list[object], env: dict[str, str]) -> tuple[int, bytes, str]:
    """Run goldeval with stderr on a pseudo-terminal and stdout on a pipe: (exit code, stdout, stderr as text with
    the terminal's control sequences taken out)."""
    main, sub = pty.openpty()
    try:
        proc = subprocess.Popen(goldeval(*args), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=sub, env=env)
    finally:
        os.close(sub)
    seen = b""
    deadline = time.monotonic() + 300
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([main], [], [], 0.1)
            if ready:
                try:
                    chunk = os.read(main, 65536)
                except OSError:  # the child closed its end (Linux: EIO)
                    break
                if not chunk:
                    break
                seen += chunk
            elif proc.poll() is not None:
                break
        out = proc.stdout.read() if proc.stdout else b""
        code = proc.wait(timeout=60)
    finally:
        os.close(main)
        if proc.poll() is None:
            proc.kill()
    return code, out, ESC.sub(b"", seen).decode("utf-8", "replace")


def piped(args: list[object], env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(goldeval(*args), stdin=subprocess.DEVNULL, capture_output=True, env=env, timeout=300)


def judge_args(*more: object) -> list[object]:
    return ["judge", SQL / "cases.jsonl", SQL / "arm_a.jsonl", "--db", SQL / "clinic.sqlite", "--no-store", *more]


def test_judge_draws_a_bar_on_a_terminal_and_keeps_stdout_clean(tmp_path):
    code, out, err = on_pty(judge_args("--out", "-"), quiet_env(tmp_path))
    assert code == 0, err
    # examples/sql/cases.jsonl holds 22 cases: the bar counts them to the end, with the rate and the time left
    assert "judging" in err and "22/22 cases" in err, err
    assert re.search(r"\d+\.\d/s", err), err
    results = json.loads(out)  # stdout is the results JSON and nothing else
    assert results["aggregate"]["n"] == 22
    assert b"judging" not in out and b"\x1b" not in out


def test_quiet_draws_no_bar(tmp_path):
    code, out, err = on_pty(judge_args("--out", str(tmp_path / "r.json"), "-q"), quiet_env(tmp_path))
    assert code == 0, err
    assert "judging" not in err and "/22" not in err, err


def test_labels_draws_a_bar_on_a_terminal(tmp_path):
    code, out, err = on_pty(["labels", LABELS, "--positive", "escalate", "--no-store", "--out", "-"], quiet_env(tmp_path))
    assert code == 0, err
    # pilot_claims.jsonl: 200 lines, one claim each (the README's example)
    assert "scoring labels" in err and "200/200 rows" in err, err
    assert json.loads(out)["aggregate"]["n"] == 200


def test_replay_draws_a_bar_on_a_terminal(tmp_path):
    args = ["replay", SPIDER / "judge-regressions.jsonl", "--cases", SPIDER / "cases.jsonl", "--db-dir",
            SPIDER / "databases", "--out", "-"]
    code, out, err = on_pty(args, quiet_env(tmp_path))
    # the shipped file holds 33 settled verdicts (tests/e2e/test_spider_regressions.py)
    assert "replaying" in err and "33/33 verdicts" in err, err
    assert json.loads(out)["n"] == 33, err
    assert code in (0, 1)


CASES = [{"id": f"c{i}", "question": "Revenue in 2024?", "golden": {"kind": "value", "columns": ["revenue"], "rows": [[1000 + i]]}}
         for i in range(3)]
ATTEMPTS = [{"id": f"c{i}", "text": f"About {1000 + i}.", "model": "answer-model"} for i in range(3)]


def write(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.mark.parametrize("terminal", [True, False])
def test_llm_judge_shows_calls_cache_failures_and_spend(tmp_path, terminal):
    pytest.importorskip("openai")
    cases, attempts = write(tmp_path / "cases.jsonl", CASES), write(tmp_path / "attempts.jsonl", ATTEMPTS)
    # The fake endpoint reports 120 prompt and 30 completion tokens a call (tests/fake_openai_server.py): at $1 and
    # $2 per million tokens a call costs 120e-6 + 60e-6 = $0.00018, three calls $0.00054, shown "$0.0005".
    with FakeOpenAI(default=lambda req: Reply()) as srv:
        args = ["llm-judge", cases, attempts, "--llm", "judge-model", "--base-url", srv.base_url, "--no-store",
                "--price-in", "1", "--price-out", "2", "--out", "-"]
        env = quiet_env(tmp_path, GOLDEVAL_PROGRESS_INTERVAL="0")
        if terminal:
            code, out, err = on_pty(args, env)
        else:
            done = piped(args, env)
            code, out, err = done.returncode, done.stdout, done.stderr.decode()
        assert code == 0, err
        assert "LLM calls 3 (0 cached, 0 failed), $0.0005 spent" in err, err
        assert "3/3 cases" in err, err
        assert json.loads(out)["aggregate"]["n_http_calls"] == 3
        # again: every call answered from the cache, none made, nothing spent
        if terminal:
            code, out, err = on_pty(args, env)
        else:
            done = piped(args, env)
            code, out, err = done.returncode, done.stdout, done.stderr.decode()
        assert code == 0 and srv.calls == 3, err
        assert "LLM calls 3 (3 cached, 0 failed), $0.0000 spent" in err, err


def test_llm_judge_counts_a_failed_call(tmp_path):
    pytest.importorskip("openai")
    cases, attempts = write(tmp_path / "cases.jsonl", CASES[:1]), write(tmp_path / "attempts.jsonl", ATTEMPTS[:1])
    # a 400 is not retried: the one call fails, the case is needs_human, the run goes on
    with FakeOpenAI(default=lambda req: Reply(status=400, body=b'{"error": {"message": "bad request"}}')) as srv:
        done = piped(["llm-judge", cases, attempts, "--llm", "judge-model", "--base-url", srv.base_url, "--no-store",
                      "--no-llm-cache"], quiet_env(tmp_path, GOLDEVAL_PROGRESS_INTERVAL="0"))
    err = done.stderr.decode()
    assert done.returncode == 0, err
    assert "goldeval: LLM judge: 1/1 cases (100%)" in err and "LLM calls 1 (0 cached, 1 failed)" in err, err


def test_judge_with_the_llm_stage_shows_both_stages(tmp_path):
    pytest.importorskip("openai")
    # a criteria golden: no rule can decide it, so the case goes to the LLM judge
    cases = write(tmp_path / "cases.jsonl", [{"id": "k1", "question": "Why did admissions rise?",
                                               "golden": {"kind": "criteria"}, "rubric": ["REQUIRED: names the flu"]}])
    attempts = write(tmp_path / "attempts.jsonl", [{"id": "k1", "text": "The flu outbreak.", "model": "answer-model"}])
    with FakeOpenAI(default=lambda req: Reply()) as srv:
        done = piped(["judge", cases, attempts, "--llm", "judge-model", "--base-url", srv.base_url, "--no-store"],
                     quiet_env(tmp_path, GOLDEVAL_PROGRESS_INTERVAL="0"))
    err = done.stderr.decode()
    assert done.returncode == 0, err
    assert "goldeval: judging: 1/1 cases (100%)" in err, err
    assert "goldeval: LLM judge: 1/1 cases (100%)" in err and "LLM calls 1 (0 cached, 0 failed)" in err, err


def test_a_ci_log_gets_periodic_plain_lines(tmp_path):
    done = piped(judge_args("--out", "-"), quiet_env(tmp_path, GOLDEVAL_PROGRESS_INTERVAL="0"))
    err = done.stderr.decode()
    assert done.returncode == 0, err
    lines = [line for line in err.splitlines() if line.startswith("goldeval: judging:")]
    # interval 0: a line at every case judged, 1/22 to 22/22, in order, plain text
    assert [int(re.match(r"goldeval: judging: (\d+)/22 cases", line).group(1)) for line in lines] == list(range(1, 23))
    assert "\x1b" not in err
    assert json.loads(done.stdout)["aggregate"]["n"] == 22  # none of it on stdout


def test_check_goldens_shows_its_progress(tmp_path):
    args = ["check-goldens", SQL / "cases.jsonl", "--db", SQL / "clinic.sqlite", "--out", "-"]
    done = piped(args, quiet_env(tmp_path, GOLDEVAL_PROGRESS_INTERVAL="0"))
    err = done.stderr.decode()
    assert done.returncode == 0, err
    assert "goldeval: checking goldens: 22/22 cases (100%)" in err
    assert json.loads(done.stdout)["aggregate"]["n_cases"] == 22
    code, out, err = on_pty(args, quiet_env(tmp_path))
    assert code == 0 and "checking goldens" in err and "22/22 cases" in err, err


def test_replay_with_the_llm_judge_shows_its_calls(tmp_path):
    pytest.importorskip("openai")
    cases = write(tmp_path / "cases.jsonl", [
        {"id": "k1", "question": "Why did admissions rise?", "golden": {"kind": "criteria"}, "rubric": ["REQUIRED: names the flu"]},
        {"id": "v1", "question": "Admissions?", "golden": {"kind": "value", "columns": ["n"], "rows": [[12]]}},
    ])
    # k1 cannot be decided by rule (a criteria golden): the LLM is asked; v1 is decided by rule (same rows)
    reg = write(tmp_path / "judge-regressions.jsonl", [
        {"id": "k1", "answer": {"id": "k1", "text": "The flu outbreak."}, "verdict": "match", "reviewer": "ana"},
        {"id": "v1", "answer": {"id": "v1", "columns": ["n"], "rows": [[12]]}, "verdict": "match", "reviewer": "bo"},
    ])
    with FakeOpenAI(default=lambda req: Reply()) as srv:
        done = piped(["replay", reg, "--cases", cases, "--llm", "judge-model", "--base-url", srv.base_url],
                     quiet_env(tmp_path, GOLDEVAL_PROGRESS_INTERVAL="0"))
    err = done.stderr.decode()
    assert done.returncode == 0, err
    lines = [line for line in err.splitlines() if line.startswith("goldeval: replaying:")]
    # one line a verdict replayed; the LLM tally counts the one call (no price given to a replay: no spend figure)
    assert [line.split(",")[0] for line in lines] == ["goldeval: replaying: 1/2 verdicts (50%)",
                                                      "goldeval: replaying: 2/2 verdicts (100%)"], err
    assert lines[-1].endswith("; LLM calls 1 (0 cached, 0 failed)"), err
    assert srv.calls == 1


def test_report_shows_that_it_is_under_way(tmp_path):
    env = quiet_env(tmp_path)
    recorded = ["judge", SQL / "cases.jsonl", SQL / "arm_a.jsonl", "--db", SQL / "clinic.sqlite", "--store", tmp_path / "s.db", "-q"]
    done = piped(recorded, env)  # a recorded run to report on
    assert done.returncode == 0, done.stderr
    code, out, err = on_pty(["report", "latest", "--store", tmp_path / "s.db", "--out", tmp_path / "r.html"], env)
    assert code == 0 and "building the report" in err, err
    done = piped(["report", "latest", "--store", tmp_path / "s.db", "--out", tmp_path / "r2.html"],
                 quiet_env(tmp_path, GOLDEVAL_PROGRESS_INTERVAL="0"))
    err = done.stderr.decode()
    assert done.returncode == 0, err
    # building a page takes well over the shortest interval (0.1 s): at least one line, then the page
    assert re.search(r"^goldeval: building the report: \d+ s so far$", err, re.M), err
    assert "report written to" in err


def test_a_short_run_in_a_ci_log_prints_no_progress_line_by_default(tmp_path):
    # the default interval is 10 s: the 22 cases are judged well within it, so no line is due
    done = piped(judge_args("--out", str(tmp_path / "r.json")), quiet_env(tmp_path))
    assert done.returncode == 0, done.stderr
    assert "goldeval: judging:" not in done.stderr.decode()


def test_a_bad_interval_is_a_usage_error(tmp_path):
    done = piped(judge_args(), quiet_env(tmp_path, GOLDEVAL_PROGRESS_INTERVAL="soon"))
    assert done.returncode == 2
    assert "$GOLDEVAL_PROGRESS_INTERVAL: expected the seconds between progress lines, a number ≥ 0, got 'soon'" in done.stderr.decode()


# --- tables in a CI log --------------------------------------------------------------------------------------------

LONG = "a very long label name that somebody wrote into the file because the taxonomy says so exactly"  # 93 chars


def label_rows(tmp_path: Path) -> Path:
    return write(tmp_path / "labels.jsonl", [
        {"id": "a", "gold": "escalate", "pred": "escalate"},
        {"id": "b", "gold": "approve", "pred": "escalate"},
        {"id": "c", "gold": LONG, "pred": "approve"},
    ])


def table_lines(text: str, title: str) -> list[str]:
    """The lines of the table under *title* (to the line that closes it)."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(title))
    end = next(i for i in range(start, len(lines)) if lines[i].startswith("└"))
    return lines[start + 1:end + 1]


def test_a_ci_log_gets_wide_tables_and_a_long_label_folds_in_its_own_row(tmp_path):
    env = quiet_env(tmp_path)
    env.pop("COLUMNS")
    done = piped(["labels", label_rows(tmp_path), "--positive", "escalate", "--no-store"], env)
    out = done.stdout.decode()
    assert done.returncode == 0, done.stderr
    # the summary table is 94 columns wide: at rich's 80 of a non-terminal it wrapped; in a log it does not
    summary = table_lines(out, "labels: positive")
    assert len(summary[0]) > 80 and "3 scored, 0 failed, 0 without a prediction" in out
    # the per-label table: the long label folds within its own row, at most 60 cells wide, so the other rows
    # are not widened to its 93 characters; none of its text is lost
    per_label = table_lines(out, "per label")
    cells = [line.split("│")[1] for line in per_label if line.startswith("│")]
    assert max(len(c) for c in cells) <= 60 + 2  # the cap, and one space of padding each side
    assert len(cells) == 4  # three labels, the long one over two lines
    assert " ".join(c.strip() for c in cells[:2]) == repr(LONG)
    assert all(len(line) <= 160 for line in out.splitlines())


def test_columns_sets_the_width_of_a_ci_log(tmp_path):
    done = piped(["labels", label_rows(tmp_path), "--positive", "escalate", "--no-store"], quiet_env(tmp_path, COLUMNS="70"))
    out = done.stdout.decode()
    assert done.returncode == 0, done.stderr
    assert max(len(line) for line in out.splitlines()) <= 70
