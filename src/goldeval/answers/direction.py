"""A golden whose direction runs against its question: the question asks for the youngest, the golden takes
``MAX(age)`` (or ``ORDER BY age DESC LIMIT 1``), and the prediction took the other direction.

The question's superlative and ordering words are data (:data:`SUPERLATIVES`: word → the direction of the measure
it names → the role of that measure), and so are the column roles (:data:`ROLE_TOKENS`); an age word read on a
date or year column is inverted (:data:`INVERTED`: the oldest singer has the greatest age and the *least*
birth year). The canonical query's measures (:func:`query_measures`) are its ``MAX``/``MIN`` aggregates, the first
key of an ``ORDER BY … LIMIT`` (anywhere in the query), and the first key of the top ``ORDER BY`` without a limit
(read only against a "from the oldest" ordering phrase). A measure runs against its question when every word that
names it asks for the other direction (:func:`golden_direction_conflicts`; a golden that agrees with its question
is never doubted).

Against a prediction (:func:`direction_doubt`, run only when the rule verdict is not ``match``): the golden is
``suspect`` only when the prediction took the other direction, read from its query with sqlglot (a measure of the
same column, or of a count where the golden's is a count, in the question's direction) or, when its query shows
none, from its rows: they equal the rows of the canonical query with that measure reversed (one probe, on the
database). The note names both readings, and the verdict's details hold them (with the reversed query's rows) for
the LLM judge: a doubted golden never yields a confident ``no_match`` (``answer.not_confident_against_doubt``).

Source: goldeval issue 26, item 3; ``DESIGN.md`` "Data answers", "Doubting the golden".
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from goldeval.answers.answer import judge_answer
from goldeval.answers.column_names import name_tokens, role_tags
from goldeval.answers.doubt import parsed_query, sql_dialect
from goldeval.answers.sql import QueryError
from goldeval.errors import InputError

__all__ = ["INVERTED", "ROLE_TOKENS", "SUPERLATIVES", "DirectionConflict", "DirectionDoubt", "Measure", "Superlative",
           "direction_doubt", "golden_direction_conflicts", "query_measures", "question_superlatives", "reversed_query"]

#: A superlative or ordering word (or two-word phrase) of a question → (the direction of the measure it names:
#: ``"max"`` the greatest, ``"min"`` the least; the role that measure must have). Roles: ``age``, ``time``,
#: ``price``, ``count`` (see :data:`ROLE_TOKENS`), and ``any`` (the measure the words after it name: "the largest
#: population", "the most students"). Two-word phrases are read before their single words.
SUPERLATIVES: Mapping[str, tuple[str, str]] = {
    # age: how long something has existed (on a date or year column, the other way round: INVERTED)
    "youngest": ("min", "age"), "oldest": ("max", "age"), "eldest": ("max", "age"), "newest": ("min", "age"),
    # time: when something happened
    "earliest": ("min", "time"), "latest": ("max", "time"), "first": ("min", "time"), "last": ("max", "time"),
    "most recent": ("max", "time"), "most recently": ("max", "time"), "least recent": ("min", "time"),
    "least recently": ("min", "time"),
    # price
    "cheapest": ("min", "price"), "dearest": ("max", "price"), "priciest": ("max", "price"),
    "most expensive": ("max", "price"), "least expensive": ("min", "price"),
    # count: how often
    "most often": ("max", "count"), "least often": ("min", "count"),
    # any measure: the one the words after it name (a count when they name none: "the most common", "the fewest")
    "most common": ("max", "any"), "least common": ("min", "any"), "most popular": ("max", "any"),
    "least popular": ("min", "any"), "most frequent": ("max", "any"), "least frequent": ("min", "any"),
    "most frequently": ("max", "any"), "least frequently": ("min", "any"), "fewest": ("min", "any"),
    "most": ("max", "any"), "least": ("min", "any"), "highest": ("max", "any"), "lowest": ("min", "any"),
    "largest": ("max", "any"), "smallest": ("min", "any"), "biggest": ("max", "any"), "greatest": ("max", "any"),
    "maximum": ("max", "any"), "minimum": ("min", "any"), "longest": ("max", "any"), "shortest": ("min", "any"),
    "tallest": ("max", "any"), "heaviest": ("max", "any"), "lightest": ("min", "any"),
}

#: The name tokens (:func:`~goldeval.answers.column_names.name_tokens`, stemmed) that give a measured column a role.
#: A ``time`` column is also any column whose tokens carry the ``time`` role tag (year, date, month…).
ROLE_TOKENS: Mapping[str, frozenset[str]] = {
    "age": frozenset({"age"}),
    "birth": frozenset({"birth", "born", "dob", "birthday", "birthdate"}),
    "time": frozenset({"founded", "founding", "built", "established", "opened", "created", "released", "release",
                       "start", "started", "joined", "hired", "hire", "since", "debut", "launched", "launch"}),
    "price": frozenset({"price", "cost", "fee", "fare", "charge", "rent", "pricing"}),
    "count": frozenset({"count"}),
}

#: A word's role → the column roles on which its direction is read the other way round: the oldest has the
#: greatest age but the least birth date, founding year or release date.
INVERTED: Mapping[str, frozenset[str]] = {"age": frozenset({"birth", "time"})}

#: Words after which a superlative word is not one ("at least 2", "at most", "first name", "in the last year").
_NOT_BEFORE = {"least": {"at"}, "most": {"at"}}
_NOT_AFTER_FIRST_LAST = {"name", "names", "initial", "initials"}
_RELATIVE_WINDOW = re.compile(r"\b(?:in|over|for|during|within|since)\s+the\s+(?:first|last)\b")
_WORD = re.compile(r"[a-z]+")
#: How many words after a superlative name its measure ("the largest number of students").
_NOUN_WINDOW = 4
_NOUN_STOP = {"and", "or", "in", "among", "with", "who", "which", "that", "for", "from", "to", "by", "of", "the", "a", "an"}


@dataclass(frozen=True, slots=True)
class Superlative:
    """One superlative or ordering word of a question.

    Attributes:
        word: The word or phrase as :data:`SUPERLATIVES` spells it.
        direction: ``"max"`` | ``"min"``: the direction of the measure it names.
        role: Its role (:data:`SUPERLATIVES`).
        noun: The name tokens of the words after it (up to :data:`_NOUN_WINDOW`, to the first stop word after
            one): the measure it names ("population" for "the largest population").
        ordering: It follows "from (the)" ("from the oldest to the youngest"): the direction of an order.
    """

    word: str
    direction: str
    role: str
    noun: frozenset[str]
    ordering: bool


@dataclass(frozen=True, slots=True)
class Measure:
    """One place where a query takes a direction.

    Attributes:
        sql: The measured expression (``T1.age``, ``COUNT(*)``).
        tokens: The name tokens of its columns (``count`` for a ``COUNT``).
        is_count: It counts (``COUNT`` anywhere in it, or a column named as a count).
        direction: ``"max"`` (``MAX``, ``ORDER BY … DESC``) | ``"min"`` (``MIN``, ``ORDER BY … ASC``).
        how: How the query takes it (``ORDER BY age DESC LIMIT 1``, ``MAX(age)``).
        kind: ``"aggregate"`` | ``"limit"`` (an ``ORDER BY`` with a ``LIMIT``) | ``"order"`` (the top
            ``ORDER BY`` without one).
        index: Its place in :func:`query_measures`' walk of the query (what :func:`reversed_query` reverses).
    """

    sql: str
    tokens: frozenset[str]
    is_count: bool
    direction: str
    how: str
    kind: str
    index: int


@dataclass(frozen=True, slots=True)
class DirectionConflict:
    """A measure of the canonical query that runs against the question's words for it."""

    measure: Measure
    word: Superlative
    expected: str  # the direction the word asks of this measure ("max" | "min")


