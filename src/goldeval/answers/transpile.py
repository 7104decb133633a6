"""Translate a query written for another engine (SQLite, as Spider's and the clinic example's are) to PostgreSQL.

sqlglot does the translation (``strftime`` → ``TO_CHAR``, SQLite's NULL ordering made explicit, ``||``, …). Seven
SQLite meanings it does not carry over are repaired here, because without them the same answer changes its rows
when it moves to PostgreSQL:

* a comparison is an integer 0/1 in SQLite: ``SUM(source = 'x')``, ``AVG(a > b)`` and ``(a = b) + 1`` get
  ``CAST(… AS INTEGER)`` (PostgreSQL has no ``sum(boolean)``);
* SQLite's ``ROUND(x, n)`` takes a double: the argument is cast to ``NUMERIC`` (PostgreSQL has only
  ``round(numeric, int)``);
* SQLite's ``LIKE`` ignores ASCII case: it becomes ``ILIKE``;
* SQLite's names ignore case, quoted or not: a table or column name is written with the catalog's spelling (quoted
  when that has capitals), an output name (``AS Share``) as written and every reference to it so, and any other
  name (a table alias) in lower case;
* SQLite names an unaliased result column by its text (``count(*)``), PostgreSQL by the function (``count``):
  the SQLite name is given as an alias, since the judge reads names as evidence;
* a sub-query in FROM may go without a name in SQLite: it is given one (``_subquery1``…);
* SQLite reads a double-quoted name that is no column and no alias as a string (``WHERE Continent = "Asia"``): with
  the catalog known, such a name becomes a string literal.

What remains different is reported, not hidden: a query the translation cannot make valid fails on the server
with PostgreSQL's message, and that case is unscored with the message.

Source: goldeval issue 13; SQLite documentation, "Datatypes" (boolean expressions are 0/1) and "LIKE"
(case-insensitive for ASCII); PostgreSQL documentation, "Mathematical Functions" (``round(numeric, integer)``).
"""

from __future__ import annotations

import contextlib
import logging
import re
from collections.abc import Iterator, Mapping, Sequence

from goldeval.answers.query_bounds import QueryError

__all__ = ["quiet_sqlglot", "to_postgres"]

_SIMPLE_NAME = re.compile(r"^[a-z_][a-z0-9_$]*$")


@contextlib.contextmanager
def quiet_sqlglot() -> Iterator[None]:
    """sqlglot logs a warning when it falls back to an opaque Command; library code does not print."""
    log = logging.getLogger("sqlglot")
    level = log.level
    log.setLevel(logging.ERROR)
    try:
        yield
    finally:
        log.setLevel(level)


def to_postgres(sql: str, *, read: str = "sqlite", schema: Mapping[str, Sequence[str]] | None = None) -> str:
    """The PostgreSQL text of *sql*, read in the dialect *read*.

    Args:
        sql: The query as written (one statement is expected; more are translated too, and then refused by the
            read-only guard).
        read: The sqlglot dialect it is written in (``sqlite``, ``duckdb``, ``mysql``, …). The repairs listed in
            the module docstring apply when it is ``sqlite``.
        schema: ``{table: [columns]}`` with the database's own spelling (for the case of names); ``None``: names
            are only lower-cased.

    Returns:
        The translated SQL, statements joined by ``;``.

    Raises:
        QueryError: sqlglot cannot read or translate it (its message included).
    """
    import sqlglot  # start-up: sqlglot loads only when a query is parsed

    try:
        with quiet_sqlglot():
            trees = [t for t in sqlglot.parse(sql, read=read) if t is not None]
            if read == "sqlite":
                trees = [_repair_sqlite(t, schema or {}) for t in trees]
            out = [t.sql(dialect="postgres") for t in trees if type(t).__name__ != "Semicolon"]
    except Exception as exc:  # sqlglot raises several error types
        raise QueryError(f"cannot translate the query from {read} to PostgreSQL (sqlglot: "
                         f"{str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__}).") from None
    if not out:
        raise QueryError("the query is empty once its comments are removed.")
    return "; ".join(out)


