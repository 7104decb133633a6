"""Judge against human: the settled human verdicts as a calibration set, and the judge's agreement with them.

The human verdicts are the reviews ``review import`` recorded in the run store and, optionally, the entries of a
regression file. For one case of one run they are **settled** (:func:`settle_reviews`) when every reviewer gave
the same verdict, or when the latest review settled a conflict (a review marked ``settles``, as ``review import
--on-conflict latest`` records it); reviewers who disagree and were never settled are an **unsettled conflict**:
listed, never counted.

Each settled verdict is paired with the judge's verdict on that case, read from the run's recorded case (its
``verdict``, ``why`` and ``decided_by``), or from the regression entry's ``judge_verdict`` when the run is not in
the store. The judge's label is its decided verdict (``match`` · ``near_match`` · ``no_match``); a case the judge
left to a person (``needs_human``, or a verdict flagged ``needs_human`` for low confidence) is an **abstention**:
shown in the confusion matrix, left out of agreement and kappa (it is neither agreement nor disagreement; its rate
is the ``needs_human`` count a run already reports). Agreement is the share of counted cases where the labels are
equal; Cohen's kappa is goldeval's own (:func:`goldeval.labels.agreement.kappa_from_pairs`: scikit-learn's value,
correctly rounded), with the judge and the person as the two annotators over the three verdicts. Both are given
over all cases and separately for the cases decided by rule (``decided_by`` ``rule`` or ``must_not_use``) and by
the LLM judge (``llm``, ``parse``).

The results file (``review stats --out``) follows the results-file conventions (``scorer`` ``judge_calibration``,
``aggregate`` with ``n``/``n_scored``/``n_failed``/``undefined``) so that ``goldeval gate`` reads it:
``judge_kappa`` and ``judge_agreement`` (and their ``_rule`` / ``_llm`` variants) are gateable, and each is
undefined — so no gate passes on it — when no case was counted.

Source: ``DESIGN.md`` ("the same human verdicts calibrate the judge: agreement and Cohen's kappa of judge against
human, by decided_by, are gateable"); issue 11 item 7; Cohen (1960), Educational and Psychological Measurement
20(1):37–46.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from goldeval.errors import InputError
from goldeval.labels.agreement import kappa_from_pairs
from goldeval.runs.regressions import read_regressions
from goldeval.runs.reviews import VERDICTS, settle_reviews  # noqa: F401 - re-exported: callers find them here

__all__ = ["SCORER_NAME", "VERDICTS", "judge_calibration", "settle_reviews"]

SCORER_NAME = "judge_calibration"
SCORER_VERSION = "1"
_ABSTAIN = "needs_human"
_GROUPS = ("rule", "llm")


def _answer_fingerprint(entry: Mapping[str, Any]) -> str:
    """The answer a regression entry settles (its ``answer`` without the ``id`` and ``model`` labels), as text."""

    a = entry.get("answer")
    if not isinstance(a, Mapping):
        return "null"
    return json.dumps({k: v for k, v in a.items() if k not in ("id", "model")}, sort_keys=True, default=str)


def _answer_ids(entries: Sequence[Mapping[str, Any]]) -> list[str]:
    """The calibration id of each regression entry: its case ``id``, or, when entries without a ``run_id`` settle
    *different answers* to the same case (the shipped Spider file settles DIN-SQL's and zero-shot's answers to
    dev-0787 apart), ``"<id> [answer k of n: <model>]"``. Two answers are two calibration items, not two reviewers
    disagreeing; reviews of the *same* answer that disagree stay one case, an unsettled conflict.
    """
    prints: dict[str, list[str]] = {}
    for e in entries:
        if not isinstance(e.get("run_id"), str):
            fps = prints.setdefault(e["id"], [])
            fp = _answer_fingerprint(e)
            if fp not in fps:
                fps.append(fp)
    out = []
    for e in entries:
        fps = prints.get(e["id"], [])
        if isinstance(e.get("run_id"), str) or len(fps) < 2:
            out.append(e["id"])
            continue
        k = fps.index(_answer_fingerprint(e)) + 1
        a = e.get("answer")
        model = a.get("model") if isinstance(a, Mapping) and isinstance(a.get("model"), str) else None
        out.append(f"{e['id']} [answer {k} of {len(fps)}" + (f": {model}]" if model else "]"))
    return out


def _group(decided_by: Any) -> str:
    if decided_by in ("llm", "parse"):
        return "llm"
    if decided_by in ("rule", "must_not_use"):
        return "rule"
    return "unknown"


def _judge_label(rec: Mapping[str, Any]) -> str:
    """The judge's label for one recorded case: its decided verdict, ``needs_human`` (abstained) or ``unscored``."""
    if rec.get("status") == "unscored":
        return "unscored"
    v = rec.get("verdict")
    if isinstance(v, Mapping):
        rec, v = v, v.get("verdict")
    if v in VERDICTS and not rec.get("needs_human"):
        return str(v)
    return _ABSTAIN


