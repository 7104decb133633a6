"""``goldeval llm-judge``: the LLM judge over a case file and an attempt file (optionally after the rule-based judge).

Without ``--rules`` every case goes to the LLM judge. With ``--rules RESULTS.json`` (the JSON of ``goldeval judge
--out``) each case keeps its rule-based outcome and only the cases the rules could not decide are sent (or all of
them with ``--llm-send all``, to measure agreement).
"""

from __future__ import annotations

import os

import click

from goldeval.cli._common import EXIT_OK, exit_codes, guard_outputs, guarded, out_option, report_console, write_json
from goldeval.cli._inputs import INPUT
from goldeval.cli._llm import dry_run_cap_text, llm_cache_files, llm_config, llm_options, spend_line
from goldeval.cli._progress import ProgressDisplay
from goldeval.cli._store import store_options
from goldeval.errors import InputError
from goldeval.io.reading import file_sha256


@click.command("llm-judge")
@exit_codes
@click.argument("cases", type=INPUT)
@click.argument("attempts", type=INPUT)
@click.option("--rules", "rules_path", type=INPUT, default=None,
              help="Results JSON of the rule-based judge (goldeval judge --out): only its undecided cases are sent.")
@out_option("Write the results JSON here ('-' for stdout).")
@click.option("--quiet", "-q", is_flag=True, help="No summary (the JSON still goes to --out).")
@llm_options
@store_options
@guarded
def llm_judge(cases, attempts, rules_path, out, quiet, llm_opts, run_store):
    """Judge the answers in ATTEMPTS against the goldens in CASES with an LLM (OpenAI-compatible endpoint).

    \b
    CASES:    {"id", "question", "golden", "rubric"?, "must_not_use"?} per line.
    ATTEMPTS: {"id", "final_query"?, "columns"?, "rows"?, "text"?, "model"?} per line.
    The judge model must differ from the model named in ATTEMPTS. Needs: pip install 'goldeval[llm]'.
    """

    from goldeval.answers.config import JUDGE_NAME  # start-up: the answer judge loads only when the command runs

    # start-up: the LLM judge loads only when the command runs
    from goldeval.llm import JUDGE_VERSION, JudgeCache, judge_cases
    from goldeval.llm.prompt import rubric_hash  # start-up: the LLM judge loads only when the command runs
    from goldeval.llm.run import SCORER_NAME  # start-up: the LLM judge loads only when the command runs
    from goldeval.llm.wiring import case_materials  # start-up: the LLM judge loads only when the command runs

    # start-up: the library loads only when the command runs, not for --help
    from goldeval.pipeline.llm_stage import read_checked

    if llm_opts.model is None:
        llm_opts.model = ""  # llm-judge always judges: the model may come from $GOLDEVAL_JUDGE_MODEL
    guard_outputs({"--out": out}, {"CASES": cases, "ATTEMPTS": attempts, "--rules": rules_path,
                                   "--store": [] if llm_opts.dry_run else run_store.files(),
                                   "judge cache": llm_cache_files(llm_opts, always=True)})
    config = llm_config(llm_opts)
    if not llm_opts.dry_run:  # no key, no client library: fail before a run is recorded
        from goldeval.llm.client import JudgeClient

        JudgeClient(config).check_ready()
    case_rows, case_failures = read_checked(cases)
    attempt_rows, attempt_failures = read_checked(attempts)
    bad_attempt_ids = {f["id"] for f in attempt_failures if f["id"] is not None}
    for f in attempt_failures:
        if f["id"] is not None and f["id"] in case_rows:
            f["error"] += " The case is not judged (its answer would read as missing)."
    attempt_failures += [
        {"line": None, "id": aid, "file": os.path.basename(attempts),
         "error": f"{os.path.basename(attempts)}: attempt {aid!r} has no case in {os.path.basename(cases)}; not judged."}
        for aid in attempt_rows if aid not in case_rows
    ]
    rules: dict[str, dict] = {}
    if rules_path:
        from goldeval.io.resultsfile import read_results  # start-up: loaded only when the command runs, not for --help

        data = read_results(rules_path, where=f"--rules {rules_path}")  # json or --out-format jsonl
        try:
            rules = {str(r["id"]): r for r in data["per_example"]}
        except (KeyError, TypeError) as exc:
            raise InputError(
                f"--rules {rules_path}: expected the results JSON of 'goldeval judge --out' (with per_example), "
                f"could not read it ({type(exc).__name__}: {exc}). Pass that file, or drop --rules."
            ) from None
        given_scorer = data.get("scorer")
        scorer = given_scorer if isinstance(given_scorer, dict) else {}
        if scorer.get("name") not in (None, JUDGE_NAME):
            # a labels or score results file has no rule outcome for any case: every case would be sent and paid for
            raise InputError(
                f"--rules {rules_path}: is the results of a {scorer.get('name')} run, not of 'goldeval judge --out' "
                f"(scorer {JUDGE_NAME}), so it holds no rule outcome for these cases. Pass the rule judge's results "
                "file, or drop --rules to send every case."
            )
    materials = [case_materials(row, attempt_rows.get(cid), rules.get(cid)) for cid, row in case_rows.items()
                 if cid not in bad_attempt_ids]
    console = report_console(out)
    if rules_path:
        uncovered = [cid for cid in case_rows if cid not in rules and cid not in bad_attempt_ids]
        if uncovered and not quiet:  # each goes to the LLM as "no rule-based outcome": say so before paying for it
            click.echo(
                f"goldeval: --rules {rules_path} has no outcome for {len(uncovered)} of {len(case_rows)} cases "
                f"({', '.join(uncovered[:5])}{'…' if len(uncovered) > 5 else ''}); they go to the LLM judge. "
                "Check that the rules file comes from the same case file.",
                err=True,
            )
    cfg = {**config.answer_params(), "repeat": llm_opts.repeat, "send": llm_opts.send, "judge_version": JUDGE_VERSION}
    inputs = {"cases": file_sha256(cases), "attempts": file_sha256(attempts)}
    if rules_path:
        inputs["rules"] = file_sha256(rules_path)
    cache = JudgeCache() if llm_opts.cache else None
    try:
        if llm_opts.dry_run:
            res = judge_cases(materials, config=config, cache=cache, repeat=llm_opts.repeat, dry_run=True, send=llm_opts.send, refresh=llm_opts.refresh)
            click.echo(
                f"goldeval: dry run: {res['sent']} of {res['cases']} cases go to the LLM judge {config.model!r}, "
                f"{res['calls']} calls, {res['cached']} cached, {res['http_calls']} would be sent{dry_run_cap_text(res)}.",
                err=True,
            )
            if out:
                write_json(res, out)
            return EXIT_OK
        rubrics = {cid: row.get("rubric") for cid, row in case_rows.items() if row.get("rubric")}
        with run_store.recording(
            scorer_name=SCORER_NAME, scorer_version=JUDGE_VERSION, inputs={"cases": cases, "attempts": attempts, "rules": rules_path},
            config=cfg, judge_version=JUDGE_VERSION, rubric_hash=rubric_hash(rubrics) if rubrics else None,
        ) as recorder:
            # progress on stderr: cases judged of those sent, calls, cache hits, failures, spend so far
            with ProgressDisplay("LLM judge", unit="cases", quiet=quiet) as display:
                results = judge_cases(materials, config=config, cache=cache, repeat=llm_opts.repeat, send=llm_opts.send,
                                      refresh=llm_opts.refresh, recorder=recorder,
                                      progress=lambda tally: display.llm(tally.to_dict()) if tally.sent else None)
    finally:
        if cache is not None:
            cache.close()
    results["inputs"] = inputs
    _add_file_failures(results, case_failures, attempt_failures, bad_attempt_ids & set(case_rows))
    if run_store.note and not quiet:
        click.echo(f"goldeval: {run_store.note}", err=True)
    if not quiet:
        render_summary(results, console)
    run_store.stamp(results)  # the top-level "run": {id, arm, store} (absent with --no-store)
    if out:
        write_json(results, out)
    return EXIT_OK


