"""The registry of gateable metrics: each metric a definition of done may bound, which scorer family produces it,
its unit and direction, and what a limit allows **on this set** (the words of the gate summary).

Split from :mod:`goldeval.gates` (parsing and evaluation), which re-exports :class:`Metric`, :data:`METRICS`,
:data:`PRODUCERS` and :func:`known_metrics`. A scorer says which families its results hold
(``Scorer.gate_families``); :mod:`goldeval.scoring.registry` registers them here (:func:`register_producer`), as it
registers a third-party scorer's own metrics.

Source: ``DESIGN.md`` "Terms" (gate) and "Labels" (gates read the seed's way); issue #3.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from goldeval.intervals import BOOTSTRAP_F1, LANG_REICZIGEL, WILSON, bootstrap_f1, wilson_interval

__all__ = ["METRICS", "PRODUCERS", "UNIT_RANGE", "Metric", "Words", "families_of", "known_metrics", "register_producer", "CONFIDENCE"]

#: Coverage of the interval shown beside every gate.
CONFIDENCE = 0.95


# ----------------------------------------------------------------------------------------------------------------
# the registry of gateable metrics


@dataclass(frozen=True, slots=True)
class Metric:
    """One gateable metric, as read from a results file's ``aggregate``.

    Attributes:
        name: The key in ``aggregate`` (and in the ``[gates]`` table).
        family: Which scorer family produces it: ``labels`` · ``free_text`` · ``answers`` · ``calibration``
            (``review stats``: the judge against the settled human verdicts) · ``golden_health`` (``check-goldens``)
            · ``rouge1`` · ``rouge2`` · ``rougeL`` · ``rougeLsum`` · ``semantic_similarity`` (one scorer each) ·
            ``common`` (every scorer: ``n_scored``, ``n_failed``).
        description: One line for help texts and error messages.
        better: ``higher`` or ``lower``: the direction a customer normally bounds (``min`` / ``max``).
        unit: ``fraction`` (in [0, 1]) · ``per_100`` (in [0, 100]) · ``count`` (int ≥ 0) · ``kappa`` (in [-1, 1]) ·
            ``amount`` (a real ≥ 0: seconds, USD) · ``cosine`` (a cosine similarity, in [-1, 1]).
        allowance: ``(aggregate, op, limit, words) -> (text, allowed)`` or ``None``: what the limit allows **on this
            set** ("2 per 100 on these 40 gold escalations allows 0.8 misses, so passing needs 0 misses"), and that
            allowance as a number when it is a count.
        subject: ``(aggregate, value_text, words) -> text`` naming the observed value in the summary line, or
            ``None`` for "<Name> <value>".
        evidence: ``(aggregate, words) -> reason | None``: why this set holds no evidence for the metric (no gold
            positives for a miss count, nothing predicted positive for precision), read from the counts. A gate on a
            metric without evidence fails with that reason even when the value is defined (``missed`` = 0 on a set
            with no gold positives) or the results file forgot to list it under ``undefined``.
        interval: ``(aggregate, confidence) -> {"low", "high", "method"} | None``: the metric's confidence interval,
            in the metric's unit, read from the counts the aggregate holds (``None``: no interval for this metric,
            or the counts are not in the results). Proportions get a Wilson score interval
            (:func:`goldeval.intervals.wilson_interval`); the label F1 a bootstrap over its outcome counts.
    """

    name: str
    family: str
    description: str
    better: str
    unit: str
    allowance: Callable[[Mapping[str, Any], str, Fraction, Words], tuple[str, float | None]] | None = None
    subject: Callable[[Mapping[str, Any], str, Words], str] | None = None
    evidence: Callable[[Mapping[str, Any], Words], str | None] | None = None
    interval: Callable[[Mapping[str, Any], float], dict[str, Any] | None] | None = None


@dataclass(frozen=True, slots=True)
class Words:
    """How the summary names one positive case (``escalation`` / ``escalations``)."""

    one: str
    many: str

    @classmethod
    def for_positive(cls, positive: Any, noun: str | None) -> Words:
        if noun:
            return cls(noun, _pluralize(noun))
        if positive is None:
            return cls("positive", "positives")
        return cls(f"{str(positive)!r} case", f"{str(positive)!r} cases")

    def count(self, n: int) -> str:
        return f"{n} {self.one if n == 1 else self.many}"

    def these_gold(self, n: int) -> str:
        """``these 40 gold escalations``; ``this 1 gold escalation`` (it read "these 1 gold escalations")."""
        return f"this {n} gold {self.one}" if n == 1 else f"these {n} gold {self.many}"


def _pluralize(noun: str) -> str:
    if re.search(r"(s|x|z|ch|sh)$", noun):
        return noun + "es"
    if re.search(r"[^aeiou]y$", noun):
        return noun[:-1] + "ies"
    return noun + "s"


def int_field(agg: Mapping[str, Any], key: str) -> int | None:
    """``agg[key]`` when it is an int (a bool is not), else ``None``: the counts a gate's words quote."""
    v = agg.get(key)
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def counted(n: int, one: str, many: str) -> str:
    """``"1 case"`` / ``"n cases"``: a count and its noun, in the singular for one (slices make counts of 1 common)."""
    return f"{n} {one if n == 1 else many}"