@dataclass(slots=True)
class DirectionDoubt:
    """``(status, note)`` and the details of a golden doubted for its direction (:func:`direction_doubt`)."""

    status: str
    note: str
    details: dict[str, Any] = field(default_factory=dict)


def _first_last_excluded(words: list[str], i: int, text: str, start: int) -> bool:
    nxt = words[i + 1] if i + 1 < len(words) else ""
    return nxt in _NOT_AFTER_FIRST_LAST or bool(_RELATIVE_WINDOW.search(text[max(0, start - 24): start + 6]))


@lru_cache(maxsize=1024)
def question_superlatives(question: str) -> tuple[Superlative, ...]:
    """The superlative and ordering words of *question*, in order (:data:`SUPERLATIVES`).

    Not read as superlatives: "at least" / "at most", "first name" / "last name", "in the last year". A word
    after "from (the)" is an ordering word (``ordering``); the word after "to (the)" that closes such a phrase
    ("from the oldest to the youngest") is dropped, its direction being the phrase's end, not its order.

    Args:
        question: The case's question.

    Returns:
        ``(Superlative, ...)``; empty when the question has none.
    """
    text = (question or "").lower()
    found = [(m.group(0), m.start()) for m in _WORD.finditer(text)]
    words = [w for w, _ in found]
    out: list[Superlative] = []
    i = 0
    ordering_open = False
    while i < len(words):
        two = f"{words[i]} {words[i + 1]}" if i + 1 < len(words) else ""
        word = two if two in SUPERLATIVES else words[i] if words[i] in SUPERLATIVES else None
        if word is None:
            i += 1
            continue
        width = 2 if word == two else 1
        before = [w for w in words[max(0, i - 2): i]]
        prev = [w for w in before if w != "the"]
        if before and before[-1] in _NOT_BEFORE.get(word, ()) or (len(before) == 2 and before == ["at", "the"] and word in ("least", "most")):
            i += width
            continue
        if word in ("first", "last") and _first_last_excluded(words, i, text, found[i][1]):
            i += width
            continue
        ordering = bool(prev) and prev[-1] == "from"
        closing = bool(prev) and prev[-1] == "to" and ordering_open
        ordering_open = ordering or (ordering_open and not closing)
        if closing:
            i += width
            continue
        noun: list[str] = []
        for w in words[i + width: i + width + _NOUN_WINDOW]:
            if w in _NOUN_STOP and noun:
                break
            if w not in _NOUN_STOP:
                noun.append(w)
        direction, role = SUPERLATIVES[word]
        out.append(Superlative(word, direction, role, frozenset(name_tokens(" ".join(noun))), ordering))
        i += width
    return tuple(out)


