"""Plain-text rendering of a repair: a line per wheel, then what was grafted, patched and moved, and the
re-audit's findings grouped as the audit report groups them.

A wheel whose repair hit an error is left to the CLI's one line on stderr (an error is printed once).
"""

from __future__ import annotations

from wheelcheck.audit.finding_groups import group_findings
from wheelcheck.repair.repair_outcome import GraftedLicense, PatchedFile, RepairOutcome, RepairReport
from wheelcheck.report.escaping import inert_lines
from wheelcheck.report.finding_lines import group_lines
from wheelcheck.report.text_lines import Line, plural

__all__ = ["render_repair_text"]


def render_repair_text(report: RepairReport, *, verbosity: int = 0) -> list[Line]:
    lines: list[Line] = []
    for wheel in report.wheels:
        if wheel.status == "error":
            continue
        lines.append(_headline(wheel))
        if verbosity >= 0 and wheel.status not in ("pure", "copied"):
            lines += _body(wheel, verbosity)
    # even with -q: a repair relaxed by a setting says so wherever its outcome is read
    lines += [Line(f"relaxed by settings: {r.describe()}", "yellow") for r in report.relaxed_by]
    return inert_lines(lines)


def _body(wheel: RepairOutcome, verbosity: int) -> list[Line]:
    out: list[Line] = []
    done = wheel.status == "repaired"  # a failed repair shows its plan: nothing was written
    for graft in wheel.grafted:
        how = "already in the wheel" if graft.already_in_wheel else f"from {graft.source}"
        verb = "grafted" if done else "would graft"
        out.append(Line(f"  {verb} {', '.join(graft.needed_as)} as {graft.member} ({how})"))
        if graft.license is not None:
            out.append(_license_line(graft.license, verbosity))
    out += _licenses_summary(wheel)
    for patched in wheel.patched:
        out += _patched_lines(patched, done)
    explained: set[tuple] = set()
    for group in group_findings(wheel.findings):
        if group.severity != "info" or verbosity > 0:
            out += group_lines(group, verbosity, explained)
    for hidden in wheel.hidden or ():
        if not hidden.exports:  # hidden by an earlier repair, or it never exported any
            out.append(Line(f"  symbols of {hidden.member}: none exported, nothing to hide"))
            continue
        out.append(Line(f"  symbols of {hidden.member}: {hidden.hidden} of {hidden.exports} exports hidden, "
                        f"{len(hidden.renamed)} renamed, {len(hidden.kept)} kept visible"))
        if hidden.kept:
            names = ", ".join(sorted(hidden.kept)[:8]) + (" ..." if len(hidden.kept) > 8 else "")
            out.append(Line(f"    still visible (collision risk): {names}", "yellow"))
    if verbosity > 0:
        for soname, why in wheel.kept_external.items():
            out.append(Line(f"  not grafted: {soname} ({why})", "dim"))
    if done and wheel.sbom and verbosity > 0:
        out.append(Line(f"  bill of materials: {wheel.sbom} (wheelcheck sbom lists it)", "dim"))
    if done:
        out.append(Line(f"  {plural(wheel.copied_members, 'member')} copied as compressed bytes, "
                        f"{wheel.written_members:,} written", "dim"))
    return out


def _license_line(license: GraftedLicense, verbosity: int) -> Line:
    if license.file is None:
        return Line(f"    no license text: {license.problem}", "yellow")
    stated = license.expression or "stated by its text alone"
    origin = license.origin if verbosity > 0 else license.origin.split(" (", 1)[0]  # -v: the files read
    return Line(f"    license {stated}: {license.file} (from {origin})")


def _licenses_summary(wheel: RepairOutcome) -> list[Line]:
    """What the wheel's license files now say beside the project's own license, when this repair grafted."""
    licenses = [g.license for g in wheel.grafted if g.license is not None and not g.already_in_wheel]
    if wheel.status != "repaired" or not licenses:
        return []
    stated = sorted({lic.expression for lic in licenses if lic.expression})
    unstated = sum(1 for lic in licenses if lic.file and not lic.expression)
    parts = stated + ([f"{plural(unstated, 'text')} without an SPDX expression"] if unstated else [])
    out = []
    if parts:
        out.append(Line(f"  the wheel now also carries code under: {'; '.join(parts)} (each text declared in METADATA as "
                        "License-File; the project's own License-Expression is left as it was)", "yellow"))
    if wheel.metadata_version_raised:
        out.append(Line(f"  Metadata-Version raised from {wheel.metadata_version_raised} to 2.4, which License-File "
                        "needs", "dim"))
    return out


def _headline(wheel: RepairOutcome) -> Line:
    if wheel.unchanged:
        return Line(f"{wheel.filename}: UNCHANGED {'.'.join(wheel.platform_tags)} -> {wheel.output} "
                    "(nothing to vendor or rewrite: the output is the input, unchanged)", "green")
    if wheel.status == "repaired":
        return Line(f"{wheel.filename}: REPAIRED {'.'.join(wheel.platform_tags)} -> {wheel.output}", "green")
    if wheel.status == "pure":
        return Line(f"{wheel.filename}: PURE {wheel.message}", "yellow")
    if wheel.status == "copied":
        return Line(f"{wheel.filename}: COPIED {wheel.message} -> {wheel.output}", "green")
    return Line(f"{wheel.filename}: FAIL {wheel.message}", "bold red")


def _patched_lines(patched: PatchedFile, done: bool) -> list[Line]:
    changes = [f"{old} -> {new}" for old, new in patched.replaced_needed.items()]
    changes += [f"removed {name}" for name in patched.removed_needed]
    if patched.rpath_after is not None:
        changes.append(f"RPATH {':'.join(patched.rpath_after) or '(none)'}")
    if patched.dropped_rpath:
        changes.append(f"dropped {':'.join(patched.dropped_rpath)} (outside the wheel)")
    out = [Line(f"  {'patched' if done else 'would patch'} {patched.member}: {'; '.join(changes)}")]
    if patched.moved_to:
        out.append(Line(f"  {'moved' if done else 'would move'} {patched.member} to {patched.moved_to} "
                        "(a launcher takes its place)"))
    return out
