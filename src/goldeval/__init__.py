"""goldeval: score model output against golden references and decide whether a run passes its gates.

One package per concept; imports run down this list, never up (pyproject's ``[tool.importlinter]`` layers contract,
checked by tests/unit/test_layout.py)::

    cli, testing            the ``goldeval`` command; gates in a pytest suite
    pipeline                a run end to end (inputs, engine, store, gates, outputs)
    engines | report        local and Spark engines | reports for people and CI
    runs                    the run store, recorder, compare, regressions
    freetext | labels | answers | llm     the domains, each with its Scorer
    scoring                 the Scorer protocol, exact sums, the registry
    gates                   the definition of done
    io                      reading inputs, writing outputs
    errors, verdict, ...    foundation

Module paths from before this layout (the top-level ``tokens``, ``scorers``, ``judge``, ...) still import, with a
DeprecationWarning (:mod:`goldeval._compat`).

The public surface is re-exported here (``__all__`` is pinned by a test). Names in ``_LAZY`` are imported on first
use, so ``import goldeval`` stays cheap (no numpy / scipy / sqlglot / openai at import time).
"""

from __future__ import annotations

from goldeval._startup import install_quiet_interrupts

# first: a Ctrl-C while goldeval is imported (the first moments of a `goldeval` command) ends with one line, not a
# traceback (an interrupt in a library user's own code is left alone: see goldeval._startup)
install_quiet_interrupts()

import importlib  # noqa: E402
from typing import TYPE_CHECKING, Any  # noqa: E402

__version__ = "0.1.0"

# re-exported: __all__ below lists them (built by sorted(), which ruff does not read, hence the noqa)
from goldeval.errors import GoldevalError, InputError, JudgeError, StoreError, UnreadableTextError  # noqa: F401
from goldeval.verdict import CaseOutcome, PassRate, Verdict, pass_rate  # noqa: F401
from goldeval._native import disable_if_stale
from goldeval._compat import install as _install_old_paths

_install_old_paths()  # the import paths before issue 27's layout keep working, with a DeprecationWarning
del _install_old_paths

disable_if_stale()  # a C extension built from an older _fast.c is not used (see goldeval/_native.py)
del disable_if_stale

if TYPE_CHECKING:  # the lazy names below, typed for a type checker (`name as name`: an explicit re-export)
    from goldeval.answers import (
        AnswerConfig as AnswerConfig, ReadOnlyDatabase as ReadOnlyDatabase, judge_answer as judge_answer,
    )
    from goldeval.pipeline.files import (
        judge_answer_file as judge_answer_file, score_file as score_file, score_rows as score_rows,
    )
    from goldeval.freetext.overlap import (
        Overlap as Overlap, SectionOverlap as SectionOverlap, section_f1 as section_f1, token_f1 as token_f1,
    )
    from goldeval.freetext.tokens import (
        OPENSCRIBE as OPENSCRIBE, Tokenizer as Tokenizer, UNICODE as UNICODE, get_tokenizer as get_tokenizer,
    )
    from goldeval.gates.definition import (
        DefinitionOfDone as DefinitionOfDone, load_gates as load_gates, parse_gates as parse_gates,
    )
    from goldeval.gates.evaluate import GateReport as GateReport, evaluate_gates as evaluate_gates
    from goldeval.labels.metrics import (
        LabelScore as LabelScore, confusion_matrix as confusion_matrix, per_label_table as per_label_table,
        score_labels as score_labels,
    )
    from goldeval.labels.reader import score_label_file as score_label_file
    from goldeval.labels.agreement import Agreement as Agreement, agreement as agreement, cohen_kappa as cohen_kappa
    from goldeval.llm import (
        JudgeCache as JudgeCache, JudgeConfig as JudgeConfig, judge_cases as judge_cases,
        parse_judge_output as parse_judge_output,
    )
    from goldeval.pipeline.result import Evaluation as Evaluation
    from goldeval.pipeline.run import evaluate as evaluate
    from goldeval.runs.compare import compare_runs as compare_runs
    from goldeval.runs.recorder import Recorder as Recorder, start_run as start_run
    from goldeval.runs.regressions import replay_regressions as replay_regressions
    from goldeval.runs.store import RunStore as RunStore
    from goldeval.scoring.sums import ExactSum as ExactSum

# public name -> module that defines it (imported on first attribute access); keep sorted.
_LAZY: dict[str, str] = {
    "Agreement": "goldeval.labels.agreement",
    "AnswerConfig": "goldeval.answers",
    "DefinitionOfDone": "goldeval.gates",
    "Evaluation": "goldeval.pipeline.result",
    "ExactSum": "goldeval.scoring.sums",
    "GateReport": "goldeval.gates",
    "JudgeCache": "goldeval.llm",
    "JudgeConfig": "goldeval.llm",
    "LabelScore": "goldeval.labels",
    "OPENSCRIBE": "goldeval.freetext.tokens",
    "Overlap": "goldeval.freetext.overlap",
    "ReadOnlyDatabase": "goldeval.answers",
    "Recorder": "goldeval.runs.recorder",
    "RunStore": "goldeval.runs.store",
    "SectionOverlap": "goldeval.freetext.overlap",
    "Tokenizer": "goldeval.freetext.tokens",
    "UNICODE": "goldeval.freetext.tokens",
    "agreement": "goldeval.labels.agreement",
    "cohen_kappa": "goldeval.labels.agreement",
    "compare_runs": "goldeval.runs.compare",
    "confusion_matrix": "goldeval.labels",
    "evaluate": "goldeval.pipeline.run",
    "evaluate_gates": "goldeval.gates",
    "get_tokenizer": "goldeval.freetext.tokens",
    "judge_answer": "goldeval.answers",
    "judge_answer_file": "goldeval.pipeline.files",
    "judge_cases": "goldeval.llm",
    "load_gates": "goldeval.gates",
    "parse_gates": "goldeval.gates",
    "parse_judge_output": "goldeval.llm",
    "per_label_table": "goldeval.labels",
    "replay_regressions": "goldeval.runs.regressions",
    "score_file": "goldeval.pipeline.files",
    "score_label_file": "goldeval.labels",
    "score_labels": "goldeval.labels",
    "score_rows": "goldeval.pipeline.files",
    "section_f1": "goldeval.freetext.overlap",
    "start_run": "goldeval.runs.recorder",
    "token_f1": "goldeval.freetext.overlap",
}

__all__ = sorted(
    [
        "CaseOutcome",
        "GoldevalError",
        "InputError",
        "JudgeError",
        "PassRate",
        "StoreError",
        "UnreadableTextError",
        "Verdict",
        "__version__",
        "pass_rate",
        *_LAZY,
    ]
)


del install_quiet_interrupts


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'goldeval' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