def _column_roles(tokens: frozenset[str], is_count: bool) -> set[str]:
    roles = {r for r, toks in ROLE_TOKENS.items() if tokens & toks}
    if "time" in role_tags(tuple(tokens)):
        roles.add("time")
    if is_count:
        roles.add("count")
    return roles


def _expected(word: Superlative, m: Measure) -> str | None:
    """The direction *word* asks of measure *m* when the word's role fits it (``None`` when it does not): the
    word's own on a column of its role (or on any measure, for role ``any``), the other on an inverted one."""
    if word.role == "any":
        return word.direction
    roles = _column_roles(m.tokens, m.is_count)
    if word.role in roles:
        return word.direction
    if roles & INVERTED.get(word.role, frozenset()):
        return "min" if word.direction == "max" else "max"
    return None


def _names(word: Superlative, m: Measure) -> bool:
    """The words after *word* name measure *m* ("the largest population" names ``population``)."""
    return bool(word.noun & (m.tokens - {"count"})) or (m.is_count and "count" in word.noun)


def _fits(word: Superlative, m: Measure, words: Sequence[Superlative], measures: Sequence[Measure]) -> str | None:
    """The direction *word* asks of *m*, or ``None`` when *word* is not about *m*."""
    if (m.kind == "order") != word.ordering:
        return None  # an ordering phrase reads an order; a superlative reads a choice (MAX/MIN or LIMIT)
    expected = _expected(word, m)
    if expected is None:
        return None
    if word.role != "any" or _names(word, m):
        return expected
    # A word whose following words name no measure: a count ("the most students"), unless they name another
    # measure of the query; else the only measure of a query whose question has only this word.
    if any(_names(word, o) for o in measures if o is not m):
        return None
    if m.is_count or (len(words) == 1 and len(measures) == 1):
        return expected
    return None


