"""Relabelled columns, one rule for any number of them: a golden column of codes answered by a column of names (or
the reverse) pairs with it when the database shows the mapping, one-to-one on these rows.

Where the mapping comes from (:func:`database_mappings`): the same table row (a table holding both columns:
``Semesters(semester_id, semester_name)``), or a lookup table a foreign key reaches (``countrylanguage.CountryCode``
→ ``country.Code``, read with ``country.Name``). A mapping counts when it is one-to-one on the rows that hold the
golden's values or the prediction's (each code one name, each name one code). The prediction's labels are read
back through it as the golden's, and the rule judge judges again: ``match`` there is ``match`` here, its ``why``
naming each relabel and its table (:func:`relabel_verdict`). When no database shows a mapping but the rows do (the
other columns line the rows up, and each relabelled column is a bijection onto labels the golden never uses, over
at least 3 values), the verdict is ``needs_human``: a name where a code was given may or may not answer.

Runs only when golden and prediction disagree (a rule verdict other than ``match``); its queries (a few ``SELECT
DISTINCT`` of two columns, and ``PRAGMA foreign_key_list`` on SQLite) run only then.

Source: goldeval issue 26, item 4; ``DESIGN.md`` "Data answers", "Relabelled columns".
"""

from __future__ import annotations

import weakref
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from goldeval.answers.answer import judge_answer
from goldeval.answers.column_names import name_tokens, role_tags
from goldeval.answers.sql import QueryError
from goldeval.errors import InputError
from goldeval.verdict import Verdict

__all__ = ["LabelMapping", "database_mappings", "relabel_verdict", "rows_bijection"]

#: Distinct values past which a column is not looked up (its IN list would be the query's whole text).
_MAX_VALUES = 500
#: A bijection the rows alone show needs at least this many distinct values (fewer is no evidence of a map).
_MIN_ROWS_BIJECTION = 3


@dataclass(frozen=True, slots=True)
class LabelMapping:
    """A one-to-one mapping the database shows between a golden column's values and a prediction column's.

    Attributes:
        golden: The golden column's name.
        prediction: The prediction column's name.
        table: The table whose rows hold the mapping.
        via: ``"the same row, T's key k and its label"`` or ``"a foreign key c → T.k"``.
        to_golden: Prediction value → golden value, for the values of these rows.
    """

    golden: str
    prediction: str
    table: str
    via: str
    to_golden: Mapping[Any, Any]


def _key(v: Any) -> Any:
    """A cell as a lookup key: a whole float as its int (SQLite gives 13 where a golden may hold 13.0)."""
    if isinstance(v, float) and v.is_integer():
        return int(v)
    return v


def _literal(v: Any) -> str | None:
    """A cell as a SQLite literal for a lookup's ``IN`` list: a number as Python writes it (a whole float as its
    int), a string between single quotes with each ``'`` doubled, ``None`` for NULL, a boolean or another type.

    The string is the text sqlglot's SQLite generator prints for ``exp.Literal.string(v)`` (SQLite has no backslash
    escapes: only the quote is doubled), written directly: the generator cost about as much as the lookup's query
    on a 500-value list, and a relabel check asks one or two a column pair (issue 31 item 5: a quarter of the GPT-4
    zero-shot file's judge time). tests/unit/test_answers_relabel.py compares the two texts.
    """
    if isinstance(v, bool) or v is None:
        return None
    if isinstance(v, (int, float)):
        return repr(_key(v))
    if isinstance(v, str):
        return "'" + v.replace("'", "''") + "'"
    return None


def _ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _pairs(db: Any, table: str, a: str, b: str, a_values: Sequence[Any], b_values: Sequence[Any]) -> list[tuple[Any, Any]] | None:
    """``SELECT DISTINCT a, b FROM table WHERE a IN (…) OR b IN (…)``; ``None`` when it cannot be asked."""
    la = [x for x in map(_literal, a_values) if x is not None]
    lb = [x for x in map(_literal, b_values) if x is not None]
    if not la or not lb:
        return None
    sql = (f"SELECT DISTINCT {_ident(a)}, {_ident(b)} FROM {_ident(table)} WHERE {_ident(a)} IN ({', '.join(la)}) "
           f"OR {_ident(b)} IN ({', '.join(lb)})")
    try:
        return [(_key(x), _key(y)) for x, y in db.execute(sql).rows]
    except QueryError:
        return None


