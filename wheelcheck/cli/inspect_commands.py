"""`wheelcheck show`, `config`, `rules` and auditwheel's `lddtree` (which has no twin here)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated, Optional

import typer

from wheelcheck.api import load_policies
from wheelcheck.audit.audit_options import AuditOptions
from wheelcheck.cli.common import CONFIG_HELP, ISOLATED_HELP, Format, _console, _fail, _say, _say_json, _settings, _verbosity, app
from wheelcheck.config import Settings, find_pyproject
from wheelcheck.errors import WheelcheckError
from wheelcheck.report.escaping import json_text, text_line


@app.command("show")
def show_command(
    ctx: typer.Context,
    wheel: Annotated[Path, typer.Argument(help="Path to wheel file.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print auditwheel show's JSON document.")] = False,
    disable_isa_ext_check: Annotated[bool, typer.Option("--disable-isa-ext-check", help="Do not check the x86-64 ISA level (x86-64-v2 and above).")] = False,
    allow_pure_python_wheel: Annotated[bool, typer.Option("--allow-pure-python-wheel", help="Answer for a pure wheel instead of failing.")] = False,
    ldpaths: Annotated[Optional[str], typer.Option("--ldpaths", help="Colon-separated directories to read external libraries from (as --lib-path).")] = None,
    lib_path: Annotated[Optional[list[str]], typer.Option(help="Read external libraries from this directory (repeatable).")] = None,
    policy_file: Annotated[Optional[Path], typer.Option(help="Judge against the policies in this JSON file.")] = None,
    verbose: Annotated[int, typer.Option("-v", "--verbose", count=True, help="Keep going past the first limiting reason.")] = 0,
) -> None:
    """What `auditwheel show` answers, in its words and JSON. Exit status: 0 answered, 1 a pure wheel, 2 bad input."""
    from wheelcheck.api import show_wheel
    from wheelcheck.report.show_text import render_show_json, render_show_text

    verbose = _verbosity(ctx, verbose)
    dirs = list(lib_path or ()) + [d for d in (ldpaths or "").split(":") if d]
    try:
        options = AuditOptions(policies=load_policies(policy_file), lib_path=tuple(dirs),
                               isa_check=not disable_isa_ext_check)
        view = show_wheel(wheel, options)
    except WheelcheckError as exc:
        _fail(str(exc))
    if view.pure and not allow_pure_python_wheel:
        message = (f"{wheel}: not a platform wheel: no ELF file in it (pass --allow-pure-python-wheel to "
                   "answer anyway)")
        if as_json:
            typer.echo(json_text({"version": 1, "wheel": view.wheel, "error": message}, indent=None), nl=False)
        _console(stderr=True, highlight=False, soft_wrap=True).print(text_line(f"wheelcheck: {message}"), markup=False)
        raise typer.Exit(1)
    typer.echo(render_show_json(view) if as_json else render_show_text(view, verbose=verbose), nl=False)


@app.command("config")
def config_command(
    config: Annotated[Optional[Path], typer.Option("--config", help=CONFIG_HELP)] = None,
    isolated: Annotated[bool, typer.Option("--isolated", help=ISOLATED_HELP)] = False,
    fmt: Annotated[Format, typer.Option("--format", help="Output format.")] = Format.text,
) -> None:
    """Print the settings that apply. Each says where it comes from: default, a pyproject.toml, or (for repair) auditwheel's environment variables."""
    from wheelcheck.config import ENVIRONMENT, SETTINGS

    pyproject = None if isolated else config if config is not None else find_pyproject(Path.cwd())
    audit_view = _settings(config, {}, isolated=isolated)
    repair_view = _settings(config, {}, command="repair", isolated=isolated)
    environment = {name: os.environ.get(name) for name in ENVIRONMENT}
    if fmt is Format.json:
        def view(settings: Settings) -> dict:
            return {k: {"value": settings[k], "source": settings.sources[k]} for k in SETTINGS}

        _say_json({"pyproject": str(pyproject) if pyproject else None, "settings": view(audit_view),
                   "repair": view(repair_view), "environment": environment})
        return
    _say(f"[tool.wheelcheck] of {pyproject}" if pyproject else "--isolated: defaults only" if isolated
         else f"no pyproject.toml in {Path.cwd()} or above: defaults only")
    rows = []
    for key in SETTINGS:
        rows.append((key, _shown(audit_view[key]), audit_view.sources[key]))
        if (repair_view[key], repair_view.sources[key]) != (audit_view[key], audit_view.sources[key]):
            rows.append((f"{key} (repair)", _shown(repair_view[key]), repair_view.sources[key]))
    rows += [(name, _shown(value), ENVIRONMENT[name]) for name, value in environment.items()]
    width = max(len(r[0]) for r in rows)
    value_width = max(len(r[1]) for r in rows)
    for i, (key, value, source) in enumerate(rows):
        env_row = i >= len(rows) - len(environment)
        if i == len(rows) - len(environment):
            typer.echo("Environment:")
        _say(f"{key:<{width}}  {value:<{value_width}}  {source if env_row else f'({source})'}")
    typer.echo("Command-line options override these; audit reads no environment variable.")


def _shown(value: object) -> str:
    if value is None:
        return "(not set)"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return ", ".join(value) if value else "(none)"
    if isinstance(value, dict):  # per-file-ignores: glob -> rules; license-files: library -> file
        return "; ".join(f"{key}: {_shown(item)}" for key, item in value.items()) if value else "(none)"
    return str(value)


@app.command("lddtree", hidden=True)
def lddtree_command(
    file: Annotated[Optional[str], typer.Argument(help="An ELF file.")] = None,
    ldpaths: Annotated[Optional[str], typer.Option("--ldpaths", help="Ignored.")] = None,
) -> None:
    """auditwheel's lddtree has no twin here: say what replaces it (exit 2)."""
    _fail("wheelcheck has no lddtree: `wheelcheck audit -vv WHEEL` lists what each ELF file of a wheel needs, "
          "`wheelcheck repair --format json` where each library was found on this host, and for a lone ELF file "
          "`lddtree` (pax-utils) or `ldd` print its dependency tree")


@app.command("rules")
def rules_command(
    rule_id: Annotated[Optional[str], typer.Argument(metavar="[ID]", help="A rule id (e.g. executable-stack); none lists them all.")] = None,
) -> None:
    """Print the rules reference. What each rule detects, why it breaks programs, how to fix it."""
    from wheelcheck.report.rules_doc import find_rule, render_index_text, render_rule_text, rule_ids

    if rule_id is None:
        typer.echo(render_index_text(), nl=False)
        return
    rule = find_rule(rule_id)
    if rule is None:
        _fail(f"{rule_id}: no such rule (known: {', '.join(rule_ids())})")
    typer.echo(render_rule_text(rule), nl=False)