def _measure_nodes(tree: Any) -> list[tuple[Any, Any, str]]:
    """The direction-taking nodes of *tree* in a fixed walk: ``(node, measured expression, kind)``; ``node`` is
    an ``exp.Max``/``exp.Min`` or the first ``exp.Ordered`` of an ORDER BY."""
    from sqlglot import exp  # heavy: imported when a query is first read

    out: list[tuple[Any, Any, str]] = []
    setop = exp.SetOperation if hasattr(exp, "SetOperation") else exp.Union
    queries = [tree] + [s for s in tree.find_all(exp.Select, setop) if s is not tree]
    for q in queries:
        order = q.args.get("order")
        if order is None or not order.expressions:
            continue
        limit = q.args.get("limit")
        kind = "limit" if limit is not None else "order" if q is tree else None
        if kind is None:
            continue
        first = order.expressions[0]
        out.append((first, _resolve(q, first.this), kind))
    for agg in tree.find_all(exp.Max, exp.Min):
        if agg.this is not None and not agg.expressions:
            out.append((agg, agg.this, "aggregate"))
    return out


def _resolve(query: Any, e: Any) -> Any:
    """An ORDER BY key read through the SELECT it sorts: a position (``ORDER BY 2``) or an alias (``ORDER BY n``
    for ``COUNT(*) AS n``) becomes the projected expression."""
    from sqlglot import exp  # heavy: imported when a query is first read

    projections = list(query.expressions) if isinstance(query, exp.Select) else []
    if isinstance(e, exp.Literal) and e.is_int and 1 <= int(e.this) <= len(projections):
        return projections[int(e.this) - 1].unalias()
    if isinstance(e, exp.Column) and not e.table:
        for p in projections:
            if p.alias and p.alias.lower() == e.name.lower():
                return p.unalias()
    return e


def _measure_of(node: Any, e: Any, kind: str, index: int, dialect: str) -> Measure:
    from sqlglot import exp  # heavy: imported when a query is first read

    toks: set[str] = set()
    for c in ([e] if isinstance(e, exp.Column) else list(e.find_all(exp.Column))):
        toks.update(name_tokens(c.name))
    is_count = isinstance(e, exp.Count) or e.find(exp.Count) is not None or "count" in toks
    if is_count:
        toks.add("count")
    text = e.sql(dialect=dialect)
    if isinstance(node, exp.Ordered):
        desc = bool(node.args.get("desc"))
        direction = "max" if desc else "min"
        query = node.find_ancestor(exp.Select, exp.SetOperation if hasattr(exp, "SetOperation") else exp.Union)
        lim = query.args.get("limit") if query is not None else None
        how = f"ORDER BY {text} {'DESC' if desc else 'ASC'}" + (f" {lim.sql(dialect=dialect)}" if lim is not None else "")
    else:
        direction = "max" if isinstance(node, exp.Max) else "min"
        how = node.sql(dialect=dialect)
    return Measure(text, frozenset(toks), is_count, direction, how, kind, index)


@lru_cache(maxsize=1024)
def query_measures(sql: str, dialect: str = "sqlite") -> tuple[Measure, ...] | None:
    """The places where *sql* takes a direction: ``MAX``/``MIN`` aggregates, the first key of each ``ORDER BY …
    LIMIT``, and the first key of the top ``ORDER BY`` without a limit; ``None`` when it does not parse.

    Args:
        sql: A query.
        dialect: Its sqlglot dialect.

    Returns:
        ``(Measure, ...)`` in a fixed walk of the query (:attr:`Measure.index`).
    """
    tree = parsed_query(sql, dialect)  # shared: only read here
    if tree is None:
        return None
    return tuple(_measure_of(node, e, kind, i, dialect) for i, (node, e, kind) in enumerate(_measure_nodes(tree)))


