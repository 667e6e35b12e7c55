"""The ``parley`` command's top group: each command's module is imported when the command is
named (a client command's start-up is mostly imports), and click's usage errors are said the
way Parley says every error — ``error: …`` on stderr, then the usage — never in a box."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Sequence
from functools import cache
from typing import Any, ClassVar, NoReturn

import typer

try:  # typer 0.28 carries its own click (a private module); a typer without it uses click's
    from typer import _click as click
except ImportError:  # pragma: no cover - pyproject bounds typer below 0.29
    import click  # type: ignore[no-redef]
from typer.core import TyperGroup

from parley.cli.output import say_error

# "module:attribute" naming a Typer (a group of commands) or a function (one command), or a
# function that returns a Typer.
Loader = str | Callable[[], typer.Typer]


class ParleyGroup(TyperGroup):
    """A subclass names its commands in ``lazy``; each is loaded when first asked for."""

    lazy: ClassVar[dict[str, Loader]] = {}

    def list_commands(self, ctx: click.Context) -> list[str]:
        return [*self.commands, *self.lazy]

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in self.commands:
            return self.commands[cmd_name]
        if cmd_name in self.lazy:
            return _loaded(cmd_name, self.lazy[cmd_name])
        return None

    def main(  # type: ignore[override]
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        **extra: Any,
    ) -> Any:
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode, **extra)
        try:
            code = super().main(args, prog_name, complete_var, False, **extra)
        except click.exceptions.NoArgsIsHelpError as exc:
            exc.show()  # the help, as asked for by naming a group alone
            sys.exit(exc.exit_code)
        except click.ClickException as exc:
            _say_usage_error(exc)
        except typer.Abort:
            print("aborted", file=sys.stderr)
            sys.exit(1)
        sys.exit(code if isinstance(code, int) else 0)


def _say_usage_error(exc: click.ClickException) -> NoReturn:
    say_error(_sentence(exc.format_message()))
    ctx = getattr(exc, "ctx", None)
    if ctx is not None:
        usage = ctx.get_usage().removeprefix("Usage: ")
        print(f"usage: {usage} (--help for more)", file=sys.stderr)
    sys.exit(exc.exit_code)


def _sentence(message: str) -> str:
    """Click's "No such option: --x." as Parley says its errors: lower case, no full stop."""
    message = message.strip().removesuffix(".")
    if message[:2].istitle():
        message = message[0].lower() + message[1:]
    return message


@cache
def _loaded(name: str, loader: Loader) -> click.Command:
    """The click command of a Typer or function, built as typer builds a group's (help in
    plain text: rich's boxes are slow to load and unlike the rest of the output)."""
    target = _target(loader)
    wrapper = typer.Typer(rich_markup_mode=None, add_completion=False)
    wrapper.callback()(_nothing)
    if isinstance(target, typer.Typer):
        wrapper.add_typer(target, name=name)
    else:
        wrapper.command(name)(target)
    group = typer.main.get_command(wrapper)
    assert isinstance(group, TyperGroup)
    return group.commands[name]


def _target(loader: Loader) -> Any:
    if not isinstance(loader, str):
        return loader()
    module, _, attribute = loader.partition(":")
    return getattr(importlib.import_module(module), attribute)


def _nothing() -> None:
    """The wrapper's callback: it makes the wrapper a group whatever it holds."""