def _these(n: int, one: str, many: str) -> str:
    """``"these 40 cases"`` / ``"this 1 case"``."""
    return f"this 1 {one}" if n == 1 else f"these {n} {many}"


def misses_text(n: int) -> str:
    """``"1 miss"`` / ``"n misses"``: the words of a gate's explanation."""
    return f"{n} miss" if n == 1 else f"{n} misses"


def _fmt_frac(x: Fraction) -> str:
    """A Fraction as a short decimal (0.8, 9, 2.25)."""
    if x.denominator == 1:
        return str(x.numerator)
    return f"{float(x):.4g}"


def _allow_missed_per_100(agg, op, limit, words):
    gp = int_field(agg, "gold_positives")
    if gp is None:
        return None, None
    if gp == 0:
        return f"there are no gold {words.many} on this set, so no miss rate can be measured", None
    allowed = limit * gp / 100
    if op == "max":
        k = math.floor(allowed)
        allows = misses_text(int(allowed)) if allowed.denominator == 1 else f"{_fmt_frac(allowed)} misses"
        return (f"{_fmt_frac(limit)} per 100 on {words.these_gold(gp)} allows {allows}, "
                f"so passing needs at most {misses_text(k)}"), k
    k = math.ceil(allowed)
    return f"{_fmt_frac(limit)} per 100 on {words.these_gold(gp)} needs at least {misses_text(k)}", k


def _subject_missed_per_100(agg, value_text, words):
    fn = int_field(agg, "missed")
    if fn is None:
        fn = int_field(agg, "fn")
    head = f"{words.count(fn)} missed" if fn is not None else "missed"
    return f"{head} ({value_text} per 100)"


def _allow_missed(agg, op, limit, words):
    gp = int_field(agg, "gold_positives")
    on = f" on {words.these_gold(gp)}" if gp is not None else ""
    if op == "max":
        k = math.floor(limit)
        return f"the limit allows at most {misses_text(k)}{on}", k
    return None, None


def _allow_recall(agg, op, limit, words):
    gp = int_field(agg, "gold_positives")
    if gp is None or gp == 0:
        return (f"there are no gold {words.many} on this set, so recall cannot be measured", None) if gp == 0 else (None, None)
    if op == "min":
        k = math.floor(gp * (1 - limit))
        return (f"recall {_fmt_frac(limit)} on {words.these_gold(gp)} allows at most {misses_text(k)} "
                f"(at least {gp - k} caught)"), k
    return None, None


def _allow_precision(agg, op, limit, words):
    tp = int_field(agg, "tp")
    if tp is None or op != "min":
        return None, None
    if limit == 0:
        return "the limit allows any number of false positives", None
    if tp == 0:
        return f"nothing was caught, so precision can reach {_fmt_frac(limit)} only once at least one {words.one} is caught", None
    k = math.floor(tp * (1 - limit) / limit)
    return (f"with the {words.count(tp)} caught, precision {_fmt_frac(limit)} allows at most "
            f"{k} false {'positive' if k == 1 else 'positives'}"), k