@lru_cache(maxsize=1024)
def golden_direction_conflicts(question: str, canonical: str, dialect: str = "sqlite") -> tuple[DirectionConflict, ...]:
    """The measures of *canonical* that run against *question*: every word of the question about the measure
    (:data:`SUPERLATIVES`, roles :data:`ROLE_TOKENS`, inverted on :data:`INVERTED`) asks for the other direction.

    A measure no word is about, or that one word about it agrees with ("the maximum and the minimum age"), is no
    conflict. Parsing only: no query runs.

    Args:
        question: The case's question.
        canonical: The golden's canonical query.
        dialect: Its sqlglot dialect.

    Returns:
        ``(DirectionConflict, ...)``, empty when the golden agrees with its question (or either says nothing).
    """
    words = question_superlatives(question)
    if not words:
        return ()
    measures = query_measures(canonical, dialect) or ()
    out = []
    for m in measures:
        asks = [(w, e) for w in words if (e := _fits(w, m, words, measures)) is not None]
        if asks and all(e != m.direction for _, e in asks):
            out.append(DirectionConflict(m, asks[0][0], asks[0][1]))
    return tuple(out)


def reversed_query(sql: str, measure: Measure, dialect: str = "sqlite") -> str | None:
    """*sql* with *measure* taken the other way (``MAX`` ↔ ``MIN``, ``ASC`` ↔ ``DESC``), or ``None`` when it does
    not parse or has no such measure."""
    from sqlglot import exp  # heavy: imported when a query is first read

    tree = parsed_query(sql, dialect)
    if tree is None:
        return None
    tree = tree.copy()  # the parse is shared
    nodes = _measure_nodes(tree)
    if measure.index >= len(nodes):
        return None
    node = nodes[measure.index][0]
    if isinstance(node, exp.Ordered):
        desc = not node.args.get("desc")
        node.set("desc", desc)
        # Where NULLs go is the dialect's default for the new direction, as if the query had been written so.
        node.set("nulls_first", _default_nulls_first(dialect, desc))
    else:
        other = exp.Min if isinstance(node, exp.Max) else exp.Max
        node.replace(other(this=node.this.copy()))
    return tree.sql(dialect=sql_dialect(dialect))


@lru_cache(maxsize=16)
def _default_nulls_first(dialect: str, desc: bool) -> Any:
    """The ``nulls_first`` sqlglot's parser gives an ORDER BY key of *dialect* written without NULLS FIRST/LAST."""
    from sqlglot import exp  # heavy: imported when a query is first read

    tree = parsed_query(f"SELECT 1 ORDER BY 1 {'DESC' if desc else 'ASC'}", dialect)
    ordered = tree.find(exp.Ordered) if tree is not None else None
    return ordered.args.get("nulls_first") if ordered is not None else None


def _reading(direction: str, m: Measure) -> str:
    return f"the {'greatest' if direction == 'max' else 'least'} {m.sql}"


def _prediction_takes(conflict: DirectionConflict, final_query: str | None, question: str, dialect: str) -> tuple[str, str] | None:
    """``(how, "query")`` when the prediction's query takes the conflict's measure the question's way (and never
    the golden's); ``None`` when its query shows nothing either way."""
    if not final_query:
        return None
    measures = query_measures(final_query, dialect)
    if not measures:
        return None
    words = question_superlatives(question)
    g = conflict.measure
    ways = []
    for pm in measures:
        same = bool((pm.tokens - {"count"}) & (g.tokens - {"count"})) or (pm.is_count and g.is_count)
        expected = _fits(conflict.word, pm, words, measures) if same else None
        if expected is not None:
            ways.append((pm, pm.direction == expected))
    if ways and all(agrees for _, agrees in ways):
        return (ways[0][0].how, "query")
    return None


