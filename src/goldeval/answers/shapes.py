"""Input shapes of the data-answer judge: tables out of golden and prediction objects, and the case's options
(``ordered``, ``top_n``, ``rate_columns``, ``gold_status``, ``must_not_use``, ``rubric``) checked before judging.

A malformed shape or option is an :class:`~goldeval.errors.InputError` (the case is unscored with the message),
never a verdict.

Source: ``DESIGN.md`` "Data formats", goldeval.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from operator import itemgetter
from typing import Any

from goldeval.answers.order_keys import check_order_by
from goldeval.answers.values import Column, make_column
from goldeval.errors import InputError, shorten
from goldeval.verdict import GOLD_STATUSES

try:  # the optional C fast path (see _fast.c); the transposing pass of table_columns stays the definition and fallback
    from goldeval._fast import columns_of as _fast_columns_of
except ImportError:  # pragma: no cover - the extension is optional
    _fast_columns_of = None

_MARKERS = ("PREFERRED", "ACCEPT", "DIVERGENT", "WRONG", "REQUIRED", "CREDITED")


def answer_table(obj: Mapping[str, Any], where: str, *, columns_required: bool) -> tuple[list[str], list[list[Any]]]:
    """``(columns, rows)`` from ``{"columns", "rows"}`` (rows as lists, or as objects keyed by column)."""
    rows = obj.get("rows")
    cols = obj.get("columns")
    if not isinstance(rows, list):
        raise InputError(f"{where}: 'rows' must be a list of rows, got {shorten(rows)}. Give rows as lists of cells.")
    if rows and isinstance(rows[0], dict) and all(isinstance(r, dict) for r in rows):
        if cols is None:
            cols = list(rows[0].keys())
        if isinstance(cols, list):
            want = set(cols)
            for i, r in enumerate(rows):
                if r.keys() != want:  # a missing key is not NULL, and an unknown key is not dropped in silence
                    lacks, unknown = sorted(map(str, want - r.keys())), sorted(map(str, r.keys() - want))
                    raise InputError(f"{where}: row {i + 1} has keys {sorted(map(str, r.keys()))}, expected exactly the columns {cols}"
                                     + (f" (missing {lacks})" if lacks else "") + (f" (not a column: {unknown})" if unknown else "")
                                     + ". Give every row every column (null for NULL), or list the columns.")
            rows = [[r[c] for c in cols] for r in rows]
    if cols is None:
        if columns_required:
            raise InputError(f"{where}: 'columns' is required with 'rows'. List the column names.")
        width = len(rows[0]) if rows and isinstance(rows[0], list) else 1
        cols = [f"col{i + 1}" for i in range(width)]
    if not isinstance(cols, list) or not all(isinstance(c, str) for c in cols):
        raise InputError(f"{where}: 'columns' must be a list of names, got {shorten(cols)}.")
    width = len(cols)
    if set(map(type, rows)) <= {list, tuple} and set(map(len, rows)) <= {width}:
        return list(cols), rows  # the usual case: rows as lists or tuples (what a database cursor returns)
    out = []
    for i, r in enumerate(rows):
        if not isinstance(r, (list, tuple)):
            r = [r] if width == 1 else r
        if not isinstance(r, (list, tuple)) or len(r) != width:
            got = f"{len(r)} cells" if isinstance(r, (list, tuple)) else shorten(r)
            raise InputError(f"{where}: row {i + 1} has {got}, expected {width} cells (one per column). Fix the row.")
        out.append(list(r))
    return list(cols), out


def golden_table(golden: Mapping[str, Any], where: str, *, name: str = "golden") -> tuple[list[str], list[list[Any]]] | None:
    """The golden as a table (a scalar ``value`` is a one-row table), or ``None`` when it has neither. *name* is the
    golden's field path in messages (``golden.alternatives[1]`` for an alternative golden)."""
    if "rows" in golden and golden["rows"] is not None:
        return answer_table(golden, f"{where} {name}", columns_required=True)
    if "value" in golden:
        cols = golden.get("columns") or ["value"]
        if not isinstance(cols, list) or len(cols) != 1:
            raise InputError(f"{where} {name}: a scalar 'value' takes one column name, got columns {shorten(cols)}.")
        return [str(cols[0])], [[golden["value"]]]
    return None


