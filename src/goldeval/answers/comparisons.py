"""Every comparison of a column in a parsed query: with a literal (``=``, ``!=``/``<>``, ``IN``/``NOT IN`` lists,
``LIKE``/``GLOB`` patterns, ``BETWEEN``) or with another column (join keys, correlations, ``IN (SELECT …)``),
wherever it stands (``WHERE``, ``JOIN … ON``, ``HAVING``, subqueries, CTEs, each branch of a set operation), each
column traced through aliases, derived tables and CTEs to the table that stores its values.

The golden's doubts that a query against the data can test (:func:`goldeval.answers.doubt.literal_doubt`, a
literal that misses the data; :mod:`goldeval.answers.fragile`, a result that changes when text comparisons are
trimmed and case-folded) read the canonical query through :func:`query_comparisons`.

Source: ``DESIGN.md`` "Data answers" ("Doubting the golden"); scopes: ``sqlglot.optimizer.scope``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from goldeval.answers.sql import DatabaseLostError

__all__ = ["Comparison", "Stored", "query_comparisons", "literal_value"]


@dataclass(frozen=True, slots=True)
class Stored:
    """Where a compared column's values are stored: the table's and the column's names as the query spells them."""

    table: str
    column: str
    table_quoted: bool = False
    column_quoted: bool = False

    def label(self) -> str:
        """``table.column``, as a note names it."""
        return f"{self.table}.{self.column}"


@dataclass(slots=True)
class Comparison:
    """One comparison of a column, as found in the query tree.

    Attributes:
        node: The comparison's node in the tree (``EQ``, ``NEQ``, ``In``, ``Like``, ``ILike``, ``Glob``,
            ``Between``); the tree is the caller's (a copy when it is to be changed).
        op: ``"="`` (also for ``!=`` and each item of an ``IN`` list: the literal's own test), ``"like"``,
            ``"ilike"``, ``"glob"`` or ``"between"``.
        negated: The comparison keeps the rows the literal does *not* match (``!=``, ``NOT IN``, ``NOT LIKE``,
            ``NOT BETWEEN``, or a ``NOT`` right above it).
        positive: A literal here that matches no row empties the query's result: the comparison stands, not
            negated, in a chain of ``AND`` in a ``WHERE`` / ``HAVING`` / inner ``JOIN … ON`` of a query whose rows
            reach the result (the left of an ``EXCEPT``, a positive ``IN (SELECT …)`` / ``EXISTS``, a CTE or
            derived table).
        column: The compared ``exp.Column``.
        stored: Where its values are stored, or ``None`` when no table could be named.
        literals: The literal operands (``exp.Literal``; in SQLite a double-quoted word that names no column
            is a string too): one for ``=`` / ``LIKE`` / ``GLOB``, each item of an ``IN`` list, ``(low, high)``
            for ``BETWEEN``; empty for a comparison of two columns.
        values: The literals' values (``str``, ``int`` or ``float``), in the order of *literals*.
        other: For two columns: the other column (``exp.Column``), or ``None``.
        other_stored: Where the other column's values are stored.
    """

    node: Any
    op: str
    negated: bool
    positive: bool
    column: Any
    stored: Stored | None
    literals: tuple[Any, ...] = ()
    values: tuple[Any, ...] = ()
    other: Any = None
    other_stored: Stored | None = None

    def shown(self, dialect: str) -> str:
        """The comparison as SQL, with the ``NOT`` right above it (``continent NOT IN ('asia')``), for notes."""
        from sqlglot import exp  # start-up: sqlglot loads only when a query is parsed

        node = self.node.parent if isinstance(self.node.parent, exp.Not) else self.node
        return node.sql(dialect=dialect)


def literal_value(e: Any) -> str | int | float | None:
    """The value of a literal node.

    Args:
        e: A sqlglot node.

    Returns:
        ``'x'``, ``3``, ``-2.5`` for the literals ``'x'``, ``3``, ``-2.5``; ``None`` when *e* is not a literal.
    """
    from sqlglot import exp  # start-up: sqlglot loads only when a query is parsed

    neg = False
    if isinstance(e, exp.Neg):
        neg, e = True, e.this
    if not isinstance(e, exp.Literal):
        return None
    if e.is_string:
        return None if neg else e.this
    try:
        v: int | float = int(e.this)
    except ValueError:
        try:
            v = float(e.this)
        except ValueError:
            return None
    return -v if neg else v