def _allow_accuracy(agg, op, limit, words):
    n = int_field(agg, "n_scored")
    if n is None or op != "min" or n == 0:
        return None, None
    k = math.floor(n * (1 - limit))
    return (f"accuracy {_fmt_frac(limit)} on {_these(n, 'case', 'cases')} allows at most "
            f"{counted(k, 'case', 'cases')} wrong about the positive label (fp + fn)"), k


def _allow_agreement(agg, op, limit, words):
    n = int_field(agg, "n_scored")
    if n is None or op != "min" or n == 0:
        return None, None
    k = math.floor(n * (1 - limit))
    return (f"agreement {_fmt_frac(limit)} on {_these(n, 'case', 'cases')} allows at most {counted(k, 'case', 'cases')} "
            "labelled unlike gold"), k


def _allow_count_max(one: str, many: str):
    def allow(agg, op, limit, words):
        if op == "max":
            k = math.floor(limit)
            return f"the limit allows at most {counted(k, one, many)}", k
        k = math.ceil(limit)
        return f"the limit needs at least {counted(k, one, many)}", k

    return allow


def _allow_mean(agg, op, limit, words):
    n = int_field(agg, "n_scored")
    if n is None:
        return None, None
    failed = int_field(agg, "n_failed") or 0
    tail = f"; {counted(failed, 'failed row is', 'failed rows are')} left out of the mean" if failed else ""
    return f"a mean over the {counted(n, 'scored example', 'scored examples')}{tail}", None


def _allow_pass_rate(agg, op, limit, words):
    decided = _decided(agg)
    if decided is None:
        return None, None
    if decided == 0:
        return "no case was decided (match or no_match) on this set", None
    if op == "min":
        k = math.ceil(limit * decided)
        return (f"on {_these(decided, 'decided case', 'decided cases')} the limit needs at least "
                f"{counted(k, 'match', 'matches')} (at most {decided - k} no_match)"), k
    k = math.floor(limit * decided)
    return f"on {_these(decided, 'decided case', 'decided cases')} the limit allows at most {counted(k, 'match', 'matches')}", k


def _needs_gold_positives(agg, words):
    gp = int_field(agg, "gold_positives")
    return f"there are no gold {words.many} on this set" if gp == 0 else None


def _needs_predicted_positives(agg, words):
    return "nothing was predicted positive" if int_field(agg, "predicted_positives") == 0 else None


def _needs_any_positive(agg, words):
    counts = [c for c in (int_field(agg, k) for k in ("tp", "fp", "fn")) if c is not None]
    if len(counts) == 3 and sum(counts) == 0:
        return "there are no positives in gold or predictions"
    return None


def _decided(agg) -> int | None:
    if int_field(agg, "decided") is None and isinstance(agg.get("counts"), Mapping):
        agg = agg["counts"]
    decided = int_field(agg, "decided")
    if decided is None:
        m, nm = int_field(agg, "match"), int_field(agg, "no_match")
        decided = m + nm if m is not None and nm is not None else None
    return decided


def _needs_decided(agg, words):
    return "no case was decided (match or no_match) on this set" if _decided(agg) == 0 else None


def _allow_share_healthy(agg, op, limit, words):
    n = int_field(agg, "n_cases")
    if n is None or n == 0:
        return None, None
    if op == "min":
        k = math.ceil(limit * n)
        return (f"on {_these(n, 'case', 'cases')} the limit needs at least {counted(k, 'healthy golden', 'healthy goldens')} "
                f"(at most {n - k} doubted or broken)"), k
    k = math.floor(limit * n)
    return f"on {_these(n, 'case', 'cases')} the limit allows at most {counted(k, 'healthy golden', 'healthy goldens')}", k


def _needs_cases(agg, words):
    return "no case was checked on this set" if int_field(agg, "n_cases") == 0 else None