def _add_file_failures(results: dict, case_failures: list, attempt_failures: list, unjudged: set) -> None:
    """Count the unusable lines of the input files into the results: a bad case line is a case that failed (``n``
    and ``n_failed``); a bad or orphan attempt line is listed in ``failures`` (and, when its case exists and so
    went unjudged, that case counts in ``n`` and ``n_failed``)."""
    agg = results["aggregate"]
    results["failures"] = case_failures + attempt_failures + results["failures"]
    agg["n"] += len(case_failures) + len(unjudged)
    agg["n_failed"] += len(case_failures) + len(unjudged)


def render_summary(results: dict, console) -> None:
    """A short terminal summary of an LLM judge run (rounding happens here only)."""
    from rich.markup import escape  # start-up: rich loads only when a table is rendered
    from rich.table import Table  # start-up: rich loads only when a table is rendered

    agg = results["aggregate"]
    judge = results["judge"]
    t = Table(title=f"LLM judge {judge['model']} ({judge['judge_version']})", show_header=False)
    c = agg["counts"]
    rate = "undefined" if "pass_rate" in agg["undefined"] else f"{agg['pass_rate']:.1%}"
    t.add_row("pass rate", f"{rate}  (match {c['match']} / decided {c['decided']})")
    t.add_row("beside it", f"near_match {c['near_match']} · needs_human {c['needs_human']} · unscored {c['unscored']} · golden wrong {c['verified_wrong']}")
    t.add_row("cases", f"{agg['n']} ({agg['n_sent']} sent to the judge, {agg['n_rule_decided']} decided by rule, {agg['n_failed']} failed)")
    t.add_row("calls", f"{agg['n_http_calls']} over HTTP, {agg['n_cached']} cached, {agg['n_call_errors']} failed, {agg['n_unparseable']} unparseable")
    t.add_row("tokens", f"{agg['prompt_tokens']} in + {agg['completion_tokens']} out"
              + ("" if "cost_usd" in agg["undefined"] else f" = ${agg['cost_usd']:.4f}"))
    spend = agg.get("spend") or {}
    if spend.get("spent_usd") is not None or spend.get("max_calls") is not None or spend.get("max_cost_usd") is not None:

        t.add_row("spend", escape(spend_line(agg)))
    if agg.get("n_capped"):
        t.add_row("not sent", f"{agg['n_not_sent']} case(s) not sent, {agg['n_capped']} needs_human: spend cap reached")
    if agg["n_http_calls"]:
        t.add_row("latency", f"mean {agg['latency_mean_s']:.2f} s · p95 {agg['latency_p95_s']:.2f} s · max {agg['latency_max_s']:.2f} s")
    if agg["repeat"] > 1:
        incomplete = f", {agg['n_incomplete']} incomplete (a call failed)" if agg.get("n_incomplete") else ""
        t.add_row("stability", f"{agg['n_stable']} stable, {agg['n_flickering']} flickering{incomplete} over {agg['repeat']} samples")
    if agg["agreement_n"]:
        t.add_row("agreement", f"{agg['agreement_rate']:.1%} of {agg['agreement_n']} cases (rule vs LLM)")
    console.print(t)
    for f in results["failures"][:10]:
        console.print(f"[yellow]failed[/] {escape(f['error'])}", highlight=False)
    if len(results["failures"]) > 10:
        console.print(f"… and {len(results['failures']) - 10} more failures (see the results JSON).")
