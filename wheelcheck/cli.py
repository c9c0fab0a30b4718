"""The command line: parse arguments, call the API, render. No analysis lives here."""

from __future__ import annotations

import json
import os
import signal
import sys
import tempfile
from enum import Enum
from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.console import Console

from wheelcheck._version import __version__
from wheelcheck.api import audit, load_policies
from wheelcheck.config import Settings, find_pyproject, load_settings
from wheelcheck.errors import WheelcheckError
from wheelcheck.report.audit_json import render_json
from wheelcheck.report.progress import terminal_progress
from wheelcheck.report.audit_text import render_text

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


def _fail(message: str) -> None:
    Console(stderr=True, highlight=False, soft_wrap=True, emoji=False).print(f"wheelcheck: error: {message}", style="bold red", markup=False)
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


CONFIG_HELP = ("Take defaults from [tool.wheelcheck] of this TOML file (default: the nearest pyproject.toml "
               "from the current directory upward).")


def _settings(config: Path | None, overrides: dict) -> Settings:
    """Defaults < [tool.wheelcheck] of --config or the nearest pyproject.toml < the command line."""
    try:
        pyproject = config if config is not None else find_pyproject(Path.cwd())
        return load_settings(pyproject, overrides)
    except WheelcheckError as exc:
        _fail(str(exc))


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
    fmt: Annotated[Optional[AuditFormat], typer.Option("--format", help="Output format (default: text).")] = None,
    fail_on: Annotated[Optional[Severity], typer.Option("--fail-on", help="The lowest finding severity that fails a wheel (default: error).")] = None,
    output: Annotated[Optional[Path], typer.Option(help="Write the report to this file instead of stdout.")] = None,
    jobs: Annotated[Optional[int], typer.Option(help="Worker processes for large wheels (default: CPU count).", min=1)] = None,
    quiet: Annotated[bool, typer.Option("-q", "--quiet", help="Print only the verdict lines.")] = False,
    verbose: Annotated[int, typer.Option("-v", "--verbose", count=True, help="-v: also why the tag is not better; -vv: per-file details.")] = 0,
    cxx_abi: Annotated[Optional[CxxAbi], typer.Option("--cxx-abi", help="Require this libstdc++ string ABI (overrides the policy).")] = None,
    config: Annotated[Optional[Path], typer.Option("--config", help=CONFIG_HELP)] = None,
    reports: Annotated[Optional[list[str]], typer.Option("--report", metavar="FORMAT:FILE", help="Also write the report in this format to this file (repeatable), e.g. sarif:results.sarif.")] = None,
    disable_isa_ext_check: Annotated[bool, typer.Option("--disable-isa-ext-check", help="Do not check the x86-64 ISA level (x86-64-v2 and above).")] = False,
) -> None:
    """Judge each wheel against the policies: exit 0 all pass, 1 a wheel fails, 2 bad input."""
    settings = _settings(config, {"plat": plat, "policy-file": _str(policy_file), "exclude": exclude,
                                  "lib-path": lib_path, "format": _value(fmt), "fail-on": _value(fail_on)})
    fmt = AuditFormat(settings["format"])
    extra = [_report_target(spec) for spec in reports or ()]
    try:
        with terminal_progress(fmt is AuditFormat.text and not quiet) as progress:
            report = audit(paths, plat=settings["plat"], policy_file=settings["policy-file"],
                           exclude=settings["exclude"], lib_path=settings["lib-path"], jobs=jobs,
                           cxx_abi=cxx_abi.value if cxx_abi else None, fail_on=settings["fail-on"],
                           progress=progress, isa_check=not disable_isa_ext_check)
    except WheelcheckError as exc:
        _fail(str(exc))
    for extra_fmt, path in extra:
        _write_output(_rendered(report, extra_fmt, verbosity=-1 if quiet else verbose), path)
    if fmt is AuditFormat.text and output is None:
        console = Console(highlight=False, soft_wrap=True)
        for text, style in render_text(report, verbosity=-1 if quiet else verbose):
            console.print(text, style=style, markup=False)
    else:
        _write_output(_rendered(report, fmt, verbosity=-1 if quiet else verbose), output)
    for wheel in report.wheels:
        if wheel.error is not None:
            Console(stderr=True, highlight=False, soft_wrap=True).print(f"wheelcheck: error: {wheel.error}", style="bold red",
                                                       markup=False)
    raise typer.Exit(report.exit_code)


