"""``goldeval runs``: list, show, export and delete the runs in the run store."""

from __future__ import annotations

import os
import sys

import click

from goldeval.cli._common import (
    EXIT_OK,
    exit_codes,
    guard_outputs,
    guarded,
    out_option,
    quiet_option,
    report_console,
    run_inputs,
    stdout_console,
    write_json,
)
from goldeval.cli._groups import SuggestingGroup
from goldeval.cli._store import store_file, store_files, store_path_option
from goldeval.errors import InputError
from goldeval.io.outputs import write_output
from goldeval.runs.location import is_server_store
from goldeval.runs.backends import open_existing_store, open_store


@click.group(cls=SuggestingGroup)
@exit_codes
def runs() -> None:
    """The recorded runs: list, show, export, delete, tag.

    RUN is a run id, a tag (`goldeval runs tag RUN baseline/main`), a unique prefix of an id, 'latest' or
    'latest~N' (N runs before it).
    """


@runs.command("list")
@exit_codes
@store_path_option
@click.option("--limit", type=click.IntRange(min=0), default=20, show_default=True, help="Show at most this many runs (0: all).")
@click.option("--arm", default=None, help="Only runs of this arm.")
@click.option("--scorer", default=None, help="Only runs of this scorer (token_f1, labels, …).")
@click.option("--json", "as_json", is_flag=True, help="Write the runs as JSON on stdout instead of a table (as --out -).")
@out_option("Also write the runs as JSON here ('-' for stdout, instead of the table).")
@quiet_option("Print no table (with --out, only the file is written).")
@guarded
def list_(store, limit, arm, scorer, as_json, out, quiet):
    """A table of runs, newest first: id, arm, when, scorer, n, headline metric, gates, status."""
    # start-up: the report modules load only when one is written or rendered
    from goldeval.report.runs import render_runs_list

    path = store_file(store)
    if as_json:
        if out not in (None, "-"):

            raise InputError(f"runs list: --json writes the runs to stdout and --out {out} to a file: give one of them.")
        out = "-"
    guard_outputs({"--out": out}, {"--store": store_files(path)})
    if not is_server_store(path) and not os.path.isfile(path):
        rows = []
        if not quiet:
            click.echo(f"goldeval: no run store at {path} yet (nothing recorded there)", err=True)
    else:
        with open_existing_store(path) as st:
            rows = st.list_runs(limit=limit or None, arm=arm, scorer=scorer)
    if out is not None:
        write_json(rows, out)
    if out != "-" and not quiet:
        render_runs_list(rows, stdout_console(), filters={"--arm": arm, "--scorer": scorer})
    return EXIT_OK


@runs.command("show")
@exit_codes
@click.argument("run")
@store_path_option
@out_option("Also write the stored results JSON here ('-' for stdout).")
@quiet_option("Print no summary (with --out, only the file is written).")
@guarded
def show(run, store, out, quiet):
    """The summary the scoring command printed for RUN, re-rendered from the store, with its versions and hashes."""
    # start-up: the report modules load only when one is written or rendered
    from goldeval.report.runs import render_run

    guard_outputs({"--out": out}, {"--store": store_files(store)})

    with open_existing_store(store) as st:
        record = st.get_run(run)
        path = st.path
        guard_outputs({"--out": out}, run_inputs(st, record["id"]))  # never over the run's own input files
    render_run(record, report_console(out, quiet=quiet))
    if out:
        from goldeval.runs.export import with_run_block  # start-up: the run store loads only when the command runs

        write_json(with_run_block(record.get("results"), record, path), out)
    return EXIT_OK


@runs.command("export")
@exit_codes
@click.argument("run")
@store_path_option
@click.option("--format", "fmt", type=click.Choice(["jsonl", "csv", "json"]), default="jsonl", show_default=True,
              help="jsonl / csv: one line per case; json: the run, its results, every case and its reviews.")
@out_option("Where to write ('-' for stdout).", default="-")
@click.option("--bundle", default=None, metavar="FILE.tar.gz", type=click.Path(dir_okay=False),
              help="Write the whole finished run as a bundle (run, results, cases, reviews, and the texts kept with it) that `goldeval runs import` "
                   "merges into any store, idempotently. Instead of --format / --out.")
