"""Build a report page from the run store or from a results file: read the run(s), read the case texts back
from the inputs, compare when asked, and render (see :mod:`goldeval.report.model` and :mod:`goldeval.report.html`)."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from typing import Any

from goldeval.errors import InputError
from goldeval.io.resultsfile import read_results
from goldeval.report.html import render_html
from goldeval.report.model import ReportOptions, build_model, scorer_kind
from goldeval.report.sources import TextLoader, input_files, input_paths, kept_copies
from goldeval.runs.compare import CompareCases, compare_runs
from goldeval.runs.corrected import add_corrected_pass_rate, add_corrected_to_comparison, corrected_pass_rate
from goldeval.runs.inputs import stored_run_inputs

__all__ = ["report_from_store", "report_from_results", "report_model_from_store", "report_model_from_results", "read_results_file", "report_inputs", "run_of_results",
           "sources_loader"]


def sources_loader(results: Mapping[str, Any], run: Mapping[str, Any] | None, **kw: Any) -> TextLoader:
    """A function ``wanted ids -> CaseSources`` for :func:`~goldeval.report.model.build_model`: the texts of the cases
    the page embeds, read once they are chosen (or a chunk of them at a time: a
    :class:`~goldeval.report.sources.TextLoader`), each case's recorded line (``per_example[].line``) a hint so that
    only those lines of a JSONL input are decoded. *kw* goes to :func:`~goldeval.report.sources.load_sources`."""
    per_example = results.get("per_example")
    lines = {str(c.get("id")): c["line"] for c in (per_example if isinstance(per_example, list) else [])
             if isinstance(c, Mapping) and isinstance(c.get("line"), int) and not isinstance(c.get("line"), bool)}
    return TextLoader(results, run, lines=lines, **kw)


def report_from_store(store: Any, run: str, *, compare: str | None = None, options: ReportOptions | None = None,
                      seed: int = 0, resamples: int = 10_000, confidence: float = 0.95,
                      calibration: Mapping[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
    """``(html, model)``: :func:`report_model_from_store` and the page as one string (:func:`render_html`).
    To write a page, :func:`~goldeval.report.html.write_html` of the model holds far less (the page is never one
    string)."""
    model = report_model_from_store(store, run, compare=compare, options=options, seed=seed, resamples=resamples,
                                    confidence=confidence, calibration=calibration)
    return render_html(model), model


def report_model_from_store(store: Any, run: str, *, compare: str | None = None, options: ReportOptions | None = None,
                            seed: int = 0, resamples: int = 10_000, confidence: float = 0.95,
                            calibration: Mapping[str, Any] | None = None, stream: bool = False) -> dict[str, Any]:
    """The report model of a recorded run, or of two runs compared (*run* before, *compare* after).

    Args:
        store: An open :class:`goldeval.runs.store.RunStore`.
        run: A run reference (id, unique prefix, ``latest``, ``latest~N``), as in ``goldeval runs show``.
        compare: A second run reference: compare mode (the table shows this run's cases beside *run*'s).
        options: :class:`~goldeval.report.model.ReportOptions`.
        seed, resamples, confidence: The comparison's paired bootstrap (as ``goldeval compare``).
        calibration: Human verdicts that measure the judge (:func:`goldeval.runs.corrected.load_calibration`): the
            page shows each data-answer run's pass rate corrected for the judge's error (in place of one the run
            recorded).
        stream: One run (no *compare*): read its cases from the store with a cursor, twice, and never hold them
            (``build_model(records=...)``): ``cases`` is then an :class:`~goldeval.report.model.EmbeddedCases` whose
            texts are read as :func:`~goldeval.report.html.write_html` writes the page, which is the same page.
            A 100,000-case run's page is written in a third of the memory (139 against 433 MiB).

    Returns:
        The model (:func:`~goldeval.report.model.build_model`).

    Raises:
        StoreError: no such run. InputError: a run that did not finish (it has no results yet), or runs that cannot
            be compared (a verdict run and an F1 run).
    """
    opts = options or ReportOptions()
    stream = stream and compare is None
    rec = _finished(store.get_run(run, with_cases=not stream))
    if stream:
        results = _corrected(rec["results"], calibration, rec.get("judge_version"))
        kept_in = results.get("per_example")
        if isinstance(kept_in, Mapping) and kept_in.get("$cases"):
            run_id, marker = rec["id"], dict(kept_in)

            def records() -> Any:
                return store.per_example_records(run_id, marker)
        else:
            listed = kept_in if isinstance(kept_in, list) else []

            def records() -> Any:
                return iter(listed)
        results = {**results, "per_example": []}  # the cases are read from records(), never held
        sources = None if opts.redact else sources_loader(results, rec, kept=kept_copies(store, rec))
        if sources is not None:
            sources.prefetch()  # the input's sha256 taken in a thread while the cases are read
        model = build_model(results, run=rec, sources=sources, options=opts, records=records)
    elif compare is None:
        results = _corrected(rec["results"], calibration, rec.get("judge_version"))
        sources = None if opts.redact else sources_loader(results, rec, kept=kept_copies(store, rec))
        model = build_model(results, run=rec, sources=sources, options=opts)
    else:

        rec_b = _finished(store.get_run(compare))
        cmp = compare_runs(CompareCases.of_run(store, rec["id"]), CompareCases.of_run(store, rec_b["id"]), run_a=rec, run_b=rec_b,
                           seed=seed, n_resamples=resamples, confidence=confidence)
        res_a = _corrected(rec["results"], calibration, rec.get("judge_version"))
        res_b = _corrected(rec_b["results"], calibration, rec_b.get("judge_version"))
        if calibration is not None:
            add_corrected_to_comparison(cmp, calibration, confidence=confidence)
        src_a = None if opts.redact else sources_loader(res_a, rec, execute=False, kept=kept_copies(store, rec))
        src_b = None if opts.redact else sources_loader(res_b, rec_b, kept=kept_copies(store, rec_b))
        model = build_model(res_a, run=rec, sources=src_a, compare=cmp, results_b=res_b, run_b=rec_b, sources_b=src_b, options=opts)

    return model


def _corrected(results: Mapping[str, Any], calibration: Mapping[str, Any] | None, judge_version: str | None) -> Any:
    """*results* with the pass rate corrected by *calibration* (a copy; unchanged without a calibration), warned
    when *judge_version* (the run's) is not one the calibration measured.

    Raises:
        InputError: a calibration given for results that hold no pass rate (an F1 or a labels run).
    """
    if calibration is None:
        return results
    if scorer_kind(results) != "answers":
        raise InputError("--calibration: this run holds no data-answer verdicts (an F1 or a labels run), so there is no "
                         "judge's error to correct a pass rate for. Drop --calibration.")
    out = {**results, "aggregate": dict(results.get("aggregate") or {})}
    return add_corrected_pass_rate(out, corrected_pass_rate(out["aggregate"], calibration, judge_version=judge_version))


def report_inputs(*, store: Any = None, run: str | None = None, compare: str | None = None,
                  results_path: str | None = None, compare_results: str | None = None) -> dict[str, list[str]]:
    """The input files of the run(s) a report is made of, as ``role → [path, ...]`` for
    :func:`goldeval.io.outputs.check_outputs` (roles "run's predictions", "run's cases", ...: "is the run's cases input").

    A report reads its case texts back from these files, and they are the user's data: ``--out`` must never be
    one of them (also with ``--redact``, which reads none of them). Give *store* and *run* (and *compare*), or
    *results_path* (and *compare_results*). Raises what :meth:`RunStore.get_run` / :func:`read_results_file` raise for a
    missing run or file.
    """
    found: list[dict[str, str]] = []
    if results_path is not None:
        for rp in [results_path, compare_results]:
            if rp is not None:
                found.append(input_paths(read_results_file(rp), None, base=os.path.dirname(os.path.abspath(rp))))
    else:
        for ref in [run, compare]:
            if ref is not None:
                found.append(stored_run_inputs(store, ref))
    out: dict[str, list[str]] = {}
    for paths in found:
        for role, path in paths.items():
            out.setdefault(f"run's {role}", []).append(path)
    return out


def _finished(rec: Mapping[str, Any]) -> Mapping[str, Any]:
    if rec.get("results") is None:
        raise InputError(
            f"report: run {rec['id']} did not finish ({rec.get('status')}): it has no results yet. Run the same command "
            f"again to resume it (or pass --resume {rec['id']}), then make its report."
        )
    return rec


def read_results_file(path: str) -> dict[str, Any]:
    """A results JSON that a goldeval scoring command wrote, with its per-case records (InputError when it is not
    one; the message names the keys it lacks)."""

    results = read_results(path, where=f"--results {path}")  # missing, not JSON, not an object
    missing = [k for k, ok in (("scorer", "scorer" in results), ("per_example", isinstance(results.get("per_example"), list))) if not ok]
    if missing:
        given_engine = results.get("engine")
        engine = given_engine if isinstance(given_engine, Mapping) else {}
        if missing == ["per_example"] and engine.get("name") == "spark":
            # goldeval score --engine spark writes the per-case records to --per-case, not to --out
            raise InputError(
                f"--results {path}: a Spark run's results file holds no per-case records (they went to its --per-case "
                "file). Import them into the run store (goldeval runs import CASES.parquet) and make the report of "
                "that run: goldeval report latest --out report.html."
            )
        raise InputError(f"--results {path}: expected a goldeval results file (an object with 'scorer' and "
                         f"'per_example'), but it has no {' and no '.join(repr(k) for k in missing)}. Pass the JSON "
                         "`goldeval score|labels|judge --out` wrote.")
    return results


def run_of_results(results: Mapping[str, Any], path: str) -> dict[str, Any]:
    """A results file described as :func:`goldeval.runs.compare.compare_runs` reads a stored run, so that two results
    files compare as two runs do (and their differences in tokenizer, scorer version, definition of done, inputs or
    configuration are said beside the numbers).

    Returns:
        ``{"id", "arm", "status", "scorer_name", "scorer_version", "tokenizer", "judge_version", "rubric_hash",
        "dod_hash", "dataset_hash", "config", "results_file"}``: ``id`` and ``arm`` from the file's ``run`` block when
        it was recorded, else the file's name and ``None``; ``dataset_hash`` is the sha256 of its inputs' sha256s
        (``None`` when it names none).
    """


    run, scorer, gates = ({} if not isinstance(v, Mapping) else v for v in (results.get(k) for k in ("run", "scorer", "gates")))
    tok = results.get("tokenizer")
    given_definition = gates.get("definition")
    definition = given_definition if isinstance(given_definition, Mapping) else {}
    shas = sorted(f"{role}:{spec.get('sha256')}" for role, spec in input_files(results, None).items() if spec.get("sha256"))
    return {
        "id": run.get("id") or os.path.basename(path),
        "arm": run.get("arm"),
        "status": "finished",
        "scorer_name": scorer.get("name"),
        "scorer_version": scorer.get("version"),
        "tokenizer": tok.get("name") if isinstance(tok, Mapping) else tok,
        "judge_version": results.get("judge_version"),
        "rubric_hash": results.get("rubric_sha256") or results.get("rubric_hash"),
        "dod_hash": definition.get("sha256"),
        "dataset_hash": hashlib.sha256("\n".join(shas).encode()).hexdigest() if shas else None,
        "config": results.get("config"),
        "results_file": path,
    }


def _case_map(results: Mapping[str, Any], path: str) -> dict[str, dict[str, Any]]:
    """case id → per-case record of a results file, as ``RunStore.case_map`` gives a stored run's (a repeated id
    is refused: the comparison is case by case).

    A row listed in ``failures`` with an id that no ``per_example`` entry has is the ``unscored`` case the run store
    records for it (``{"id", "line", "status": "unscored", "error"}``): a case of the run that could not be scored,
    not one the run lacks. The cases are in the order of their lines when every one has its line (the store's
    recording order), else per_example's, then the failures'."""
    out: dict[str, dict[str, Any]] = {}
    for i, c in enumerate(results.get("per_example") or []):
        if not isinstance(c, Mapping) or c.get("id") is None:  # a row without an id cannot be paired
            continue
        cid = str(c.get("id"))
        if cid in out:
            raise InputError(f"--results/--compare {path}: per_example[{i}] repeats the case id {cid!r}; a comparison is "
                             "case by case. Pass results files with one record per case.")
        out[cid] = dict(c)
    failures = results.get("failures")
    if not isinstance(failures, list):
        return out
    added = False
    for f in failures:  # (a repeated id's failure names the id of a case already here: the first row's, kept)
        if isinstance(f, Mapping) and f.get("id") is not None and str(f["id"]) not in out:
            cid = str(f["id"])
            out[cid] = {"id": cid, "line": f.get("line"), "status": "unscored", "error": f.get("error")}
            added = True
    if added and all(isinstance(c.get("line"), int) and not isinstance(c.get("line"), bool) for c in out.values()):
        out = dict(sorted(out.items(), key=lambda item: item[1]["line"]))
    return out


def report_from_results(path: str, *, compare_path: str | None = None, options: ReportOptions | None = None,
                        seed: int = 0, resamples: int = 10_000, confidence: float = 0.95,
                        calibration: Mapping[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
    """``(html, model)``: :func:`report_model_from_results` and the page as one string (:func:`render_html`)."""
    model = report_model_from_results(path, compare_path=compare_path, options=options, seed=seed, resamples=resamples,
                                      confidence=confidence, calibration=calibration)
    return render_html(model), model


def report_model_from_results(path: str, *, compare_path: str | None = None, options: ReportOptions | None = None,
                              seed: int = 0, resamples: int = 10_000, confidence: float = 0.95,
                              calibration: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The report model of a results file, or of two compared (*path* is A, before; *compare_path* is B, after).

    Texts are read from the inputs each file names (relative paths resolved from the working folder or from the
    file's folder). Compare mode is the one of :func:`report_from_store`: the same
    :func:`~goldeval.runs.compare.compare_runs` on the two files' per-case records (McNemar, paired bootstrap with
    *seed*, *resamples*, *confidence*), each file described by :func:`run_of_results`.

    *calibration*: as for :func:`report_from_store`.

    Returns:
        The model (:func:`~goldeval.report.model.build_model`).

    Raises:
        InputError: a file that is not a goldeval results file, a repeated case id, or two files that cannot be
            compared (a verdict run and an F1 run).
    """
    opts = options or ReportOptions()
    results = read_results_file(path)
    results = _corrected(results, calibration, run_of_results(results, path).get("judge_version"))
    base = os.path.dirname(os.path.abspath(path))
    sources = None if opts.redact else sources_loader(results, None, base=base)
    if compare_path is None:
        model = build_model(results, run=None, sources=sources, options=opts)
    else:

        results_b = read_results_file(compare_path)
        results_b = _corrected(results_b, calibration, run_of_results(results_b, compare_path).get("judge_version"))
        cmp = compare_runs(_case_map(results, path), _case_map(results_b, compare_path),
                           run_a=run_of_results(results, path), run_b=run_of_results(results_b, compare_path),
                           seed=seed, n_resamples=resamples, confidence=confidence)
        if calibration is not None:
            add_corrected_to_comparison(cmp, calibration, confidence=confidence)
        src_a = None if opts.redact else sources_loader(results, None, base=base, execute=False)
        src_b = None if opts.redact else sources_loader(results_b, None, base=os.path.dirname(os.path.abspath(compare_path)))
        model = build_model(results, run=None, sources=src_a, compare=cmp, results_b=results_b, run_b=None,
                            sources_b=src_b, options=opts)

    return model
