"""`wheelcheck conflicts`, `compat` and `abi`: distributions that share one process."""

from __future__ import annotations

import json
from enum import Enum
from pathlib import Path
from typing import Annotated, Optional

import typer

from wheelcheck.cli.common import Format, Severity, _console, _fail, _print_lines, _verbosity, _write_output, app
from wheelcheck.errors import WheelcheckError


# what --env means wherever it appears (common.bare_env lets it stand alone)
ENV_HELP = ("Also take the distributions installed for this Python executable or site-packages directory "
            "(--env alone: the active virtual environment's, else the Python wheelcheck runs in, named in the report)")


@app.command("conflicts")
def conflicts_command(
    ctx: typer.Context,
    paths: Annotated[Optional[list[str]], typer.Argument(help="Wheels (files, globs, directories); with --env they join the environment, each in place of the installed distribution of its name.")] = None,
    env: Annotated[Optional[list[str]], typer.Option("--env", metavar="PYTHON", help=ENV_HELP + " (repeatable: the environments share one process).")] = None,
    fmt: Annotated[Format, typer.Option("--format", help="Output format.")] = Format.text,
    output: Annotated[Optional[Path], typer.Option("-o", "--output", help="Write the report to this file instead of stdout.")] = None,
    fail_on: Annotated[Severity, typer.Option("--fail-on", help="Exit 1 when a finding is at or above this severity.")] = Severity.error,
    jobs: Annotated[Optional[int], typer.Option(help="Wheels read at once (processes) and members streamed at once per wheel (threads); default: one per core.", min=1)] = None,
    verbose: Annotated[int, typer.Option("-v", "--verbose", count=True, help="-v: also info findings and example symbols; -vv: every file.")] = 0,
    quiet: Annotated[bool, typer.Option("-q", "--quiet", help="Print only the summary line.")] = False,
) -> None:
    """Find what will collide when distributions share one process. Exit status: 1 on a finding at or above --fail-on, 2 bad input."""
    from wheelcheck.api import conflicts_between
    from wheelcheck.conflicts.conflicts_options import ConflictsOptions
    from wheelcheck.report.conflicts_json import render_conflicts_json
    from wheelcheck.report.conflicts_text import render_conflicts_text

    try:
        options = ConflictsOptions(env=None if env is None else tuple(env), jobs=jobs, fail_on=fail_on.value)
        report = conflicts_between(paths or (), options)
    except WheelcheckError as exc:
        _fail(str(exc))
    if fmt is Format.json:
        _write_output(render_conflicts_json(report), output)
    else:
        _print_lines(render_conflicts_text(report, verbosity=-1 if quiet else _verbosity(ctx, verbose)), output)
    raise typer.Exit(report.exit_code)


class CompatFormat(str, Enum):
    text = "text"
    json = "json"
    sarif = "sarif"


@app.command("compat")
def compat_command(
    paths: Annotated[Optional[list[str]], typer.Argument(metavar="WHEEL_OR_DIST", help="Wheels (files, globs, directories) and ABI manifests (*.json from `wheelcheck abi`); with --env also names of installed distributions to judge.")] = None,
    env: Annotated[Optional[str], typer.Option("--env", metavar="PYTHON", help=ENV_HELP + "; a wheel given replaces the installed distribution of its name.")] = None,
    fmt: Annotated[CompatFormat, typer.Option("--format", help="Output format.")] = CompatFormat.text,
    output: Annotated[Optional[Path], typer.Option("-o", "--output", help="Write the report to this file instead of stdout.")] = None,
    policy_file: Annotated[Optional[Path], typer.Option(help="Take the libraries every system has (and the libstdc++ of each platform tag) from the policies in this file.")] = None,
    jobs: Annotated[Optional[int], typer.Option(help="Members streamed at once per wheel (threads; a large wheel's on that many processes), installed files read at once (processes); default: one per core.", min=1)] = None,
    verbose: Annotated[int, typer.Option("-v", "--verbose", count=True, help="Also satisfied pins, info findings, and how each library was found.")] = 0,
    quiet: Annotated[bool, typer.Option("-q", "--quiet", help="Print only each pair's verdict and the summary.")] = False,
) -> None:
    """Check that each extension or plugin loads beside its host. The host is the distributions given. Exit status: 0 every one loads, 1 one will fail, 2 one cannot be told (or bad input)."""
    from wheelcheck.api import compat
    from wheelcheck.report.compat_json import render_compat_json
    from wheelcheck.report.compat_sarif import render_compat_sarif
    from wheelcheck.report.compat_text import render_compat_text

    try:
        report = compat(paths or (), env=env, policy_file=policy_file, jobs=jobs)
    except WheelcheckError as exc:
        _fail(str(exc))
    if fmt is CompatFormat.json:
        _write_output(render_compat_json(report), output)
    elif fmt is CompatFormat.sarif:
        _write_output(render_compat_sarif(report, base=Path.cwd()), output)
    else:
        _print_lines(render_compat_text(report, verbosity=-1 if quiet else verbose), output)
    raise typer.Exit(report.exit_code)


@app.command("abi")
def abi_command(
    wheel: Annotated[Path, typer.Argument(help="The host's wheel.")],
    output: Annotated[Optional[Path], typer.Option("-o", "--output", help="Write the manifest here (gzip-compressed when the name ends in .gz) instead of stdout.")] = None,
    jobs: Annotated[Optional[int], typer.Option(help="Members streamed at once (threads), a large wheel's members read on that many processes; default: one per core.", min=1)] = None,
) -> None:
    """Write a host's exported interface as a manifest. It lists symbols with versions and binding, the C++ string ABI, the libstdc++ floor and the compilers; `wheelcheck compat` takes it in place of the wheel."""
    import gzip

    from wheelcheck.api import abi_manifest

    try:
        manifest = abi_manifest(wheel, jobs=jobs)
    except WheelcheckError as exc:
        _fail(str(exc))
    text = json.dumps(manifest, separators=(",", ":")) + "\n"
    compressed = output is not None and output.name.endswith(".gz")
    _write_output(gzip.compress(text.encode("utf-8"), mtime=0) if compressed else text, output, "the manifest")
    files = manifest["files"]
    _console(stderr=True, highlight=False, soft_wrap=True).print(
        f"{manifest['distribution']['name']} {manifest['distribution']['version']}: {len(files)} ELF files, "
        f"{sum(len(f['exports']) for f in files)} exported symbols" + (f", written to {output}" if output else ""),
        markup=False)

