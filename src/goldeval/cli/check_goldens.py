"""``goldeval check-goldens``: the golden health report of a case file, before any answer is judged."""

from __future__ import annotations

import contextlib
import os
import re
import sys
import time
import tomllib
from typing import Any

import click

from goldeval.cli._answers import (
    check_privileged_role,
    check_sql_dialect,
    max_result_bytes,
    query_options,
)
from goldeval.cli._common import (
    exit_codes,
    guard_outputs,
    guarded,
    report_console,
)
from goldeval.cli._gating import apply_gates, gates_option, load_definition
from goldeval.cli._inputs import INPUT
from goldeval.cli._progress import ProgressDisplay
from goldeval.errors import InputError
from goldeval.gates.definition import parse_gates
from goldeval.gates.evaluate import check_scorer
from goldeval.io.outputs import sqlite_files

#: Doubted or broken cases listed one per line on the console; past this many they are counted (all are in --out).
TABLE_CASES = 200

_GATE = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s*(>=|<=)\s*([^\s=<>]+)\s*$")


@click.command("check-goldens")
@exit_codes
@click.argument("cases", type=INPUT)
@click.option("--db", default=None, type=click.Path(dir_okay=False, path_type=str),
              help="SQLite (or DuckDB) file, or postgresql://user@host:port/dbname, that the canonical queries run on "
                   "(read-only). A PostgreSQL password comes from PGPASSWORD or ~/.pgpass.")
@click.option("--db-dir", default=None, type=click.Path(file_okay=False, path_type=str),
              help="Folder of SQLite / DuckDB databases that cases name (\"db\": NAME -> NAME.sqlite, NAME.duckdb, "
                   "NAME.db or NAME/NAME.sqlite); each is opened once, read-only.")
@query_options
@click.option("--out", "-o", default=None, metavar="FILE.json|FILE.jsonl",
              help="Write every case's health here, as JSON or JSONL by the file's extension ('-': JSON on stdout).")
@click.option("--results", "results_path", default=None, metavar="FILE",
              help="Write the gateable results JSON here, as `judge --out` writes its own (aggregate: n_cases, "
                   "n_healthy, n_suspect, n_verified_wrong, n_broken, share_healthy; per_example: every case); "
                   "`goldeval gate` and `goldeval report --results` read it.")
@click.option("--gate", "inline_gates", multiple=True, metavar="METRIC>=X",
              help="A gate written on the command line, e.g. --gate 'share_healthy>=0.95' or --gate 'n_broken<=0' "
                   "(repeat for more; inclusive). Instead of --gates.")
@gates_option
@click.option("--quiet", "-q", is_flag=True, help="No table on the console (with gates, the gate table and decision are still printed).")
@guarded
def check_goldens(cases, db, db_dir, sql_dialect, timeout_s, max_rows, no_canonical, allow_functions, allow_privileged_role,
                  max_result_mb, out, results_path, inline_gates, gates, quiet):
    """Check every golden of CASES before any run: its canonical query runs and gives the stored rows, reads no
    clock or random source, is not empty or all-NULL, no literal misses the data, its result does not change with
    its text comparisons trimmed and case-folded, its MAX/MIN or ORDER BY direction agrees with the question, plus
    the judge's static golden checks.

    CASES is the case file `goldeval judge` reads ({"id", "question", "golden", "db"?}). Each case comes out healthy,
    suspect, verified_wrong or broken, with the check that fired and its note. With --gates or --gate (e.g.
    share_healthy>=0.95) exit 1 when a gate fails; else exit 0 when checked.
    """
    from goldeval.answers.config import AnswerConfig  # start-up: the answer judge loads only when the command runs

    # start-up: the answer judge loads only when the command runs
    from goldeval.answers.golden_health import GOLDEN_HEALTH_NAME
    from goldeval.answers.postgres import is_postgres_url  # start-up: the answer judge loads only when the command runs

    if db is None and db_dir is None:
        raise InputError("check-goldens runs each golden's canonical query: give --db (a database file or "
                         "postgresql://...) or --db-dir (the folder of the databases the cases name).")
    check_privileged_role(allow_privileged_role, db)
    check_sql_dialect(sql_dialect, db, db_dir)
    out_format = _out_format(out)
    if gates is not None and inline_gates:
        raise InputError("--gates and --gate both given: put every gate in the TOML file, or give them all with --gate.")
    config = AnswerConfig(db=db, timeout_s=timeout_s, max_rows=max_rows, check_canonical=not no_canonical,
                          sql_dialect=sql_dialect, db_dir=db_dir, allow_functions=allow_functions,
                          allow_privileged_role=allow_privileged_role, max_result_bytes=max_result_bytes(max_result_mb))
    server = is_postgres_url(db)
    named = _named_databases(cases, db_dir)
    guard_outputs({"--out": out, "--results": results_path},
                  {"CASES": cases, "--db": None if server else sqlite_files(config.db), "--gates": gates,
                   **{f"database {name!r}": sqlite_files(path) for name, path in named.items()}})
    definition = _inline_definition(inline_gates) if inline_gates else load_definition(gates)
    if definition is not None:

        check_scorer(definition, GOLDEN_HEALTH_NAME)  # a gate on another scorer's metric: refused before any query
        _refuse_slice_gates(definition)
    _, code = _run(cases, config, out, out_format, results_path, quiet, definition)
    sys.exit(code)


