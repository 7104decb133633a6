"""Labels: confusion counts, precision / recall / missed for one positive label, per-label table, confusion matrix.

One pass over the paired labels counts every (gold, pred) pair; everything else — tp, fp, fn (missed), tn for any
positive label, the per-label table, the confusion matrix, Cohen's kappa — is read off those pair counts.

Definitions (for the positive label ``p``; a ``None`` prediction is "no label" and never equals ``p``)::

    tp = #(gold == p and pred == p)      fp = #(gold != p and pred == p)
    fn = #(gold == p and pred != p)      tn = #(gold != p and pred != p)       missed = fn
    precision = tp / (tp + fp)           recall = tp / (tp + fn)               f1 = 2 tp / (2 tp + fp + fn)
    missed_per_100 = 100 fn / (tp + fn)  accuracy = (tp + tn) / n

An empty denominator scores 0.0 (the seed's rule) **and** the metric is listed in ``undefined`` with a plain reason,
so that no gate passes on no evidence. Accuracy is reported but never the headline (approving all 160 of 200
claims scores 0.80).

Source: ``DESIGN.md`` "Labels"; scikit-learn ``sklearn/metrics/_classification.py`` (same tp/fp/fn definitions;
sklearn's ``zero_division=0.0`` gives the same seed values, and f1 is 0/0-undefined only when tp + fp + fn = 0).
"""

from __future__ import annotations

import difflib
import operator
import unicodedata
from collections import Counter
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from itertools import compress
from typing import Any

from goldeval.errors import InputError, shorten

__all__ = [
    "SCORER_NAME",
    "SCORER_VERSION",
    "Confusion",
    "LabelScore",
    "LabelRow",
    "ConfusionMatrix",
    "pair_counts",
    "confusion_counts",
    "score_labels",
    "score_from_pairs",
    "score_confusion",
    "per_label_table",
    "confusion_matrix",
    "solve",
    "read_label_row",
]

SCORER_NAME = "labels"
SCORER_VERSION = "1"

#: How the results file and the screen name a missing prediction in the confusion matrix.
NO_LABEL = "(no label)"

UNDEFINED_REASONS = {
    "precision": "nothing was predicted positive",
    "recall": "there are no gold positives",
    "missed_per_100": "there are no gold positives",
    "f1": "there are no positives in gold or predictions",
    "accuracy": "there are no cases",
    "agreement": "there are no cases",
    "kappa": "there are no cases",
}


# ----------------------------------------------------------------------------------------------------------------
# counting


def pair_counts(gold: Sequence[Hashable], pred: Sequence[Hashable | None]) -> Counter:
    """Count each (gold, pred) pair in one pass.

    Args:
        gold: Gold labels, shape ``(n_cases,)``; each a hashable label (normally ``str``), never ``None``.
        pred: Predicted labels, shape ``(n_cases,)``; ``None`` means the model gave no label.

    Returns:
        ``Counter`` mapping ``(gold_label, pred_label)`` to how many cases carry that pair.

    Raises:
        InputError: the two sequences differ in length (both counts are given; they are never zipped short), a
            gold label is ``None``, or a label is not hashable.
    """
    n_gold, n_pred = len(gold), len(pred)
    if n_gold != n_pred:
        raise InputError(
            f"labels: gold has {n_gold} labels but pred has {n_pred}; the lists must pair case by case. "
            "Align them by case id (never truncate to the shorter one)."
        )
    try:
        counts = Counter(zip(gold, pred))
    except TypeError:
        bad = next(i for i, (g, p) in enumerate(zip(gold, pred)) if not _hashable(g) or not _hashable(p))
        raise InputError(
            f"labels: case {bad}: a label must be a string, got gold={shorten(gold[bad])}, pred={shorten(pred[bad])}."
        ) from None
    # Validate on the distinct pairs only (cheap even for 1e6 cases).
    for g, _p in counts:
        if g is None or (isinstance(g, float) and g != g):  # None, or NaN: how pandas writes a missing label
            where = next((i for i, x in enumerate(gold) if x is g or (isinstance(x, float) and x != x)), "?")
            what = "null" if g is None else "NaN (a missing value)"
            raise InputError(
                f"labels: case {where}: gold label is {what}; every case needs an adjudicated gold label. "
                "Adjudicate it or remove the case."
            )
    return counts


def _hashable(x: object) -> bool:
    try:
        hash(x)
    except TypeError:
        return False
    return True