def golden_alternatives(golden: Mapping[str, Any], where: str) -> list[dict[str, Any]]:
    """The alternative goldens of a case (``golden.alternatives``), each checked as a golden is checked.

    An alternative is another right answer to the question: a full golden of kind ``value`` (``rows`` with
    ``columns``, a ``value``, and/or a ``canonical_query``; ``order_by``, ``ordered``, ``top_n``, ``rate_columns`` as
    on the golden), inheriting nothing from the primary golden.

    Args:
        golden: The case's golden (the primary); its ``alternatives`` is read.
        where: Prefix for messages (the case row: ``"cases.jsonl:4 (id 'q7')"``).

    Returns:
        The alternatives in their order, each a new dict (``[]`` when the golden has none, or ``null``).

    Raises:
        InputError: naming the case row and the field path (``golden.alternatives[1].rows``): ``alternatives`` is
            not a list, or is given on a golden whose kind is not ``value``; an alternative is not an object, is of
            another kind, holds alternatives itself, gives no answer (no rows, value or canonical query), or has a
            malformed table or option (the messages of :func:`golden_table` and :func:`check_golden_options`).

    Example:
        >>> golden_alternatives({"columns": ["n"], "rows": [[1]], "alternatives": [{"value": 2}]}, "case 'q'")
        [{'value': 2}]
    """
    alts = golden.get("alternatives")
    if alts is None:
        return []
    if not isinstance(alts, list):
        raise InputError(f"{where} golden.alternatives: must be a list of goldens (each an object with 'rows' and "
                         f"'columns', a 'value' or a 'canonical_query'), got {shorten(alts)}. Fix the case row.")
    kind = golden.get("kind", "value")
    if alts and kind != "value":
        raise InputError(f"{where} golden.alternatives: alternatives are other right answers of a 'value' golden, and "
                         f"this golden's kind is {shorten(kind)}. Drop 'alternatives', or make the golden a 'value' golden.")
    out = []
    for i, alt in enumerate(alts):
        path = f"golden.alternatives[{i}]"
        if not isinstance(alt, Mapping):
            raise InputError(f"{where} {path}: must be an object (a golden: 'rows' with 'columns', a 'value' or a "
                             f"'canonical_query'), got {shorten(alt)}. Fix the case row.")
        if alt.get("kind", "value") != "value":
            raise InputError(f"{where} {path}.kind: an alternative golden is a 'value' golden (rows or a value), got "
                             f"{shorten(alt.get('kind'))}. Drop 'kind' or write \"value\".")
        if "alternatives" in alt:
            raise InputError(f"{where} {path}.alternatives: an alternative golden holds no alternatives of its own. "
                             "List every alternative in golden.alternatives.")
        rows, cols, canonical = alt.get("rows"), alt.get("columns"), alt.get("canonical_query")
        if rows is None and "value" not in alt and canonical is None:
            raise InputError(f"{where} {path}: an alternative golden needs 'rows' (with 'columns'), a 'value' or a "
                             f"'canonical_query', got the keys {sorted(map(str, alt))}. Add the answer it stands for.")
        if rows is not None and not isinstance(rows, list):
            raise InputError(f"{where} {path}.rows: must be a list of rows (each a list of cells, or an object keyed "
                             f"by column), got {shorten(rows)}. Fix the case row.")
        if cols is not None and not (isinstance(cols, list) and all(isinstance(c, str) for c in cols)):
            raise InputError(f"{where} {path}.columns: must be a list of column names, got {shorten(cols)}. Fix the case row.")
        if canonical is not None and not isinstance(canonical, str):
            raise InputError(f"{where} {path}.canonical_query: must be the SQL text, got {shorten(canonical)}. Fix the case row.")
        table = golden_table(alt, where, name=path)
        check_golden_options(alt, table[0] if table is not None else cols, where, name=path)
        out.append(dict(alt))
    return out


_DIRECTIONS = {"desc": "desc", "descending": "desc", "asc": "asc", "ascending": "asc"}


def check_case_lists(case: Mapping[str, Any], where: str) -> None:
    """``must_not_use`` and ``rubric`` must be lists (a bare string would be read one character at a time);
    ``coverage`` (issue 16), when given, a string."""
    for key, what in (("must_not_use", "field names or prose entries"), ("rubric", "clauses")):
        val = case.get(key)
        if val is not None and not isinstance(val, list):
            raise InputError(f"{where}: '{key}' must be a list of {what}, got {shorten(val)}. "
                             f"Wrap it in a list, e.g. [{shorten(val)}].")
    cov = case.get("coverage")
    if cov is not None and not isinstance(cov, str):
        raise InputError(f"{where}: 'coverage' must be a string such as \"derivable\", got {shorten(cov)}. Fix the case row.")