def _out_format(out: str | None) -> str:
    """``json`` or ``jsonl`` by --out's extension (``-``: json)."""
    if out is None or out == "-":
        return "json"
    low = out.lower()
    if low.endswith(".jsonl"):
        return "jsonl"
    if low.endswith(".json"):
        return "json"
    raise InputError(f"--out {out}: the format is chosen by the extension, .json or .jsonl. Name the file so.")


def _refuse_slice_gates(definition: Any) -> None:
    """Refuse, before any query, a gate under ``[gates.slices.NAME]``: check-goldens does not slice its cases (no
    ``--slice-by``), so such a gate could only fail, after every golden was checked, with advice to pass a flag this
    command does not have.

    Raises:
        InputError: with the gate's line and what to do instead."""
    gate = next((g for g in definition.gates if g.slice is not None), None)
    if gate is not None:
        where = f"{definition.source}:{gate.line}" if gate.line else definition.source
        raise InputError(f"{where}: gate on {gate.metric!r} of slice {gate.slice!r} ([gates.slices.{gate.slice}]), but "
                         "check-goldens does not slice its cases (it has no --slice-by), so that gate could only fail. "
                         "Drop the slice gates from this definition of done (slices are gated on a judged run: "
                         "goldeval judge --slice-by FIELD --gates DOD.toml).")


def _toml_number(text: str) -> bool:
    """Whether *text* is a number in TOML's own spelling (``0.95``, ``1e-3``, ``1_000``, ``nan``)."""
    try:
        value = tomllib.loads(f"v = {text}")["v"]
    except (tomllib.TOMLDecodeError, ValueError):
        return False
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _inline_definition(exprs: tuple[str, ...]) -> Any:
    """The definition of done of the ``--gate METRIC>=X`` options (parsed as a TOML [gates] table would be)."""

    bounds: dict[str, dict[str, str]] = {}
    for expr in exprs:
        m = _GATE.match(expr)
        if m is None:
            raise InputError(f"--gate {expr!r}: expected METRIC>=NUMBER or METRIC<=NUMBER, e.g. --gate 'share_healthy>=0.95'.")
        metric, op, value = m.groups()
        try:
            number = float(value)
        except ValueError:
            raise InputError(f"--gate {expr!r}: the limit {value!r} is not a number. Give e.g. 0.95.") from None
        if not _toml_number(value):
            # a number Python reads and TOML does not (.95, 95., NaN): written as TOML writes it, so that the user
            # reads the limit's own message, not "--gate: not valid TOML … line 2, column 25" about a file never seen
            value = repr(number)
        side = "min" if op == ">=" else "max"
        if side in bounds.setdefault(metric, {}):
            raise InputError(f"--gate {expr!r}: {metric} already has a {side} bound ({metric}{op}{bounds[metric][side]}). Give one.")
        bounds[metric][side] = value
    text = "[gates]\n" + "".join(f"{metric} = {{ {', '.join(f'{k} = {v}' for k, v in b.items())} }}\n"
                                 for metric, b in bounds.items())
    return parse_gates(text, source="--gate")


def _named_databases(cases: str, db_dir: str | None) -> dict[str, str]:
    """name → file of each database the case file names that resolves under *db_dir* ({} without one)."""

    if db_dir is None or not os.path.isfile(cases):
        return {}
    # start-up: the answer judge loads only when the command runs
    from goldeval.answers.databases import DatabaseDir, case_database_names
    from goldeval.io.reading import read_rows  # start-up: loaded only when the command runs, not for --help

    return DatabaseDir(db_dir, open_one=lambda path: None).files(case_database_names(read_rows(cases)))