@dataclass(frozen=True, slots=True)
class Confusion:
    """Confusion counts for one positive label: ``tp``, ``fp``, ``fn`` (missed), ``tn`` (all ints ≥ 0)."""

    tp: int
    fp: int
    fn: int
    tn: int

    @property
    def n(self) -> int:
        return self.tp + self.fp + self.fn + self.tn

    @property
    def gold_positives(self) -> int:
        return self.tp + self.fn

    @property
    def predicted_positives(self) -> int:
        return self.tp + self.fp


def _confusion_from_pairs(counts: Mapping[tuple[Any, Any], int], positive: Hashable) -> Confusion:
    tp = fp = fn = tn = 0
    for (g, p), c in counts.items():
        if g == positive:
            if p == positive:
                tp += c
            else:
                fn += c
        elif p == positive:
            fp += c
        else:
            tn += c
    return Confusion(tp, fp, fn, tn)


def confusion_counts(gold: Sequence[Hashable], pred: Sequence[Hashable | None], *, positive: Hashable) -> Confusion:
    """tp, fp, fn, tn of ``pred`` against ``gold`` for the label ``positive`` (one-vs-rest for multi-class).

    See :func:`pair_counts` for the argument shapes and errors. No check is made that ``positive`` occurs.
    """
    return _confusion_from_pairs(pair_counts(gold, pred), positive)


# ----------------------------------------------------------------------------------------------------------------
# scores


