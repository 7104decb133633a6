"""The golden health check: every test a query against the data can make of a golden, before any answer is judged.

:func:`check_golden` checks one case's golden on its database, without a prediction; :func:`check_goldens` checks
a case file, one case at a time; :func:`summarize_health` counts the results (the gateable ``aggregate`` of
``goldeval check-goldens``). Each check that fires is a :class:`Finding` (``check``, ``status``, ``note``):

=================  ===============  ===========================================================================
check              status           fires when
=================  ===============  ===========================================================================
``golden``         broken           the golden is malformed (the judge would leave every answer unscored), or
                                    has neither rows nor a value nor a canonical query
``database``       broken           the case names a database that cannot be found or opened
``clock_random``   suspect          the canonical query reads the clock or a random source (``now()``,
                                    ``CURRENT_DATE``, ``date('now')``, ``random()``, ``uuid()``…), found in the
                                    parsed query (:func:`volatile_calls`): its rows change from run to run
``query_runs``     broken           the canonical query fails (the database's message, the guard's refusal,
                                    the time or row limit)
``rows_equal``     suspect          the stored golden rows are not the canonical query's result, as the judge
                                    compares them (the judge's own note: "the canonical query, re-executed,
                                    gives other rows")
``empty``          suspect          the golden has no row, or every cell is NULL
``literal``        suspect /        a literal misses the data by the database's own comparison while it holds
                   verified_wrong   trimmed and case-folded (:func:`~goldeval.answers.literals.literal_doubt`;
                                    issue 26 item 1)
``fragile``        suspect          the result changes with the text comparisons and join keys trimmed and
                                    case-folded (:func:`~goldeval.answers.fragile.fragile_doubt`; item 2)
``direction``      suspect          a MAX/MIN or ORDER BY … LIMIT runs against the question's superlative
                                    (:func:`~goldeval.answers.direction.golden_direction_conflicts`; item 3)
``filter``         suspect          a WHERE comparing with a subquery keeps (almost) every row
                                    (:func:`~goldeval.answers.doubt.filter_doubt`)
``shape``          suspect          a single count for a list question, a list for "how many"
                                    (:func:`~goldeval.answers.doubt.shape_doubt`)
``plausibility``   suspect /        a negative count, a share above 100, a total below its parts
                   verified_wrong   (:func:`goldeval.answers.gold.check_golden`)
``declared``       suspect /        the case itself marks its golden (``golden.gold_status``)
                   verified_wrong
=================  ===============  ===========================================================================

A case's status is its worst finding: ``broken`` > ``verified_wrong`` > ``suspect`` > ``healthy`` (nothing fired).
A golden without a canonical query (rows typed by hand) gets the checks that need no query; a golden of kind
``unanswerable`` or ``criteria`` has no rows to check and is healthy.

A case's ``golden.alternatives`` (other right answers: :func:`~goldeval.answers.shapes.golden_alternatives`) are
goldens too, each checked as the primary golden is (every check of the table that applies to it), on the case's
database and question. Each finding names its golden (:attr:`Finding.golden`: ``primary`` or ``alternatives[i]``;
an alternative's note begins with ``golden.alternatives[i]``), and the case's status is the worst over all its
goldens: a broken alternative makes the case broken, as the judge leaves such a case unscored (a malformed
alternative, with the judge's own message and field path; one whose canonical query fails). A doubted alternative
makes the case doubted even when the primary is healthy, since the judge may decide a case by any of them.

The data doubts (items 1–3) are the judge's own probe functions, called here directly: they need no prediction.

Source: goldeval issue 26, item 6; ``DESIGN.md`` "Doubting the golden" ("``check-goldens`` runs all of it before
any answer is judged").
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from goldeval.answers import gold
from goldeval.answers.answer import judge_answer
from goldeval.answers.config import AnswerConfig
from goldeval.answers.direction import golden_direction_conflicts, reversed_query
from goldeval.answers.doubt import filter_doubt, parsed_query, shape_doubt
from goldeval.answers.fragile import fragile_doubt
from goldeval.answers.literals import golden_misses, literal_doubt, may_doubt_data
from goldeval.answers.query_memo import execute_remembered
from goldeval.answers.shapes import golden_alternatives
from goldeval.answers.sql import DatabaseLostError, QueryError
from goldeval.answers.values import make_column
from goldeval.errors import InputError, shorten
from goldeval.io.reading import RowError
from goldeval.io.reading import check_ids
from goldeval.io.reading import check_input_file
from goldeval.io.reading import read_rows

__all__ = [
    "CHECKS",
    "GOLDEN_HEALTH_NAME",
    "GOLDEN_HEALTH_VERSION",
    "HEALTH_STATUSES",
    "Finding",
    "GoldenHealth",
    "check_golden",
    "check_goldens",
    "summarize_health",
    "volatile_calls",
]

#: The name and version recorded in a ``check-goldens`` results file (``scorer``); bump the version when a check
#: changes what it finds.
GOLDEN_HEALTH_NAME = "golden_health"
GOLDEN_HEALTH_VERSION = "1.1.0"

#: A case's statuses, least severe first.
HEALTH_STATUSES = ("healthy", "suspect", "verified_wrong", "broken")
_RANK = {s: i for i, s in enumerate(HEALTH_STATUSES)}

#: Every check, in the order it runs (see the module's table).
CHECKS = ("golden", "database", "clock_random", "query_runs", "rows_equal", "empty", "literal", "fragile", "direction",
          "filter", "shape", "plausibility", "declared")


@dataclass(frozen=True, slots=True)
class Finding:
    """One check that fired on a golden.

    Attributes:
        check: One of :data:`CHECKS`.
        status: ``suspect`` · ``verified_wrong`` · ``broken``.
        note: What it saw, naming the column, the literal, the function or the message. A note on an alternative
            golden names it: it begins with the field path (``golden.alternatives[1]: …``), or, for the judge's
            own message of a malformed golden, holds it after the case row.
        golden: The golden it fired on: ``primary`` (the case's golden), ``alternatives[i]`` (0-based, one of
            ``golden.alternatives``) or ``alternatives`` (the list itself is malformed).
    """

    check: str
    status: str
    note: str
    golden: str = "primary"

    def to_dict(self) -> dict[str, str]:
        return {"check": self.check, "status": self.status, "note": self.note, "golden": self.golden}


@dataclass(slots=True)
class GoldenHealth:
    """The health of one case's golden.

    Attributes:
        id: The case id.
        status: The worst finding's status over every golden of the case, or ``healthy``
            (:data:`HEALTH_STATUSES`).
        findings: The checks that fired, in :data:`CHECKS` order: the primary golden's, then each alternative's.
        checks_run: The checks that ran on any of its goldens (a check that could not run, e.g. the data doubts
            of a query that fails or of a golden without a canonical query, is not listed).
        rows: How many rows of the primary golden were checked (the stored rows, else the canonical query's);
            ``None`` when none.
        db: The database name the case gave (``"db"``), if any.
        line: The case's line in its file, when read from one.
        goldens: Per golden, when the case lists alternatives: ``{"golden", "status", "rows", "checks_run"}``, the
            primary first (empty for a case without alternatives).
    """

    id: str
    status: str = "healthy"
    findings: list[Finding] = field(default_factory=list)
    checks_run: list[str] = field(default_factory=list)
    rows: int | None = None
    db: str | None = None
    line: int | None = None
    goldens: list[dict[str, Any]] = field(default_factory=list)

    def add(self, check: str, status: str, note: str, *, golden: str = "primary") -> None:
        """Record a finding on *golden* (:attr:`Finding.golden`) and raise :attr:`status` to it when it is worse."""
        self.findings.append(Finding(check, status, note, golden))
        if _RANK[status] > _RANK[self.status]:
            self.status = status

    def _absorb(self, label: str, one: GoldenHealth) -> None:
        """Take in the health *one* of the case's golden *label* (``primary``, ``alternatives[i]``): its findings,
        named by *label* (an alternative's note begins with its field path unless it names it already), its checks
        and, for the primary, its rows."""
        path = f"golden.{label}"
        for f in one.findings:
            note = f.note if label == "primary" or path in f.note else f"{path}: {f.note}"
            self.add(f.check, f.status, note, golden=label)
        self.checks_run += [c for c in one.checks_run if c not in self.checks_run]
        if label == "primary":
            self.rows = one.rows
        self.goldens.append({"golden": label, "status": one.status, "rows": one.rows, "checks_run": list(one.checks_run)})

    @property
    def worst(self) -> Finding | None:
        """The first finding of the worst status (what a one-line table shows), or ``None`` when healthy."""
        return next((f for f in self.findings if f.status == self.status), None)

    def to_dict(self) -> dict[str, Any]:
        """``{"id", "status", "check", "note", "findings": [...], "checks_run", "rows", "db"?, "line"?,
        "goldens"?}``: ``check`` and ``note`` are the worst finding's (``None`` when healthy); ``goldens`` only for a
        case that lists alternatives."""
        w = self.worst
        out: dict[str, Any] = {"id": self.id, "status": self.status, "check": w.check if w else None,
                               "note": w.note if w else None, "findings": [f.to_dict() for f in self.findings],
                               "checks_run": list(self.checks_run), "rows": self.rows}
        if self.db is not None:
            out["db"] = self.db
        if self.line is not None:
            out["line"] = self.line
        if len(self.goldens) > 1:
            out["goldens"] = [dict(g) | {"checks_run": list(g["checks_run"])} for g in self.goldens]
        return out


# --- the clock and random sources, in the parsed query ----------------------------------------------------------

#: Function names (lower case) that read the clock or a random source whatever their arguments (SQLite, DuckDB,
#: PostgreSQL spellings that sqlglot leaves as anonymous functions).
_VOLATILE_NAMES = frozenset({
    "now", "clock_timestamp", "statement_timestamp", "transaction_timestamp", "timeofday", "today",
    "get_current_time", "get_current_timestamp", "current_localtime", "current_localtimestamp",
    "random", "randomblob", "random_normal", "rand", "uuid", "uuidv4", "uuidv7", "gen_random_uuid", "setseed",
})
#: SQLite's date and time functions: with no argument, or with the text 'now' as one, they read the clock.
_CLOCK_WITHOUT_ARGS = frozenset({"date", "time", "datetime", "julianday", "unixepoch", "strftime", "timediff"})
#: Texts that a date or time function (or a cast to a date or time) reads as the clock (PostgreSQL's special date
#: inputs too: ``'today'::date``).
_CLOCK_TEXTS = frozenset({"now", "today", "tomorrow", "yesterday"})


def _node_classes(*names: str) -> tuple[type, ...]:
    """The sqlglot expression classes of *names* that this sqlglot has (their set changes between versions)."""
    from sqlglot import exp  # start-up: sqlglot loads only when a query is parsed

    return tuple(c for c in (getattr(exp, n, None) for n in names) if isinstance(c, type))


def _func_name(node: Any) -> str:
    from sqlglot import exp  # start-up: sqlglot loads only when a query is parsed

    return (node.name if isinstance(node, exp.Anonymous) else node.sql_name()).lower()


def volatile_calls(sql: str, dialect: str = "sqlite") -> list[str]:
    """The calls in *sql* that read the clock or a random source, as the query writes them.

    Read from the parsed query (sqlglot), never from its letters: a column named ``date`` or ``random_seed``, or
    ``date(birth)``, is no clock. Found: ``CURRENT_DATE`` / ``_TIME`` / ``_TIMESTAMP``, ``LOCALTIMESTAMP``, random
    and uuid functions (``random()``, ``randomblob(8)``, ``gen_random_uuid()``), ``now()`` and its kin, SQLite's
    date and time functions called without an argument (``date()``) or with the text ``'now'`` (``date('now')``,
    ``strftime('%Y', 'now')``), and a cast of ``'now'`` / ``'today'`` to a date or time.

    Args:
        sql: A query.
        dialect: Its sqlglot dialect.

    Returns:
        The calls, each once, in query order; ``[]`` when there is none or the query does not parse.

    Example:
        >>> volatile_calls("SELECT name FROM t WHERE born < date('now', '-18 years') ORDER BY random()")
        ["DATE('now', '-18 years')", 'RANDOM()']
    """
    from sqlglot import exp  # start-up: sqlglot loads only when a query is parsed

    tree = parsed_query(sql, dialect)  # shared: only read here
    if tree is None:
        return []
    always = _node_classes("CurrentDate", "CurrentTime", "CurrentTimestamp", "CurrentDatetime", "CurrentTimestampLTZ",
                           "Localtime", "Localtimestamp", "Rand", "Randn", "Uuid")
    found: list[str] = []

    def note(node: Any) -> None:
        text = node.sql(dialect=dialect)
        if text not in found:
            found.append(text)

    for node in tree.walk(bfs=False):  # depth first: the calls in query order
        if always and isinstance(node, always):
            note(node)
        elif isinstance(node, exp.Func) and not isinstance(node, (exp.Cast, exp.TryCast)):
            name = _func_name(node)
            args = [a for a in node.iter_expressions()]
            if name in _VOLATILE_NAMES or (name in _CLOCK_WITHOUT_ARGS and not args):
                note(node)
        elif isinstance(node, exp.Literal) and node.is_string and node.this.strip().lower() in _CLOCK_TEXTS:
            call = _clock_reader(node)
            if call is not None:
                note(call)
    return found


def _clock_reader(literal: Any) -> Any:
    """The date or time function (or the cast to a date or time type) that reads *literal* ('now') as the clock,
    or ``None`` when the literal is only compared or printed."""
    from sqlglot import exp  # start-up: sqlglot loads only when a query is parsed

    node = literal.parent
    reader = None
    while isinstance(node, (exp.Cast, exp.TryCast, exp.Paren, exp.Func)):
        if isinstance(node, (exp.Cast, exp.TryCast)):
            if node.to is None or not node.to.is_type(*exp.DataType.TEMPORAL_TYPES):
                break
        elif isinstance(node, exp.Func):
            name = _func_name(node)
            if not (name in _CLOCK_WITHOUT_ARGS or "date" in name or "time" in name):
                break
        if not isinstance(node, exp.Paren):
            reader = node  # the outermost date or time call around the text (strftime, not sqlglot's cast inside it)
        node = node.parent
    return reader


# --- one golden ---------------------------------------------------------------------------------------------

def _dialect(db: Any) -> str:
    """The dialect the database's queries are written in (as the judge reads it)."""
    return getattr(db, "query_dialect", None) or ("duckdb" if getattr(db, "engine", None) == "duckdb" else "sqlite")


def _golden_table(golden: Mapping[str, Any]) -> tuple[list[Any] | None, list[Any] | None]:
    """``(columns, rows)`` the golden stores: its rows, or its scalar value as one row; ``(None, None)`` when it
    stores neither (its canonical query gives them). The judge checks their shape (:func:`_judged_rows`)."""
    if golden.get("rows") is not None:
        cols = golden.get("columns")
        return (list(cols) if isinstance(cols, list) else None), golden["rows"]
    if "value" in golden:
        cols = golden.get("columns")
        return (list(cols) if isinstance(cols, list) else ["value"]), [[golden["value"]]]
    return None, None


def _judged_rows(question: str, golden: Mapping[str, Any], columns: list[Any], rows: list[Any], *,
                 rel_tol: float, where: str) -> Any:
    """The judge's verdict of *rows* (``columns``) against *golden*: the golden's shape and options are checked
    as the judge checks them (an :class:`InputError` when malformed)."""
    return judge_answer(question, golden, {"columns": columns, "rows": rows}, rel_tol=rel_tol, where=where)


def check_golden(case: Mapping[str, Any], db: Any, *, config: AnswerConfig | None = None, where: str = "") -> GoldenHealth:
    """Check one case's golden, and each of its alternatives, on its database: every check of the module's table,
    without a prediction.

    Args:
        case: ``{"id", "question"?, "golden": {"kind"?, "columns"?, "rows" | "value"?, "canonical_query"?,
            "alternatives"?, …}, "db"?}``.
        db: The open read-only database the case's queries run on (:class:`~goldeval.answers.sql.ReadOnlyDatabase`
            or any object with ``execute(sql)`` and ``schema()``), or ``None``: only the checks that need no query
            run (``golden``, ``empty``, ``shape``, ``plausibility``, ``declared``, ``clock_random``, ``direction``).
        config: The judge's options: ``rel_tol`` compares rows as the judge does; ``check_canonical`` False runs
            no canonical query (the checks that need one are skipped).
        where: How messages name the case (default ``case 'ID'``).

    Returns:
        :class:`GoldenHealth`, its status the worst over the primary golden and every alternative (each finding
        names its golden). A malformed golden or alternative and a canonical query that fails are findings
        (``broken``), never exceptions.

    Raises:
        DatabaseLostError: the database went away during the checks (the run stops; no finding is made without it).

    Source: goldeval issue 26, items 5 and 6.

    Example:
        >>> import sqlite3, tempfile, os
        >>> from goldeval.answers.sql import open_database
        >>> path = os.path.join(tempfile.mkdtemp(), "t.sqlite")
        >>> con = sqlite3.connect(path); _ = con.execute("CREATE TABLE pet (kind TEXT)")
        >>> _ = con.executemany("INSERT INTO pet VALUES (?)", [("Dog",), ("Cat",)]); con.commit(); con.close()
        >>> db = open_database(path)
        >>> h = check_golden({"id": "q1", "question": "How many dogs?",
        ...                   "golden": {"canonical_query": "SELECT count(*) FROM pet WHERE kind = 'dog'"}}, db)
        >>> h.status, [f.check for f in h.findings]
        ('verified_wrong', ['literal', 'fragile'])
        >>> db.close()
    """
    cfg = config or AnswerConfig()
    cid = str(case.get("id"))
    where = where or f"case {cid!r}"
    name = case.get("db")
    health = GoldenHealth(cid, db=name if isinstance(name, str) else None)
    golden = case.get("golden")
    question = case.get("question")
    question = question if isinstance(question, str) else ""
    if not isinstance(golden, Mapping):
        health.checks_run.append("golden")
        health.add("golden", "broken", f"{where}: 'golden' must be an object, got {shorten(golden)}. Fix the case row.")
        return health
    alternatives, problem = _alternatives(golden, where)
    # The primary golden is the golden without its alternatives (as the judge reads it).
    primary = {k: v for k, v in golden.items() if k != "alternatives"}
    health._absorb("primary", _check_one(cid, question, primary, db, cfg, where))
    if problem is not None:
        lone = GoldenHealth(cid, checks_run=["golden"])
        lone.add("golden", "broken", problem)
        health._absorb("alternatives", lone)
    for label, alt in alternatives:
        if isinstance(alt, str):  # the judge's message for this malformed alternative
            lone = GoldenHealth(cid, checks_run=["golden"])
            lone.add("golden", "broken", alt)
            health._absorb(label, lone)
        else:  # a full golden, checked as the judge judges it (its messages name the row and the field path)
            health._absorb(label, _check_one(cid, question, alt, db, cfg, f"{where} golden.{label}"))
    return health


#: A well-formed alternative golden: what stands before the alternative validated in :func:`_alternatives`.
_STAND_IN: dict[str, Any] = {"value": 0}


def _alternatives(golden: Mapping[str, Any], where: str) -> tuple[list[tuple[str, dict[str, Any] | str]], str | None]:
    """The golden's alternatives as ``[(label, golden or message)]`` (``label`` ``alternatives[i]``), and the
    message of a malformed list itself (not a list, or on a golden of another kind), else ``None``.

    Validated by :func:`~goldeval.answers.shapes.golden_alternatives`, the judge's own check, so a malformed
    alternative's message is the judge's unscored reason. The judge stops at the first malformed one; here each is
    validated behind well-formed stand-ins for those before it, so every malformed alternative gets the message the
    judge would give it (its index in the path), and the well-formed ones are still checked."""
    try:
        return [(f"alternatives[{i}]", a) for i, a in enumerate(golden_alternatives(golden, where))], None
    except InputError as exc:
        whole = str(exc)
    alts = golden.get("alternatives")
    if not isinstance(alts, list) or golden.get("kind", "value") != "value":
        return [], whole
    out: list[tuple[str, dict[str, Any] | str]] = []
    for i, alt in enumerate(alts):
        try:
            checked = golden_alternatives({"alternatives": [_STAND_IN] * i + [alt]}, where)[i]
        except InputError as exc:
            out.append((f"alternatives[{i}]", str(exc)))
        else:
            out.append((f"alternatives[{i}]", checked))
    return out, None


def _check_one(cid: str, question: str, golden: Mapping[str, Any], db: Any, cfg: AnswerConfig, where: str
               ) -> GoldenHealth:
    """Every check of the module's table on one golden (the primary, or one alternative) of the case *cid*."""
    health = GoldenHealth(cid)
    health.checks_run.append("golden")
    kind = golden.get("kind", "value")
    if kind != "value":
        if kind not in ("unanswerable", "criteria"):
            health.add("golden", "broken", f"{where}: golden kind must be 'value', 'unanswerable' or 'criteria', got "
                                           f"{shorten(kind)}. Fix the case row.")
        return health  # no rows to check
    canonical = golden.get("canonical_query")
    if canonical is not None and not isinstance(canonical, str):
        health.add("golden", "broken", f"{where}: golden 'canonical_query' must be a string, got {shorten(canonical)}. "
                                       "Fix the case row.")
        return health
    columns, rows = _golden_table(golden)
    if rows is None and not canonical:
        health.add("golden", "broken", f"{where}: the golden has no 'rows', no 'value' and no 'canonical_query': "
                                       "nothing to judge an answer against. Add one.")
        return health
    dialect = _dialect(db) if db is not None else "sqlite"
    if canonical:
        health.checks_run.append("clock_random")
        calls = volatile_calls(canonical, dialect)
        if calls:
            health.add("clock_random", "suspect",
                       f"the canonical query reads the clock or a random source ({', '.join(calls[:3])}): its rows "
                       "change from one run to the next (a stored golden goes stale, one filled in from the query "
                       "moves under the answers)")
    result = None  # the canonical query's result
    if canonical and db is not None and cfg.check_canonical:
        health.checks_run.append("query_runs")
        try:
            result = execute_remembered(db, canonical)
        except DatabaseLostError:
            raise
        except QueryError as exc:
            health.add("query_runs", "broken", f"the canonical query failed: {exc}")
    # The rows checked: the stored ones (what answers are judged against), else the query's.
    if rows is None and result is not None:
        names = columns if columns is not None and len(columns) == len(result.columns) else list(result.columns)
        columns, rows = names, [list(r) for r in result.rows]
        from_query = True
    else:
        from_query = False
    if rows is None:  # a canonical query alone, not run (no database, --no-canonical, or it failed)
        _question_checks(health, question, canonical, dialect, None)
        _declared(health, golden)
        return health
    try:
        # The judge's own comparison: the rows the canonical query gives against the golden as stored (its columns
        # paired by position, as the judge's check does), or the golden against itself (its shape and options).
        if result is not None and not from_query:
            health.checks_run.append("rows_equal")
            names = columns if columns is not None and len(columns) == len(result.columns) else list(result.columns)
            v = _judged_rows("", golden, names, [list(r) for r in result.rows], rel_tol=cfg.rel_tol, where=where)
            if v.verdict != "match":
                rule = v.details.get("rule_verdict") or {}
                if rule.get("verdict") != "match":
                    health.add("rows_equal", "suspect",
                               f"the canonical query, re-executed, gives other rows ({v.mismatch or v.why})")
        else:
            _judged_rows(question, dict(golden) | {"columns": columns, "rows": rows}, list(columns or []), rows,
                         rel_tol=cfg.rel_tol, where=where)
    except InputError as exc:
        health.add("golden", "broken", str(exc))
        return health
    health.rows = len(rows)
    if rows and all(isinstance(r, Mapping) for r in rows):  # rows as objects keyed by column (the judge reads them so)
        columns = list(columns) if columns is not None else list(rows[0])
        rows = [[r.get(c) for c in columns] for r in rows]
    rows = [r if isinstance(r, (list, tuple)) else [r] for r in rows]  # a bare cell is a row of one column (the judge's reading)
    table = [r for r in rows if isinstance(r, (list, tuple))]
    names = [str(c) for c in (columns or [f"col{i + 1}" for i in range(len(table[0]) if table else 0)])]
    cols = [make_column(n, [r[i] for r in table]) for i, n in enumerate(names)] if table else []
    health.checks_run.append("empty")
    all_null = bool(table) and all(c is None for r in table for c in r)
    if not table:
        health.add("empty", "suspect", "the golden has no row: does its query filter out every row (a literal that "
                                       "misses the data's case, a wrong date)?")
    elif all_null:
        health.add("empty", "suspect", "every golden cell is NULL: an aggregate over nothing (a filter that matched no row?)")
    if canonical and db is not None and cfg.check_canonical and "query_runs" not in {f.check for f in health.findings}:
        _data_checks(health, db, canonical, dialect, columns, table, cfg)
    _question_checks(health, question, canonical, dialect, db if cfg.check_canonical else None)
    if canonical and db is not None and cfg.check_canonical and "query_runs" not in {f.check for f in health.findings}:
        health.checks_run.append("filter")
        status, note = filter_doubt(db, canonical, dialect=dialect, golden_rows=len(rows))
        if status != "verified" and note:
            health.add("filter", status, note)
    if cols:
        health.checks_run.append("shape")
        status, note = shape_doubt(question, cols)
        if status != "verified" and note:
            health.add("shape", status, note)
        if not all_null:  # (an all-NULL golden is the 'empty' finding; no number to check)
            health.checks_run.append("plausibility")
            rates = golden.get("rate_columns")
            status, note = gold.check_golden(cols, rate_columns=list(rates) if isinstance(rates, list) else [])
            if status in ("suspect", "verified_wrong") and note:
                health.add("plausibility", status, note)
    _declared(health, golden)
    return health


def _data_checks(health: GoldenHealth, db: Any, canonical: str, dialect: str, columns: Sequence[Any] | None,
                 rows: list[Any], cfg: AnswerConfig) -> None:
    """Items 1 and 2: a literal that misses the data, a data-fragile result. Combined as the judge combines them
    (:func:`~goldeval.answers.fragile.data_doubts`): a literal is why the golden is empty (``verified_wrong``) only
    when the query with its comparisons trimmed and case-folded gives something."""
    health.checks_run += ["literal", "fragile"]
    if not may_doubt_data(db, canonical, dialect):
        return  # the query's tokens and the data's text values show there is nothing to find
    lit = literal_doubt(db, canonical, rows, dialect=dialect)
    (frag, note), norm = fragile_doubt(db, canonical, [str(c) for c in columns] if columns is not None else None, rows,
                                       dialect=dialect, rel_tol=cfg.rel_tol)
    status, text = lit
    if status != "verified" and text:
        if status == "verified_wrong" and (norm is None or golden_misses(norm["rows"])):
            status = "suspect"
            text = text.replace(": the golden is empty because the literal misses the data", "") + (
                "; trimmed and case-folded, the query gives nothing either")
        health.add("literal", status, text)
    if frag != "verified" and note:
        health.add("fragile", frag, note)


def _question_checks(health: GoldenHealth, question: str, canonical: str | None, dialect: str, db: Any) -> None:
    """Item 3: a MAX/MIN or ORDER BY … LIMIT of the canonical query against its question's superlative. With a
    database the reversed query runs, and its row count and first row are in the note (the other reading)."""
    if not canonical or not question:
        return
    health.checks_run.append("direction")
    conflicts = golden_direction_conflicts(question, canonical, dialect)
    if not conflicts:
        return
    c = conflicts[0]
    g = c.measure
    want = "greatest" if c.expected == "max" else "least"
    took = "greatest" if g.direction == "max" else "least"
    note = (f"the canonical query takes {g.how} (the {took} {g.sql}) where the question asks for the "
            f"'{c.word.word}' (the {want} {g.sql}): the golden's direction runs against its question")
    reversed_sql = reversed_query(canonical, g, dialect)
    if db is not None and reversed_sql is not None:
        try:
            res = db.execute(reversed_sql)
        except DatabaseLostError:
            raise
        except QueryError:
            pass
        else:
            first = f", the first {shorten(list(res.rows[0]), 80)}" if res.rows else ""
            note += f"; reversed ({reversed_sql}) it gives {len(res.rows)} row{'' if len(res.rows) == 1 else 's'}{first}"
    health.add("direction", "suspect", note)


def _declared(health: GoldenHealth, golden: Mapping[str, Any]) -> None:
    health.checks_run.append("declared")
    status = golden.get("gold_status")
    if status in ("suspect", "verified_wrong"):
        note = golden.get("gold_note")
        health.add("declared", status, f"the case marks its golden {status}" + (f": {note}" if isinstance(note, str) and note else ""))


# --- a case file ---------------------------------------------------------------------------------------------

def check_goldens(cases: str | Path | Iterable[Mapping[str, Any]], *, db: Any = None, databases: Any = None,
                  config: AnswerConfig | None = None) -> Iterator[GoldenHealth]:
    """Check every case's golden, one case at a time (:func:`check_golden`), in order.

    Args:
        cases: A case file (JSONL, CSV or Parquet, read as ``goldeval judge`` reads it: a row without a usable id,
            a repeated id or a line that is not JSON is a ``broken`` case named by its line), or case mappings.
        db: The open database of cases that name none (``--db``), or ``None``.
        databases: An open :class:`~goldeval.answers.databases.DatabaseDir` (``--db-dir``) for cases that name a
            database (``"db": NAME``), or ``None``.
        config: The judge's options (:func:`check_golden`).

    Yields:
        :class:`GoldenHealth` per case (and per unusable row of a file). A case that names a database that cannot
        be found or opened is ``broken`` (check ``database``) with the reason.

    Raises:
        InputError: the file is missing, empty or not UTF-8.
        DatabaseLostError: a database went away during the run.
    """
    if isinstance(cases, (str, Path)):
        yield from _check_file(Path(cases), db=db, databases=databases, config=config)
        return
    for i, case in enumerate(cases):
        where = f"case {i + 1} (id {case.get('id')!r})" if isinstance(case, Mapping) else f"case {i + 1}"
        if not isinstance(case, Mapping):
            h = GoldenHealth(f"#{i + 1}")
            h.add("golden", "broken", f"{where}: a case must be an object, got {shorten(case)}.")
            yield h
            continue
        yield _one(case, db, databases, config, where, None)


def _check_file(path: Path, *, db: Any, databases: Any, config: AnswerConfig | None) -> Iterator[GoldenHealth]:
    check_input_file(path)
    for item in check_ids(read_rows(path, id_field="id"), file_name=path.name):
        if isinstance(item, RowError):
            h = GoldenHealth(item.id if item.id is not None else f"{path.name}:{item.line}", line=item.line)
            h.add("golden", "broken", item.error)
            yield h
            continue
        yield _one(item.data, db, databases, config, f"{path.name}:{item.line} (id {str(item.data['id'])!r})", item.line)


def _one(case: Mapping[str, Any], db: Any, databases: Any, config: AnswerConfig | None, where: str,
         line: int | None) -> GoldenHealth:
    """One case on the database it names (under *databases*), else on *db*."""
    case_db = db
    if "db" in case:
        name = case["db"]
        reason = None
        if databases is None:
            reason = (f"{where}: the case names the database {name!r}, and no --db-dir was given to find it in. "
                      "Pass --db-dir with the folder of the databases.")
        else:
            try:
                case_db = databases.get(name)
            except InputError as exc:
                reason = f"{where}: {exc}"
        if reason is not None:
            h = GoldenHealth(str(case.get("id")), db=name if isinstance(name, str) else None, line=line)
            h.checks_run.append("database")
            h.add("database", "broken", reason)
            return h
    h = check_golden(case, case_db, config=config, where=where)
    h.line = line
    return h


def summarize_health(healths: Iterable[GoldenHealth | Mapping[str, Any]]) -> dict[str, Any]:
    """The gateable ``aggregate`` of a golden health check.

    Args:
        healths: :class:`GoldenHealth` objects (or their :meth:`~GoldenHealth.to_dict`), one per case.

    Returns:
        ``{"n_cases", "n_healthy", "n_suspect", "n_verified_wrong", "n_broken", "share_healthy", "by_check",
        "undefined"}``: counts of each status; ``share_healthy`` = n_healthy / n_cases, unrounded, in [0, 1];
        ``by_check`` = check → goldens where it fired, over every golden of every case (the primary and each
        alternative count apart, so a check that fires on two goldens of one case counts 2; a finding without a
        ``golden`` key is the primary's). With no case ``share_healthy`` is 0.0 and listed in ``undefined`` (a gate
        on it fails: no evidence).

    Example:
        >>> summarize_health([GoldenHealth("a"), GoldenHealth("b", status="broken")])["share_healthy"]
        0.5
    """
    counts = dict.fromkeys(HEALTH_STATUSES, 0)
    by_check: dict[str, int] = {}
    for h in healths:
        d = h.to_dict() if isinstance(h, GoldenHealth) else h
        counts[d["status"]] += 1
        for _, check in dict.fromkeys((f.get("golden", "primary"), f["check"]) for f in d.get("findings") or []):
            by_check[check] = by_check.get(check, 0) + 1
    n = sum(counts.values())
    return {
        "n_cases": n,
        "n_healthy": counts["healthy"],
        "n_suspect": counts["suspect"],
        "n_verified_wrong": counts["verified_wrong"],
        "n_broken": counts["broken"],
        "share_healthy": counts["healthy"] / n if n else 0.0,
        "by_check": {k: by_check[k] for k in CHECKS if k in by_check},
        "undefined": {} if n else {"share_healthy": "no case was checked"},
    }