def _stats(pairs: list[tuple[str, str]]) -> dict[str, Any]:
    """Confusion matrix (judge label → human verdict → n), agreement and kappa over the counted pairs."""
    labels = list(VERDICTS) + [_ABSTAIN, "unscored"]
    matrix = {j: {h: 0 for h in VERDICTS} for j in labels}
    for j, h in pairs:
        matrix[j][h] += 1
    counted = Counter((j, h) for j, h in pairs if j in VERDICTS)
    n = sum(counted.values())
    undefined: dict[str, str] = {}
    if n:
        agreement = sum(c for (j, h), c in counted.items() if j == h) / n
    else:
        agreement = 0.0
        undefined["agreement"] = "no case had both a decided judge verdict and a settled human verdict"
    kappa, why = kappa_from_pairs(counted)
    if why:
        undefined["kappa"] = ("no case had both a decided judge verdict and a settled human verdict" if n == 0 else why)
    return {
        "n": len(pairs), "n_counted": n, "n_abstained": sum(1 for j, _ in pairs if j == _ABSTAIN),
        "n_unscored": sum(1 for j, _ in pairs if j == "unscored"),
        "agreement": agreement, "kappa": kappa, "matrix": {j: row for j, row in matrix.items() if any(row.values()) or j in VERDICTS},
        "undefined": undefined,
    }