def _report_target(spec: str) -> tuple[AuditFormat, Path]:
    name, sep, path = spec.partition(":")
    if not sep or not path or name not in AuditFormat.__members__:
        _fail(f"--report {spec}: expected FORMAT:FILE with FORMAT one of {', '.join(AuditFormat.__members__)}")
    return AuditFormat(name), Path(path)


def _rendered(report, fmt: AuditFormat, verbosity: int) -> str:
    if fmt is AuditFormat.json:
        return render_json(report)
    if fmt is AuditFormat.sarif:
        from wheelcheck.report.audit_sarif import render_sarif

        return render_sarif(report, base=Path.cwd())
    if fmt is AuditFormat.markdown:
        from wheelcheck.report.audit_markdown import render_markdown

        return render_markdown(report)
    return "".join(text + "\n" for text, _ in render_text(report, verbosity=verbosity))


@app.command("repair")
def repair_command(
    paths: Annotated[list[str], typer.Argument(help="Wheels: files, globs or directories of *.whl.")],
    wheel_dir: Annotated[Path, typer.Option("-w", "--wheel-dir", help="Write repaired wheels here (created if missing).")] = Path("wheelhouse"),
    plat: Annotated[Optional[str], typer.Option(help="Target tag or policy (manylinux_2_17_x86_64, manylinux2014), or auto: the best the repaired wheel reaches (default: $AUDITWHEEL_PLAT, as in the manylinux images, else [tool.wheelcheck] plat, else auto).")] = None,
    exclude: Annotated[Optional[list[str]], typer.Option(help="Never graft sonames (or host paths) matching this glob (repeatable).")] = None,
    lib_path: Annotated[Optional[list[str]], typer.Option(help="Look for libraries in this directory first (repeatable).")] = None,
    policy_file: Annotated[Optional[Path], typer.Option(help="Use the policies of this JSON file instead of the bundled ones.")] = None,
    level: Annotated[int, typer.Option("-z", "--zip-compression-level", min=0, max=9, help="Deflate level of changed and new members.")] = 6,
    hide_symbols: Annotated[Optional[bool], typer.Option("--hide-symbols/--no-hide-symbols", help="Hide the vendored libraries' exports nothing in the wheel imports; rename the imported ones to names unique to this copy (default: [tool.wheelcheck] hide-symbols, else off).")] = None,
    hide_extension_symbols: Annotated[bool, typer.Option("--hide-extension-symbols", help="Also hide what extension modules export, but PyInit_* and what the wheel imports from them.")] = False,
    keep_symbols: Annotated[Optional[list[str]], typer.Option("--keep-symbols", help="Never hide or rename names matching this glob (dlsym entry points; repeatable).")] = None,
    lib_sdir: Annotated[str, typer.Option("-L", "--lib-sdir", help="Grafted libraries go to <distribution><LIB_SDIR>/ (auditwheel's option).")] = ".libs",
    only_plat: Annotated[bool, typer.Option("--only-plat", help="Tag with --plat only, even when the wheel reaches a more compatible policy.")] = False,
    strip: Annotated[bool, typer.Option("--strip", help="Strip symbol tables from grafted libraries and extension modules (strip -s).")] = False,
    disable_isa_ext_check: Annotated[bool, typer.Option("--disable-isa-ext-check", help="Do not let the x86-64 ISA level (x86-64-v2...) limit the tag.")] = False,
    fmt: Annotated[Format, typer.Option("--format", help="Output format.")] = Format.text,
    jobs: Annotated[Optional[int], typer.Option(help="Worker processes for scanning large wheels (default: CPU count).", min=1)] = None,
    quiet: Annotated[bool, typer.Option("-q", "--quiet", help="Print only a line per wheel.")] = False,
    verbose: Annotated[int, typer.Option("-v", "--verbose", count=True, help="Also print notes and what stays external.")] = 0,
    config: Annotated[Optional[Path], typer.Option("--config", help=CONFIG_HELP)] = None,
) -> None:
    """Vendor external libraries into each wheel and retag it: exit 0 all repaired, 1 a target is out of reach, 2 an error."""
    from wheelcheck.api import repair
    from wheelcheck.report.repair_json import render_repair_json
    from wheelcheck.report.repair_text import render_repair_text

    settings = _settings(config, {"plat": plat or os.environ.get("AUDITWHEEL_PLAT") or None,
                                  "policy-file": _str(policy_file), "exclude": exclude, "lib-path": lib_path,
                                  "hide-symbols": hide_symbols})
    signal.signal(signal.SIGTERM, _interrupt)  # so a killed repair still removes its temporary file
    try:
        with terminal_progress(fmt is Format.text and not quiet) as progress:
            report = repair(paths, wheel_dir, plat=settings["plat"] or "auto", policy_file=settings["policy-file"],
                            exclude=settings["exclude"], lib_path=settings["lib-path"], level=level, jobs=jobs,
                            hide_symbols=settings["hide-symbols"], hide_extension_symbols=hide_extension_symbols,
                            keep_symbols=keep_symbols or (), lib_sdir=lib_sdir, only_plat=only_plat, strip=strip,
                            isa_check=not disable_isa_ext_check, progress=progress)
    except WheelcheckError as exc:
        _fail(str(exc))
    except KeyboardInterrupt:
        Console(stderr=True).print("wheelcheck: interrupted; nothing was written", style="bold red", markup=False)
        raise typer.Exit(130)
    if fmt is Format.json:
        sys.stdout.write(render_repair_json(report))
    else:
        console = Console(highlight=False, soft_wrap=True)
        for text, style in render_repair_text(report, verbosity=-1 if quiet else verbose):
            console.print(text, style=style, markup=False)
    for wheel in report.wheels:
        if wheel.status == "error":
            Console(stderr=True, highlight=False, soft_wrap=True).print(
                f"wheelcheck: error: {wheel.message}", style="bold red", markup=False)
    raise typer.Exit(report.exit_code)


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