def _run(cases: str, config: Any, out: str | None, out_format: str, results_path: str | None, quiet: bool,
         definition: Any) -> tuple[dict[str, Any], int]:
    """Check every case, streaming each to --out and --results and the doubted ones to the console table; gate the
    results.
    Returns the results dict (with ``gates`` when gated) and the exit code of the gates (0 without)."""

    # start-up: the answer judge loads only when the command runs
    from goldeval.answers.golden_health import (
        GOLDEN_HEALTH_NAME,
        GOLDEN_HEALTH_VERSION,
        check_goldens,
        summarize_health,
    )

    # start-up: loaded only when the command runs, not for --help
    from goldeval.io.reading import check_input_file, count_rows
    from goldeval.io.resultsfile import ResultsFile  # start-up: loaded only when the command runs, not for --help
    from goldeval.io.streams import display_name, input_sha256  # start-up: loaded only when the command runs, not for --help

    check_input_file(cases)
    start = time.perf_counter()
    head = {"scorer": {"name": GOLDEN_HEALTH_NAME, "version": GOLDEN_HEALTH_VERSION}, "config": config.to_dict()}
    entries: list[dict[str, Any]] = []  # the findings' summaries only: counted at the end
    shown: list[dict[str, Any]] = []
    with contextlib.ExitStack() as stack:
        writers = []
        for path, fmt, role in ((out, out_format, "--out"), (results_path, "json", "--results")):
            if path is not None:
                writers.append(stack.enter_context(ResultsFile(path, fmt, role=role)))
                writers[-1].begin(head)
        db = config.open_database()
        if db is not None:
            stack.callback(db.close)
        databases = config.open_database_dir()
        if databases is not None:
            stack.callback(databases.close)
        display = stack.enter_context(ProgressDisplay("checking goldens", unit="cases", quiet=quiet))
        display.start(count_rows(cases))
        for h in check_goldens(cases, db=db, databases=databases, config=config):
            display.advance()
            d = h.to_dict()
            for writer in writers:
                writer.example(d)
            entries.append({"status": d["status"], "findings": [{"check": f["check"], "golden": f["golden"]}
                                                                  for f in d["findings"]]})
            if d["status"] != "healthy" and len(shown) < TABLE_CASES:
                shown.append(d)
        inputs: dict[str, Any] = {"cases": display_name(cases), "cases_sha256": input_sha256(cases), "db": config.db}
        if databases is not None:
            inputs["db_dir"] = config.db_dir
            inputs["databases"] = {name: {"path": p, "sha256": sha} for name, (p, sha) in databases.opened_files.items()}
        results = {**head, "inputs": inputs, "aggregate": summarize_health(entries),
                   "elapsed_sec": time.perf_counter() - start}
        display.stop()  # before the table
        render_health(shown, results["aggregate"], report_console(out, quiet=quiet))
        # the gate table and decision are printed even with -q (as every gated command does)
        code = apply_gates(results, None, report_console(out), definition=definition) if definition is not None else 0
        for writer in writers:
            writer.close(results)
    return results, code


def render_health(shown: list[dict[str, Any]], aggregate: dict[str, Any], console: Any) -> None:
    """The table of the doubted and broken cases (id, status, check, note) and the summary line.

    Args:
        shown: Case entries (``GoldenHealth.to_dict()``) to list, at most :data:`TABLE_CASES`.
        aggregate: :func:`goldeval.answers.golden_health.summarize_health` of every case.
        console: A rich Console.
    """
    from rich.markup import escape  # start-up: rich loads only when a table is rendered
    from rich.table import Table  # start-up: rich loads only when a table is rendered

    a = aggregate
    if shown:
        table = Table(show_header=True, header_style="bold", box=None)
        for col in ("id", "status", "check", "note"):
            table.add_column(col, overflow="fold")
        for d in shown:
            style = {"suspect": "yellow"}.get(d["status"], "red")
            worst = next(i for i, f in enumerate(d["findings"]) if f["check"] == d["check"] and f["status"] == d["status"])
            others = [f["check"] if f.get("golden", "primary") == "primary" else f"{f['check']} ({f['golden']})"
                      for i, f in enumerate(d["findings"]) if i != worst]
            note = (d["note"] or "") + (f" (also: {', '.join(others)})" if others else "")
            table.add_row(escape(d["id"]), f"[{style}]{d['status']}[/]", escape(d["check"] or ""), escape(note))
        console.print(table)
    doubted = a["n_cases"] - a["n_healthy"]
    if doubted > len(shown):
        console.print(f"… and {doubted - len(shown)} more doubted or broken cases not listed (the first {len(shown)} are); "
                      "every case is in --out FILE.", highlight=False, markup=False)
    share = "undefined (no case was checked)" if a["undefined"].get("share_healthy") else f"{a['share_healthy']:.1%}"
    checks = ", ".join(f"{k} {n}" for k, n in a["by_check"].items())
    console.print(f"share healthy {share} = {a['n_healthy']} healthy / {a['n_cases']} cases · suspect {a['n_suspect']} · "
                  f"verified_wrong {a['n_verified_wrong']} · broken {a['n_broken']}" + (f" · fired: {checks}" if checks else ""),
                  highlight=False, markup=False)