def _positive(node: Any, root: Any) -> bool:
    """True when a comparison *node* that matches nothing empties the result of *root* (see :class:`Comparison`)."""
    from sqlglot import exp  # start-up: sqlglot loads only when a query is parsed

    child = node
    parent = node.parent
    while parent is not None and child is not root:
        key = child.arg_key
        if isinstance(parent, (exp.And, exp.Paren, exp.Where, exp.Having, exp.From, exp.Subquery, exp.CTE, exp.With,
                               exp.Union)):
            pass  # (an empty result has every branch of a UNION empty; an INTERSECT may be empty by its other side)
        elif isinstance(parent, exp.Except):
            if key != "this":  # the rows of EXCEPT's right side are taken away
                return False
        elif isinstance(parent, exp.Join):
            if key not in ("on", "this") or parent.side:  # an outer join keeps its rows without a partner
                return False
        elif isinstance(parent, exp.Select):
            if key not in ("where", "having", "joins", "from", "from_", "with", "with_"):
                return False  # a comparison in a projection, ORDER BY, LIMIT… filters nothing
        elif isinstance(parent, exp.In):
            if key != "query":
                return False
        elif isinstance(parent, exp.Exists):
            pass
        else:
            return False  # NOT, OR, CASE, a scalar comparison with a subquery…
        child, parent = parent, parent.parent
    return True