def _one_to_one(pairs: Sequence[tuple[Any, Any]], g_values: set[Any], p_values: set[Any]) -> dict[Any, Any] | None:
    """Prediction value → golden value when *pairs* map each golden value to one label and each label to one
    value (among the rows that hold either), every golden value has one and so does every predicted label."""
    fwd: dict[Any, set[Any]] = {}
    back: dict[Any, set[Any]] = {}
    for a, b in pairs:
        if a is None or b is None:
            continue
        fwd.setdefault(a, set()).add(b)
        back.setdefault(b, set()).add(a)
    if any(len(s) != 1 for s in fwd.values()) or any(len(s) != 1 for s in back.values()):
        return None
    if not g_values <= fwd.keys() or not p_values <= back.keys():
        return None
    return {b: next(iter(s)) for b, s in back.items()}


#: The keys of each open database, read once (two PRAGMAs a table): its foreign keys and primary keys.
_KEYS: weakref.WeakKeyDictionary[Any, tuple[list[tuple[str, str, str, str]], dict[str, set[str]]]] = weakref.WeakKeyDictionary()


def _keys(db: Any) -> tuple[list[tuple[str, str, str, str]], dict[str, set[str]]]:
    """``(foreign keys, primary keys)`` of a SQLite database, lower-cased (else ``([], {})``), read once per open
    database: foreign keys as ``(table, column, referenced table, referenced column)``, primary keys as
    ``{table: {column, ...}}``."""
    try:
        known = _KEYS.get(db)
    except TypeError:  # a database object that takes no weak reference: read each time
        known = None
    if known is not None:
        return known
    out = _read_keys(db)
    try:
        _KEYS[db] = out
    except TypeError:
        pass
    return out


def _read_keys(db: Any) -> tuple[list[tuple[str, str, str, str]], dict[str, set[str]]]:
    if getattr(db, "engine", "sqlite") != "sqlite":
        return [], {}
    fks: list[tuple[str, str, str, str]] = []
    pks: dict[str, set[str]] = {}
    for table in db.schema():
        try:
            rows = db.execute(f"PRAGMA foreign_key_list({_ident(table)})").rows
            info = db.execute(f"PRAGMA table_info({_ident(table)})").rows
        except QueryError:
            continue
        for r in rows:  # (id, seq, table, from, to, on_update, on_delete, match)
            if r[3] and r[4]:
                fks.append((table.lower(), str(r[3]).lower(), str(r[2]).lower(), str(r[4]).lower()))
        pks[table.lower()] = {str(r[1]).lower() for r in info if r[5]}  # (cid, name, type, notnull, default, pk)
    return fks, pks


def _names_on_a_side(g_rows: Sequence[Sequence[Any]], gi: int, p_rows: Sequence[Sequence[Any]], pj: int) -> bool:
    """Whether golden column *gi* or prediction column *pj* holds names (a text cell that is not a number): a relabel
    answers codes with names or names with codes. Two numeric columns in a one-to-one map are one measure
    transformed (cents for dollars, ×100), which the rule judge reads as such, never a relabel."""
    def names(rows: Sequence[Sequence[Any]], j: int) -> bool:
        for r in rows:
            v = r[j]
            if isinstance(v, str):
                try:
                    float(v)
                except ValueError:
                    return True
        return False

    return names(g_rows, gi) or names(p_rows, pj)


def _is_label(name: str, values: set[Any]) -> bool:
    """A column that names things: text cells, and a name that is not an id, a code or a key."""
    toks = set(name_tokens(name))
    return bool(values) and all(isinstance(v, str) for v in values) and not ("id" in role_tags(tuple(toks))
                                                                             or toks & {"code", "key"})