class SbomFormat(str, Enum):
    cyclonedx = "cyclonedx"
    spdx = "spdx"
    table = "table"


@app.command("sbom")
def sbom_command(
    paths: Annotated[list[str], typer.Argument(help="Wheels: files, globs or directories of *.whl.")],
    fmt: Annotated[SbomFormat, typer.Option("--format", help="cyclonedx (CycloneDX 1.6 JSON), spdx (SPDX 2.3 JSON) or table (for people).")] = SbomFormat.cyclonedx,
    output: Annotated[Optional[Path], typer.Option(help="Write the document to this file instead of stdout.")] = None,
    jobs: Annotated[Optional[int], typer.Option(help="Worker processes for large wheels (default: CPU count).", min=1)] = None,
) -> None:
    """List the third-party code in wheels: vendored libraries and statically linked copies, with the versions the binaries state. Exit 0, or 2 on bad input."""
    from wheelcheck.api import sbom
    from wheelcheck.report.sbom_spdx import render_spdx
    from wheelcheck.report.sbom_table import render_sbom_table
    from wheelcheck.sbom.cyclonedx_json import cyclonedx_json

    try:
        with terminal_progress(fmt is SbomFormat.table and output is None) as progress:
            boms = sbom(paths, jobs=jobs, progress=progress)
        if fmt is SbomFormat.cyclonedx:
            text = cyclonedx_json(boms)
        elif fmt is SbomFormat.spdx:
            text = render_spdx(boms)
        else:
            lines = render_sbom_table(boms)
            if output is None:
                console = Console(highlight=False, soft_wrap=True)
                for line, style in lines:
                    console.print(line, style=style, markup=False)
                return
            text = "".join(line + "\n" for line, _ in lines)
    except WheelcheckError as exc:
        _fail(str(exc))
    _write_output(text, output)


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
    from wheelcheck.policy.policy_loader import policy_by_reference

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


