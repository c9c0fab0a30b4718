"""Plain-text rendering of a CompatReport: per pair, the answer, then the Requires-Dist pins, then the
evidence (findings), then with -v how each library was found.

Returns Lines (report/text_lines.py); the CLI decides whether styles become colour.
"""

from __future__ import annotations

from wheelcheck.compat.compat_report import CompatFinding, CompatReport, PairResult
from wheelcheck.report.escaping import inert_lines
from wheelcheck.report.text_lines import SEVERITY_STYLE, Line

__all__ = ["render_compat_text"]

_VERDICT_STYLE = {"loads": "bold green", "will-fail": "bold red", "cannot-tell": "bold yellow"}
_PER_RULE = 3  # findings of one rule shown per pair without -v
_HOW = {"own": "in its own wheel", "path": "through", "loaded": "already loaded by importing",
        "unreached": "not on its search path", "missing": "not found"}


def render_compat_text(report: CompatReport, *, verbosity: int = 0) -> list[Line]:
    lines: list[Line] = []
    for note in report.notes:
        lines.append(Line(f"note: {note}", "dim"))
    for pair in report.pairs:  # below verbosity 0, each pair's verdict line alone
        lines.extend(_pair_lines(pair, verbosity)[: None if verbosity >= 0 else 1])
    counts = report.counts()
    summary = ", ".join(f"{n} {verdict.replace('-', ' ')}" for verdict, n in counts.items())
    read, analyse = report.timings.get("read"), report.timings.get("analyse")
    timing = f"; read in {read:.2f} s, analysed in {analyse:.2f} s" if read is not None and analyse is not None else ""
    lines.append(Line(f"{len(report.pairs)} pair{'s' if len(report.pairs) != 1 else ''}: {summary}{timing}", "bold"))
    return inert_lines(lines)


def _pair_lines(pair: PairResult, verbosity: int) -> list[Line]:
    out: list[Line] = [Line(f"{pair.label}: {pair.verdict.replace('-', ' ')}", _VERDICT_STYLE[pair.verdict])]
    for req in pair.requirements:
        if not req["satisfied"] or verbosity > 0:
            cond = f" (with [{req['extra']}])" if req["extra"] else ""
            state = "" if not req["satisfied"] else ": satisfied"
            out.append(Line(f"  {pair.subject['name']} {pair.subject['version']} requires {req['line']}{cond}; "
                        f"{req['given']} given{state}", "yellow" if not req["satisfied"] else "dim"))
    out.append(Line(f"  {pair.reason}", _VERDICT_STYLE[pair.verdict].replace("bold ", "")))
    shown: dict[str, int] = {}
    for finding in pair.findings:
        if finding.rule == "compat-requirement" and finding.message.endswith("given"):
            continue  # shown as the pin line above
        if finding.severity == "info" and verbosity == 0:
            continue
        shown[finding.rule] = shown.get(finding.rule, 0) + 1
        if verbosity == 0 and shown[finding.rule] > _PER_RULE:
            continue
        out.extend(_finding_lines(finding, verbosity))
    hidden = {rule: n - _PER_RULE for rule, n in shown.items() if verbosity == 0 and n > _PER_RULE}
    if hidden:
        more = ", ".join(f"{n} more {rule}" for rule, n in hidden.items())
        out.append(Line(f"  ... and {more} (-v shows them)", "dim"))
    if pair.cxx and (verbosity > 0 or pair.cxx.get("subject_abi") != pair.cxx.get("host_abi")):
        c = pair.cxx
        out.append(Line(f"  C++: {pair.subject['name']} {c['subject_abi']} string ABI, libstdc++ floor "
                    f"{c['subject_floor'] or 'none'}; {c['host']} {c['host_abi']}, {c['host_floor'] or 'none'}", "dim"))
    if verbosity > 0:
        for f in pair.files:
            s = f["symbols"]
            out.append(Line(f"  {f['path']}: {s['checked']} symbols checked, {s['unbound']} unbound, "
                        f"{s['system']} from system libraries"
                        + (f"; out of sight: {', '.join(s['unseen_libraries'])}" if s["unseen_libraries"] else ""),
                        "dim"))
            for link in f["links"]:
                where = f"{link['distribution']}: {link['file']}" if link["file"] else ", ".join(link["elsewhere"])
                how = _HOW[link["how"]] + (f" {link['via']}" if link["via"] else "")
                verb = "may dlopen" if link["dlopen"] else "needs"
                out.append(Line(f"      {link['needed_by']} {verb} {link['name']}: {how}"
                            + (f" ({where})" if where else ""), "dim"))
    return out


def _finding_lines(finding: CompatFinding, verbosity: int) -> list[Line]:
    out = [Line(f"  {finding.severity} {finding.rule}: {finding.message}", SEVERITY_STYLE[finding.severity])]
    if finding.hint and (finding.severity != "info" or verbosity > 0):
        out.append(Line(f"      hint: {finding.hint}", "dim"))
    return out
