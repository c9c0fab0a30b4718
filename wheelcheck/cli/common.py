"""What every command shares: the application, output formats, one-line errors, atomic writes and settings."""

from __future__ import annotations

import os
import sys
import tempfile
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn, Optional

import typer
from typer.core import TyperGroup

if TYPE_CHECKING:
    from rich.console import Console


from wheelcheck._version import __version__
from wheelcheck.config import Settings, find_pyproject, load_settings
from wheelcheck.errors import WheelcheckError, one_line
from wheelcheck.report.escaping import json_text, text_line
from wheelcheck.report.progress import may_style
from wheelcheck.report.text_lines import Line, as_text

def bare_env(args: list[str]) -> list[str]:
    """``--env`` given alone (last, or before another option) as ``--env=``: the default interpreter.

    ``--env PYTHON`` takes a value on every command; the click that typer carries has no option whose value may
    be left out, so the one word is rewritten before parsing. Only the commands that take --env are touched."""
    if next((arg for arg in args if not arg.startswith("-")), None) not in _ENV_COMMANDS or "--" in args:
        return args
    return [f"{arg}=" if arg == "--env" and (i + 1 == len(args) or args[i + 1].startswith("-")) else arg
            for i, arg in enumerate(args)]


_ENV_COMMANDS = ("conflicts", "compat")


class _Commands(TyperGroup):
    def parse_args(self, ctx, args):
        return super().parse_args(ctx, bare_env(list(args)))


app = typer.Typer(
    cls=_Commands,
    name="wheelcheck",
    help="Audit and repair Linux binary wheels (manylinux and musllinux).",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,  # help is shown as written: rich markup would swallow "[tool.wheelcheck]"
)
policy_app = typer.Typer(help="List, show, validate, compare and derive policies.", no_args_is_help=True,
                         rich_markup_mode=None)
app.add_typer(policy_app, name="policy")


class Format(str, Enum):
    text = "text"
    json = "json"


class AuditFormat(str, Enum):
    text = "text"
    json = "json"
    sarif = "sarif"
    markdown = "markdown"


class Severity(str, Enum):
    error = "error"
    warning = "warning"
    info = "info"


class CxxAbi(str, Enum):
    old = "old"
    new = "new"


def _console(**options: Any) -> Console:
    """rich's Console, imported when something is drawn: a report into a pipe never loads rich. Emoji codes
    stay as written: member and symbol names are the input's, and ":snake:" in one is not a snake."""
    from rich.console import Console

    return Console(**{"emoji": False, **options})


def _fail(message: str) -> NoReturn:
    _error_line(f"wheelcheck: error: {message}")
    raise typer.Exit(2)


def _error_line(text: str) -> None:
    """One line on stderr, whatever the names in it hold (newlines, escape sequences)."""
    _console(stderr=True, highlight=False, soft_wrap=True).print(one_line(text), style="bold red", markup=False)


def _say(text: str, err: bool = False) -> None:
    """A line that quotes the input (a policy's name, a settings file's value, an index page), printed inert as
    the report renderers print theirs (report/escaping.py): one line, whatever the input holds."""
    typer.echo(text_line(text), err=err)


def _say_json(document: object) -> None:
    typer.echo(json_text(document), nl=False)


def _write_output(text: str | bytes, output: Path | None, what: str = "the report") -> None:
    """Write atomically: a temporary file renamed into place, so no half-written report is left, and a symbolic
    link at ``output`` is replaced, never followed. The file gets the permissions of any new file (0644 under
    umask 022), not mkstemp's private 0600."""
    if output is None:
        sys.stdout.write(text if isinstance(text, str) else text.decode("utf-8"))
        return
    data = text.encode("utf-8") if isinstance(text, str) else text
    directory = output.parent if str(output.parent) else Path(".")
    tmp = None
    try:
        fd, tmp = tempfile.mkstemp(dir=directory, prefix=f".{output.name}.", suffix=".tmp")
        os.fchmod(fd, 0o666 & ~_umask())
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, output)
    except OSError as exc:
        if tmp is not None and os.path.exists(tmp):
            os.unlink(tmp)
        _fail(f"{output}: cannot write {what} ({exc.strerror or exc})")


def _umask() -> int:
    mask = os.umask(0o022)  # the only way to read it is to set it
    os.umask(mask)
    return mask


def _print_lines(lines: list[Line], output: Path | None = None) -> None:
    """A text report: styled on a terminal (rich decides), plain in a pipe or a file."""
    if output is not None:
        _write_output(as_text(lines), output)
        return
    if not may_style(sys.stdout):  # a pipe or a file: the text as --output writes it, without loading rich
        sys.stdout.write(as_text(lines))
        return
    console = _console(highlight=False, soft_wrap=True)
    for line in lines:
        console.print(line.text, style=line.style, markup=False)


CONFIG_HELP = ("Take defaults from [tool.wheelcheck] of this TOML file (default: the nearest pyproject.toml "
               "from the current directory upward).")
ISOLATED_HELP = ("Ignore every configuration file (pyproject.toml, --config): only the defaults and the command line "
                 "decide, as a gate that must not be relaxed by the repository it checks.")


def _settings(config: Path | None, overrides: dict, command: str = "audit", isolated: bool = False) -> Settings:
    """Defaults < [tool.wheelcheck] of --config or the nearest pyproject.toml (none with --isolated) < (repair)
    $AUDITWHEEL_* < the command line."""
    if isolated and config is not None:
        _fail("--isolated ignores every configuration file: --config cannot be given with it")
    try:
        pyproject = None if isolated else config if config is not None else find_pyproject(Path.cwd())
        return load_settings(pyproject, overrides, command=command)
    except WheelcheckError as exc:
        _fail(str(exc))


def _verbosity(ctx: typer.Context, verbose: int) -> int:
    """-v after the command plus -v before it (``wheelcheck -v repair``, as auditwheel takes it)."""
    return verbose + (ctx.find_root().params.get("verbose") or 0)


def _value(choice: Enum | None) -> str | None:
    return None if choice is None else choice.value


def _str(path: Path | None) -> str | None:
    return None if path is None else str(path)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"wheelcheck {__version__}")
        raise typer.Exit()


@app.callback()
def main_callback(
    version: Annotated[Optional[bool], typer.Option("-V", "--version", callback=_version, is_eager=True,
                                                     help="Print the version and exit.")] = None,
    verbose: Annotated[int, typer.Option("-v", "--verbose", count=True,
                                         help="Also accepted before the command, as auditwheel takes it.")] = 0,
) -> None:
    """Audit and repair Linux binary wheels (manylinux and musllinux)."""