@app.command("show")
def show_command(
    wheel: Annotated[Path, typer.Argument(help="Path to wheel file.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print auditwheel show's JSON document.")] = False,
    disable_isa_ext_check: Annotated[bool, typer.Option("--disable-isa-ext-check", help="Do not check the x86-64 ISA level (x86-64-v2 and above).")] = False,
    allow_pure_python_wheel: Annotated[bool, typer.Option("--allow-pure-python-wheel", help="Answer for a pure wheel instead of failing.")] = False,
    ldpaths: Annotated[Optional[str], typer.Option("--ldpaths", help="Colon-separated directories to read external libraries from (as --lib-path).")] = None,
    lib_path: Annotated[Optional[list[str]], typer.Option(help="Read external libraries from this directory (repeatable).")] = None,
    policy_file: Annotated[Optional[Path], typer.Option(help="Judge against the policies in this JSON file.")] = None,
    verbose: Annotated[int, typer.Option("-v", "--verbose", count=True, help="Keep going past the first limiting reason.")] = 0,
) -> None:
    """What `auditwheel show` answers, in its words and JSON: exit 0 answered, 1 a pure wheel, 2 bad input."""
    from wheelcheck.api import show
    from wheelcheck.report.show_text import render_show_json, render_show_text

    dirs = list(lib_path or ()) + [d for d in (ldpaths or "").split(":") if d]
    try:
        view = show(wheel, policy_file=policy_file, lib_path=dirs, isa_check=not disable_isa_ext_check)
    except WheelcheckError as exc:
        _fail(str(exc))
    if view.pure and not allow_pure_python_wheel:
        message = (f"{wheel}: not a platform wheel: no ELF file in it (pass --allow-pure-python-wheel to "
                   "answer anyway)")
        if as_json:
            typer.echo(json.dumps({"version": 1, "wheel": view.wheel, "error": message}))
        Console(stderr=True, highlight=False, soft_wrap=True).print(f"wheelcheck: {message}", markup=False)
        raise typer.Exit(1)
    typer.echo(render_show_json(view) if as_json else render_show_text(view, verbose=verbose), nl=False)


@app.command("config")
def config_command(
    config: Annotated[Optional[Path], typer.Option("--config", help=CONFIG_HELP)] = None,
    fmt: Annotated[Format, typer.Option("--format", help="Output format.")] = Format.text,
) -> None:
    """Print the effective settings and where each comes from (default or a pyproject.toml)."""
    from wheelcheck.config import SETTINGS

    pyproject = config if config is not None else find_pyproject(Path.cwd())
    settings = _settings(config, {})
    if fmt is Format.json:
        typer.echo(json.dumps({"pyproject": str(pyproject) if pyproject else None,
                               "settings": {k: {"value": settings[k], "source": settings.sources[k]}
                                            for k in SETTINGS}}, indent=2))
        return
    typer.echo(f"[tool.wheelcheck] of {pyproject}" if pyproject
               else f"no pyproject.toml in {Path.cwd()} or above: defaults only")
    width = max(map(len, SETTINGS))
    shown = {key: _shown(settings[key]) for key in SETTINGS}
    value_width = max(map(len, shown.values()))
    for key in SETTINGS:
        typer.echo(f"{key:<{width}}  {shown[key]:<{value_width}}  ({settings.sources[key]})")
    typer.echo("Command-line options override these.")


def _shown(value: object) -> str:
    if value is None:
        return "(not set)"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return ", ".join(value) if value else "(none)"
    return str(value)


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
    from wheelcheck.report.conflicts_json import render_conflicts_json
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
