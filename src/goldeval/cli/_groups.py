"""A click group whose unknown sub-command gets the hint an unknown option gets ("Did you mean 'score'?"). Used by
the ``goldeval`` group and its ``runs`` and ``review`` groups. Imports only click and the standard library
(``goldeval --help`` uses it and must stay fast)."""

from __future__ import annotations

import click

__all__ = ["SuggestingGroup"]


class SuggestingGroup(click.Group):
    """:class:`click.Group` that answers an unknown command with its close matches, in click's words for an unknown
    option: ``No such command 'scor'. Did you mean 'score'?``, or ``(Possible commands: judge, llm-judge)`` for
    several (difflib's close matches, as click's own suggestion for options). Usage error, exit 2."""

    def resolve_command(self, ctx: click.Context, args: list[str]) -> tuple[str | None, click.Command | None, list[str]]:
        name = click.utils.make_str(args[0]) if args else ""
        if args and not name.startswith("-") and name not in self.list_commands(ctx):
            import difflib  # start-up: only an unknown command name needs it

            close = difflib.get_close_matches(name, self.list_commands(ctx))
            if close:
                hint = f" Did you mean {close[0]!r}?" if len(close) == 1 else f" (Possible commands: {', '.join(close)})"
                ctx.fail(f"No such command {name!r}.{hint}")
        return super().resolve_command(ctx, args)
