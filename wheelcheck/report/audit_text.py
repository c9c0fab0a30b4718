"""Plain-text rendering: a verdict line per wheel, then its findings grouped by file.

Returns (text, style) lines; the CLI decides whether styles become colour (only on a terminal).
"""

from __future__ import annotations

from itertools import groupby

from wheelcheck.audit.findings import AuditReport, Finding, WheelReport

__all__ = ["render_text"]

Line = tuple[str, str]
_STYLE = {"error": "bold red", "warning": "yellow", "info": "dim"}


def render_text(report: AuditReport, *, verbosity: int = 0) -> list[Line]:
    lines: list[Line] = []
    for wheel in report.wheels:
        lines.append(_verdict_line(wheel))
        if verbosity < 0 or wheel.error is not None:
            continue
        shown = [f for f in wheel.findings if verbosity > 0 or f.severity != "info" or report.fail_on == "info"]
        for file, group in groupby(shown, key=lambda f: f.file or ""):
            lines.append((f"  {file or '(wheel)'}", "bold"))
            for finding in group:
                lines.extend(_finding_lines(finding, verbosity))
        if verbosity > 1:
            lines.extend(_details(wheel))
    return lines


def _verdict_line(wheel: WheelReport) -> Line:
    if wheel.error is not None:
        return (f"{wheel.filename}: ERROR {wheel.error}", "bold red")
    if wheel.pure:
        return (f"{wheel.filename}: PASS pure wheel (no ELF files)", "green")
    status = "PASS" if wheel.passed else "FAIL"
    target = f", needs {wheel.target_tag}" if wheel.target_tag else ""
    tags = ".".join(wheel.best_tags) if wheel.best_tags else wheel.best_tag
    return (f"{wheel.filename}: {status} best tag {tags}{target}", "green" if wheel.passed else "bold red")


def _finding_lines(finding: Finding, verbosity: int) -> list[Line]:
    out = [(f"    {finding.severity} {finding.rule}: {finding.message}", _STYLE[finding.severity])]
    if finding.hint and finding.severity != "info":
        out.append((f"      hint: {finding.hint}", "dim"))
    if verbosity > 0 and len(finding.symbols) > 6:
        out.append((f"      symbols: {', '.join(finding.symbols)}", "dim"))
    return out


def _details(wheel: WheelReport) -> list[Line]:
    out: list[Line] = [(f"  arch {wheel.arch}, libc {wheel.libc}; claimed: {', '.join(wheel.claimed_tags)}", "dim")]
    for lib, versions in wheel.versioned_symbols.items():
        out.append((f"  {lib}: {', '.join(versions)}", "dim"))
    if wheel.external_libs:
        out.append((f"  external libraries: {', '.join(wheel.external_libs)}", "dim"))
    if wheel.cxx_abi:
        out.append((f"  C++ string ABI: {wheel.cxx_abi}", "dim"))
    for f in wheel.files:
        kind = "extension" if f.is_extension else "library"
        abi = f", C++ ABI {f.cxx_abi['abi']}" if f.cxx_abi and f.cxx_abi["abi"] != "none" else ""
        families = ", ".join(f"{k} {v}" for k, v in ((f.exposure or {}).get("families") or {}).items())
        loads = ", ".join(f"{r['soname']} ({r['status']})" for r in f.runtime_libraries)
        out.append((f"  {f.path}: {kind}, {f.exported_symbols} exported symbols"
                    + (f" ({families})" if families else "") + abi
                    + f", needs {', '.join(f.needed) or 'nothing'}" + (f", may load {loads}" if loads else ""), "dim"))
    return out
