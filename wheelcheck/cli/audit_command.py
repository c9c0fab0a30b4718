"""`wheelcheck audit`: its options, suppressions and the formats it writes."""

from __future__ import annotations

from dataclasses import replace
from enum import Enum
from pathlib import Path
from typing import Annotated, Optional

import typer

from wheelcheck.api import audit_wheels, load_policies
from wheelcheck.audit.audit_options import AuditOptions
from wheelcheck.audit.suppression import Suppressions, baseline_document
from wheelcheck.cli.common import (
    CONFIG_HELP,
    ISOLATED_HELP,
    AuditFormat,
    CxxAbi,
    Severity,
    _error_line,
    _fail,
    _print_lines,
    _say,
    _settings,
    _str,
    _value,
    _verbosity,
    _write_output,
    app,
)
from wheelcheck.config import Settings, known_rules, relaxations, suppressions_of
from wheelcheck.errors import WheelcheckError
from wheelcheck.wheel.variant_metadata import read_variants_index
from wheelcheck.report.audit_json import render_audit_json
from wheelcheck.report.audit_text import render_audit_text
from wheelcheck.report.escaping import json_text
from wheelcheck.report.progress import terminal_progress
from wheelcheck.report.text_lines import as_text


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
    isa_level: Annotated[Optional[IsaLevel], typer.Option("--isa-level", help="The x86-64 level the wheels claim: code that needs more with no CPU check found is an error, not a warning (default: [tool.wheelcheck] isa-level, else none claimed).")] = None,
    ignore: Annotated[Optional[list[str]], typer.Option("--ignore", metavar="RULE", help="Suppress this rule's findings (repeatable, or comma-separated); they are counted and named in the report. Replaces [tool.wheelcheck] ignore.")] = None,
    per_file_ignores: Annotated[Optional[list[str]], typer.Option("--per-file-ignores", metavar="GLOB:RULES", help="Suppress these rules (comma-separated) in members matching GLOB (repeatable). Replaces [tool.wheelcheck] per-file-ignores.")] = None,
    baseline: Annotated[Optional[Path], typer.Option("--baseline", help="Suppress the findings this baseline file lists: known ones pass, new ones fail.")] = None,
    write_baseline: Annotated[Optional[Path], typer.Option("--write-baseline", help="Write the warnings and errors of this audit to this baseline file, and exit 0.")] = None,
    variants_json: Annotated[Optional[Path], typer.Option("--variants-json", metavar="FILE", help="Check the variant wheels against the index's {name}-{version}-variants.json of their release (PEP 825).")] = None,
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
                                  "isa-level": _value(isa_level),
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
                               max_wheel_size=settings["max-wheel-size"], isa_claim=_isa_claim(settings),
                               suppressions=_suppressions(settings, writing_baseline=write_baseline is not None),
                               variants_index=read_variants_index(variants_json) if variants_json else None)
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


class IsaLevel(str, Enum):
    v1 = "v1"
    v2 = "v2"
    v3 = "v3"
    v4 = "v4"


def _isa_claim(settings: Settings) -> tuple[int, str] | None:
    """--isa-level (or the setting) as the claim the isa-instructions rule holds the code to."""
    level = settings["isa-level"]
    if level is None:
        return None
    source = settings.sources["isa-level"]
    who = f"--isa-level {level}" if source == "command line" else f"isa-level = \"{level}\" of {source}"
    return int(level[1]), who


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

