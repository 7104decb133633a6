"""mustNotUse: is a forbidden field read by the final query? Decided on the parsed query, never on its text.

An entry that is a bare field name (``ssn``) or ``table.field`` (``patients.ssn``) is a *field entry*, checked
here. Anything else (``"the discharge summary text"``, ``"do not use the 2023 price list"``) is a *prose entry*,
kept for the LLM judge.

The query is parsed with sqlglot and walked scope by scope (``sqlglot.optimizer.scope``), so:

* a use through a table alias (``FROM patients p … p.ssn``) or inside a CTE or sub-query (``WITH p AS (SELECT ssn
  AS pid FROM patients)``) is caught — the column is resolved against the tables its own scope reads;
* a renamed output (``ssn AS pid``) is still a use of ``ssn``;
* ``SELECT *`` / ``t.*`` over the forbidden field's table is a use when the table's columns are known and hold the
  field, or the entry names that table (``patients.ssn``); so is reading the field from a sub-query or CTE that
  passes a table on through ``SELECT *``; with the columns unknown a bare entry under ``SELECT *`` is *unsure*;
* ``JOIN … USING (field)`` is a use, and so is a ``NATURAL JOIN`` of tables that both hold the field;
* a mention in a comment or a string literal is not a use (the parser keeps neither as a column).

A query sqlglot cannot parse is checked on its token stream instead (identifier tokens only, so comments and
strings still do not count), and the result says so.

Source: ``DESIGN.md`` "Data answers" (mustNotUse), goldeval; the alias/CTE family from getnao/nao#1015.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

__all__ = ["ForbiddenCheck", "split_entries", "check_forbidden"]

_FIELD_ENTRY = re.compile(r"^\s*(?:[A-Za-z_][\w$]*\.)?[A-Za-z_][\w$]*\s*$")


@dataclass(slots=True)
class ForbiddenCheck:
    """Outcome of a mustNotUse check.

    Attributes:
        hits: ``[{"entry", "where"}]``, one per field entry the query reads (``where`` shows the use).
        prose: Entries that are not field names (for the LLM judge).
        parsed: False when the query could not be parsed and the token fallback was used.
        note: Parser message when ``parsed`` is False.
    """

    hits: list[dict[str, str]] = field(default_factory=list)
    prose: list[str] = field(default_factory=list)
    parsed: bool = True
    note: str | None = None
    #: ``[{"entry", "where"}]``: possible uses the rules cannot settle (``SELECT *`` or ``NATURAL JOIN`` over a table
    #: whose columns are unknown: run with ``--db`` so that the schema is read).
    unsure: list[dict[str, str]] = field(default_factory=list)


def _star_reach(scope: object) -> set[str]:
    """Base tables whose every column a scope passes on through ``*`` / ``t.*`` (through nested sub-queries, CTEs
    and set operations), lower-cased."""
    from sqlglot import exp  # start-up: sqlglot loads only when a query is parsed

    expr = getattr(scope, "expression", None)
    if isinstance(expr, exp.SetOperation):
        return set().union(*(_star_reach(u) for u in getattr(scope, "union_scopes", []) or []))
    if not isinstance(expr, exp.Select):
        return set()
    sources = {a.lower(): src for a, src in scope.sources.items()}  # type: ignore[attr-defined]
    out: set[str] = set()
    for proj in expr.expressions:
        if isinstance(proj, exp.Star):
            covered = list(sources.values())
        elif isinstance(proj, exp.Column) and isinstance(proj.this, exp.Star):
            covered = [sources[q]] if (q := (proj.table or "").lower()) in sources else []
        else:
            continue
        for src in covered:
            out |= {src.name.lower()} if isinstance(src, exp.Table) else _star_reach(src)
    return out


def _outputs(scope: object) -> set[str]:
    """Names a derived scope outputs explicitly (aliases and plain columns), lower-cased."""
    from sqlglot import exp  # start-up: sqlglot loads only when a query is parsed

    expr = getattr(scope, "expression", None)
    if isinstance(expr, exp.SetOperation):
        return set().union(*(_outputs(u) for u in getattr(scope, "union_scopes", []) or []))
    if not isinstance(expr, exp.Select):
        return set()
    return {p.alias_or_name.lower() for p in expr.expressions if not isinstance(p, exp.Star)
            and not (isinstance(p, exp.Column) and isinstance(p.this, exp.Star))}


def split_entries(entries: Sequence[str]) -> tuple[list[tuple[str | None, str]], list[str]]:
    """``([(table or None, field)], [prose entries])`` — names lower-cased for matching."""
    fields: list[tuple[str | None, str]] = []
    prose: list[str] = []
    for raw in entries:
        s = str(raw).strip()
        if _FIELD_ENTRY.match(s):
            if "." in s:
                t, f = s.split(".", 1)
                fields.append((t.strip().lower(), f.strip().lower()))
            else:
                fields.append((None, s.lower()))
        else:
            prose.append(s)
    return fields, prose


def _token_fallback(sql: str, fields: list[tuple[str | None, str]], dialect: str | None) -> list[dict[str, str]]:
    from sqlglot.tokens import Tokenizer, TokenType  # start-up: sqlglot loads only when a query is parsed

    try:
        tokens = Tokenizer(dialect=dialect).tokenize(sql) if dialect else Tokenizer().tokenize(sql)
    except Exception:  # a query that cannot even be tokenized: fall back to identifiers by regex without quotes
        stripped = re.sub(r"--[^\n]*|/\*.*?\*/|'(?:[^']|'')*'", " ", sql, flags=re.S)
        words = {w.lower() for w in re.findall(r"[A-Za-z_][\w$]*", stripped)}
        return [{"entry": f"{t}.{f}" if t else f, "where": f"identifier {f} (query not parsed)"} for t, f in fields if f in words]
    idents = {tok.text.lower() for tok in tokens if tok.token_type in (TokenType.VAR, TokenType.IDENTIFIER)}
    return [{"entry": f"{t}.{f}" if t else f, "where": f"identifier {f} (query not parsed)"} for t, f in fields if f in idents]


def check_forbidden(
    sql: str | None,
    entries: Sequence[str],
    *,
    dialect: str | None = "sqlite",
    schema: Mapping[str, Sequence[str]] | None = None,
) -> ForbiddenCheck:
    """Check a final query against mustNotUse entries.

    Args:
        sql: The attempt's final query (``None`` or empty: nothing to check; prose entries are still returned).
        entries: The case's ``must_not_use`` list.
        dialect: sqlglot dialect to parse with (``sqlite``; ``duckdb`` for DuckDB files; ``None`` generic).
        schema: Optional ``{table: [columns]}`` (lower-case) so that ``SELECT *`` over a table counts as reading
            its columns, and unqualified columns resolve to the one table that holds them.

    Returns:
        A :class:`ForbiddenCheck`.
    """
    fields, prose = split_entries(entries)
    out = ForbiddenCheck(prose=prose)
    if not sql or not fields:
        return out
    import sqlglot  # start-up: sqlglot loads only when a query is parsed
    from sqlglot import exp  # start-up: sqlglot loads only when a query is parsed
    from sqlglot.optimizer.scope import traverse_scope  # start-up: sqlglot loads only when a query is parsed

    try:
        trees = [t for t in sqlglot.parse(sql, read=dialect) if t is not None]
        scopes = [s for t in trees for s in traverse_scope(t)]
    except Exception as exc:  # sqlglot raises several error types; any of them means "not parsed"
        out.parsed = False
        out.note = f"sqlglot could not parse the query ({type(exc).__name__}: {str(exc).splitlines()[0][:160]})"
        out.hits = _token_fallback(sql, fields, dialect)
        return out
    schema_l = {k.lower(): {c.lower() for c in v} for k, v in (schema or {}).items()}
    seen: set[str] = set()

    def hit(entry: str, where: str) -> None:
        if entry not in seen:
            seen.add(entry)
            out.hits.append({"entry": entry, "where": where})

    def unsure(entry: str, where: str) -> None:
        if entry not in seen and all(u["entry"] != entry for u in out.unsure):
            out.unsure.append({"entry": entry, "where": where})

    def has_field(table: str, t: str | None, f: str) -> bool | None:
        """Does *table* hold field *f* (for entry ``t.f``)? ``None`` when its columns are unknown."""
        if table in schema_l:
            return f in schema_l[table]
        if t is not None and table == t:
            return True  # the entry itself says that table holds the field
        return None

    for scope in scopes:
        tables = {alias.lower(): src.name.lower() for alias, src in scope.sources.items() if isinstance(src, exp.Table)}
        derived_scopes = {alias.lower(): src for alias, src in scope.sources.items() if not isinstance(src, exp.Table)}
        derived = set(derived_scopes)
        real_tables = set(tables.values())
        for col in scope.columns:
            name = col.name.lower()
            qual = col.table.lower() if col.table else None
            for t, f in fields:
                if name != f:
                    continue
                entry = f"{t}.{f}" if t else f
                # A column read from a sub-query / CTE that passes a table's columns on through SELECT *: the
                # field is read from that table (with the schema known, the inner SELECT * is caught below too).
                via = [derived_scopes[qual]] if qual in derived_scopes else ([] if qual else list(derived_scopes.values()))
                for d in via:
                    if f in _outputs(d):
                        continue
                    for st in sorted(_star_reach(d)):
                        if (t is None or st == t) and has_field(st, t, f) is not False:
                            hit(entry, f"{col.sql()} through SELECT * over {st}")
                if qual is not None:
                    if qual in derived:
                        continue  # a CTE's / sub-query's output column: its own scope is checked on its own
                    table = tables.get(qual, qual)
                    if t is None or table == t:
                        hit(entry, col.sql())
                    continue
                if t is None:
                    if real_tables or not derived:
                        hit(entry, col.sql())
                    continue
                if t in real_tables:
                    if t in schema_l and f not in schema_l[t]:
                        continue  # that table has no such field: the column comes from another table
                    hit(entry, f"{col.sql()} (unqualified, read from {t})")
        # SELECT * / t.* read every column of the tables they cover.
        select = scope.expression if isinstance(scope.expression, exp.Select) else None
        if select is None:
            continue
        # JOIN … USING (f) reads f from both sides; NATURAL JOIN reads every column the joined tables share.
        for join in select.args.get("joins") or []:
            for ident in join.args.get("using") or []:
                if ident.name.lower() in {f for _, f in fields}:
                    for t, f in fields:
                        if f == ident.name.lower() and (t is None or t in real_tables):
                            hit(f"{t}.{f}" if t else f, f"JOIN … USING ({ident.name})")
            if str(join.args.get("method") or "").upper() == "NATURAL":
                for t, f in fields:
                    cands = [tb for tb in sorted(real_tables) if t is None or tb == t]
                    known = [has_field(tb, t, f) for tb in sorted(real_tables)]
                    if not cands:
                        continue
                    if sum(1 for k in known if k) >= 2:
                        hit(f"{t}.{f}" if t else f, f"NATURAL JOIN over {', '.join(sorted(real_tables))}")
                    elif any(k is None for k in known):
                        unsure(f"{t}.{f}" if t else f, f"NATURAL JOIN over {', '.join(sorted(real_tables))} (columns unknown)")
        for proj in select.expressions:
            star_tables: list[str] = []
            if isinstance(proj, exp.Star):
                star_tables = list(real_tables)
            elif isinstance(proj, exp.Column) and isinstance(proj.this, exp.Star):
                q = (proj.table or "").lower()
                if q in tables:
                    star_tables = [tables[q]]
            for t, f in fields:
                for st in star_tables:
                    if t is not None and st != t:
                        continue
                    holds = has_field(st, t, f)
                    if holds:
                        hit(f"{t}.{f}" if t else f, f"{proj.sql()} over {st}")
                    elif holds is None:
                        unsure(f"{t}.{f}" if t else f, f"{proj.sql()} over {st} (its columns are unknown: run with --db)")
    out.unsure = [u for u in out.unsure if u["entry"] not in seen]
    return out
