"""`wheelcheck policy ...`: list, show, validate, compare and derive policies."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Optional

import typer

from wheelcheck.api import load_policies
from wheelcheck.cli.common import Format, _console, _fail, _say, _say_json, _write_output, policy_app
from wheelcheck.errors import WheelcheckError
from wheelcheck.report.escaping import json_text

if TYPE_CHECKING:
    from wheelcheck.policy import PolicySet


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
    from wheelcheck.policy.registry import bundled_texts
    from wheelcheck.policy.validate import validate_files, validate_texts

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

