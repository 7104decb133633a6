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
        from goldeval.answers.judge import JUDGE_VERSION, AnswerConfig, judge_case
    except ImportError as exc:
        raise JudgeError(
            f"replay: the data-answer judge (goldeval.answers) cannot be imported ({exc}). Reinstall goldeval."
        ) from None
    config = AnswerConfig(db=db)
    database = config.open_database()

    def judge(case: Mapping[str, Any], answer: Mapping[str, Any]) -> Any:
        return judge_case(case, answer, db=database, config=config).outcome

    return judge, JUDGE_VERSION
