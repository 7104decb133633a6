"""The import paths before the one-house layout (issue 27) keep working through goldeval._compat's alias finder:
each old path imports, warns with a DeprecationWarning naming the new path, and gives the very same objects.

(relayout: keep old paths — this file names the old paths on purpose.)
"""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

from goldeval import _compat

# old path -> new path, written out here (not read from _compat) so that a wrong table fails the test
MOVED = [
    ("goldeval.accumulate", "goldeval.scoring.sums"),
    ("goldeval.tokens", "goldeval.freetext.tokens"),
    ("goldeval.overlap", "goldeval.freetext.overlap"),
    ("goldeval.freetext_score", "goldeval.freetext.scorer"),
    ("goldeval.labelfile", "goldeval.labels.reader"),
    ("goldeval.agreement", "goldeval.labels.agreement"),
    ("goldeval.judge", "goldeval.llm"),
    ("goldeval.judge.client", "goldeval.llm.client"),
    ("goldeval.judge.prompt", "goldeval.llm.prompt"),
    ("goldeval.judge.parse", "goldeval.llm.parse"),
    ("goldeval.judge.cache", "goldeval.llm.cache"),
    ("goldeval.judge.budget", "goldeval.llm.budget"),
    ("goldeval.judge.run", "goldeval.llm.run"),
    ("goldeval.judge.pool", "goldeval.llm.pool"),
    ("goldeval.judge.accounting", "goldeval.llm.accounting"),
    ("goldeval.judge.wiring", "goldeval.llm.wiring"),
    ("goldeval.spark", "goldeval.engines.spark"),
    ("goldeval.spark_judge", "goldeval.engines.spark_judge"),
    ("goldeval.gate_definition", "goldeval.gates.definition"),
    ("goldeval.gate_metrics", "goldeval.gates.metrics"),
    ("goldeval.streams", "goldeval.io.streams"),
    ("goldeval.outputs", "goldeval.io.outputs"),
    ("goldeval.resultsfile", "goldeval.io.resultsfile"),
    ("goldeval.ids", "goldeval.io.ids"),
]

# a split module's names -> where each now lives
SPLIT = [
    ("goldeval.scorers", "Scorer", "goldeval.scoring.protocol"),
    ("goldeval.scorers", "Partial", "goldeval.scoring.protocol"),
    ("goldeval.scorers", "MetricSpec", "goldeval.scoring.protocol"),
    ("goldeval.scorers", "ENTRY_POINT_GROUP", "goldeval.scoring.protocol"),
    ("goldeval.scorers", "numbered", "goldeval.scoring.protocol"),
    ("goldeval.scorers", "get_scorer", "goldeval.scoring.registry"),
    ("goldeval.scorers", "available_scorers", "goldeval.scoring.registry"),
    ("goldeval.scorers", "register_scorer", "goldeval.scoring.registry"),
    ("goldeval.scorers", "run", "goldeval.engines.local"),
    ("goldeval.scorers_builtin", "Labels", "goldeval.labels.scorer"),
    ("goldeval.scorers_builtin", "AnswerJudge", "goldeval.answers.scorer"),
    ("goldeval.scorers_builtin", "join_answer_files", "goldeval.answers.scorer"),
    ("goldeval.scorers_builtin", "TokenF1", "goldeval.freetext.scorer"),
]


@pytest.fixture(autouse=True)
def _old_paths_forgotten_afterwards():
    # importing goldeval.agreement (an old module path) binds goldeval.agreement to the module, as it always did,
    # which hides the public function of that name: leave goldeval's namespace and the old names as they were
    import goldeval

    before = dict(vars(goldeval))
    yield
    for key in set(vars(goldeval)) - set(before):
        delattr(goldeval, key)
    for key, value in before.items():
        if vars(goldeval).get(key) is not value:
            setattr(goldeval, key, value)
    for key in [k for k in sys.modules if _compat.new_name(k) is not None or k in _compat.SPLIT]:
        del sys.modules[key]


def _fresh_import(name: str):
    sys.modules.pop(name, None)
    return importlib.import_module(name)


@pytest.mark.parametrize(("old", "new"), MOVED, ids=[o for o, _ in MOVED])
def test_old_path_imports_warns_and_is_the_new_module(old, new):
    with pytest.warns(DeprecationWarning, match=rf"{old} is deprecated: import {new} instead"):
        module = _fresh_import(old)
    assert module is importlib.import_module(new)
    # importing through the old name leaves the new module's identity alone (pickling, reload, multiprocessing)
    assert module.__spec__.name == new
    assert module.__name__ == new


@pytest.mark.parametrize(("old", "name", "new"), SPLIT, ids=[f"{o}.{n}" for o, n, _ in SPLIT])
def test_split_module_gives_the_same_objects(old, name, new):
    with pytest.warns(DeprecationWarning, match=rf"{old} is deprecated: import from goldeval\."):
        module = _fresh_import(old)
    assert getattr(module, name) is getattr(importlib.import_module(new), name)


def test_from_import_of_an_old_path_gives_the_same_objects():
    sys.modules.pop("goldeval.tokens", None)
    sys.modules.pop("goldeval.scorers", None)
    with pytest.warns(DeprecationWarning):
        from goldeval.scorers import Scorer, get_scorer
        from goldeval.tokens import OPENSCRIBE
    from goldeval.freetext.tokens import OPENSCRIBE as new_openscribe
    from goldeval.scoring.protocol import Scorer as new_scorer
    from goldeval.scoring.registry import get_scorer as new_get_scorer

    assert (Scorer, get_scorer, OPENSCRIBE) == (new_scorer, new_get_scorer, new_openscribe)