def direction_doubt(question: str, golden: Mapping[str, Any], prediction: Mapping[str, Any], *,
                    final_query: str | None = None, db: Any = None, dialect: str = "sqlite",
                    rel_tol: float | None = None, max_rows_shown: int = 20) -> DirectionDoubt | None:
    """A ``suspect`` doubt when the golden's canonical query takes a measure against its question's word and the
    prediction took the other direction; else ``None``.

    Call it only when golden and prediction disagree (a rule verdict other than ``match``): the reversed query
    runs on *db* only then. The prediction took the other direction when its query takes the same measure the
    question's way (sqlglot), or, when its query shows nothing either way, when its rows equal the reversed
    canonical query's (judged as the rule judge judges rows). With a database, the reversed query's rows are kept
    in the details either way (the other reading, for the LLM judge).

    Args:
        question: The case's question.
        golden: The golden (``canonical_query``, ``top_n``?, ``ordered``?).
        prediction: ``{"columns", "rows"}`` (the re-executed final query or the reported rows), or text only.
        final_query: The prediction's query, if any.
        db: A read-only database (``execute(sql)``) for the reversed query, or ``None``.
        dialect: sqlglot dialect of both queries.
        rel_tol: Numeric tolerance for comparing the prediction with the reversed rows (the judge's default).
        max_rows_shown: Rows of the reversed query kept in the details.

    Returns:
        :class:`DirectionDoubt` (status ``suspect``, a note that begins "the canonical query" and names both
        readings, details under ``direction``) or ``None``.
    """
    canonical = golden.get("canonical_query")
    if not isinstance(canonical, str) or not question:
        return None
    conflicts = golden_direction_conflicts(question, canonical, dialect)
    if not conflicts:
        return None
    c = conflicts[0]
    g = c.measure
    details: dict[str, Any] = {
        "question_word": c.word.word,
        "question_reading": _reading(c.expected, g),
        "golden_reading": f"{g.how}: {_reading(g.direction, g)}",
    }
    reversed_sql = reversed_query(canonical, g, dialect)
    details["reversed_query"] = reversed_sql
    took = _prediction_takes(c, final_query, question, dialect)
    probe_equal: bool | None = None
    if db is not None and reversed_sql is not None:
        try:
            res = db.execute(reversed_sql)
        except QueryError as exc:
            details["reversed_error"] = str(exc)
        else:
            rows = [list(r) for r in res.rows]
            details["reversed_columns"] = list(res.columns)
            details["reversed_rows"] = rows[:max_rows_shown]
            details["reversed_row_count"] = len(rows)
            if prediction.get("rows") is not None:
                probe_equal = _equals_reversed(question, golden, reversed_sql, list(res.columns), rows, prediction, rel_tol)
                details["prediction_equals_reversed"] = probe_equal
    if took is not None:
        how = f"its query takes {took[0]}"
    elif probe_equal:
        how = "its rows are the reversed query's"
    else:
        return None
    details["prediction_reading"] = how
    note = (f"the canonical query takes {g.how} ({_reading(g.direction, g)}) where the question asks for the "
            f"'{c.word.word}' ({_reading(c.expected, g)}), and the prediction took the other direction ({how}): "
            "the golden's direction runs against its question")
    return DirectionDoubt("suspect", note, details)


def _equals_reversed(question: str, golden: Mapping[str, Any], reversed_sql: str, columns: list[str],
                     rows: list[list[Any]], prediction: Mapping[str, Any], rel_tol: float | None) -> bool:
    """The prediction's rows answer the reversed reading: the rule judge gives them ``match`` or ``near_match``
    against the reversed query's rows (its top-N direction reversed too)."""
    other: dict[str, Any] = {"kind": "value", "columns": columns, "rows": rows, "canonical_query": reversed_sql}
    if golden.get("ordered"):
        other["ordered"] = True
    top = golden.get("top_n")
    if isinstance(top, Mapping) and top.get("by") in columns:
        d = str(top.get("direction", "desc")).lower()
        other["top_n"] = {"n": top.get("n"), "by": top.get("by"), "direction": "asc" if d.startswith("desc") else "desc"}
    pred = {"columns": prediction.get("columns"), "rows": prediction.get("rows")}
    try:
        kw: dict[str, Any] = {} if rel_tol is None else {"rel_tol": rel_tol}
        v = judge_answer(question, other, pred, **kw)
    except InputError:
        return False
    return v.verdict in ("match", "near_match") or (v.details.get("rule_verdict") or {}).get("verdict") in ("match", "near_match")