@quiet_option("Do not say where the export was written.")
@guarded
def export(run, store, fmt, out, bundle, quiet):
    """Write RUN's per-case records (as recorded) as JSONL or CSV, or the whole run as JSON, or as a bundle.

    \b
    A bundle moves a run between stores without a server (a CI artifact):
        goldeval runs export latest --bundle run.tar.gz
        goldeval runs import run.tar.gz --store team.db      # twice: still one run
    """
    from goldeval.runs.export import export_run  # start-up: the run store loads only when the command runs

    if bundle is not None:
        given = click.get_current_context().get_parameter_source
        if given("out") is not click.core.ParameterSource.DEFAULT or given("fmt") is not click.core.ParameterSource.DEFAULT:
            raise InputError(f"runs export: --bundle {bundle} writes the whole run to that file; --format and --out write "
                             "the cases elsewhere. Give one of them.")
        out = bundle
    option = "--out" if bundle is None else "--bundle"  # the option the user wrote, named in a refusal
    guard_outputs({option: out}, {"--store": store_files(store)})

    with open_existing_store(store) as st:
        run_id = st.resolve(run)  # 'latest' or a prefix: say which run was written
        guard_outputs({option: out}, run_inputs(st, run_id))  # never over the run's own input files
        if bundle is not None:
            from goldeval.runs.bundle import export_bundle  # start-up: loaded only when a bundle is written

            data = export_bundle(st, run_id)
        else:
            data = export_run(st, run, fmt)
    write_bytes(data, out)
    if out != "-" and not quiet:
        click.echo(f"goldeval: run {run_id} exported as {'a bundle' if bundle else fmt} to {out}", err=True)
    return EXIT_OK


def write_bytes(data: bytes, out: str) -> None:
    """Write *data* to the path *out* (atomically), or to stdout when *out* is ``-``."""

    write_output(out, data)


@runs.command("delete")
@exit_codes
@click.argument("run")
@store_path_option
@click.option("--yes", "-y", is_flag=True, help="Do not ask for confirmation.")
@click.option("--quiet", "-q", is_flag=True, help="Print nothing but errors (the question is still asked without --yes).")
@guarded
def delete(run, store, yes, quiet):
    """Delete RUN, its per-case records and its reviews from the store."""

    with open_existing_store(store) as st:
        record = st.get_run(run, with_results=False)
        if not yes and not _confirm(
            f"delete run {record['id']} ({record['scorer_name']}, arm {record.get('arm') or '—'}, "
            f"{record['n_recorded']} cases)?", record["id"],
        ):
            if not quiet:
                click.echo(f"goldeval: nothing deleted: run {record['id']} is kept (the answer was not yes).", err=True)
            return EXIT_OK
        deleted = st.delete_run(record["id"])
    if not quiet:
        click.echo(f"goldeval: deleted run {deleted}", err=True)
    return EXIT_OK


@runs.command("tag")
@exit_codes
@click.argument("run")
@click.argument("name")
@store_path_option
@click.option("--move", is_flag=True,
              help="Move NAME to RUN when it already names another run (without it that is refused: a baseline never moves by accident).")
@quiet_option("Print nothing but errors.")
@guarded
def tag(run, name, store, move, quiet):
    """Name RUN NAME (e.g. baseline/main): NAME then works wherever a run id does.

    \b
    A tag names one run; a run may have several. A tag that names another run moves only with --move. A tag may
    not be 'latest' or 'latest~N' nor start with a digit (run ids do). The CI line after a run on main:
        goldeval runs tag latest baseline/main --move
    and on a branch:
        goldeval compare baseline/main latest --fail-on-regression
    """
    with open_existing_store(store) as st:
        done = st.tag(run, name, move=move)
    if not quiet:
        if done["previous"] == done["run_id"]:
            said = f"{name} already names run {done['run_id']}: nothing changed"
        elif done["previous"] is not None:
            said = f"{name} moved from run {done['previous']} to run {done['run_id']}"
        else:
            said = f"{name} now names run {done['run_id']}"
        click.echo(f"goldeval: {said}", err=True)
    return EXIT_OK


@runs.command("untag")
@exit_codes
@click.argument("name")
@store_path_option
@quiet_option("Print nothing but errors.")
@guarded
def untag(name, store, quiet):
    """Remove the tag NAME (the run it named is kept)."""
    with open_existing_store(store) as st:
        run_id = st.untag(name)
    if not quiet:
        click.echo(f"goldeval: removed tag {name} (it named run {run_id})", err=True)
    return EXIT_OK


@runs.command("tags")
@exit_codes
@click.argument("run", required=False)
@store_path_option
@click.option("--json", "as_json", is_flag=True, help="Write the tags as JSON on stdout instead of lines (as --out -).")
@out_option("Also write the tags as JSON here ('-' for stdout, instead of the lines).")
@quiet_option("Print no lines (with --out, only the file is written).")
@guarded
def tags(run, store, as_json, out, quiet):
    """The tags and the runs they name, one per line: name, run id, when it was set (only RUN's tags when given)."""
    if as_json:
        if out not in (None, "-"):
            raise InputError(f"runs tags: --json writes the tags to stdout and --out {out} to a file: give one of them.")
        out = "-"
    guard_outputs({"--out": out}, {"--store": store_files(store)})
    with open_existing_store(store) as st:
        rows = st.tags(run)
    if out is not None:
        write_json(rows, out)
    if out != "-" and not quiet:
        for r in rows:
            click.echo(f"{r['name']}\t{r['run_id']}\t{r['tagged_at']}")
    return EXIT_OK