@dataclass(frozen=True, slots=True)
class LabelScore:
    """The scores of one positive label. All rates are unrounded floats; counts are ints.

    Attributes:
        positive: The positive label.
        tp, fp, fn, tn: Confusion counts; ``missed`` is ``fn``.
        n: Number of cases.
        gold_positives: ``tp + fn``. predicted_positives: ``tp + fp``.
        precision, recall, f1: Fractions in [0, 1]; 0.0 when undefined.
        missed_per_100: ``100 * fn / gold_positives`` in [0, 100]; 0.0 when undefined.
        accuracy: ``(tp + tn) / n``; reported, never the headline.
        undefined: metric name → plain reason its denominator was empty (``"nothing was predicted positive"``).
    """

    positive: Hashable
    tp: int
    fp: int
    fn: int
    tn: int
    n: int
    gold_positives: int
    predicted_positives: int
    missed: int
    missed_per_100: float
    precision: float
    recall: float
    f1: float
    accuracy: float
    undefined: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict of every field (the labels part of a results file's ``aggregate``)."""
        return asdict(self)


def _score_from_confusion(c: Confusion, positive: Hashable) -> LabelScore:
    undefined: dict[str, str] = {}

    def ratio(num: int, den: int, metric: str, scale: int = 1) -> float:
        if den == 0:
            undefined[metric] = UNDEFINED_REASONS[metric]
            return 0.0
        return (scale * num) / den  # integer numerator first: 100*1/50 is exactly 2.0

    precision = ratio(c.tp, c.tp + c.fp, "precision")
    recall = ratio(c.tp, c.tp + c.fn, "recall")
    f1 = ratio(2 * c.tp, 2 * c.tp + c.fp + c.fn, "f1")
    missed_per_100 = ratio(c.fn, c.tp + c.fn, "missed_per_100", 100)
    accuracy = ratio(c.tp + c.tn, c.n, "accuracy")
    return LabelScore(
        positive=positive,
        tp=c.tp,
        fp=c.fp,
        fn=c.fn,
        tn=c.tn,
        n=c.n,
        gold_positives=c.gold_positives,
        predicted_positives=c.predicted_positives,
        missed=c.fn,
        missed_per_100=missed_per_100,
        precision=precision,
        recall=recall,
        f1=f1,
        accuracy=accuracy,
        undefined=undefined,
    )


def labels_seen(counts: Mapping[tuple[Any, Any], int]) -> list:
    """Distinct labels in gold and pred (``None`` left out), sorted by their string form."""
    seen = {g for g, _ in counts} | {p for _, p in counts if p is not None}
    return sorted(seen, key=str)


def check_positive(counts: Mapping[tuple[Any, Any], int], positive: Hashable, *, where: str = "--positive") -> None:
    """Refuse a positive label that occurs in neither gold nor pred (a typo guard), listing the labels seen.

    An empty set (no cases) passes: nothing is seen, so nothing can be checked.
    """
    if not counts:
        return
    seen = labels_seen(counts)
    if positive in seen:
        return
    names = [str(s) for s in seen]
    close = difflib.get_close_matches(str(positive), names, n=1, cutoff=0.6)
    folded = [s for s in names if s.casefold() == str(positive).casefold()]
    hint = f" Did you mean {(folded or close)[0]!r}?" if (folded or close) else ""
    raise InputError(
        f"{where}: the positive label {str(positive)!r} occurs in neither gold nor pred; labels seen: "
        f"{', '.join(repr(s) for s in names)}.{hint} Labels are case-sensitive; pass one of them."
    )


def score_from_pairs(counts: Mapping[tuple[Any, Any], int], *, positive: Hashable, require_positive: bool = True,
                     where: str = "--positive") -> LabelScore:
    """:class:`LabelScore` for ``positive`` from pair counts (see :func:`pair_counts`); *where* starts the message of
    a positive label that occurs nowhere (:func:`check_positive`)."""
    if require_positive:
        check_positive(counts, positive, where=where)
    return _score_from_confusion(_confusion_from_pairs(counts, positive), positive)


def score_confusion(counts: Confusion, *, positive: Hashable) -> LabelScore:
    """:class:`LabelScore` for ``positive`` from its confusion counts (no check that ``positive`` occurs).

    Used where only the per-case outcomes are kept (``tp``/``fp``/``fn``/``tn`` of recorded cases, e.g. when two
    runs are compared); the definitions and the ``undefined`` reasons are the module's.
    """
    return _score_from_confusion(counts, positive)


def score_labels(
    gold: Sequence[Hashable],
    pred: Sequence[Hashable | None],
    *,
    positive: Hashable,
    require_positive: bool = True,
) -> LabelScore:
    """Precision, recall, F1, missed and missed per 100 gold positives of ``pred`` against ``gold``.

    Multi-class labels are scored one-vs-rest: every label other than ``positive`` (and a ``None`` prediction)
    counts as negative. A ``None`` prediction for a gold positive is a miss — never dropped.

    Args:
        gold: Gold (adjudicated) labels, shape ``(n_cases,)``; ``None`` is refused.
        pred: Predicted labels, shape ``(n_cases,)``; ``None`` = no label.
        positive: The label whose misses matter (``"escalate"``, ``"fraud"``). Same role as sklearn's ``pos_label``.
        require_positive: Refuse a ``positive`` that occurs in neither list (default, a typo guard: the error lists
            the labels seen). Pass ``False`` to score a slice that legitimately holds no positive at all.

    Returns:
        :class:`LabelScore`, unrounded. Empty denominators give 0.0 and an entry in ``undefined``.

    Raises:
        InputError: lists of different lengths (both counts named), a null gold label, an unhashable label, or
            (with ``require_positive``) a positive label not seen.

    Notes:
        An empty set scores all 0.0 with every rate undefined, and raises nothing.

    Source:
        ``DESIGN.md`` "Labels"; definitions as scikit-learn's ``precision_recall_fscore_support`` with
        ``average="binary"``, ``zero_division=0.0``.
    """
    fast = _confusion_of_strings(gold, pred, positive)
    if fast is not None:
        return _score_from_confusion(fast, positive)
    return score_from_pairs(pair_counts(gold, pred), positive=positive, require_positive=require_positive)


def _confusion_of_strings(gold: Sequence[Hashable], pred: Sequence[Hashable | None], positive: Hashable) -> Confusion | None:
    """tp, fp, fn, tn by C-level counting, for the usual input: lists of ``str`` gold labels, ``str`` or ``None``
    predictions, a ``str`` positive label that occurs. ``None`` for anything else (the caller then counts pairs,
    which also gives the errors: lengths, null or NaN gold, unhashable labels, a positive never seen).

    Same counts as :func:`pair_counts` (a ``str`` equals a ``str`` of the same characters, ``None`` equals no label):
    ``tp`` is the number of positive predictions among the gold positives; with exactly two labels and no missing
    prediction it follows from the agreements, ``tp = (gold positives + predicted positives + agreements - n) / 2``
    (each disagreement is a false positive or a miss)."""
    if type(gold) is not list or type(pred) is not list or type(positive) is not str or len(gold) != len(pred):
        return None
    try:
        g_labels, p_labels = set(gold), set(pred)
    except TypeError:
        return None
    if any(type(x) is not str for x in g_labels) or any(x is not None and type(x) is not str for x in p_labels):
        return None
    if positive not in g_labels and positive not in p_labels:
        return None
    n = len(gold)
    gp, pp = gold.count(positive), pred.count(positive)
    if len(g_labels | p_labels) == 2 and None not in p_labels:
        tp = (gp + pp + sum(map(operator.eq, gold, pred)) - n) // 2
    else:
        tp = list(compress(pred, map(positive.__eq__, gold))).count(positive)
    fp = pp - tp
    fn = gp - tp
    return Confusion(tp, fp, fn, n - tp - fp - fn)


def solve(gold: Sequence[Hashable], pred: Sequence[Hashable | None], positive: Hashable = "escalate") -> tuple[float, float, int]:
    """Seed-compatible ``(precision, recall, missed)``, the rates rounded to 3 decimals.

    Same contract as the claims-triage seed's ``solve``: empty denominators give 0.0, lists of different lengths are
    refused, an empty set returns ``(0.0, 0.0, 0)``. Never checks that ``positive`` occurs (as the seed did not).
    Use :func:`score_labels` for unrounded values and the undefined markers.
    """
    s = score_labels(gold, pred, positive=positive, require_positive=False)
    return round(s.precision, 3), round(s.recall, 3), s.missed


# ----------------------------------------------------------------------------------------------------------------
# every label


@dataclass(frozen=True, slots=True)
class LabelRow:
    """One line of the per-label table: the label scored one-vs-rest.

    ``support`` is the number of gold cases with the label, ``predicted`` the number of predictions of it.
    """

    label: Hashable
    precision: float
    recall: float
    f1: float
    support: int
    predicted: int
    undefined: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def table_from_pairs(counts: Mapping[tuple[Any, Any], int]) -> list[LabelRow]:
    """The per-label table (one :class:`LabelRow` per label seen, each label positive in turn) from ``(gold, pred)``
    pair counts; the metrics a label leaves undefined are listed in its row."""
    rows = []
    for label in labels_seen(counts):
        s = _score_from_confusion(_confusion_from_pairs(counts, label), label)
        und = {k: v for k, v in s.undefined.items() if k in ("precision", "recall", "f1")}
        rows.append(LabelRow(label, s.precision, s.recall, s.f1, s.gold_positives, s.predicted_positives, und))
    return rows


def per_label_table(gold: Sequence[Hashable], pred: Sequence[Hashable | None]) -> list[LabelRow]:
    """Precision, recall, F1, support and predicted count of every label seen, each scored one-vs-rest.

    Rows are sorted by label (string order). A ``None`` prediction is no label: it lowers the recall of its gold
    label and counts toward no label's precision.
    """
    return table_from_pairs(pair_counts(gold, pred))


@dataclass(frozen=True, slots=True)
class ConfusionMatrix:
    """``matrix[i][j]`` = cases with gold ``labels[i]`` predicted ``columns[j]``.

    ``columns`` is ``labels`` plus :data:`NO_LABEL` when some prediction was ``None``.
    """

    labels: list
    columns: list
    matrix: list[list[int]]

    def to_dict(self) -> dict[str, Any]:
        return {"rows": "gold", "columns_are": "pred", "labels": self.labels, "columns": self.columns, "matrix": self.matrix}


def matrix_from_pairs(counts: Mapping[tuple[Any, Any], int], labels: Sequence | None = None) -> ConfusionMatrix:
    """The confusion matrix (gold rows × predicted columns, a ``None`` column when some prediction is no label) from
    ``(gold, pred)`` pair counts; *labels* orders the rows (default: the labels seen)."""
    labels = list(labels) if labels is not None else labels_seen(counts)
    has_null = any(p is None for _, p in counts)
    columns: list = labels + ([None] if has_null else [])
    index = {lab: j for j, lab in enumerate(columns)}
    matrix = [[0] * len(columns) for _ in labels]
    for (g, p), c in counts.items():
        i, j = index.get(g), index.get(p)
        if i is not None and j is not None and i < len(labels):
            matrix[i][j] += c
    return ConfusionMatrix(labels, [NO_LABEL if c is None else c for c in columns], matrix)


def confusion_matrix(gold: Sequence[Hashable], pred: Sequence[Hashable | None], *, labels: Sequence | None = None) -> ConfusionMatrix:
    """Confusion matrix of every label (rows gold, columns pred), as scikit-learn's ``confusion_matrix``.

    Args:
        gold, pred: As in :func:`score_labels`.
        labels: Row/column order; default every label seen, sorted. Pairs with a label outside it are left out.
    """
    return matrix_from_pairs(pair_counts(gold, pred), labels)


# ----------------------------------------------------------------------------------------------------------------
# files and batches


def label_value(raw: Any) -> tuple[str | None, str | None]:
    """(label, problem) for a cell: strings as given, integers as their decimal string; an empty or blank string is
    no label (as an empty CSV cell is)."""
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        return None, None
    if isinstance(raw, bool) or not isinstance(raw, (str, int)):
        return None, f"must be a string label, got {shorten(raw)}"
    return str(raw), None


def read_label_row(data: Mapping[str, Any], prefix: str, line: int, *, gold_field: str, pred_field: str,
                   second_gold_field: str | None, positive: Any) -> tuple[Any, Any, Any, str | None, list[str] | None]:
    """The label-row rule: the gold label, the prediction and the second annotator's label of one row, or why the
    row cannot be scored. Every reader of label rows applies it (the ``labels`` scorer row by row, the file reader
    of :mod:`goldeval.labels.reader`; the C reader scores only rows this rule passes unchanged: an id, and gold and pred
    plain non-blank strings).

    Args:
        data: The row (field → value). prefix, line: Where the row is, as messages name it (``"file.jsonl:"`` and
            the line: ``file.jsonl:7``; ``"line "`` without a file name).
        gold_field, pred_field, second_gold_field: Field names (``second_gold_field`` ``None``: no second annotator).
        positive: The positive label (named in the warning of a missing prediction).

    Returns:
        ``(gold, pred, second, error, warnings)``: *error* (a message) when the row is a failure — no gold field, or
        a gold label that is null, blank or not a label — and then nothing else is read; else *gold* is a label,
        *pred* a label or ``None`` (no prediction: a miss when gold is positive, never dropped), *second* the second
        annotator's label or ``None``, and *warnings* the messages of a prediction or second label that could not
        be read (``None`` when there are none).

    Example:
        >>> read_label_row({"gold": "e", "pred": 3}, "f.jsonl:", 2, gold_field="gold", pred_field="pred",
        ...                second_gold_field=None, positive="e")
        ('e', '3', None, None, None)
    """
    if gold_field not in data:
        return None, None, None, (f"{prefix}{line}: field '{gold_field}' is missing; every case needs a gold label. "
                                  "Add it or pass --gold-column."), None
    raw = g = data[gold_field]
    problem = None
    if type(g) is not str or not g or g[0].isspace() or g[-1].isspace():  # (a plain string label is itself)
        g, problem = label_value(g)
    if problem or g is None:
        why = problem or ("is null" if raw is None else f"is blank ({raw!r})")
        return None, None, None, (f"{prefix}{line}: gold label {why}; every case needs an adjudicated gold label. "
                                  "Adjudicate it or remove the row."), None
    warnings = None
    if pred_field in data:
        p = data[pred_field]
        if type(p) is not str or not p or p[0].isspace() or p[-1].isspace():
            p, problem = label_value(p)
            if problem:  # an unreadable prediction is no prediction: a miss when gold is positive, never dropped
                warnings = [f"{prefix}{line}: field '{pred_field}' {problem}; scored as no prediction (a miss when gold is {positive!r})."]
    else:
        p = None
        warnings = [f"{prefix}{line}: no '{pred_field}' field; scored as no prediction (a miss when gold is {positive!r})."]
    s2 = None
    if second_gold_field is not None:
        s2, problem = label_value(data.get(second_gold_field))
        if problem:  # a problem in the second annotator's column never costs the model's score its case
            (warnings if warnings is not None else (warnings := [])).append(
                f"{prefix}{line}: field '{second_gold_field}' {problem}; the case is scored but left out of the annotator agreement.")
    return g, p, s2, None, warnings


def no_column_message(where: str, wanted: str, fields: list[str] | None, option: str) -> str:
    """'no row has a field' message: the fields seen (quoted, so stray spaces show) and a near name if there is one."""
    fields = fields or []
    near = [f for f in fields if str(f).strip().casefold() == wanted.strip().casefold()]
    hint = f" Did you mean {near[0]!r}?" if near else _did_you_mean(wanted, [str(f) for f in fields])
    return (
        f"{where}: no row has a '{wanted}' field (fields of the first row: {', '.join(repr(str(f)) for f in fields)})."
        f"{hint} Pass {option}."
    )


def _did_you_mean(name: str, names: list[str]) -> str:
    close = difflib.get_close_matches(name, names, n=1, cutoff=0.6)
    return f" Did you mean {close[0]!r}?" if close else ""


_INVISIBLE = dict.fromkeys(map(ord, "\u200b\u200c\u200d\u2060\ufeff\u00ad"))


def loose_label(label: Any) -> str:
    """A label folded for look-alike detection only (never for scoring): NFKC, no invisible characters, no outer
    spaces, case-folded."""
    return unicodedata.normalize("NFKC", str(label)).translate(_INVISIBLE).strip().casefold()
