"""Plain-text rendering of a ConflictReport: per process, its members, notes, findings and a summary line.

Returns (text, style) lines; the CLI decides whether styles become colour. Info findings are shown
with -v; the files of a finding beyond the first few with -vv.
"""

from __future__ import annotations

from wheelcheck.conflicts.conflict_findings import ConflictFinding, ConflictReport, ProcessReport

__all__ = ["render_conflicts_text"]

Line = tuple[str, str]
_STYLE = {"error": "bold red", "warning": "yellow", "info": "dim"}
_FILES_SHOWN = 4


def render_conflicts_text(report: ConflictReport, *, verbosity: int = 0) -> list[Line]:
    lines: list[Line] = []
    for proc in report.processes:
        lines.extend(_process_lines(proc, verbosity))
    counts = report.counts()
    summary = ", ".join(f"{n} {sev}{'s' if n != 1 else ''}" for sev, n in counts.items())
    read, analyse = report.timings.get("read"), report.timings.get("analyse")
    what = f"{len(report.sources)} wheel{'s' if len(report.sources) != 1 else ''}" if report.mode == "wheels" \
        else f"the environment at {', '.join(report.sources)}"
    timing = f"; read {what} in {read:.2f} s, analysed in {analyse:.2f} s" if read is not None and analyse is not None \
        else ""
    lines.append((f"{summary}{timing}", "bold"))
    return lines


def _process_lines(proc: ProcessReport, verbosity: int) -> list[Line]:
    members = ", ".join(f"{d['name']} {d['version']}" for d in proc.distributions)
    out: list[Line] = [(f"{proc.label}: {len(proc.distributions)} distribution"
                        f"{'s' if len(proc.distributions) != 1 else ''} ({members})", "bold")]
    for note in proc.notes:
        out.append((f"  note: {note}", "dim"))
    shown = [f for f in proc.findings if verbosity > 0 or f.severity != "info"]
    for finding in shown:
        out.extend(_finding_lines(finding, verbosity))
    hidden = len(proc.findings) - len(shown)
    s = proc.stats
    if s:
        out.append((f"  {s.get('elf_files', 0)} ELF files, {s.get('exported_symbols', 0)} exported symbols indexed; "
                    f"{s.get('shared', 0)} names exported by more than one distribution: {s.get('colliding', 0)} "
                    f"colliding, {s.get('harmless', 0)} harmless, {s.get('identical', 0)} only in identical builds, "
                    f"{s.get('versioned_apart', 0)} kept apart by symbol versions"
                    + (f"; {hidden} info finding{'s' if hidden != 1 else ''} not shown (-v)" if hidden else ""), "dim"))
    return out


def _finding_lines(finding: ConflictFinding, verbosity: int) -> list[Line]:
    tags = ", ".join(t for t in (finding.family, finding.hazard, finding.liveness) if t)
    out = [(f"  {finding.severity} {finding.rule}" + (f" [{tags}]" if tags else "") + f": {finding.message}",
            _STYLE[finding.severity])]
    providers = finding.providers if verbosity > 1 else finding.providers[:_FILES_SHOWN]
    if finding.rule == "conflict-symbols":
        for p in providers:
            out.append((f"      {p.distribution} {p.version}: {p.file} ({p.count})", "dim"))
        if len(providers) < len(finding.providers):
            out.append((f"      ... and {len(finding.providers) - len(providers)} more files (-vv)", "dim"))
    if finding.hint and finding.severity != "info":
        out.append((f"      hint: {finding.hint}", "dim"))
    if verbosity > 0 and finding.symbols:
        out.append((f"      symbols: {', '.join(finding.symbols)}", "dim"))
    return out
