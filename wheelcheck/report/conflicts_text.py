"""Plain-text rendering of a ConflictReport: per process, its members, notes and findings (most severe
first, each with why it breaks programs and the fix), then a summary line.

Info findings are shown with -v; the files of a finding beyond the first few with -vv.
"""

from __future__ import annotations

from wheelcheck.conflicts.conflict_findings import ConflictFinding, ConflictReport, ProcessReport
from wheelcheck.report.escaping import inert_lines
from wheelcheck.report.text_lines import SEVERITY_STYLE, Line, explanation_lines, plural

__all__ = ["render_conflicts_text"]

_FILES_SHOWN = 4


def render_conflicts_text(report: ConflictReport, *, verbosity: int = 0) -> list[Line]:
    """The findings of each process, then the summary (``verbosity`` below 0: the summary alone)."""
    lines: list[Line] = []
    for proc in report.processes if verbosity >= 0 else ():
        lines.extend(_process_lines(proc, verbosity))
    summary = ", ".join(plural(n, sev) for sev, n in report.counts().items())
    read, analyse = report.timings.get("read"), report.timings.get("analyse")
    what = plural(len(report.sources), "wheel") if report.mode == "wheels" \
        else f"the environment at {', '.join(report.sources)}"
    timing = f"; read {what} in {read:.2f} s, analysed in {analyse:.2f} s" if read is not None and analyse is not None \
        else ""
    lines.append(Line(f"{summary}{timing}", "bold"))
    return inert_lines(lines)


def _process_lines(proc: ProcessReport, verbosity: int) -> list[Line]:
    members = ", ".join(f"{d['name']} {d['version']}" for d in proc.distributions)
    out = [Line(f"{proc.label}: {plural(len(proc.distributions), 'distribution')} ({members})", "bold")]
    for note in proc.notes:
        out.append(Line(f"  note: {note}", "dim"))
    shown = [f for f in proc.findings if verbosity > 0 or f.severity != "info"]
    explained: set[tuple] = set()
    for finding in shown:
        out.extend(_finding_lines(finding, verbosity, explained))
    hidden = len(proc.findings) - len(shown)
    s = proc.stats
    if s:
        out.append(Line(f"  {s.get('elf_files', 0)} ELF files, {s.get('exported_symbols', 0)} exported symbols "
                        f"indexed; {s.get('shared', 0)} names exported by more than one distribution: "
                        f"{s.get('colliding', 0)} colliding, {s.get('harmless', 0)} harmless, "
                        f"{s.get('identical', 0)} only in identical builds, {s.get('versioned_apart', 0)} kept apart "
                        "by symbol versions" + (f"; {plural(hidden, 'info finding')} not shown (-v)" if hidden else ""),
                        "dim"))
    return out


def _finding_lines(finding: ConflictFinding, verbosity: int, explained: set[tuple]) -> list[Line]:
    tags = ", ".join(t for t in (finding.family, finding.hazard, finding.liveness) if t)
    out = [Line(f"  {finding.severity} {finding.rule}" + (f" [{tags}]" if tags else "") + f": {finding.message}",
                SEVERITY_STYLE[finding.severity])]
    providers = finding.providers if verbosity > 1 else finding.providers[:_FILES_SHOWN]
    if finding.rule == "conflict-symbols":
        for p in providers:
            out.append(Line(f"      {p.distribution} {p.version}: {p.file} ({p.count})", "dim"))
        if len(providers) < len(finding.providers):
            out.append(Line(f"      ... and {len(finding.providers) - len(providers)} more files (-vv)", "dim"))
    out += explanation_lines(finding.rule, finding.explanation, finding.hint, explained, "      ")
    if verbosity > 0 and finding.symbols:
        out.append(Line(f"      symbols: {', '.join(finding.symbols)}", "dim"))
    return out