def _repair_sqlite(tree, schema: Mapping[str, Sequence[str]]):
    from sqlglot import exp  # start-up: sqlglot loads only when a query is parsed

    # SQLite names an unaliased result column by its text (``count(*)``, ``MAX(transcript_date)``); PostgreSQL by
    # the function alone (``count``, ``max``). The judge reads names as evidence, so the SQLite name is kept.
    outer = tree
    while isinstance(outer, exp.SetOperation):
        outer = outer.this
    if isinstance(outer, exp.Select):
        for proj in list(outer.expressions):
            if not isinstance(proj, (exp.Alias, exp.Column, exp.Star)):
                name = proj.sql(dialect="sqlite")[:63]
                proj.replace(exp.Alias(this=proj.copy(), alias=exp.Identifier(this=name, quoted=True)))
    # SQLite allows a sub-query in FROM without a name; PostgreSQL before 16 does not.
    for i, sub in enumerate(list(tree.find_all(exp.Subquery))):
        if not sub.alias and isinstance(sub.parent, (exp.From, exp.Join)):
            sub.set("alias", exp.TableAlias(this=exp.Identifier(this=f"_subquery{i + 1}")))
    tables = {t.lower(): t for t in schema}
    columns: dict[str, str] = {}
    for cols in schema.values():
        for c in cols:
            columns.setdefault(c.lower(), c)
    boolean = (exp.Predicate, exp.Connector, exp.Not)
    numeric_parents = (exp.Sum, exp.Avg, exp.Min, exp.Max, exp.Add, exp.Sub, exp.Mul, exp.Div, exp.Mod, exp.Neg)

    def numeric_context(node) -> bool:
        parent = node.parent
        while isinstance(parent, exp.Paren):
            node, parent = parent, parent.parent
        if isinstance(parent, numeric_parents):
            return True
        if isinstance(parent, (exp.EQ, exp.NEQ, exp.GT, exp.GTE, exp.LT, exp.LTE)):
            other = parent.expression if parent.this is node else parent.this
            return isinstance(other, exp.Literal) and not other.is_string
        return False

    if columns:
        # SQLite reads a double-quoted name that names no column as a string ("English"); PostgreSQL never does.
        named = {str(a.alias).lower() for a in tree.find_all(exp.Alias)}
        named |= {str(a.name).lower() for a in tree.find_all(exp.TableAlias)}
        for col in list(tree.find_all(exp.Column)):
            ident = col.this
            if (isinstance(ident, exp.Identifier) and ident.args.get("quoted") and not col.table
                    and str(ident.this).lower() not in columns and str(ident.this).lower() not in named):
                col.replace(exp.Literal.string(str(ident.this)))
    for node in list(tree.walk()):
        if isinstance(node, boolean) and numeric_context(node):
            node.replace(exp.Cast(this=exp.Paren(this=node.copy()), to=exp.DataType.build("INT")))
    for node in list(tree.find_all(exp.Round)):
        arg = node.this
        if node.args.get("decimals") is not None and not (isinstance(arg, exp.Cast) and arg.to.is_type("decimal")):
            arg.replace(exp.Cast(this=arg.copy(), to=exp.DataType.build("DECIMAL")))
    for node in list(tree.find_all(exp.Like)):
        node.replace(exp.ILike(this=node.this.copy(), expression=node.expression.copy()))
    # An output name keeps its spelling (SQLite names the column as written); a reference to it in any case meets it.
    aliases = {str(a.alias).lower(): str(a.alias) for a in tree.find_all(exp.Alias) if a.alias}
    for ident in list(tree.find_all(exp.Identifier)):
        name = str(ident.this)
        parent = ident.parent
        if isinstance(parent, exp.Table) and parent.args.get("this") is ident:
            spelled = tables.get(name.lower())
        elif isinstance(parent, exp.Column) and parent.args.get("this") is ident:
            spelled = columns.get(name.lower()) or (aliases.get(name.lower()) if not parent.table else None)
        elif isinstance(parent, exp.Alias) and parent.args.get("alias") is ident:
            spelled = name
        else:
            spelled = None
        if spelled is None:
            spelled = name.lower()
        ident.set("this", spelled)
        ident.set("quoted", bool(ident.args.get("quoted")) or not _SIMPLE_NAME.match(spelled))
    return tree