def database_mappings(db: Any, golden_name: str, golden_values: Sequence[Any], pred_name: str,
                      pred_values: Sequence[Any]) -> list[LabelMapping]:
    """The one-to-one mappings *db* shows between a golden column and a prediction column, lookup tables first.

    Args:
        db: A read-only database (``schema()``, ``execute(sql)``).
        golden_name, pred_name: The two columns' names (as the queries name them: a table's column).
        golden_values, pred_values: Their cells on these rows.

    Returns:
        ``[LabelMapping, ...]``: through a table a foreign key of a column named *golden_name* (or *pred_name*)
        reaches, holding the other column; then through any table holding both columns. Empty when none is
        one-to-one on these rows, when either column holds more than 500 values, or the names are one column.
    """
    g_name, p_name = golden_name.lower(), pred_name.lower()
    g_vals = {_key(v) for v in golden_values if v is not None}
    p_vals = {_key(v) for v in pred_values if v is not None}
    if g_name == p_name or not g_vals or not p_vals or len(g_vals) > _MAX_VALUES or len(p_vals) > _MAX_VALUES:
        return []
    try:
        schema = {t: {c.lower(): c for c in cols} for t, cols in db.schema().items()}
    except Exception:  # noqa: BLE001 - no schema, no mapping
        return []
    # (table, golden-side column, prediction-side column, via): one side the table's key (the referenced column of
    # a foreign key, or its primary key), the other a label (text, not an id): two attributes of one row (a
    # singer's name and song) are not a relabel of each other.
    fks, pks = _keys(db)
    candidates: list[tuple[str, str, str, str]] = []

    def labels(cols: Mapping[str, str], named: str, key: str, values: set[Any]) -> list[str]:
        # The label column: the one of that name, else (an alias in the query) each label-like column of the table
        if named in cols:
            return [cols[named]] if _is_label(named, values) else []
        return [c for low, c in cols.items() if low != key and _is_label(low, values)]

    for _table, col, ref, key in fks:
        ref_cols = schema.get(ref) or next((c for t, c in schema.items() if t.lower() == ref), {})
        if key not in ref_cols:
            continue
        via = f"a foreign key {col} → {ref}.{key}"  # the column's name: which table the query read it from is not known
        if col == g_name:
            candidates += [(ref, ref_cols[key], c, via) for c in labels(ref_cols, p_name, key, p_vals)]
        if col == p_name:
            candidates += [(ref, c, ref_cols[key], via) for c in labels(ref_cols, g_name, key, g_vals)]
    for table, cols in schema.items():
        for key in pks.get(table.lower(), set()):
            via = f"the same row, {table}'s key {key} and its label"
            if key == g_name:
                candidates += [(table, cols[key], c, via) for c in labels(cols, p_name, key, p_vals)]
            if key == p_name:
                candidates += [(table, c, cols[key], via) for c in labels(cols, g_name, key, g_vals)]
    out, seen = [], set()
    for table, a, b, via in candidates:
        if (table.lower(), a.lower(), b.lower()) in seen:
            continue
        seen.add((table.lower(), a.lower(), b.lower()))
        pairs = _pairs(db, table, a, b, sorted(g_vals, key=repr), sorted(p_vals, key=repr))
        to_golden = _one_to_one(pairs, g_vals, p_vals) if pairs is not None else None
        if to_golden is not None:
            out.append(LabelMapping(golden_name, pred_name, table, via, to_golden))
    return out


def rows_bijection(g_rows: Sequence[Sequence[Any]], p_rows: Sequence[Sequence[Any]], g_key: Sequence[int],
                   p_key: Sequence[int], g_col: int, p_col: int) -> bool:
    """True when the rows alone show column *p_col* to be *g_col* relabelled: the key columns (*g_key* / *p_key*,
    paired in order) identify each row once on both sides and the same keys, and across them each golden value
    meets one predicted label and each label one value, over at least 3 values, no label being a golden value.

    Args:
        g_rows, p_rows: The golden's rows ``(n, k_g)`` and the prediction's ``(n, k_p)``.
        g_key, p_key: Column indices of the paired columns that line the rows up, in pairing order.
        g_col, p_col: The golden column and the prediction column tried as its relabel.

    Returns:
        Whether the rows show the bijection (``False`` without key columns, or with rows of other counts).
    """
    if not g_key or len(g_rows) != len(p_rows):
        return False
    g_by = {tuple(_key(r[i]) for i in g_key): _key(r[g_col]) for r in g_rows}
    p_by = {tuple(_key(r[i]) for i in p_key): _key(r[p_col]) for r in p_rows}
    if len(g_by) != len(g_rows) or len(p_by) != len(p_rows) or g_by.keys() != p_by.keys():
        return False
    pairs = {(g_by[k], p_by[k]) for k in g_by}
    gs, ps = {a for a, _ in pairs}, {b for _, b in pairs}
    return (None not in gs and None not in ps and len(gs) >= _MIN_ROWS_BIJECTION and len(pairs) == len(gs) == len(ps)
            and not gs & ps)