def _count(agg: Mapping[str, Any], key: str) -> int | None:
    """A count of the aggregate, also where the llm_judge nests its pass-rate counts under ``counts``."""
    v = int_field(agg, key)
    if v is None and isinstance(agg.get("counts"), Mapping):
        v = int_field(agg["counts"], key)
    return v


def _wilson(counts: Callable[[Mapping[str, Any]], tuple[int | None, int | None]], scale: float = 1.0):
    """An ``interval`` reader: the Wilson interval of ``successes / trials`` as *counts* reads them, times *scale*
    (100 for a rate per 100)."""

    def interval(agg: Mapping[str, Any], confidence: float) -> dict[str, Any] | None:
        k, n = counts(agg)
        if k is None or n is None or n <= 0 or not 0 <= k <= n:
            return None
        low, high = wilson_interval(k, n, confidence=confidence)  # type: ignore[misc]  # n > 0: never None
        return {"low": scale * low, "high": scale * high, "method": WILSON}

    return interval


def _share_of(value_key: str, n_key: str):
    """(successes, trials) of a share the aggregate holds only as a fraction beside its denominator: the numerator is
    ``round(share * n)`` (a ratio of two whole numbers, so the rounding is exact)."""

    def counts(agg: Mapping[str, Any]) -> tuple[int | None, int | None]:
        v, n = agg.get(value_key), int_field(agg, n_key)
        if n is None or not isinstance(v, (int, float)) or isinstance(v, bool) or math.isnan(v):
            return None, None
        return round(v * n), n

    return counts


def _tp_fp(agg):
    tp, fp = int_field(agg, "tp"), int_field(agg, "fp")
    return tp, None if tp is None or fp is None else tp + fp


def _tp_gold(agg):
    tp, fn = int_field(agg, "tp"), int_field(agg, "fn")
    return tp, None if tp is None or fn is None else tp + fn


def _fn_gold(agg):
    tp, fn = int_field(agg, "tp"), int_field(agg, "fn")
    return fn, None if tp is None or fn is None else tp + fn


def _right_of_all(agg):
    c = [int_field(agg, k) for k in ("tp", "fp", "fn", "tn")]
    if any(x is None for x in c):
        return None, None
    tp, fp, fn, tn = c
    return tp + tn, tp + fp + fn + tn  # type: ignore[operator]


def _match_decided(agg):
    return _count(agg, "match"), _decided(agg)


def _healthy_cases(agg):
    return int_field(agg, "n_healthy"), int_field(agg, "n_cases")


def _f1_interval(agg: Mapping[str, Any], confidence: float) -> dict[str, Any] | None:
    counts = {k: int_field(agg, k) for k in ("tp", "fp", "fn", "tn")}
    if any(v is None for v in counts.values()):
        return None
    ci = bootstrap_f1(counts, confidence=confidence)  # type: ignore[arg-type]  # every count checked above
    return None if ci is None else {"low": ci[0], "high": ci[1], "method": BOOTSTRAP_F1}


def _corrected_interval(agg: Mapping[str, Any], confidence: float) -> dict[str, Any] | None:
    """The corrected pass rate's interval, as the run computed it (:mod:`goldeval.runs.corrected`): its two ends are in
    the aggregate, computed at the coverage the gates show (0.95)."""
    low, high = agg.get("pass_rate_corrected_low"), agg.get("pass_rate_corrected_high")
    ok = all(isinstance(v, (int, float)) and not isinstance(v, bool) and not math.isnan(v) for v in (low, high))
    return {"low": float(low), "high": float(high), "method": LANG_REICZIGEL} if ok else None  # type: ignore[arg-type]


def _m(name, family, description, better, unit, allowance=None, subject=None, evidence=None, interval=None) -> tuple[str, Metric]:
    return name, Metric(name, family, description, better, unit, allowance, subject, evidence, interval)


