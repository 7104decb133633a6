"""The ``goldeval`` command: a thin click group over the library.

Sub-commands are imported only when invoked, so ``goldeval --help`` stays fast (no numpy / scipy / sqlglot at
start-up). To add a command, add one line to ``COMMANDS``: ``name -> "module:attribute"`` under ``goldeval.cli``.

May import anything below it (see README "Architecture"); nothing outside ``cli/`` imports it.

Exit codes: 0 every gate passes (or nothing was gated) · 1 a gate fails · 2 bad input or usage ·
3 internal or store error · 130 interrupted (Ctrl-C) · 143 stopped by SIGTERM (:mod:`goldeval.cli._signals`).
"""

from __future__ import annotations

from goldeval._startup import install_quiet_interrupts
from goldeval.cli._help import exit_codes

# first: an interrupt while the modules below are imported ends the command with one line, not a traceback
install_quiet_interrupts()

import importlib  # noqa: E402
from typing import Any  # noqa: E402

import click  # noqa: E402

from goldeval import __version__  # noqa: E402
from goldeval.cli._groups import SuggestingGroup  # noqa: E402
from goldeval.cli._signals import hold_signals_to_the_end, sigterm_raises, stopped_exit  # noqa: E402
from goldeval.signals import signals_held  # noqa: E402

# name -> ("module:attribute" relative to goldeval.cli, one-line help shown by `goldeval --help`); keep sorted.
COMMANDS: dict[str, tuple[str, str]] = {
    "check-goldens": ("check_goldens:check_goldens", "Golden health before any run: each canonical query re-run and doubted; gateable."),
    "compare": ("compare:compare", "Compare two recorded runs case by case: flips, near_match, McNemar, bootstrap."),
    "gate": ("labels:gate", "Apply a definition of done (TOML gates) to any results file; exit 1 when a gate fails."),
    "judge": ("judge:judge", "Judge data answers (rows, re-executed SQL, prose) against goldens by rule; pass rate."),
    "labels": ("labels:labels", "Precision, recall and missed positives of predicted labels against gold labels."),
    "llm-judge": ("llm_judge:llm_judge", "LLM judge (OpenAI-compatible) for the data answers no rule could decide."),
    "replay": ("review:replay", "Re-judge the human-settled verdicts of a judge-regressions file; exit 1 on any change."),
    "review": ("review:review", "Export a run's needs_human cases for a person; import their verdicts."),
    "report": ("report:report", "Write one self-contained HTML report of a run, of two runs compared, or of a results file."),
    "runs": ("runs:runs", "The recorded runs: list, show, export, delete."),
    "score": ("score:score", "Token F1 of free-text predictions against references (whole note and sections)."),
}


class LazyGroup(SuggestingGroup):
    """A click group that imports each sub-command's module on first use.

    Ctrl-C or SIGTERM while the command line is parsed or the command's module imported (click would print
    "Aborted!" and exit 1) exits 130 / 143 with one line; inside a command, ``guarded`` says what became of the run.
    SIGTERM raises :class:`goldeval.cli._signals.Terminated` for the whole command."""

    def main(self, args: Any = None, *rest: Any, **kwargs: Any) -> Any:
        try:
            with sigterm_raises():
                try:
                    return super().main(args, *rest, **kwargs)
                except KeyboardInterrupt as exc:  # between click's own handlers (its set-up, its exit)
                    raise stopped_exit(exc) from None
        except SystemExit:
            if args is None:  # the process's own command line (not a caller's list, e.g. click's test runner)
                # The command is over and its exit code decided: a signal from now on is held, and dropped at the
                # exit (one that landed in Python's finalization ended the process by the signal, without a word).
                hold_signals_to_the_end()
            raise

    def make_context(self, *args: Any, **kwargs: Any) -> click.Context:
        try:
            return super().make_context(*args, **kwargs)
        except KeyboardInterrupt as exc:
            raise stopped_exit(exc, "before anything was done") from None

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt as exc:  # a command's body is guarded: this is its parsing or its module's import
            raise stopped_exit(exc) from None

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        entry = COMMANDS.get(cmd_name)
        if entry is None:
            return None
        module_name, attr = entry[0].split(":")
        with signals_held():  # a Ctrl-C now stops the command once its modules are imported, never half-way
            module = importlib.import_module(f"goldeval.cli.{module_name}")
        return getattr(module, attr)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        # Use the registry's one-line help so that `goldeval --help` imports no command module.
        rows = [(name, COMMANDS[name][1]) for name in self.list_commands(ctx)]
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)


def _exit_codes(f):
    # the line every command's --help ends with (goldeval.cli._help imports nothing heavy)

    return exit_codes(f)


def _debug(ctx: click.Context, param: click.Parameter, value: bool) -> None:
    if value:
        from goldeval.cli._common import DEBUG  # start-up: loaded only when the command runs, not for --help

        DEBUG["on"] = True


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@_exit_codes
@click.version_option(__version__, prog_name="goldeval")
@click.option("--debug", is_flag=True, expose_value=False, is_eager=True, callback=_debug,
              help="Print the traceback of an internal error (exit 3).")
def main() -> None:
    """goldeval: score model output against golden references and gate the run.

    Every command takes -o/--out PATH where it writes a file and -q/--quiet; `--*-field` and `--*-column` name the
    same option on score and labels.
    """
