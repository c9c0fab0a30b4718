"""The console script: one command run, every error one line, a crash never mistaken for a verdict."""

from __future__ import annotations

import copy
import os
import sys
import traceback
from pathlib import Path

import typer

from wheelcheck.cli.common import _error_line, app

# Where the one line about an internal error sends people (the project's issue tracker)
ISSUES_URL = "https://github.com/wheelcheck/wheelcheck/issues"
_MAX_DETAIL = 300  # of the exception's message in that line: it may quote a whole input


def main() -> None:
    """The console script: every command, with any unexpected exception turned into exit 2 and one line.

    Exit 1 means "a wheel fails its policy"; a crash of the tool must never look like that in CI.
    """
    from wheelcheck.wheel.allocator import return_large_buffers

    return_large_buffers()
    try:
        code = only_the_command(app, sys.argv[1:])(standalone_mode=False, prog_name="wheelcheck")
    except Exception as exc:
        # click's exceptions, told by name: typer runs its own copy of click, whose classes are not click's
        kinds = {cls.__name__ for cls in type(exc).__mro__}
        ctx = getattr(exc, "ctx", None)
        if "NoArgsIsHelpError" in kinds:  # `wheelcheck` alone, or a group alone: its help
            typer.echo(ctx.get_help() if ctx else "", err=True)
            sys.exit(2)
        if "ClickException" in kinds:  # a usage error: one line, as every other error
            command = ctx.command_path if ctx is not None else "wheelcheck"
            _error_line(f"wheelcheck: error: {command}: {exc.format_message()} (see '{command} --help')")  # type: ignore[attr-defined]
            sys.exit(exc.exit_code)  # type: ignore[attr-defined]
        if "Abort" in kinds:  # Ctrl-C while a command read its input: nothing was written
            sys.exit(130)
        _error_line(internal_error_line(exc))  # a bug: anything a command did not turn into a WheelcheckError
        sys.exit(2)
    sys.exit(code if isinstance(code, int) else 0)


def only_the_command(full: typer.Typer, args: list[str]) -> typer.Typer:
    """``full`` with only the command ``args`` name registered (``full`` itself when they name none).

    typer builds every command's parameters, evaluating each annotation, before it runs one: about 0.1 s
    of start-up for our 16. The root's own options take no value, so the first word not starting with "-"
    is the command. What the command does and prints is the same either way."""
    name = next((arg for arg in args if not arg.startswith("-")), None)
    commands = [c for c in full.registered_commands if c.name == name]
    groups = [g for g in full.registered_groups if g.name == name]
    if not commands and not groups:
        return full  # --help, --version, a typo: the whole app answers
    narrow = copy.copy(full)
    narrow.registered_commands, narrow.registered_groups = commands, groups
    return narrow


def internal_error_line(exc: BaseException) -> str:
    """'wheelcheck: internal error: <type>: <message> at <file:line> ...': what a bug report needs first."""
    detail = str(exc)
    if len(detail) > _MAX_DETAIL:
        detail = detail[:_MAX_DETAIL] + "..."
    ours = [f for f in traceback.extract_tb(exc.__traceback__) if f"{os.sep}wheelcheck{os.sep}" in f.filename]
    where = f" in {Path(ours[-1].filename).name}:{ours[-1].lineno}" if ours else ""
    return (f"wheelcheck: internal error: {type(exc).__name__}: {detail}{where} (a bug in wheelcheck: please "
            f"report it at {ISSUES_URL} with the command, and the input if you can share it)")


if __name__ == "__main__":
    main()