def relabel_verdict(question: str, golden: Mapping[str, Any], prediction: Mapping[str, Any], verdict: Any, *,
                    db: Any = None, rel_tol: float | None = None) -> Any:
    """The verdict with relabelled columns read as the golden's, or ``None`` when no column is relabelled.

    The golden columns that are unpaired, or paired with a column that shares none of their values, are the
    candidates; each is tried against the prediction columns no other golden column uses. With *db*, a mapping
    the database shows (:func:`database_mappings`) reads the labels back as the golden's values, and the rule judge
    judges again: a ``match`` returns ``match`` (its confidence one lower, the ``why`` naming each relabel and its
    table, ``details["relabel"]``). Else, when every candidate finds a column the rows alone show as a bijection
    (:func:`rows_bijection`, keyed by the other paired columns), ``needs_human``.

    Args:
        question: The case's question.
        golden: The golden, with its rows (``columns``, ``rows``).
        prediction: ``{"columns", "rows"}``.
        verdict: The rule verdict (a :class:`~goldeval.verdict.Verdict`, not ``match``).
        db: A read-only database, or ``None``.
        rel_tol: The judge's numeric tolerance (its default when ``None``).

    Returns:
        A new :class:`~goldeval.verdict.Verdict`, or ``None`` (the verdict stands).
    """
    g_names, g_rows = golden.get("columns"), golden.get("rows")
    p_names, p_rows = prediction.get("columns"), prediction.get("rows")
    if not (isinstance(g_names, list) and isinstance(g_rows, list) and isinstance(p_names, list) and isinstance(p_rows, list)):
        return None
    if not g_rows or not p_rows or any(not isinstance(r, (list, tuple)) for r in list(g_rows) + list(p_rows)):
        return None
    pairing = dict(verdict.column_pairing or {})
    p_index = {n: j for j, n in enumerate(p_names)}

    def shares_a_value(g: str, p: str | None) -> bool:
        if p is None or p not in p_index or g not in g_names:
            return False
        gi, pj = g_names.index(g), p_index[p]
        return bool({_key(r[gi]) for r in g_rows} & {_key(r[pj]) for r in p_rows})

    candidates = [g for g in g_names if not shares_a_value(g, pairing.get(g))]
    if not candidates:
        return None
    used = {p for g, p in pairing.items() if p is not None and g not in candidates}
    free = [p for p in p_names if p not in used]
    kw: dict[str, Any] = {} if rel_tol is None else {"rel_tol": rel_tol}
    if db is not None:
        found: list[LabelMapping] = []
        taken: set[str] = set()
        for g in candidates:
            gi = g_names.index(g)
            for p in free:
                if p in taken:
                    continue
                pj = p_index[p]
                maps = database_mappings(db, g, [r[gi] for r in g_rows], p, [r[pj] for r in p_rows])
                if maps:
                    found.append(maps[0])
                    taken.add(p)
                    break
        if found and len(found) == len(candidates):
            rows = [list(r) for r in p_rows]
            names = list(p_names)
            for m in found:
                j = p_index[m.prediction]
                for r in rows:
                    r[j] = m.to_golden.get(_key(r[j]), r[j])
                names[j] = m.golden
            try:
                again = judge_answer(question, golden, {"columns": names, "rows": rows}, **kw)
            except InputError:
                again = None
            if again is not None and again.verdict == "match":
                told = "; ".join(f"'{m.prediction}' for golden '{m.golden}' through table {m.table} ({m.via}, one-to-one "
                                 f"on these rows)" for m in found)
                again.why = f"{again.why.rstrip('.')}, once relabelled columns are read back: {told}."
                again.column_pairing = {g: (next((m.prediction for m in found if m.golden == g), p))
                                        for g, p in again.column_pairing.items()}
                again.confidence = max(6, (again.confidence or 10) - 1)
                again.gold_status, again.gold_note = verdict.gold_status, verdict.gold_note
                again.details["relabel"] = [{"golden": m.golden, "prediction": m.prediction, "table": m.table,
                                             "via": m.via} for m in found]
                again.details["rule_verdict_before_relabel"] = {"verdict": verdict.verdict, "why": verdict.why}
                return again
    # Only the rows can show it: each candidate a bijection onto a free column, the other paired columns as keys.
    keys = [(g_names.index(g), p_index[p]) for g, p in pairing.items()
            if g not in candidates and p is not None and p in p_index and g in g_names]
    if not keys:
        return None
    shown = []
    taken = set()
    for g in candidates:
        gi = g_names.index(g)
        hit = next((p for p in free if p not in taken and _names_on_a_side(g_rows, gi, p_rows, p_index[p]) and rows_bijection(
            g_rows, p_rows, [k for k, _ in keys], [k for _, k in keys], gi, p_index[p])), None)
        if hit is None:
            return None
        taken.add(hit)
        shown.append(f"'{hit}' for golden '{g}'")
    if verdict.verdict == "needs_human":
        return None  # already undecided (one relabelled column, read by rows.py the same way)
    details = dict(verdict.details)
    details["rule_verdict"] = {"verdict": verdict.verdict, "confidence": verdict.confidence, "why": verdict.why}
    details["undecided_because"] = "relabelled columns"
    return Verdict("needs_human", None, True,
                   f"The rows are the golden's with relabelled columns ({', '.join(shown)}: a one-to-one map onto labels "
                   "the golden never uses, every other value right), and no table of the database shows the mapping: "
                   "whether those labels answer the question is not a rule's call.",
                   column_pairing=dict(verdict.column_pairing or {}), gold_status=verdict.gold_status,
                   gold_note=verdict.gold_note, located=verdict.located,
                   mismatch=f"relabelled columns: {', '.join(shown)}", details=details)
