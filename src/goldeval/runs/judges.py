"""The current judge, as ``replay`` calls it: ``judge(case, answer) -> verdict`` plus its version.

Kept apart from ``regressions`` so that the replay logic can be tested with any judge callable, and so that the
data-answer judge (``goldeval.answers``) is imported only when a replay really runs.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from goldeval.errors import JudgeError

__all__ = ["answer_judge"]


def answer_judge(*, db: str | None = None) -> tuple[Callable[[Mapping[str, Any], Mapping[str, Any]], Any], str | None]:
    """``(judge, version)`` for the rule-based data-answer judge of this goldeval.

    Args:
        db: Database the judge may re-execute an answer's ``final_query`` on (when the answer holds no rows).

    Raises:
        JudgeError: this goldeval has no data-answer judge to replay with.
    """
    try:
        import goldeval.answers.judge as judge_module  # noqa: F401  (the data-answer judge, issue #4)
    except ImportError:
        raise JudgeError(
            "replay: this goldeval has no data-answer judge (goldeval.answers.judge) to replay the settled verdicts "
            "with. Install a goldeval that has it."
        ) from None
    raise JudgeError("replay: the data-answer judge's interface is not wired to replay yet.")
