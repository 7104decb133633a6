"""Shared test fixtures: where the handed cases and the real data live."""

from __future__ import annotations

import json
import os
import shutil
import signal
from pathlib import Path

import pytest

#: The session's one headless Chromium (the `browser` fixture): tests/browser_session.py.
pytest_plugins = ["browser_session"]

# A test run started with SIGINT ignored (`bash -c 'python -m pytest &'`, a CI runner that backgrounds the job)
# hands SIG_IGN to every goldeval it starts, and Python then never raises KeyboardInterrupt in them: each Ctrl-C
# test would fail (the child goes on and exits 0). An ignored signal survives exec, a handled one is reset to the
# default, so handling SIGINT here gives every child the default disposition (tests/unit/test_suite_signals.py).
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

REPO = Path(__file__).resolve().parents[1]
#: ../shared beside the clone (read-only, as CI lays it out); GOLDEVAL_SHARED overrides.
SHARED = Path(os.environ.get("GOLDEVAL_SHARED", REPO.parent / "shared"))
#: The handed cases, vendored so a fresh clone without ../shared still tests them (kept equal by a test).
VENDORED_CASES = REPO / "tests" / "cases" / "handed"
EXAMPLES = REPO / "examples" / "data"


def handed_case_dir() -> Path:
    """../shared/cases when it exists, else the vendored copy under tests/cases/handed."""
    d = SHARED / "cases"
    return d if d.is_dir() else VENDORED_CASES


def load_handed_cases(*scorers: str) -> list[dict]:
    """Every handed case (all files under the handed-case folder) whose ``scorer`` is one of *scorers*."""
    out = []
    for f in sorted(handed_case_dir().glob("*.jsonl")):
        for line in f.read_text(encoding="utf-8").splitlines():
            if line.strip():
                case = json.loads(line)
                if case["scorer"] in scorers:
                    case["_file"] = f.name
                    out.append(case)
    return out


def handed_params(*scorers: str):
    """pytest.param list of handed cases for *scorers*, with ``case_id`` as the test id."""
    return [pytest.param(c, id=c["case_id"]) for c in load_handed_cases(*scorers)]


@pytest.fixture(autouse=True)
def _isolated_goldeval_home(tmp_path_factory, monkeypatch):
    """Every test gets its own GOLDEVAL_HOME, so no test writes a run store (or judge cache) into the repo."""
    monkeypatch.setenv("GOLDEVAL_HOME", str(tmp_path_factory.mktemp("goldeval_home")))


@pytest.fixture(autouse=True)
def _no_judge_settings_from_the_environment(monkeypatch):
    """A developer's GOLDEVAL_JUDGE_* variables must not change what a test's judge does."""
    for name in list(os.environ):
        if name.startswith("GOLDEVAL_JUDGE_"):
            monkeypatch.delenv(name)


class FakeRecorder:
    """An in-memory run-store recorder (the protocol of goldeval.runs.recorder): what a scorer recorded, and
    what it finished with."""

    def __init__(self, previous=None):
        self._previous = previous or {}
        self.records: list[dict] = []
        self.finished = None

    def previous(self):
        return self._previous

    def record(self, case, *, status=None):
        self.records.append(case if status is None else {"status": status, **case})

    def finish(self, results):
        self.finished = results


# --- Spark (the issue-14 engine tests): one local[2] session for the whole run, created only when a test asks

# No Spark class data archive written into the home folder by a test run, by the session below or by a `goldeval
# --engine spark` process a test starts (tests/spark/test_spark_fold.py writes one into a temporary folder, then uses it).
os.environ.setdefault("GOLDEVAL_SPARK_CDS", "off")


def _java() -> str | None:
    home = os.environ.get("JAVA_HOME")
    if home and os.path.exists(os.path.join(home, "bin", "java")):
        return os.path.join(home, "bin", "java")
    return shutil.which("java")


@pytest.fixture(scope="session")
def spark():
    # GOLDEVAL_REQUIRE_SPARK=1 (CI, where Java 17 is installed): a missing Java or pyspark fails instead of skipping,
    # so the issue-14 identity tests can never pass by not running
    require = os.environ.get("GOLDEVAL_REQUIRE_SPARK", "") not in ("", "0")
    if _java() is None:
        why = "Java is not installed (no java on PATH, no JAVA_HOME): the Spark engine needs Java 17"
        pytest.fail(f"GOLDEVAL_REQUIRE_SPARK is set and {why}") if require else pytest.skip(why)
    try:
        import pyspark  # noqa: F401
    except ImportError:
        why = "pyspark is not installed: pip install -e '.[test]'"
        pytest.fail(f"GOLDEVAL_REQUIRE_SPARK is set and {why}") if require else pytest.skip(why)
    from goldeval.engines import spark as gs

    session = gs.session("local[2]", app_name="goldeval-tests", conf={"spark.sql.shuffle.partitions": "2",
                                                                       "spark.default.parallelism": "2"})
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()