def judge_calibration(
    store: Any = None,
    runs: Sequence[str] = (),
    *,
    regressions: str | os.PathLike[str] | None = None,
) -> dict[str, Any]:
    """Confusion matrix, agreement and Cohen's kappa of the judge's verdicts against the settled human verdicts.

    Args:
        store: An open :class:`goldeval.runs.store.RunStore`, or ``None`` (then only *regressions* is read, and each
            entry's ``judge_verdict`` is the judge's verdict, ``decided_by`` unknown).
        runs: Run references (id, prefix, ``latest``); empty = every run in the store with recorded reviews (or, with
            *regressions*, only the runs its entries name).
        regressions: A regression file (``judge-regressions.jsonl``) whose entries add to the human verdicts.

    Returns:
        A results dict: ``scorer`` (``judge_calibration``), ``aggregate`` {``n`` (settled human verdicts paired
        with a judge verdict), ``n_scored`` (those counted: the judge decided), ``n_failed`` (regression lines that
        could not be read, reviewed cases the run does not hold), ``judge_agreement``, ``judge_kappa``,
        ``judge_agreement_rule`` / ``_llm``, ``judge_kappa_rule`` / ``_llm``, ``n_rule``, ``n_llm``,
        ``n_abstained``, ``n_unsettled``, ``undefined``}, ``by_decided_by`` {``all``, ``rule``, ``llm``,
        ``unknown``?: the confusion matrix (judge label → human verdict → count), ``agreement``, ``kappa``, counts},
        ``disagreements`` [{``run_id``, ``id``, ``decided_by``, ``judge``, ``judge_why``, ``human``, ``human_why``,
        ``reviewers``}], ``unsettled`` (see :func:`settle_reviews`), ``failures`` and ``runs``.

    Raises:
        InputError: a run reference names no run; there is no human verdict at all (nothing to calibrate).
    """
    reviews: list[dict[str, Any]] = []
    failures: list[dict[str, Any]] = []
    entries: dict[tuple[str | None, str], dict[str, Any]] = {}
    run_ids: list[str] = []
    if store is not None:
        run_ids = [store.resolve(r) for r in runs]
        if not runs and regressions is None:
            run_ids = [r["id"] for r in store.list_runs() if store.reviews(r["id"])]
        for run_id in run_ids:
            reviews += [{**r, "run_id": run_id} for r in store.reviews(run_id)]
    if regressions is not None:
        got, bad = read_regressions(regressions)
        failures += [{**f, "file": os.path.basename(os.fspath(regressions))} for f in bad]
        answer_ids = _answer_ids(got)
        for e, cid in zip(got, answer_ids):
            rid = e.get("run_id") if isinstance(e.get("run_id"), str) else None
            if run_ids and rid not in run_ids:
                continue  # RUN arguments given: only their entries
            reviews.append({"run_id": rid, "case_id": cid, "verdict": e["verdict"], "reviewer": e.get("reviewer"),
                            "reviewed_at": e.get("reviewed_at"), "note": e.get("note"), "settles": e.get("settles")})
            entries.setdefault((rid, cid), e)
    if not reviews:
        where = f"in {os.fspath(regressions)}" if regressions is not None else "in the store"
        raise InputError(f"review stats: no human verdicts {where}{' for ' + ', '.join(runs) if runs else ''}; nothing "
                         "to calibrate against. Import reviewed verdicts with `goldeval review import` (or pass --regressions FILE).")
    settled, conflicts = settle_reviews(reviews)

    case_maps: dict[str, dict[str, dict[str, Any]]] = {}

    def judged(rid: str | None, cid: str) -> dict[str, Any] | None:
        if store is not None and rid is not None:
            if rid not in case_maps:
                try:
                    case_maps[rid] = store.case_map(store.resolve(rid))
                except InputError:
                    case_maps[rid] = {}
            if cid in case_maps[rid]:
                return case_maps[rid][cid]
        e = entries.get((rid, cid))
        if e is not None and e.get("judge_verdict") is not None:
            return {"verdict": e.get("judge_verdict"), "decided_by": None, "why": None, "from": "regressions"}
        return None

    pairs: dict[str, list[tuple[str, str]]] = {"all": [], "rule": [], "llm": [], "unknown": []}
    disagreements: list[dict[str, Any]] = []
    for (rid, cid), s in settled.items():
        rec = judged(rid, cid)
        if rec is None:
            failures.append({"line": None, "id": cid, "run_id": rid, "error": (
                f"case {cid!r}" + (f" of run {rid}" if rid else "") + ": a settled human verdict, but no judge verdict "
                "to compare it with (the run is not in this store, and the regression entry has no judge_verdict). "
                "Pass the --store that holds the run.")})
            continue
        label, group = _judge_label(rec), _group(rec.get("decided_by"))
        pairs["all"].append((label, s["verdict"]))
        pairs[group].append((label, s["verdict"]))
        if label in VERDICTS and label != s["verdict"]:
            disagreements.append({
                "run_id": rid, "id": cid, "decided_by": rec.get("decided_by"), "judge": label,
                "judge_why": rec.get("why") or rec.get("reason"), "human": s["verdict"], "human_why": s.get("note"),
                "reviewers": s["reviewers"],
            })

    by = {g: _stats(p) for g, p in pairs.items() if p or g in ("all", *_GROUPS)}
    undefined: dict[str, str] = {}
    agg: dict[str, Any] = {
        "n": len(pairs["all"]) + len(failures),
        "n_scored": by["all"]["n_counted"],
        "n_failed": len(failures),
        "n_abstained": by["all"]["n_abstained"],
        "n_unsettled": len(conflicts),
    }
    for suffix, g in (("", "all"), ("_rule", "rule"), ("_llm", "llm")):
        st = by[g]
        agg[f"judge_agreement{suffix}"] = st["agreement"]
        agg[f"judge_kappa{suffix}"] = st["kappa"]
        if suffix:
            agg[f"n{suffix}"] = st["n_counted"]
        for k, reason in st["undefined"].items():
            what = "" if not suffix else f" decided by {'the rules' if g == 'rule' else 'the LLM judge'}"
            undefined[f"judge_{k}{suffix}"] = reason.replace("a decided judge verdict", f"a decided judge verdict{what}")
    agg["undefined"] = undefined
    return {
        "scorer": {"name": SCORER_NAME, "version": SCORER_VERSION},
        "aggregate": agg,
        "by_decided_by": by,
        "disagreements": disagreements,
        "unsettled": conflicts,
        "failures": failures,
        "runs": run_ids or sorted({rid for rid, _ in settled if rid}),
        "regressions": None if regressions is None else os.fspath(regressions),
    }