def _confirm(question: str, run_id: str) -> bool:
    """Ask *question* on stderr; ``True`` for yes. No answer at all (stdin closed or not a terminal: EOF) is a usage
    error that says to pass --yes; Ctrl-C at the prompt stops as everywhere (exit 130)."""

    try:
        return click.confirm(question, default=False, err=True)
    except click.exceptions.Abort as exc:
        if isinstance(exc.__context__, KeyboardInterrupt):  # click turns Ctrl-C into Abort: keep it an interrupt
            raise KeyboardInterrupt from None
        raise InputError(
            f"runs delete {run_id}: the confirmation got no answer (stdin is closed or not a terminal), so nothing "
            f"was deleted. To delete without a question, pass --yes: goldeval runs delete {run_id} --yes"
        ) from None


@runs.command("import")
@exit_codes
@click.argument("per_case", metavar="PER_CASE.parquet|BUNDLE.tar.gz")
@store_path_option
@click.option("--arm", default=None, metavar="NAME", help="Arm name recorded with the run (model + prompt).")
@click.option("--gates", default=None, metavar="DOD.toml", type=click.Path(dir_okay=False),
              help="Definition of done to apply; exit 1 when a gate fails. The report is stored with the run.")
@out_option("Also write the results JSON here ('-' for stdout).")
@quiet_option("Print no gate table and no import note (the exit code says whether a gate failed).")
@guarded
def import_(per_case, store, arm, gates, out, quiet):
    """Record a Spark run's per-case Parquet (`score --engine spark --per-case PATH`) as a run, or merge a run
    bundle (`runs export RUN --bundle FILE`) into the store.

    A bundle keeps its run id: importing it again (or into a store that has the run) gives one run, its cases
    upserted and each review added once.

    Idempotent on (run, case id): importing the same data again updates the same run, never a second one, and
    `compare`, `runs show` and the gates work on it as on a local run. A Parquet whose Spark run was recorded in
    this store when it scored (its metadata names the run) is that run: nothing is imported.
    """

    # start-up: loaded only when the command runs, not for --help
    from goldeval.cli._gating import apply_gates, load_definition
    from goldeval.runs.importer import import_per_case  # start-up: the run store loads only when the command runs

    # start-up: the library loads only when the command runs, not for --help
    from goldeval.scoring.registry import register_plugin_metrics

    guard_outputs({"--out": out}, {"PER_CASE": per_case, "--gates": gates, "--store": store_files(store)})
    from goldeval.runs.bundle import import_bundle, is_bundle  # start-up: loaded only when the command runs

    if is_bundle(per_case):
        if arm is not None or gates is not None:
            raise InputError(f"runs import {per_case}: a bundle holds a whole run, its arm and gates included; --arm and "
                             "--gates apply to a per-case Parquet only. Drop them (gate the run with `goldeval gate`).")
        with open_store(store) as st:
            done = import_bundle(st, per_case)
            results = st.get_run(done["run_id"])["results"] if out else None
        if not quiet:
            verb = "imported as run" if done["created"] else "already in the store: merged into run"
            click.echo(f"goldeval: {done['n_cases']} case(s) and {done['n_reviews']} review(s) {verb} {done['run_id']}", err=True)
        if out:
            write_json(results, out)
        return EXIT_OK
    register_plugin_metrics()
    definition = load_definition(gates)
    console = report_console(out, quiet=quiet)
    codes = []

    def gate(results, recorder):
        codes.append(apply_gates(results, gates, console, definition=definition, recorder=recorder))

    with open_store(store) as st:
        done = import_per_case(st, per_case, arm=arm, gate=gate if gates else None)
    verb = "recorded as run" if done["created"] else "already imported: updated run"
    if not quiet:
        if done["recorded"]:
            click.echo(f"goldeval: {per_case} is run {done['run_id']}, recorded in this store when it was scored "
                       f"({done['n_cases']} case(s)); nothing imported", err=True)
        else:
            click.echo(f"goldeval: {done['n_cases']} case(s) {verb} {done['run_id']}", err=True)
    if out:
        write_json(done["results"], out)
    sys.exit(codes[0] if codes else EXIT_OK)