def test_split_module_names_a_missing_name_and_where_to_look():
    sys.modules.pop("goldeval.scorers", None)
    with pytest.warns(DeprecationWarning):
        module = importlib.import_module("goldeval.scorers")
    with pytest.raises(AttributeError, match=r"'goldeval.scorers' has no attribute 'nope' \(it was split into "
                                             r"goldeval.scoring.protocol, goldeval.scoring.registry"):
        module.nope  # noqa: B018


def test_same_name_packages_reexport_the_old_modules_public_names():
    # goldeval.labels, .freetext, .gates, .io were modules; as packages they keep the old public names, no warning
    import warnings

    # (score_file was the freetext name checked here; it moved to goldeval.pipeline.files and now warns: see
    # test_a_name_that_moved_up_to_the_pipeline_warns_and_is_the_same_object)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        from goldeval.freetext import FreeTextConfig
        from goldeval.gates import METRICS, load_gates
        from goldeval.io import read_rows
        from goldeval.labels import score_label_file, score_labels
    from goldeval.freetext.scorer import FreeTextConfig as f2
    from goldeval.gates.definition import load_gates as g2
    from goldeval.gates.metrics import METRICS as m2
    from goldeval.io.reading import read_rows as r2
    from goldeval.labels.metrics import score_labels as l3
    from goldeval.labels.reader import score_label_file as l2

    assert (FreeTextConfig, load_gates, METRICS, read_rows, score_label_file, score_labels) == (f2, g2, m2, r2, l2, l3)


# (old module, name) -> the module the name now lives in, written out here (not read from _compat.MOVED_NAMES): the
# one-call file runners run the local engine, which is pipeline work, so they left the domain packages
MOVED_NAMES = [
    ("goldeval.freetext", "score_file", "goldeval.pipeline.files"),
    ("goldeval.freetext", "score_rows", "goldeval.pipeline.files"),
    ("goldeval.freetext", "PARALLEL_MIN_ROWS", "goldeval.engines.local"),
    ("goldeval.freetext.files", "score_file", "goldeval.pipeline.files"),
    ("goldeval.freetext.files", "score_rows", "goldeval.pipeline.files"),
    ("goldeval.freetext.files", "PARALLEL_MIN_ROWS", "goldeval.engines.local"),
    ("goldeval.answers", "judge_file", "goldeval.pipeline.files"),
    ("goldeval.answers", "judge_answer_file", "goldeval.pipeline.files"),
    ("goldeval.answers.batch", "judge_file", "goldeval.pipeline.files"),
    ("goldeval.answers.batch", "judge_answer_file", "goldeval.pipeline.files"),
    ("goldeval.answers.judge", "judge_file", "goldeval.pipeline.files"),
    ("goldeval.answers.judge", "judge_answer_file", "goldeval.pipeline.files"),
]


@pytest.mark.parametrize(("old", "name", "new"), MOVED_NAMES, ids=[f"{o}.{n}" for o, n, _ in MOVED_NAMES])
def test_a_name_that_moved_up_to_the_pipeline_warns_and_is_the_same_object(old, name, new):
    module = importlib.import_module(old)
    with pytest.warns(DeprecationWarning, match=rf"{old}\.{name} is deprecated: use {new}\.{name} instead") as rec:
        value = getattr(module, name)
    assert value is getattr(importlib.import_module(new), name)
    assert rec[0].filename == __file__  # the warning names the caller's line, not goldeval's


def test_from_import_of_a_moved_name_warns_at_the_importing_line():
    with pytest.warns(DeprecationWarning, match=r"goldeval\.answers\.judge_file is deprecated: use "
                                                r"goldeval\.pipeline\.files\.judge_file") as rec:
        from goldeval.answers import judge_file
    from goldeval.pipeline.files import judge_file as new

    assert judge_file is new and rec[0].filename == __file__


def test_a_name_that_never_was_there_is_still_an_attribute_error():
    # silent where it should be: an unknown name neither warns nor imports the pipeline's answer for it
    import warnings

    import goldeval.answers.batch as batch
    import goldeval.freetext as freetext

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(AttributeError, match=r"module 'goldeval.answers.batch' has no attribute 'nope'"):
            batch.nope  # noqa: B018
        with pytest.raises(AttributeError, match=r"module 'goldeval.freetext' has no attribute 'score_labels'"):
            freetext.score_labels  # noqa: B018
        assert freetext.FreeTextConfig is not None  # the package's own names: no warning


def test_new_paths_and_unrelated_names_are_not_the_finders():
    finder = _compat.OldPaths()
    assert finder.find_spec("goldeval.freetext.tokens") is None
    assert finder.find_spec("goldeval.scoring") is None
    assert finder.find_spec("goldeval.answers.judge") is None  # the answers package's own module, not the LLM judge
    assert finder.find_spec("tokens") is None
    assert finder.find_spec("goldeval.tokens") is not None


def test_the_warning_points_at_the_importing_code(tmp_path):
    # a user's script importing an old path is told so at its own line (not inside importlib)
    script = tmp_path / "user_script.py"
    script.write_text("import goldeval.tokens\n")
    out = subprocess.run([sys.executable, "-W", "always::DeprecationWarning", str(script)],
                         capture_output=True, text=True, check=True)
    assert f"{script}:1: DeprecationWarning: goldeval.tokens is deprecated: import goldeval.freetext.tokens" in out.stderr
