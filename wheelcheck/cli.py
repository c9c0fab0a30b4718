"""The command line: parse arguments, call the API, render. No analysis lives here."""

from __future__ import annotations

import json
import os
import sys
import tempfile
from enum import Enum
from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.console import Console

from wheelcheck import __version__
from wheelcheck.api import audit, load_policies
from wheelcheck.errors import WheelcheckError
from wheelcheck.report.json_report import render_json
from wheelcheck.report.text import render_text

app = typer.Typer(
    name="wheelcheck",
    help="Audit and repair Linux binary wheels (manylinux and musllinux).",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
policy_app = typer.Typer(help="List, show, validate, compare and derive policies.", no_args_is_help=True)
app.add_typer(policy_app, name="policy")


class Format(str, Enum):
    text = "text"
    json = "json"


class CxxAbi(str, Enum):
    old = "old"
    new = "new"


def _fail(message: str) -> None:
    Console(stderr=True, highlight=False, soft_wrap=True).print(f"wheelcheck: error: {message}", style="bold red", markup=False)
    raise typer.Exit(2)


def _write_output(text: str, output: Path | None) -> None:
    """Write atomically: a temporary file renamed into place, so no half-written report is left."""
    if output is None:
        sys.stdout.write(text)
        return
    directory = output.parent if str(output.parent) else Path(".")
    try:
        fd, tmp = tempfile.mkstemp(dir=directory, prefix=f".{output.name}.", suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, output)
    except OSError as exc:
        _fail(f"{output}: cannot write the report ({exc.strerror or exc})")


def _version(value: bool) -> None:
    if value:
        typer.echo(f"wheelcheck {__version__}")
        raise typer.Exit()


@app.callback()
def main_callback(
    version: Annotated[Optional[bool], typer.Option("--version", callback=_version, is_eager=True,
                                                     help="Print the version and exit.")] = None,
) -> None:
    """Audit and repair Linux binary wheels (manylinux and musllinux)."""


@app.command("audit")
def audit_command(
    paths: Annotated[list[str], typer.Argument(help="Wheels: files, globs or directories of *.whl.")],
    plat: Annotated[Optional[str], typer.Option(help="Fail unless the wheel meets this tag (e.g. manylinux_2_17_x86_64).")] = None,
    policy_file: Annotated[Optional[Path], typer.Option(help="Judge against the policies in this JSON file (ours or auditwheel's format).")] = None,
    exclude: Annotated[Optional[list[str]], typer.Option(help="Treat sonames matching this glob as provided (repeatable).")] = None,
    lib_path: Annotated[Optional[list[str]], typer.Option(help="Read external libraries' own needs from this directory (repeatable).")] = None,
    fmt: Annotated[Format, typer.Option("--format", help="Output format.")] = Format.text,
    output: Annotated[Optional[Path], typer.Option(help="Write the report to this file instead of stdout.")] = None,
    jobs: Annotated[Optional[int], typer.Option(help="Worker processes for large wheels (default: CPU count).", min=1)] = None,
    quiet: Annotated[bool, typer.Option("-q", "--quiet", help="Print only the verdict lines.")] = False,
    verbose: Annotated[int, typer.Option("-v", "--verbose", count=True, help="-v: also why the tag is not better; -vv: per-file details.")] = 0,
    cxx_abi: Annotated[Optional[CxxAbi], typer.Option("--cxx-abi", help="Require this libstdc++ string ABI (overrides the policy).")] = None,
) -> None:
    """Judge each wheel against the policies: exit 0 all pass, 1 a wheel fails, 2 bad input."""
    try:
        report = audit(paths, plat=plat, policy_file=policy_file, exclude=exclude or (),
                       lib_path=lib_path or (), jobs=jobs, cxx_abi=cxx_abi.value if cxx_abi else None)
    except WheelcheckError as exc:
        _fail(str(exc))
    if fmt is Format.json:
        _write_output(render_json(report), output)
    else:
        lines = render_text(report, verbosity=-1 if quiet else verbose)
        if output is not None:
            _write_output("".join(text + "\n" for text, _ in lines), output)
        else:
            console = Console(highlight=False, soft_wrap=True)
            for text, style in lines:
                console.print(text, style=style, markup=False)
    for wheel in report.wheels:
        if wheel.error is not None:
            Console(stderr=True, highlight=False, soft_wrap=True).print(f"wheelcheck: error: {wheel.error}", style="bold red",
                                                       markup=False)
    raise typer.Exit(report.exit_code)


@policy_app.command("list")
def policy_list(
    policy_file: Annotated[Optional[Path], typer.Option(help="List the policies of this file instead.")] = None,
    fmt: Annotated[Format, typer.Option("--format", help="Output format.")] = Format.text,
) -> None:
    """List the policies, most compatible first."""
    try:
        policies = list(load_policies(policy_file))
    except WheelcheckError as exc:
        _fail(str(exc))
    if fmt is Format.json:
        rows = [{"name": p.name, "aliases": list(p.aliases), "priority": p.priority, "libc": p.libc,
                 "libc_version": p.libc_version, "arches": sorted(p.symbol_versions)} for p in policies]
        typer.echo(json.dumps(rows, indent=2))
        return
    for p in policies:
        aliases = f" ({', '.join(p.aliases)})" if p.aliases else ""
        typer.echo(f"{p.name}{aliases}  {p.libc} {p.libc_version}  priority {p.priority}  "
                   f"arches: {', '.join(sorted(p.symbol_versions))}")


@policy_app.command("show")
def policy_show(
    name: Annotated[str, typer.Argument(help="Policy name or alias (manylinux_2_17, manylinux2014).")],
    policy_file: Annotated[Optional[Path], typer.Option(help="Look in this file instead of the bundled policies.")] = None,
) -> None:
    """Print one policy as JSON."""
    try:
        policies = load_policies(policy_file)
    except WheelcheckError as exc:
        _fail(str(exc))
    policy = policies.find(name)
    if policy is None or policy.is_linux:
        _fail(f"{name}: no such policy (known: {', '.join(policies.names())})")
    typer.echo(json.dumps(dict(policy.document), indent=2))


@policy_app.command("validate")
def policy_validate(
    files: Annotated[Optional[list[Path]], typer.Argument(help="Policy files, checked together (default: the bundled policies).")] = None,
    fmt: Annotated[Format, typer.Option("--format", help="Output format.")] = Format.text,
) -> None:
    """Check policy files against the schema and for meaning: exit 0 valid, 1 problems, 2 unreadable."""
    from wheelcheck.policy.validate import validate_files, validate_texts
    from wheelcheck.policy.registry import bundled_texts

    try:
        result = validate_files(list(files)) if files else validate_texts(bundled_texts())
    except WheelcheckError as exc:
        _fail(str(exc))
    if fmt is Format.json:
        typer.echo(json.dumps(result.as_dict(), indent=2))
    else:
        for problem in result.problems:
            typer.echo(str(problem))
        summary = f"{len(result.policies)} policies in {len(result.files)} files"
        errors, warnings = len(result.errors), len(result.warnings)
        typer.echo(f"{summary}: {errors} problem{'s' * (errors != 1)}, {warnings} warning{'s' * (warnings != 1)}"
                   if result.problems else f"{summary}: valid")
    raise typer.Exit(0 if result.ok else 1)


@policy_app.command("diff")
def policy_diff(
    a: Annotated[str, typer.Argument(help="A bundled policy name or alias, a policy file, or FILE:NAME.")],
    b: Annotated[str, typer.Argument(help="The policy to compare it with (same forms).")],
    fmt: Annotated[Format, typer.Option("--format", help="Output format.")] = Format.text,
) -> None:
    """What each policy allows that the other does not: exit 0 same, 1 different, 2 bad input."""
    from wheelcheck.policy.diff import diff_policies
    from wheelcheck.policy.loader import policy_by_reference

    try:
        result = diff_policies(policy_by_reference(a), policy_by_reference(b))
    except WheelcheckError as exc:
        _fail(str(exc))
    if fmt is Format.json:
        typer.echo(json.dumps(result.as_dict(), indent=2))
    else:
        typer.echo("\n".join(result.text_lines()))
    raise typer.Exit(0 if result.same else 1)


@policy_app.command("derive")
def policy_derive(
    root: Annotated[Path, typer.Option("--root", help="A root filesystem: an unpacked image or unpacked packages.")],
    name: Annotated[Optional[str], typer.Option(help="Policy name (default: manylinux_X_Y from the glibc found).")] = None,
    arch: Annotated[Optional[str], typer.Option(help="The architecture to derive for, when the root holds several.")] = None,
    base: Annotated[Optional[str], typer.Option(help="Take lib_whitelist, blacklist and priority from this policy.")] = None,
    priority: Annotated[Optional[int], typer.Option(help="Priority (default: from the base policy).", min=1)] = None,
    source: Annotated[Optional[str], typer.Option(help="The 'source' to record (default: what was read).")] = None,
    output: Annotated[Optional[Path], typer.Option("-o", "--output", help="Write the policy here instead of stdout.")] = None,
) -> None:
    """Derive a policy from the symbol versions a root filesystem's system libraries define."""
    from wheelcheck.policy.derive import derive_policy

    try:
        result = derive_policy(root, load_policies(), name=name, arch=arch, base=base, priority=priority,
                               source=source)
    except WheelcheckError as exc:
        _fail(str(exc))
    err = Console(stderr=True, highlight=False, soft_wrap=True)
    err.print(f"{result.document['name']} for {result.arch} (glibc {result.glibc_release}), from "
              f"{len(result.libraries)} libraries: {', '.join(lib.soname for lib in result.libraries)}", markup=False)
    for version, sonames in sorted(result.excluded.items()):
        err.print(f"left out {version} (defined by {', '.join(sonames)}): no policy may allow it", markup=False)
    for note in result.notes:
        err.print(f"note: {note}", markup=False)
    _write_output(json.dumps(result.document, indent=2) + "\n", output)


@app.command("rules")
def rules_command(
    rule_id: Annotated[Optional[str], typer.Argument(metavar="[ID]", help="A rule id (e.g. executable-stack); none lists them all.")] = None,
) -> None:
    """Print the rules reference: what each rule detects, why it breaks programs, how to fix it."""
    from wheelcheck.report.rules_doc import find_rule, render_index_text, render_rule_text, rule_ids

    if rule_id is None:
        typer.echo(render_index_text(), nl=False)
        return
    rule = find_rule(rule_id)
    if rule is None:
        _fail(f"{rule_id}: no such rule (known: {', '.join(rule_ids())})")
    typer.echo(render_rule_text(rule), nl=False)


class FailOn(str, Enum):
    error = "error"
    warning = "warning"
    info = "info"


@app.command("conflicts")
def conflicts_command(
    paths: Annotated[Optional[list[str]], typer.Argument(help="Wheels (files, globs, directories); with --env: Python executables or site-packages directories.")] = None,
    env: Annotated[bool, typer.Option("--env", help="Compare the distributions installed in an environment (default: the active virtual environment's, else this interpreter's).")] = False,
    fmt: Annotated[Format, typer.Option("--format", help="Output format.")] = Format.text,
    output: Annotated[Optional[Path], typer.Option(help="Write the report to this file instead of stdout.")] = None,
    fail_on: Annotated[FailOn, typer.Option("--fail-on", help="Exit 1 when a finding is at or above this severity.")] = FailOn.error,
    jobs: Annotated[Optional[int], typer.Option(help="Worker processes for large files (default: CPU count).", min=1)] = None,
    verbose: Annotated[int, typer.Option("-v", "--verbose", count=True, help="-v: also info findings and example symbols; -vv: every file.")] = 0,
) -> None:
    """Find what will collide when distributions share one process: exit 1 on a finding at or above --fail-on, 2 bad input."""
    from wheelcheck.api import conflicts
    from wheelcheck.report.conflicts import render_conflicts_json
    from wheelcheck.report.conflicts_text import render_conflicts_text

    try:
        report = conflicts(paths or (), env=(paths or []) if env else None, jobs=jobs)
    except WheelcheckError as exc:
        _fail(str(exc))
    if fmt is Format.json:
        _write_output(render_conflicts_json(report), output)
    else:
        lines = render_conflicts_text(report, verbosity=verbose)
        if output is not None:
            _write_output("".join(text + "\n" for text, _ in lines), output)
        else:
            console = Console(highlight=False, soft_wrap=True)
            for text, style in lines:
                console.print(text, style=style, markup=False)
    raise typer.Exit(report.exit_code(fail_on.value))


def main() -> None:
    app()


if __name__ == "__main__":
    main()
