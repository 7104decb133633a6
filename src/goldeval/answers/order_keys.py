"""The order key of an ordered golden: ``golden.order_by`` as given, or the ORDER BY of its ``canonical_query``
parsed with sqlglot and mapped onto the golden's columns.

A key is ``(golden column name or None, direction)``; ``None`` where the canonical query orders by an expression
that is not an output column (the key is then not among the columns, and cannot be checked from them).

Source: goldeval issue 11, items 3 and 4 (a secondary ORDER BY key pins a tie-break; rows tied on the key may come
in any order).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any

from goldeval.answers.doubt import parsed_query
from goldeval.errors import InputError, shorten

__all__ = ["OrderKey", "apply_order_key", "check_order_by", "order_keys"]

OrderKey = tuple[str | None, str]

_DIRS = {"asc": "asc", "ascending": "asc", "desc": "desc", "descending": "desc"}


def check_order_by(golden: Mapping[str, Any], names: Sequence[str] | None, where: str, *, name: str = "golden") -> None:
    """``golden.order_by`` is ``[{"column", "direction"?}, ...]`` (or ``["col", ...]``) naming golden columns. *name*
    is the golden's field path in messages (``golden.alternatives[1]`` for an alternative golden).

    Raises:
        InputError: any other shape, an unknown column, or a direction other than asc/desc.
    """
    spec = golden.get("order_by")
    if spec is None:
        return
    if not isinstance(spec, list) or not spec:
        raise InputError(f"{where} {name}: 'order_by' must be a non-empty list of {{\"column\", \"direction\"}}, got {shorten(spec)}. Fix the case row.")
    for item in spec:
        col, direction = (item, "asc") if isinstance(item, str) else (
            (item.get("column"), item.get("direction", "asc")) if isinstance(item, Mapping) else (None, None))
        if not isinstance(col, str) or (names is not None and col not in list(names)):
            raise InputError(f"{where} {name}: order_by column must name one of the golden columns {list(names or [])}, "
                             f"got {shorten(item)}. Name the golden column the rows are sorted by.")
        if not isinstance(direction, str) or direction.lower() not in _DIRS:
            raise InputError(f"{where} {name}: order_by direction must be 'asc' or 'desc', got {shorten(direction)}. Fix the case row.")


def order_keys(golden: Mapping[str, Any], names: Sequence[str], *, dialect: str = "sqlite") -> list[OrderKey] | None:
    """The golden's order key, or ``None`` when neither ``order_by`` nor a parseable canonical ORDER BY gives one.

    Args:
        golden: The golden object (``order_by``, ``canonical_query``).
        names: ``(k,)`` golden column names, in the canonical query's SELECT order.
        dialect: sqlglot dialect of the canonical query.

    Returns:
        ``[(column or None, "asc" | "desc"), ...]``; ``column`` is ``None`` for an ORDER BY expression that is not
        an output column.
    """
    spec = golden.get("order_by")
    if isinstance(spec, list) and spec:
        out: list[OrderKey] = []
        for item in spec:
            if isinstance(item, str):
                out.append((item, "asc"))
            elif isinstance(item, Mapping):
                out.append((str(item.get("column")), _DIRS.get(str(item.get("direction", "asc")).lower(), "asc")))
        return out
    canonical = golden.get("canonical_query")
    if not isinstance(canonical, str):
        return None
    return _canonical_keys(canonical, list(names), dialect)


def _canonical_keys(canonical: str, names: list[str], dialect: str) -> list[OrderKey] | None:
    keys = _keys_cached(canonical, tuple(names), dialect)  # parsed once per query; a fresh list for the caller
    return list(keys) if keys is not None else None


@lru_cache(maxsize=512)
def _keys_cached(canonical: str, names_t: tuple[str, ...], dialect: str) -> list[OrderKey] | None:
    from sqlglot import exp  # start-up: sqlglot loads only when a query is parsed


    names = list(names_t)
    tree = parsed_query(canonical, dialect)  # shared with the golden's doubt checks: only read here
    if tree is None:
        return None
    order = tree.args.get("order") if isinstance(tree, (exp.Select, exp.Union)) else None
    if order is None:
        return None
    select = tree if isinstance(tree, exp.Select) else None
    projections = list(select.expressions) if select is not None else []
    norm = lambda e: e.sql(dialect=dialect).lower().replace(" ", "").replace('"', "").replace("`", "")  # noqa: E731
    out: list[OrderKey] = []
    for o in order.expressions:
        e = o.this
        direction = "desc" if o.args.get("desc") else "asc"
        col: str | None = None
        if isinstance(e, exp.Literal) and e.is_int and 1 <= int(e.this) <= len(names):
            col = names[int(e.this) - 1]
        else:
            key = norm(e)
            for i, p in enumerate(projections):
                if i >= len(names):
                    break
                alias = p.alias.lower() if p.alias else None
                if norm(p.unalias()) == key or (alias and alias == key):
                    col = names[i]
                    break
            else:
                # An unqualified column that a projection reads under its own name (ORDER BY name … SELECT T1.name).
                if isinstance(e, exp.Column):
                    hits = [names[i] for i, p in enumerate(projections[: len(names)])
                            if isinstance(p.unalias(), exp.Column) and p.unalias().name.lower() == e.name.lower()
                            and (not e.table or p.unalias().table.lower() == e.table.lower())]
                    col = hits[0] if len(hits) == 1 else None
        out.append((col, direction))
    return out


def _sorted_by(cols: Sequence[Any], dirs: Sequence[str], fold: bool) -> bool:
    """True when the rows (cells of *cols*, each a :class:`~goldeval.answers.values.Column` of the same length) are
    sorted lexicographically by the columns in *dirs* (NULL first ascending, as SQLite sorts it)."""
    def keys(col: Any) -> list[tuple[int, Any]]:
        # A column's sort keys, read once (issue 15: a NumPy scalar a cell cost more than the comparison).
        if col.numeric:
            return [(0, 0.0) if x != x else (1, x) for x in col.num.tolist()]  # (x != x: NaN, a NULL)
        return [(0, "") if v is None else (1, str(v).casefold() if fold else str(v)) for v in col.raw]

    rows = list(zip(*map(keys, cols))) if cols else []
    for a, b in zip(rows, rows[1:]):
        for ka, kb, d in zip(a, b, dirs):
            if ka == kb:
                continue
            if (ka < kb) != (d == "asc"):
                return False
            break
    return True


def apply_order_key(rc: Any, pcols: Sequence[Any], pairing: Any, keys: list[OrderKey] | None) -> None:
    """Decide the order of an ordered golden's rows by its key, in place on *rc* (a
    :class:`~goldeval.answers.rows.RowComparison` whose rows all met: ``rc.order`` set).

    Rows tied on the key may come in any order; rows must be sorted by the key whatever the other columns do.
    A key column that is not among the columns (an ORDER BY expression) makes an order that differs ``unknown``:
    only then is "the order key is not among the columns" said. Text keys pass sorted as the database compares
    text (binary) or case-insensitively.
    """
    if rc.order is None or rc.order == "same" or not keys:
        return
    names = list(pairing.golden_names)
    known: list[tuple[Any, str]] = []
    missing = []
    for col, direction in keys:
        if col is None or col not in names or names.index(col) not in pairing.index:
            missing.append(col or "an expression")
            break
        known.append((pcols[pairing.index[names.index(col)]], direction))
    if known:
        cols, dirs = [c for c, _ in known], [d for _, d in known]
        ok = _sorted_by(cols, dirs, fold=False) or _sorted_by(cols, dirs, fold=True)
        shown = ", ".join(f"{c} {d}" for (c, d) in keys[: len(known)])
        if not ok:
            rc.order = "different"
            rc.mismatch = f"same rows, not sorted by the order key ({shown}) the question asks for"
            return
        if not missing:
            rc.order = "ties reordered"
            rc.mismatch = None
            return
    rc.order = "unknown"
    rc.mismatch = (f"same rows, order differs and the order key ({', '.join(map(str, missing))}) is not among the columns")