def check_golden_options(golden: Mapping[str, Any], names: Sequence[str] | None, where: str, *, name: str = "golden"
                          ) -> None:
    """The golden's options (``ordered``, ``top_n``, ``order_by``, ``rate_columns``, ``gold_status``) are well formed.

    A malformed option is an input error (the case is unscored with this message), never a verdict: a ``top_n``
    whose ``by`` names no golden column would otherwise fail every answer, a ``rate_columns`` typo would silently
    drop the percentage rule, and a bare string ``top_n`` crashed the run. *name* is the golden's field path in
    messages (``golden.alternatives[1]`` for an alternative golden).
    """
    ordered = golden.get("ordered")
    if ordered is not None and not isinstance(ordered, bool):
        raise InputError(f"{where} {name}: 'ordered' must be true or false, got {shorten(ordered)}. Fix the case row.")
    cols = list(names or [])
    top = golden.get("top_n")
    if top is not None:
        if not isinstance(top, Mapping):
            raise InputError(f"{where} {name}: 'top_n' must be an object {{\"n\", \"by\", \"direction\"}}, got {shorten(top)}. Fix the case row.")
        by = top.get("by")
        if not isinstance(by, str) or (names is not None and by not in cols):
            raise InputError(f"{where} {name}: top_n 'by' must name one of the golden columns {cols}, got {shorten(by)}. "
                             "Name the column the top-N is ranked by.")
        direction = top.get("direction", "desc")
        if not isinstance(direction, str) or direction.lower() not in _DIRECTIONS:
            raise InputError(f"{where} {name}: top_n 'direction' must be 'desc' or 'asc', got {shorten(direction)}. Fix the case row.")
        n = top.get("n")
        if n is not None and (isinstance(n, bool) or not isinstance(n, int) or n < 1):
            raise InputError(f"{where} {name}: top_n 'n' must be a positive integer, got {shorten(n)}. Fix the case row.")
    rates = golden.get("rate_columns")
    if rates is not None:
        if not isinstance(rates, list) or not all(isinstance(r, str) for r in rates):
            raise InputError(f"{where} {name}: 'rate_columns' must be a list of column names, got {shorten(rates)}. Fix the case row.")
        unknown = [r for r in rates if names is not None and r not in cols]
        if unknown:
            raise InputError(f"{where} {name}: rate_columns {unknown} are not golden columns {cols}. Fix the names (they are compared exactly).")
    check_order_by(golden, names, where, name=name)
    status = golden.get("gold_status")
    if status is not None and status not in GOLD_STATUSES:
        raise InputError(f"{where} {name}: 'gold_status' must be one of {list(GOLD_STATUSES)}, got {shorten(status)}. Fix the case row.")


_ROUNDING = re.compile(r"\b(?:round|printf|format|trunc|truncate|to_char)\s*\(", re.IGNORECASE)
#: Each of :data:`_ROUNDING`'s words holds one of these, in lower case (``truncate`` holds ``trunc``).
_ROUNDING_WORDS = ("round", "printf", "format", "trunc", "to_char")


def _rounds(canonical: str) -> bool:
    """``_ROUNDING.search(canonical)`` is not None. On ASCII text a match needs ``(`` and one of the words in
    lower case (IGNORECASE folds ASCII letters to ASCII letters only), looked for first: the regex, which tries a
    word boundary at every position, cost 55 µs a Spider query (issue 15); other text goes to the regex."""
    if canonical.isascii():
        if "(" not in canonical:
            return False
        low = canonical.lower()
        if not any(w in low for w in _ROUNDING_WORDS):
            return False
    return _ROUNDING.search(canonical) is not None


def computed_floats(golden: Mapping[str, Any]) -> bool:
    """True when the golden's numbers were computed by its canonical query (``rows_from: canonical_query``) and that
    query rounds nothing: such floats have no display precision (``AVG`` = 0.3 is exactly 0.3; reading it as
    "written to one decimal" accepted 0.33). A canonical query that rounds (``ROUND(x, 2)``) keeps the precision
    it rounded to, and rows typed by hand keep theirs."""
    canonical = golden.get("canonical_query")
    return (golden.get("rows_from") == "canonical_query" and isinstance(canonical, str)
            and not _rounds(canonical))


def table_columns(names: Sequence[str], rows: Sequence[Sequence[Any]]) -> list[Column]:
    if not rows:
        return [make_column(n, []) for n in names]
    if names and _fast_columns_of is not None and type(rows) is list:
        cols = _fast_columns_of(rows, len(names))  # the transposing pass below, without an iterator per row
        if cols is not None:
            return [make_column(n, c) for n, c in zip(names, cols)]
    if names and set(map(type, rows)) <= {list, tuple} and set(map(len, rows)) == {len(names)}:
        # Every row as wide as the names: the columns in one transposing pass.
        return [make_column(n, c) for n, c in zip(names, zip(*rows))]
    return [make_column(n, list(map(itemgetter(i), rows))) for i, n in enumerate(names)]


def rubric_of(rubric: Any) -> list[tuple[str, str]]:
    """Rubric clauses as ``(marker, text)``; an unmarked clause is ``CREDITED``."""
    out = []
    for clause in rubric or []:
        if isinstance(clause, Mapping):
            marker = str(clause.get("marker") or clause.get("label") or "CREDITED").upper()
            text = str(clause.get("text") or clause.get("clause") or "")
        else:
            text = str(clause)
            m = re.match(r"\s*\[?\s*([A-Z]+)\s*\]?\s*[:\-–]\s*(.*)", text, re.S)
            marker = m.group(1) if m and m.group(1) in _MARKERS else "CREDITED"
            text = m.group(2) if m and m.group(1) in _MARKERS else text
        out.append((marker if marker in _MARKERS else "CREDITED", text))
    return out

