"""Plain-text rendering of a repair: a line per wheel, then what was grafted, patched and moved.

Returns (text, style) lines like the audit renderer; the CLI decides whether styles become colour.
"""

from __future__ import annotations

from wheelcheck.repair.repair_outcome import PatchedFile, RepairOutcome, RepairReport

__all__ = ["render_repair_text"]

Line = tuple[str, str]


def render_repair_text(report: RepairReport, *, verbosity: int = 0) -> list[Line]:
    lines: list[Line] = []
    for wheel in report.wheels:
        lines.append(_headline(wheel))
        if verbosity < 0 or wheel.status in ("error", "pure"):
            continue
        done = wheel.status == "repaired"  # a failed repair shows its plan: nothing was written
        for graft in wheel.grafted:
            how = "already in the wheel" if graft.already_in_wheel else f"from {graft.source}"
            verb = "grafted" if done else "would graft"
            lines.append((f"  {verb} {', '.join(graft.needed_as)} as {graft.member} ({how})", ""))
        for patched in wheel.patched:
            lines.extend(_patched_lines(patched, done))
        for finding in wheel.findings:
            if finding.severity != "info" or verbosity > 0:
                where = f"{finding.file}: " if finding.file else ""
                lines.append((f"  {finding.severity} {finding.rule}: {where}{finding.message}",
                              "bold red" if finding.severity == "error" else "yellow"))
        for hidden in wheel.hidden or ():
            lines.append((f"  symbols of {hidden.member}: {hidden.hidden} of {hidden.exports} exports hidden, "
                          f"{len(hidden.renamed)} renamed, {len(hidden.kept)} kept visible", ""))
            if hidden.kept:
                names = ", ".join(sorted(hidden.kept)[:8]) + (" ..." if len(hidden.kept) > 8 else "")
                lines.append((f"    still visible (collision risk): {names}", "yellow"))
        if verbosity > 0:
            for soname, why in wheel.kept_external.items():
                lines.append((f"  not grafted: {soname} ({why})", "dim"))
        if wheel.status == "repaired" and wheel.sbom and verbosity > 0:
            lines.append((f"  bill of materials: {wheel.sbom} (wheelcheck sbom lists it)", "dim"))
        if wheel.status == "repaired":
            lines.append((f"  {wheel.copied_members} members copied as compressed bytes, "
                          f"{wheel.written_members} written", "dim"))
    return lines


def _headline(wheel: RepairOutcome) -> Line:
    if wheel.status == "repaired":
        return (f"{wheel.filename}: REPAIRED {'.'.join(wheel.platform_tags)} -> {wheel.output}", "green")
    if wheel.status == "error":
        return (f"{wheel.filename}: ERROR {wheel.message}", "bold red")
    if wheel.status == "pure":
        return (f"{wheel.filename}: PURE {wheel.message}", "yellow")
    return (f"{wheel.filename}: FAIL {wheel.message}", "bold red")


def _patched_lines(patched: PatchedFile, done: bool) -> list[Line]:
    changes = [f"{old} -> {new}" for old, new in patched.replaced_needed.items()]
    changes += [f"removed {name}" for name in patched.removed_needed]
    if patched.rpath_after is not None:
        changes.append(f"RPATH {':'.join(patched.rpath_after) or '(none)'}")
    if patched.dropped_rpath:
        changes.append(f"dropped {':'.join(patched.dropped_rpath)} (outside the wheel)")
    out = [(f"  {'patched' if done else 'would patch'} {patched.member}: {'; '.join(changes)}", "")]
    if patched.moved_to:
        out.append((f"  {'moved' if done else 'would move'} {patched.member} to {patched.moved_to} "
                     "(a launcher takes its place)", ""))
    return out