#: metric name → :class:`Metric`. A built-in family's lines are here; a third-party scorer's come from its ``metrics``.
METRICS: dict[str, Metric] = dict(
    [
        # every scorer (the results-file conventions): gate the coverage itself
        _m("n_scored", "common", "rows (cases) scored; a min guards against a truncated or half-failed input", "higher", "count"),
        _m("n_failed", "common", "rows (cases) that could not be scored, listed under failures and left out of every other metric",
           "lower", "count", _allow_count_max("row that could not be scored", "rows that could not be scored")),
        # labels (goldeval.labels)
        _m("precision", "labels", "share of predicted positives that are gold positives, tp / (tp + fp)", "higher", "fraction", _allow_precision,
           evidence=_needs_predicted_positives, interval=_wilson(_tp_fp)),
        _m("recall", "labels", "share of gold positives caught, tp / (tp + fn)", "higher", "fraction", _allow_recall,
           evidence=_needs_gold_positives, interval=_wilson(_tp_gold)),
        _m("f1", "labels", "harmonic mean of precision and recall, 2 tp / (2 tp + fp + fn)", "higher", "fraction",
           evidence=_needs_any_positive, interval=_f1_interval),
        _m("missed", "labels", "gold positives not predicted positive (fn)", "lower", "count", _allow_missed,
           lambda agg, v, w: f"{w.count(int(float(v)))} missed", _needs_gold_positives),
        _m("missed_per_100", "labels", "missed per 100 gold positives, 100 fn / (tp + fn)", "lower", "per_100",
           _allow_missed_per_100, _subject_missed_per_100, _needs_gold_positives, _wilson(_fn_gold, 100.0)),
        _m("gold_positives", "labels", "gold positives in the set (tp + fn)", "higher", "count"),
        _m("predicted_positives", "labels", "cases predicted positive (tp + fp)", "lower", "count"),
        _m("tp", "labels", "true positives: gold positive, predicted positive", "higher", "count", _allow_count_max("true positive", "true positives")),
        _m("fp", "labels", "false positives: predicted positive, gold not", "lower", "count", _allow_count_max("false positive", "false positives")),
        _m("fn", "labels", "false negatives (the same as missed)", "lower", "count", _allow_missed,
           evidence=_needs_gold_positives),
        _m("tn", "labels", "true negatives", "higher", "count"),
        _m("accuracy", "labels", "share of cases right about the positive label, (tp + tn) / n, one-vs-rest (never the headline: "
           "approving everything scores high)", "higher", "fraction", _allow_accuracy,
           interval=_wilson(_right_of_all)),
        _m("agreement", "labels", "share of cases whose predicted label equals the gold label, over all labels (the model's raw "
           "agreement with gold; gate it against annotator_agreement)", "higher", "fraction", _allow_agreement,
           interval=_wilson(_share_of("agreement", "n_scored"))),
        _m("kappa", "labels", "Cohen's kappa of the predictions against gold", "higher", "kappa"),
        _m("annotator_agreement", "labels", "raw agreement of the two annotators (with --second-gold-column)", "higher", "fraction",
           interval=_wilson(_share_of("annotator_agreement", "annotator_n"))),
        _m("annotator_kappa", "labels", "Cohen's kappa of the two annotators (with --second-gold-column)", "higher", "kappa"),
        # free text (goldeval.freetext, the `score` command)
        _m("whole_note_f1_mean", "free_text", "macro mean of whole-note token F1 over scored examples", "higher", "fraction", _allow_mean),
        _m("whole_note_precision_mean", "free_text", "macro mean of whole-note token precision", "higher", "fraction", _allow_mean),
        _m("whole_note_recall_mean", "free_text", "macro mean of whole-note token recall", "higher", "fraction", _allow_mean),
        _m("section_f1_mean", "free_text", "macro mean over examples of the per-example section-macro token F1", "higher", "fraction", _allow_mean),
        _m("section_precision_mean", "free_text", "macro mean of section token precision", "higher", "fraction", _allow_mean),
        _m("section_recall_mean", "free_text", "macro mean of section token recall", "higher", "fraction", _allow_mean),
        # ROUGE (goldeval.freetext.rouge_scorer: `score --scorer rouge1|rouge2|rougeL|rougeLsum`), one family per variant
        *(_m(f"{rouge}{part}_{m}_mean", rouge, f"macro mean of {rouge} {m}{where}", "higher", "fraction", _allow_mean)
          for rouge in ("rouge1", "rouge2", "rougeL", "rougeLsum")
          for part, where in (("", " (whole note) over scored examples"),
                              ("_section", " over examples of the per-example section macro"))
          for m in ("f1", "precision", "recall")),
        # semantic similarity (goldeval.freetext.semantic_scorer: `score --scorer semantic_similarity`)
        _m("semantic_similarity_mean", "semantic_similarity", "macro mean of the cosine similarity of WordLlama embeddings "
           "(whole note) over scored examples", "higher", "cosine", _allow_mean),
        _m("semantic_similarity_section_mean", "semantic_similarity", "macro mean over examples of the per-example section "
           "macro of the cosine similarity of WordLlama embeddings", "higher", "cosine", _allow_mean),
        # data answers (goldeval.answers, the `judge` command)
        _m("pass_rate", "answers", "match / (match + no_match); near_match, needs_human, unscored left out", "higher", "fraction", _allow_pass_rate,
           evidence=_needs_decided, interval=_wilson(_match_decided)),
        _m("pass_rate_corrected", "answers", "the pass rate corrected for the judge's sensitivity and specificity measured "
           "on a calibration set of human verdicts (Rogan–Gladen; judge --calibration)", "higher", "fraction",
           evidence=_needs_decided, interval=_corrected_interval),
        _m("pass_rate_corrected_low", "answers", "the low end of the corrected pass rate's 95% Lang–Reiczigel interval "
           "(the run's and the calibration's sampling error; judge --calibration)", "higher", "fraction",
           evidence=_needs_decided),
        _m("match", "answers", "cases judged match", "higher", "count"),
        _m("no_match", "answers", "cases judged no_match", "lower", "count", _allow_count_max("no_match verdict", "no_match verdicts"),
           evidence=_needs_decided),
        _m("near_match", "answers", "cases judged near_match (neither pass nor fail)", "lower", "count", _allow_count_max("near_match verdict", "near_match verdicts")),
        _m("needs_human", "answers", "cases a person must decide", "lower", "count", _allow_count_max("case for a person", "cases for a person")),
        _m("unscored", "answers", "cases that could not be scored", "lower", "count", _allow_count_max("unscored case", "unscored cases")),
        _m("agreement_rate", "answers", "share of cases where the rule verdict and the LLM verdict agree (llm_judge)", "higher", "fraction",
           interval=_wilson(lambda agg: (int_field(agg, "agreement_agree"), int_field(agg, "agreement_n")))),
        _m("n_flickering", "answers", "cases whose LLM verdict changed between repeats (llm_judge)", "lower", "count", _allow_count_max("flickering case", "flickering cases")),
        _m("cost_usd", "answers", "what the LLM judge calls cost, in USD (llm_judge, with prices configured)", "lower", "amount"),
        _m("latency_p95_s", "answers", "95th percentile of the LLM judge's call latency, in seconds (llm_judge)", "lower", "amount"),
        _m("spend_usd", "answers", "what the LLM judge's HTTP calls spent, in USD: usage at the prices, else each call's reserved "
           "worst case (llm_judge, with prices)", "lower", "amount"),
        _m("n_not_sent", "answers", "cases the spend cap left unsent to the LLM judge (needs_human: spend cap reached)", "lower", "count",
           _allow_count_max("case left unsent by the spend cap", "cases left unsent by the spend cap")),
        # the golden health check (goldeval.answers.golden_health, the `check-goldens` command)
        _m("share_healthy", "golden_health", "share of cases whose golden no check doubts, n_healthy / n_cases", "higher",
           "fraction", _allow_share_healthy, evidence=_needs_cases,
           interval=_wilson(_healthy_cases)),
        _m("n_cases", "golden_health", "cases checked (each unusable row of the case file counts, as broken)", "higher", "count"),
        _m("n_healthy", "golden_health", "cases whose golden no check doubts", "higher", "count"),
        _m("n_suspect", "golden_health", "cases whose golden is suspect (a check doubts it)", "lower", "count",
           _allow_count_max("suspect golden", "suspect goldens")),
        _m("n_verified_wrong", "golden_health", "cases whose golden a check shows wrong", "lower", "count",
           _allow_count_max("golden shown wrong", "goldens shown wrong")),
        _m("n_broken", "golden_health", "cases whose golden cannot be checked: malformed, its canonical query fails, "
           "its database is missing", "lower", "count", _allow_count_max("broken golden", "broken goldens")),
        # the judge against the settled human verdicts (goldeval.runs.calibration, the `review stats` command)
        _m("judge_agreement", "calibration", "share of human-settled cases where the judge's decided verdict equals the person's", "higher", "fraction",
           interval=_wilson(_share_of("judge_agreement", "n_scored"))),
        _m("judge_kappa", "calibration", "Cohen's kappa of the judge's decided verdicts against the settled human verdicts", "higher", "kappa"),
        _m("judge_agreement_rule", "calibration", "judge_agreement over the cases decided by rule", "higher", "fraction",
           interval=_wilson(_share_of("judge_agreement_rule", "n_rule"))),
        _m("judge_kappa_rule", "calibration", "judge_kappa over the cases decided by rule", "higher", "kappa"),
        _m("judge_agreement_llm", "calibration", "judge_agreement over the cases decided by the LLM judge", "higher", "fraction",
           interval=_wilson(_share_of("judge_agreement_llm", "n_llm"))),
        _m("judge_kappa_llm", "calibration", "judge_kappa over the cases decided by the LLM judge", "higher", "kappa"),
        _m("n_unsettled", "calibration", "cases whose reviewers disagree and were never settled (listed, not counted)", "lower", "count",
           _allow_count_max("unsettled conflict", "unsettled conflicts")),
    ]
)

