"""The rule judge's name and version, the options of a judging run, and what one judged case carries.

Source: ``DESIGN.md`` "Data answers", goldeval.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from goldeval.answers.databases import DatabaseDir
from goldeval.answers.postgres import is_postgres_url, parse_url
from goldeval.answers.readonly_functions import normalize_allowed
from goldeval.answers.sql import (
    DEFAULT_MAX_RESULT_BYTES,
    DEFAULT_MAX_ROWS,
    DEFAULT_TIMEOUT_S,
    open_database,
)
from goldeval.answers.values import REL_TOL
from goldeval.verdict import CaseOutcome

__all__ = ["MATERIALS_KEY", "JUDGE_NAME", "JUDGE_VERSION", "AnswerConfig", "CaseResult"]

#: Where a needs_human record carries what the LLM judge needs (dropped before the record is stored).
MATERIALS_KEY = "_llm_materials"

JUDGE_NAME = "answer_judge"
#: Bump when a rule changes a verdict (recorded with every run).
JUDGE_VERSION = "1.6.0"  # 1.6.0 (issue 26, items 1-2): a literal that misses the data is doubted in every comparison (!=, IN/NOT IN, LIKE/GLOB, BETWEEN, HAVING, subqueries, CTEs, set-operation branches), decided by the database's own comparison (type affinity: year = '1970' on an INTEGER column holds); a golden whose result changes with its text comparisons and join keys trimmed and case-folded is data-fragile (suspect): an answer equal to the folded result is match with the golden verified_wrong, one that reproduces the golden needs_human (on a match the data doubts run when a text column the golden compares, filters or joins on is dirty: a value with spaces around it, or two values equal trimmed and case-folded, asked by one read of the compared text columns per table and database, an aggregate query per column past its bounds) (Spider dev-0554, 0583, 0584, 0754, 0786, 0810, 0811). (issue 26, item 3): a golden whose MAX/MIN or ORDER BY … LIMIT direction runs against its question's superlative (answers.direction), where the prediction took the other direction, is suspect and the verdict needs_human, never a confident no_match; (item 4) relabelled columns, any number, pair when the database shows a one-to-one mapping (a lookup table through a foreign key, or a table's key and its label): match, the why naming the table (Spider dev-0575, dev-0816); only the rows show it: needs_human. 1.5.0 (issue 11, item 2): a SELECT * golden over-asks unless the question asks for every column (Spider dev-0755); a column the question names only as a superlative criterion ("with the largest population") is not asked for (dev-0760, dev-0820), nor does "spoken by the largest …" group a how-many question (dev-0818). 1.4.0 (issue 11): an over-asking golden whose asked columns repeat differently is near_match (Spider dev-0066). 1.3.0 (issue 11, item 5): a Decimal compares exactly or within the golden's display precision (no 1e-6 relative), PostgreSQL numeric arrives as Decimal. 1.2.0 (issue 11): same rows in another multiplicity near_match; whole tie group match; exact identifiers; doubted goldens; order keys; unpaired columns. 1.1.0: break-fix rules


@dataclass(slots=True)
class AnswerConfig:
    """Options of a judging run (the CLI maps one option to one field; later options add fields here).

    Attributes:
        db: SQLite (or DuckDB) file, or a ``postgresql://user@host:port/dbname`` URL (without its password), to
            re-execute final queries and canonical queries on; ``None``: use the attempt's reported rows or text.
        timeout_s: Time limit per query, seconds.
        max_rows: Row limit per query (more rows: the case is unscored).
        rel_tol: Relative numeric tolerance.
        engine: ``sqlite`` | ``duckdb`` | ``None`` (by the file).
        check_canonical: Execute each golden's ``canonical_query`` (when a db is given) to fill in missing golden
            rows, or to check the given ones (a difference makes the golden ``suspect``).
        sql_dialect: The dialect the queries are written in, when it is not the database's (``sqlite`` queries on
            a PostgreSQL database are translated with sqlglot before they run); ``None``: the database's own.
        db_dir: A folder of databases that cases name (``"db": NAME``; see :mod:`goldeval.answers.databases`);
            each is opened once, on first use, with the limits above. Cases without ``db`` use ``db``.
        db_password: A PostgreSQL password given apart from the URL. Kept in memory only: not in
            :meth:`to_dict`, not in ``repr``.
        allow_functions: Function names (``name`` or ``schema.name``) a query may call besides goldeval's
            read-only built-ins (``--allow-function``; :mod:`goldeval.answers.readonly_functions`), sorted; the
            names that are refused anyway stay refused.
        allow_privileged_role: Accept a PostgreSQL role that is a superuser, may read or write the server's files
            or run programs on it, or may write a table (``--allow-privileged-role``); without it such a role is
            refused before the first query. The query guard applies either way; recorded with the run when True.
        max_result_bytes: Size limit per query: most bytes its rows may hold as Python objects
            (:func:`goldeval.answers.sql.result_bytes`; more: the case is unscored).
    """

    db: str | None = None
    timeout_s: float = DEFAULT_TIMEOUT_S
    max_rows: int = DEFAULT_MAX_ROWS
    rel_tol: float = REL_TOL
    engine: str | None = None
    check_canonical: bool = True
    sql_dialect: str | None = None
    db_dir: str | None = None
    db_password: str | None = field(default=None, repr=False)
    allow_functions: tuple[str, ...] = ()
    allow_privileged_role: bool = False
    max_result_bytes: int = DEFAULT_MAX_RESULT_BYTES

    def __post_init__(self) -> None:
        # A password written in a PostgreSQL URL is split out at once, so that no recorded form of the
        # configuration (to_dict, the results' inputs, the run store) can ever hold it.

        if self.db is not None and is_postgres_url(self.db):
            target = parse_url(self.db)
            self.db = target.url
            if self.db_password is None:
                self.db_password = target.password
        self.allow_functions = normalize_allowed(self.allow_functions)

    def to_dict(self) -> dict[str, Any]:
        """The options as recorded with a run (JSON-ready; never the password)."""
        out = asdict(self)
        out.pop("db_password", None)
        if out.get("sql_dialect") is None:
            out.pop("sql_dialect")  # runs recorded before the option existed keep the same configuration
        if out.get("db_dir") is None:
            out.pop("db_dir")
        if out.get("allow_functions"):
            out["allow_functions"] = list(out["allow_functions"])
        else:
            out.pop("allow_functions")  # as sql_dialect: runs without the option keep their recorded configuration
        if not out.get("allow_privileged_role"):
            out.pop("allow_privileged_role")
        return out

    def open_database(self) -> Any:
        """The read-only database the queries run on (:func:`goldeval.answers.sql.open_database`), or ``None``."""

        return open_database(self.db, timeout_s=self.timeout_s, max_rows=self.max_rows, engine=self.engine,
                             sql_dialect=self.sql_dialect, password=self.db_password,
                             allow_functions=self.allow_functions, allow_privileged=self.allow_privileged_role,
                             max_result_bytes=self.max_result_bytes)


    def open_database_dir(self) -> Any:
        """The :class:`goldeval.answers.databases.DatabaseDir` of :attr:`db_dir` (``None`` without one); each database
        it opens gets this configuration's limits and engine."""
        if self.db_dir is None:
            return None

        return DatabaseDir(self.db_dir, lambda path: open_database(path, timeout_s=self.timeout_s, max_rows=self.max_rows,
                                                                   engine=self.engine,
                                                                   allow_functions=self.allow_functions,
                                                                   max_result_bytes=self.max_result_bytes))


@dataclass(slots=True)
class CaseResult:
    """One judged case: the outcome (what is recorded and counted) and the materials an LLM judge would need."""

    outcome: CaseOutcome
    materials: dict[str, Any] = field(default_factory=dict)

