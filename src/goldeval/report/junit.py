"""JUnit XML for CI systems (Jenkins, GitLab, GitHub test reporters), written with junitparser.

Shapes (one ``<testsuites>`` document with one ``<testsuite>`` per run):

* **gates**: one testcase per gate (``classname`` ``goldeval.gates``, ``name`` the metric and its bound). A failing
  gate is a ``<failure>`` whose message is the plain decision line of that gate; the gate's ``value``, ``bound``,
  ``op`` and ``allowed_on_this_set`` are ``<properties>`` of the testcase. The suite's properties name the run,
  the scorer and the definition of done.
* **no gates**: one testcase, ``scored``, that fails only when nothing could be scored (no evidence is not a pass).
* **slices** (a run scored with ``--slice-by``): one testcase per slice (``classname`` ``goldeval.slices``, ``name``
  ``FIELD = VALUE``) with the slice's metrics as properties; a gate on a slice is named ``slice NAME: metric bound``.
* ``cases=True``: also one testcase per case (``classname`` ``goldeval.cases``): ``no_match``, a false positive or a
  missed positive fails, and so does an F1 below ``min_f1`` when given; an unscored case is an ``<error>`` with its
  reason; near_match / needs_human / verified_wrong cases are ``<skipped>`` with the verdict as message (undecided
  is neither a pass nor a fail).
* **compare / replay**: one testcase per flipped (or changed) case, failing for pass → fail (or a changed
  settled verdict), plus one testcase that fails when nothing was decided in both runs.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from goldeval.io.printable import printable

__all__ = ["results_junit", "compare_junit", "replay_junit"]


def _props(element: Any, items: Mapping[str, Any]) -> None:
    from junitparser import Properties, Property  # start-up: loaded only when a report or CI file is written

    props = Properties()
    for k, v in items.items():
        if v is not None:
            props.add_property(Property(printable(str(k)), printable(str(v))))
    element.append(props)


def _case(name: str, classname: str, *, failure: str | None = None, error: str | None = None,
          skipped: str | None = None, props: Mapping[str, Any] | None = None, text: str | None = None) -> Any:
    # start-up: loaded only when a report or CI file is written
    from junitparser import Error, Failure, Skipped, TestCase

    # every text escaped as on the console (goldeval.io.printable): an id's ESC or U+202E would otherwise reach
    # the CI page that shows the test names, and XML 1.0 cannot hold a C0 control at all
    # a name is one line: a line feed or tab in an id is shown escaped too (a CI page drew 'a' and 'b' as two lines)
    tc = TestCase(printable(name, keep_newlines=False), printable(classname, keep_newlines=False), 0.0)
    if props:
        _props(tc, props)
    if failure is not None:
        tc.result = [Failure(printable(failure))]
    elif error is not None:
        tc.result = [Error(printable(error))]
    elif skipped is not None:
        tc.result = [Skipped(printable(skipped))]
    if text:
        tc.system_out = printable(text)
    return tc


def _bytes(suites: list[Any]) -> bytes:
    from junitparser import JUnitXml  # start-up: loaded only when a report or CI file is written

    xml = JUnitXml("goldeval")
    for s in suites:
        s.update_statistics()
        xml.add_testsuite(s)
    xml.update_statistics()
    return xml.tostring()


def _suite_name(results: Mapping[str, Any]) -> str:
    given_run = results.get("run")
    run = given_run if isinstance(given_run, Mapping) else {}
    scorer = (results.get("scorer") or {}).get("name", "goldeval")
    return f"goldeval {scorer}" + (f" run {run.get('id')}" if run.get("id") else "") + (f" ({run['arm']})" if run.get("arm") else "")


def results_junit(results: Mapping[str, Any], *, cases: bool = False, min_f1: float | None = None) -> bytes:
    """The JUnit XML document of one results dict (as a scoring command or ``goldeval gate`` holds it).

    Args:
        results: A results dict; its ``gates`` (when present) give one testcase per gate.
        cases: Add one testcase per case (see the module docstring for what fails).
        min_f1: With ``cases``: a free-text case whose whole-note F1 is below this fails (``None``: only unscored
            rows are reported).

    Returns:
        UTF-8 bytes of the XML document.
    """
    from junitparser import TestSuite  # start-up: loaded only when a report or CI file is written

    suite = TestSuite(_suite_name(results))
    given_run = results.get("run")
    run = given_run if isinstance(given_run, Mapping) else {}
    gates = results.get("gates") if isinstance(results.get("gates"), Mapping) else None
    agg = results.get("aggregate") or {}
    _props(suite, {"run": run.get("id"), "arm": run.get("arm"), "store": run.get("store"),
                   "scorer": (results.get("scorer") or {}).get("name"), "scorer_version": (results.get("scorer") or {}).get("version"),
                   "definition": (gates or {}).get("definition", {}).get("path") if gates else None,
                   "definition_sha256": (gates or {}).get("definition", {}).get("sha256") if gates else None,
                   "decision": (gates or {}).get("summary") if gates else None})
    if gates:
        for g in gates.get("gates") or []:
            bound = f"{'>=' if g.get('op') == 'min' else '<='} {g.get('limit_text')}"
            decision = g.get("sentence") or ""
            if g.get("reason") and g["reason"] not in decision:
                decision = f"{decision}: {g['reason']}" if decision else g["reason"]
            name = f"{g.get('metric')} {bound}" if g.get("slice") is None else f"slice {g['slice']}: {g.get('metric')} {bound}"
            suite.add_testcase(_case(
                name, "goldeval.gates", failure=None if g.get("passed") else decision,
                props={"slice": g.get("slice"), "value": g.get("observed"), "value_shown": g.get("observed_text"), "bound": g.get("limit"),
                       "op": g.get("op"), "limit": g.get("limit_text"), "allowed_on_this_set": g.get("allowed_on_this_set"),
                       "line": g.get("line"), "ci_low": g.get("ci_low"), "ci_high": g.get("ci_high"),
                       "interval_method": g.get("interval_method"), "interval_warning": g.get("interval_warning")},
                text=decision + (f" Warning: {g['interval_warning']}." if g.get("interval_warning") else ""),
            ))
    else:
        n_scored = agg.get("n_scored", agg.get("n"))
        nothing = not n_scored or (agg.get("unscored") is not None and agg.get("unscored") == agg.get("n"))
        suite.add_testcase(_case(
            "scored", "goldeval.run", failure=f"nothing could be scored ({agg.get('n_failed', 0)} failed)" if nothing else None,
            props={"n": agg.get("n"), "n_scored": n_scored, "n_failed": agg.get("n_failed")},
        ))
    for c in _slice_tests(results):
        suite.add_testcase(c)
    if cases:
        for c in _case_tests(results, min_f1):
            suite.add_testcase(c)
    return _bytes([suite])


def _slice_tests(results: Mapping[str, Any]) -> list[Any]:
    """One testcase per slice of a run scored with ``--slice-by`` (``classname`` ``goldeval.slices``): its scalar
    metrics as properties (an undefined one as ``undefined``); skipped when nothing in it was scored (no evidence is
    neither a pass nor a fail), an error when the scorer could not aggregate it. A gate on a slice is a
    ``goldeval.gates`` testcase, as any gate."""
    slices = results.get("slices")
    if not isinstance(slices, Mapping):
        return []
    by = results.get("slice_by") or "slice"
    out = []
    for name, agg in slices.items():
        if not isinstance(agg, Mapping):
            continue
        title = f"{by} = {name}"
        if "error" in agg:
            out.append(_case(title, "goldeval.slices", error=f"not aggregated: {agg['error']}"))
            continue
        given = agg.get("undefined")
        undefined: Mapping[str, Any] = given if isinstance(given, Mapping) else {}
        props = {k: ("undefined" if k in undefined else v) for k, v in agg.items()
                 if isinstance(v, (int, float, str)) and not isinstance(v, bool)}
        n_scored = agg.get("n_scored", agg.get("n"))
        out.append(_case(title, "goldeval.slices", props=props,
                         skipped=None if n_scored else f"nothing was scored in this slice ({agg.get('n', 0)} rows)"))
    return out


def _case_tests(results: Mapping[str, Any], min_f1: float | None) -> list[Any]:
    out = []
    seen: set[str] = set()
    for c in results.get("per_example") or []:
        if not isinstance(c, Mapping):
            continue
        cid = str(c.get("id"))
        seen.add(cid)
        if c.get("status", "scored") != "scored":
            out.append(_case(cid, "goldeval.cases", error=f"unscored: {c.get('reason') or c.get('error') or 'no reason recorded'}"))
            continue
        if "whole_note" in c:
            f1 = (c.get("whole_note") or {}).get("f1")
            fail = None if (min_f1 is None or f1 is None or f1 >= min_f1) else f"F1 {f1:.4f} is below --junit-min-f1 {min_f1:g}"
            out.append(_case(cid, "goldeval.cases", failure=fail, props={"f1": f1}))
        elif c.get("outcome") in ("tp", "fp", "fn", "tn"):
            o = c["outcome"]
            # a row without a prediction (JSON null, an empty cell) says so, not Python's 'predicted None'
            pred = "no prediction" if c.get("pred") is None else f"predicted {c.get('pred')!r}"
            fail = {"fp": f"false positive: {pred}, gold {c.get('gold')!r}",
                    "fn": f"missed positive: gold {c.get('gold')!r}, {pred}"}.get(o)
            out.append(_case(cid, "goldeval.cases", failure=fail, props={"outcome": o, "gold": c.get("gold"), "pred": c.get("pred")}))
        elif isinstance(c.get("verdict"), str):
            v = c["verdict"]
            why = c.get("why") or ""
            if c.get("gold_status") == "verified_wrong":
                out.append(_case(cid, "goldeval.cases", skipped=f"golden verified_wrong (not in the pass rate): {v}: {why}"))
            elif v == "no_match":
                out.append(_case(cid, "goldeval.cases", failure=f"no_match: {why}", props={"confidence": c.get("confidence")}))
            elif v == "match":
                out.append(_case(cid, "goldeval.cases", props={"confidence": c.get("confidence")}))
            else:
                out.append(_case(cid, "goldeval.cases", skipped=f"{v}: {why}"))
        else:
            out.append(_case(cid, "goldeval.cases"))
    for f in results.get("failures") or []:
        fid = f.get("id")
        if fid is None or str(fid) not in seen:
            out.append(_case(str(fid) if fid is not None else f"line {f.get('line')}", "goldeval.cases", error=f"failed: {f.get('error')}"))
    return out


def compare_junit(cmp: Mapping[str, Any]) -> bytes:
    """JUnit XML of ``goldeval compare``: one testcase per flipped case (pass → fail fails, fail → pass passes), a
    failing ``run A finished`` / ``run B finished`` for a run that did not finish (its unrecorded cases are no
    evidence), and one, ``decided in both runs``, that fails when no case was decided in both (nothing shows no
    regression)."""
    from junitparser import TestSuite  # start-up: loaded only when a report or CI file is written

    ra, rb = (cmp.get("runs") or {}).get("a") or {}, (cmp.get("runs") or {}).get("b") or {}
    suite = TestSuite(f"goldeval compare {ra.get('id', '?')} -> {rb.get('id', '?')}")
    v = cmp.get("verdicts") or {}
    _props(suite, {"run_a": ra.get("id"), "run_b": rb.get("id"), "arm_a": ra.get("arm"), "arm_b": rb.get("arm"),
                   "mcnemar_p": (v.get("mcnemar") or {}).get("p_value")})
    flips = v.get("flips") or {}
    labels = cmp.get("labels") is not None

    def moved(f: Mapping[str, Any], words: str) -> str:
        if labels:  # two label runs: say it in labels (issue 10 item 11)
            a, b = f["a"], f["b"]
            gold = repr(b.get("gold")) if a.get("gold") == b.get("gold") else f"{a.get('gold')!r} -> {b.get('gold')!r}"
            return (f"{'right -> wrong' if words == 'pass -> fail' else 'wrong -> right'} label: gold {gold}, "
                    f"A predicted {a.get('pred')!r} ({a.get('outcome')}) -> B predicted {b.get('pred')!r} ({b.get('outcome')})")
        if words == "pass -> fail":
            return f"pass -> fail: A {f['a']['verdict']} ({f['a'].get('why') or ''}) -> B {f['b']['verdict']} ({f['b'].get('why') or ''})"
        return f"fail -> pass: A {f['a']['verdict']} -> B {f['b']['verdict']} ({f['b'].get('why') or ''})"

    for f in flips.get("pass_to_fail") or []:
        suite.add_testcase(_case(str(f["id"]), "goldeval.compare.pass_to_fail", failure=moved(f, "pass -> fail")))
    for f in flips.get("fail_to_pass") or []:
        suite.add_testcase(_case(str(f["id"]), "goldeval.compare.fail_to_pass", text=moved(f, "fail -> pass")))
    for side, run in (("A", ra), ("B", rb)):
        if run.get("status") not in (None, "finished"):  # its unrecorded cases are no evidence (as --fail-on-regression)
            suite.add_testcase(_case(
                f"run {side} finished", "goldeval.compare",
                failure=f"run {side} ({run.get('id')}) did not finish ({run.get('status')}): the cases it did not record "
                        "may hold a regression; resume it (the same scoring command) and compare again",
            ))
    n_pairs = (v.get("bootstrap") or {}).get("n_pairs")
    suite.add_testcase(_case(
        "decided in both runs", "goldeval.compare",
        failure=None if n_pairs else (
            f"no case was scored in both runs ({cmp.get('n_common', 0)} case id(s) in common)" if labels else
            f"no case was decided (match or no_match) in both runs ({cmp.get('n_common', 0)} case id(s) in common)"),
        props={"n_pairs": n_pairs, "n_common": cmp.get("n_common")},
    ))
    return _bytes([suite])


def replay_junit(result: Mapping[str, Any]) -> bytes:
    """JUnit XML of ``goldeval replay``: one testcase per changed settled verdict (a failure), per settled verdict
    that could not be replayed (an error), and one summary testcase."""
    from junitparser import TestSuite  # start-up: loaded only when a report or CI file is written

    suite = TestSuite("goldeval replay")
    _props(suite, {"n_replayed": result.get("n_replayed"), "n_same": result.get("n_same"), "n_changed": result.get("n_changed"),
                   "n_failed": result.get("n_failed")})
    for c in result.get("changed") or []:
        suite.add_testcase(_case(str(c.get("id")), "goldeval.replay.changed",
                                 failure=f"settled {c.get('settled')} (by {c.get('reviewer') or '?'}) -> now {c.get('now')}: {c.get('why_now') or ''}"))
    for f in result.get("failures") or []:
        suite.add_testcase(_case(str(f.get("id") or f"line {f.get('line')}"), "goldeval.replay.not_replayed", error=str(f.get("error"))))
    suite.add_testcase(_case(
        "settled verdicts unchanged", "goldeval.replay",
        failure=None if (result.get("n_replayed") and not result.get("n_changed") and not result.get("n_failed")) else
        f"{result.get('n_changed', 0)} changed, {result.get('n_failed', 0)} not replayed, {result.get('n_replayed', 0)} replayed",
    ))
    return _bytes([suite])