def query_comparisons(tree: Any, *, dialect: str = "sqlite",
                      schema: Callable[[], Mapping[str, Any]] | None = None) -> list[Comparison]:
    """Every comparison of a column with a literal or with another column in *tree*, in every scope.

    Args:
        tree: A parsed query (``sqlglot`` tree); read, not changed (the nodes returned are its own).
        dialect: Its dialect. In ``sqlite`` a double-quoted word that names no column of the scope's tables is a
            string, as SQLite reads it (Spider's gold SQL writes ``Continent = "Europe"``).
        schema: Returns ``{table (lower): columns (lower, a collection)}``; called only when a column must be
            found among several tables or a double-quoted word read. ``None``: such columns are left untraced.

    Returns:
        The comparisons (:class:`Comparison`), by scope (each CTE and subquery before the query that reads it), in
        the order of the query text within a scope. A comparison whose column cannot be traced to a table keeps
        ``stored`` ``None``.

    Source: scopes of ``sqlglot.optimizer.scope.traverse_scope`` (CTEs, derived tables, subqueries, set operations).
    """
    from sqlglot import exp  # start-up: sqlglot loads only when a query is parsed
    from sqlglot.optimizer.scope import traverse_scope  # start-up: sqlglot loads only when a query is parsed

    try:
        scopes = traverse_scope(tree)
    except Exception:  # noqa: BLE001 - sqlglot cannot scope this query: nothing is traced
        return []
    tables: list[dict[str, set[str]]] = []

    def columns_of(table: str) -> set[str] | None:
        if schema is None:
            return None
        if not tables:
            try:
                tables.append({str(k).lower(): {str(c).lower() for c in v} for k, v in schema().items()})
            except DatabaseLostError:  # the database is gone: the run stops, no doubt made without it
                raise
            except Exception:  # noqa: BLE001 - no schema: columns among several tables stay untraced
                tables.append({})
        return tables[0].get(table.lower())

    def source_has(src: Any, name: str) -> bool | None:
        if isinstance(src, exp.Table):
            cols = columns_of(src.name)
            return None if cols is None else name.lower() in cols
        sel = getattr(src, "expression", None)
        if isinstance(sel, exp.Select):
            return name.lower() in {s.lower() for s in sel.named_selects}
        return None

    def find(scope: Any, col: Any) -> tuple[Any, Any] | None:
        """(source, scope it belongs to) for *col*, looking outwards for a correlated column."""
        s = scope
        while s is not None:
            sources = {str(k).lower(): v for k, v in s.sources.items()}
            if col.table:
                src = sources.get(col.table.lower())
                if src is not None:
                    return src, s
            elif len(sources) == 1 and s is scope:
                return next(iter(sources.values())), s
            else:
                hits = [v for v in sources.values() if source_has(v, col.name)]
                if len(hits) == 1:
                    return hits[0], s
                if len(hits) > 1:
                    return None
            s = s.parent
        return None

    def trace(scope: Any, col: Any, depth: int = 0) -> Stored | None:
        found = find(scope, col)
        if found is None or depth > 8:
            return None
        src, _ = found
        if isinstance(src, exp.Table):
            return Stored(src.name, col.name, bool(src.this.args.get("quoted")), bool(col.this.args.get("quoted")))
        inner = getattr(src, "expression", None)
        if isinstance(inner, exp.Select):
            for proj in inner.expressions:
                if proj.alias_or_name.lower() == col.name.lower():
                    target = proj.this if isinstance(proj, exp.Alias) else proj
                    if isinstance(target, exp.Column) and not isinstance(target.this, exp.Star):
                        return trace(src, target, depth + 1)
                    return None
        return None

    def word_is_string(scope: Any, e: Any) -> bool:
        """SQLite's reading of ``"word"``: a string when no table in reach has such a column."""
        if dialect != "sqlite" or not isinstance(e, exp.Column) or e.table or not e.this.quoted:
            return False
        s = scope
        while s is not None:
            for src in s.sources.values():
                has = source_has(src, e.name)
                if has is None or has:
                    return False
            s = s.parent
        return True

    def literal_of(scope: Any, e: Any) -> Any:
        if literal_value(e) is not None:
            return e
        if word_is_string(scope, e):
            return e
        return None

    def value_of(e: Any) -> Any:
        v = literal_value(e)
        return e.name if v is None else v

    out: list[Comparison] = []
    kinds = (exp.EQ, exp.NEQ, exp.In, exp.Like, exp.ILike, exp.Glob, exp.Between)
    for scope in scopes:
        for node in scope.find_all(*kinds):
            negated = isinstance(node, exp.NEQ) or bool(node.args.get("negate")) or isinstance(node.parent, exp.Not)
            if isinstance(node, exp.In):
                col = node.this
                if not isinstance(col, exp.Column):
                    continue
                query = node.args.get("query")
                if query is not None:
                    sub = query.this if isinstance(query, exp.Subquery) else query
                    if isinstance(sub, exp.Select) and len(sub.expressions) == 1:
                        proj = sub.expressions[0]
                        target = proj.this if isinstance(proj, exp.Alias) else proj
                        sub_scope = next((s for s in scopes if s.expression is sub), None)
                        if isinstance(target, exp.Column) and sub_scope is not None:
                            out.append(Comparison(node, "=", negated, False, col, trace(scope, col),
                                                  other=target, other_stored=trace(sub_scope, target)))
                    continue
                lits = [literal_of(scope, e) for e in node.expressions]
                if not lits or any(x is None for x in lits):
                    continue
                out.append(Comparison(node, "=", negated, _positive(node, tree) and not negated, col, trace(scope, col),
                                      tuple(lits), tuple(value_of(x) for x in lits)))
                continue
            if isinstance(node, exp.Between):
                col, low, high = node.this, literal_of(scope, node.args.get("low")), literal_of(scope, node.args.get("high"))
                if isinstance(col, exp.Column) and low is not None and high is not None:
                    out.append(Comparison(node, "between", negated, _positive(node, tree) and not negated, col,
                                          trace(scope, col), (low, high), (value_of(low), value_of(high))))
                continue
            left, right = node.this, node.expression
            if isinstance(node, (exp.Like, exp.ILike, exp.Glob)):
                if not isinstance(left, exp.Column) or word_is_string(scope, left):
                    continue
                lit = literal_of(scope, right)
                if lit is None or not isinstance(value_of(lit), str):
                    continue
                op = "like" if isinstance(node, exp.Like) else "ilike" if isinstance(node, exp.ILike) else "glob"
                out.append(Comparison(node, op, negated, _positive(node, tree) and not negated, left, trace(scope, left),
                                      (lit,), (value_of(lit),)))
                continue
            # = / != : a column against a literal (either side), or two columns.
            lit_r, lit_l = literal_of(scope, right), literal_of(scope, left)
            if isinstance(left, exp.Column) and lit_l is None and lit_r is not None:
                col, lit = left, lit_r
            elif isinstance(right, exp.Column) and lit_r is None and lit_l is not None:
                col, lit = right, lit_l
            elif isinstance(left, exp.Column) and isinstance(right, exp.Column) and lit_l is None and lit_r is None:
                out.append(Comparison(node, "=", negated, False, left, trace(scope, left),
                                      other=right, other_stored=trace(scope, right)))
                continue
            else:
                continue
            out.append(Comparison(node, "=", negated, _positive(node, tree) and not negated, col, trace(scope, col),
                                  (lit,), (value_of(lit),)))
    return out
