"""The current judge, as ``replay`` calls it: ``judge(case, answer) -> verdict`` plus its version.

Kept apart from ``regressions`` so that the replay logic can be tested with any judge callable, and so that the
data-answer judge (``goldeval.answers``) is imported only when a replay really runs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from goldeval.errors import InputError, JudgeError

__all__ = ["answer_judge"]


def answer_judge(*, db: str | None = None, db_dir: str | None = None, timeout_s: float | None = None,
                 max_rows: int | None = None, sql_dialect: str | None = None,
                 check_canonical: bool = True, allow_functions: Iterable[str] = (),
                 allow_privileged_role: bool = False, max_result_bytes: int | None = None
                 ) -> tuple[Callable[[Mapping[str, Any], Mapping[str, Any]], Any], str | None]:
    """``(judge, version)`` for the rule-based data-answer judge of this goldeval.

    Args:
        db: Database the judge may re-execute an answer's ``final_query`` (and a golden's ``canonical_query``) on.
        db_dir: Folder of the databases that cases name (``"db": NAME``, as ``goldeval judge --db-dir``); each is
            opened once, on first use. A case without ``db`` uses *db*.
        timeout_s, max_rows, sql_dialect, check_canonical: How queries run, as
            :class:`goldeval.answers.judge.AnswerConfig` (seconds per query; rows per query, more is unscored; the
            dialect the queries are written in; whether goldens' ``canonical_query`` runs). Give the values the
            judging ran with (``goldeval judge --timeout`` …), so that a replay differs only where the judge did.
            ``None``: AnswerConfig's default (5 s, 1,000,000 rows).
        allow_functions: Function names a query may call besides the read-only built-ins (``--allow-function``),
            as the judging allowed them.
        allow_privileged_role: Accept a privileged PostgreSQL role (``--allow-privileged-role``); refused without it.
        max_result_bytes: Size limit per query (bytes of Python objects; more is unscored), as ``goldeval judge
            --max-result-mb``; ``None``: AnswerConfig's default (256 MB).

    Raises:
        JudgeError: this goldeval has no data-answer judge to replay with.
        InputError: *db_dir* is not a folder. (A case naming a database that is not there raises ``InputError``
            from ``judge``: replay counts that entry as not replayed, with the reason.)
    """
    try:  # the judge's rules are part of goldeval; a broken install is named as such (JudgeError below)
        from goldeval.answers.batch import case_database
        from goldeval.answers.judge import JUDGE_VERSION, AnswerConfig, judge_case
    except ImportError as exc:
        raise JudgeError(
            f"replay: the data-answer judge (goldeval.answers) cannot be imported ({exc}). Reinstall goldeval."
        ) from None
    limits: dict[str, Any] = {k: v for k, v in (("timeout_s", timeout_s), ("max_rows", max_rows), ("max_result_bytes", max_result_bytes))
              if v is not None}
    config = AnswerConfig(db=db, db_dir=db_dir, sql_dialect=sql_dialect, check_canonical=check_canonical,
                          allow_functions=tuple(allow_functions), allow_privileged_role=allow_privileged_role, **limits)
    database = config.open_database()
    databases = config.open_database_dir()

    def judge(case: Mapping[str, Any], answer: Mapping[str, Any]) -> Any:
        target, why = case_database(case, database, databases, f"case {case.get('id')!r}")
        if why is not None:
            raise InputError(why)
        return judge_case(case, answer, db=target, config=config).outcome

    return judge, JUDGE_VERSION