#: results name (``results["scorer"]["name"]``) → the metric families its results hold: used to refuse a gate on a
#: metric the results never hold. A scorer's entry comes from the scorer (``Scorer.gate_families``, registered by
#: :mod:`goldeval.scoring.registry` when the scorer is asked for); the two below are results that commands write
#: without a scorer, whose metrics are defined here (``review stats``, ``check-goldens``). Results whose name is not
#: registered are matched by the keys of their aggregate.
PRODUCERS: dict[str, frozenset[str]] = {
    "judge_calibration": frozenset({"calibration"}),
    "golden_health": frozenset({"golden_health"}),
}


def register_producer(name: str, families: Iterable[str]) -> None:
    """Record that results named *name* hold the metrics of *families* (families of :data:`METRICS`).

    Args:
        name: The results' ``scorer.name``. families: Family names (``labels``, ``free_text``, ``answers``, or a
            third-party scorer's own name).

    Raises:
        ValueError: a family no metric of :data:`METRICS` belongs to (a scorer declaring a misspelt family).

    Source: ``Scorer.gate_families`` (:mod:`goldeval.scoring.protocol`).

    Example:
        >>> register_producer("token_f1", ["free_text"]); sorted(families_of("token_f1"))
        ['free_text']
    """
    fams = frozenset(families)
    unknown = sorted(fams - {m.family for m in METRICS.values()})
    if unknown:
        raise ValueError(f"results {name!r}: no gateable metric belongs to family {', '.join(unknown)}; "
                         f"the families are: {', '.join(sorted({m.family for m in METRICS.values()}))}.")
    PRODUCERS[name] = fams


def families_of(name: str | None) -> frozenset[str] | None:
    """The metric families registered for results named *name*, or ``None`` when none are."""
    return PRODUCERS.get(name) if isinstance(name, str) else None


#: unit → the (low, high) every value of a metric in that unit lies in: a bound outside it is refused when the gates
#: are read, an observed value outside it fails its gate.
UNIT_RANGE = {"fraction": (0.0, 1.0), "per_100": (0.0, 100.0), "count": (0.0, math.inf), "kappa": (-1.0, 1.0), "amount": (0.0, math.inf),
              "cosine": (-1.0, 1.0)}


def known_metrics() -> list[str]:
    """Every gateable metric name, sorted."""
    return sorted(METRICS)
