"""The ``goldeval`` command: a thin click group over the library.

Sub-commands are imported only when invoked, so ``goldeval --help`` stays fast (no numpy / scipy / sqlglot at
start-up). To add a command, add one line to ``COMMANDS``: ``name -> "module:attribute"`` under ``goldeval.cli``.

Exit codes: 0 every gate passes (or nothing was gated) · 1 a gate fails · 2 bad input or usage ·
3 internal or store error.
"""

from __future__ import annotations

import importlib

import click

from goldeval import __version__

# name -> "module:attribute" (module relative to goldeval.cli); keep sorted.
COMMANDS: dict[str, str] = {
    "score": "score:score",
}


class LazyGroup(click.Group):
    """A click group that imports each sub-command's module on first use."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        target = COMMANDS.get(cmd_name)
        if target is None:
            return None
        module_name, attr = target.split(":")
        module = importlib.import_module(f"goldeval.cli.{module_name}")
        return getattr(module, attr)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="goldeval")
def main() -> None:
    """goldeval: score model output against golden references and gate the run.

    \b
    Exit codes: 0 all gates pass · 1 a gate fails · 2 bad input or usage · 3 internal or store error.
    """
