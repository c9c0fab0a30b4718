"""Plain-text rendering of an audit: for each wheel its verdict, the findings grouped by cause (errors
first, then what affects the most files), and a summary; with several wheels, one table for all.

A wheel that could not be read is left to the CLI's one line on stderr (an error is printed once); the
table still counts it. -q: the verdict lines only. -v: every file of every group, and info findings.
-vv: per-file details and every symbol.
"""

from __future__ import annotations

from collections import Counter

from wheelcheck.audit.findings import summarize
from wheelcheck.audit.findings import AuditReport, WheelReport
from wheelcheck.report.escaping import inert_lines
from wheelcheck.report.finding_lines import group_lines
from wheelcheck.report.text_lines import SEVERITY_STYLE, Line, plural

__all__ = ["render_audit_text", "verdict_words", "variant_line"]


def render_audit_text(report: AuditReport, *, verbosity: int = 0) -> list[Line]:
    lines: list[Line] = []
    for wheel in report.wheels:
        if wheel.error is not None:
            continue
        lines.append(Line(f"{wheel.filename}: {verdict_words(wheel, report.fail_on)}",
                          "green" if wheel.passed else "bold red"))
        if verbosity >= 0 and not (wheel.pure and not wheel.findings):
            lines += _wheel_body(wheel, verbosity, report.fail_on)
    if len(report.wheels) > 1 and verbosity >= 0:
        lines += _table(report)
    # even with -q: a gate relaxed by a setting says so wherever its verdict is read
    lines += [Line(f"relaxed by settings: {r.describe()}", "yellow") for r in report.relaxed_by]
    return inert_lines(lines)


def verdict_words(wheel: WheelReport, fail_on: str = "error") -> str:
    """'FAIL deserves linux_x86_64, required manylinux_2_28_x86_64': PASS or FAIL, the tag the wheel
    deserves (and its aliases), and the tag it was required to meet (its best claim, or --plat)."""
    status = "PASS" if wheel.passed else "FAIL"
    if not wheel.passed and not any(f.severity == "error" for f in wheel.findings):
        status += f" (--fail-on {fail_on})"
    if wheel.pure:
        return f"{status} pure wheel (no ELF file: any platform tag fits)"
    deserved = ".".join(wheel.deserved_tags) or wheel.deserved_tag
    if wheel.meets_claim_between_rungs:
        # "deserves manylinux_2_26, required manylinux_2_25" would read as a wheel passing what it does not meet
        return (f"{status} meets {wheel.required_tag} as claimed (no policy has that name; of the policies it "
                f"deserves {deserved})")
    return f"{status} deserves {deserved}" + (f", required {wheel.required_tag}" if wheel.required_tag else "")



GROUPS_PER_RULE = 4  # in the default report: the rest of a rule's groups are behind -v, and counted
SCREEN = 60  # the default report of one wheel fits this many lines: fewer groups per rule are shown until it does


def _wheel_body(wheel: WheelReport, verbosity: int, fail_on: str) -> list[Line]:
    with_info = verbosity > 0 or fail_on == "info"
    groups = [g for g in wheel.groups() if with_info or g.severity != "info"]
    tail = _summary(wheel, with_info) + (_details(wheel) if verbosity > 1 else [])
    if verbosity > 0:
        return _group_lines(groups, verbosity, None) + tail
    room = SCREEN - 1 - len(tail)  # the verdict line comes first
    for per_rule in range(GROUPS_PER_RULE, 0, -1):
        body = _group_lines(groups, verbosity, per_rule)
        if len(body) <= room:
            return body + tail
    # one group per rule is still too long: the most first groups that fit, the rest counted. More groups never
    # make fewer lines, so the most that fit are found by halving (a wheel may have thousands of groups)
    lo, hi = 0, len(groups)  # the first lo groups fit; more than hi do not
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if len(_group_lines(groups[:mid], verbosity, 1)) < room:
            lo = mid
        else:
            hi = mid - 1
    if lo == 0:
        return tail
    left = len(groups) - lo
    more = f"  {left} more group{'s' * (left != 1)} of findings (-v shows each)"
    return _group_lines(groups[:lo], verbosity, 1) + [Line(more, "dim")] + tail


def _group_lines(groups: list, verbosity: int, per_rule: int | None) -> list[Line]:
    """The lines of ``groups``, at most ``per_rule`` groups of each rule and severity (None: all), the rest counted."""
    explained: set[tuple] = set()
    out: list[Line] = []
    total = Counter((g.rule, g.severity) for g in groups)
    shown: Counter[tuple[str, str]] = Counter()
    for group in groups:  # most important first: a rule's first groups say what its others would
        key = (group.rule, group.severity)
        shown[key] += 1
        if per_rule is None or shown[key] <= per_rule:
            out += group_lines(group, verbosity, explained)
        elif shown[key] == per_rule + 1:
            out.append(Line(f"  {group.severity} {group.rule}: {total[key] - per_rule} more group"
                            f"{'s' * (total[key] - per_rule != 1)} like these (-v shows each)",
                            SEVERITY_STYLE.get(group.severity, "")))
    return out


def _summary(wheel: WheelReport, with_info: bool) -> list[Line]:
    s = summarize(wheel)
    counts = [plural(n, sev) for sev, n in s.severities.items() if n]
    hidden = s.severities["info"] if not with_info else 0
    head = (", ".join(counts) or "no findings") + (" (shown with -v)" if hidden else "")
    if s.groups and s.groups < sum(s.severities.values()):
        head += f" in {plural(s.groups, 'group')}"
    time = f" in {s.seconds:.2f} s" if s.seconds is not None else ""
    out = [Line(f"  summary: {head}; {plural(s.elf_files, 'ELF file')} audited{time}", "bold")]
    if wheel.variant is not None:
        out.append(Line(f"  {variant_line(wheel.variant)}", "dim"))
    if s.rules:
        out.append(Line("  by rule: " + ", ".join(f"{rule} {n:,}" for rule, n in s.rules.items()), "dim"))
    leaked = ", ".join(f"{name} ({plural(e['symbols'], 'symbol')} in {plural(e['files'], 'file')})"
                       for name, e in s.leaked.items())
    if s.elf_files:
        out.append(Line(f"  exposure: {plural(s.exported_symbols, 'exported symbol')}; leaked library families: "
                        f"{leaked or 'none'}", "dim"))
    if wheel.suppressed:
        out.append(Line(f"  suppressed: {suppressed_summary(wheel.suppressed)}", "yellow"))
    return out


def variant_line(variant: dict) -> str:
    """'variant x86_64_v3: x86_64 :: level :: v3 (holds), blas_lapack :: library :: openblas (unverified)'."""
    props = variant["properties"]
    if props is None:
        return f"variant {variant['label']}: its variant metadata does not say what the label means"
    said = ", ".join(f"{p['property']} ({p['status']})" for p in props)
    return f"variant {variant['label']}: {said or 'no property'}"


def suppressed_summary(suppressed: list) -> str:
    """'3 findings (ignore: record-hash-hex 2, from pyproject.toml; baseline: symbol-version 1, from b.json)'."""
    by: dict[tuple[str, str], dict[str, int]] = {}
    for s in suppressed:
        rules = by.setdefault((s.by, s.source), {})
        rules[s.rule] = rules.get(s.rule, 0) + 1
    parts = [f"{how}: {', '.join(f'{rule} {n}' for rule, n in rules.items())}, from {source}"
             for (how, source), rules in by.items()]
    return f"{plural(len(suppressed), 'finding')} ({'; '.join(parts)})"


def _table(report: AuditReport) -> list[Line]:
    rows: list[tuple[str, ...]] = [("wheel", "result", "deserves", "errors", "warnings", "infos", "seconds")]
    for w in report.wheels:
        if w.error is not None:
            rows.append((w.filename, "ERROR", "", "", "", "", ""))
            continue
        s = summarize(w)
        rows.append((w.filename, "PASS" if w.passed else "FAIL", "pure" if w.pure else w.deserved_tag or "",
                     *(f"{s.severities[k]:,}" for k in ("error", "warning", "info")),
                     f"{s.seconds:.1f}" if s.seconds is not None else ""))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    out = [Line(f"summary of {plural(len(report.wheels), 'wheel')}:", "bold")]
    for n, row in enumerate(rows):
        cells = [c.ljust(w) if i < 3 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths))]
        out.append(Line("  " + "  ".join(cells).rstrip(), "bold" if n == 0 else ""))
    return out


def _details(wheel: WheelReport) -> list[Line]:
    out = [Line(f"  arch {wheel.arch}, libc {wheel.libc}; claims: {', '.join(wheel.claimed_tags) or 'no tag'}",
                "dim")]
    for lib, versions in wheel.versioned_symbols.items():
        out.append(Line(f"  {lib}: {', '.join(versions)}", "dim"))
    if wheel.external_libs:
        out.append(Line(f"  external libraries: {', '.join(wheel.external_libs)}", "dim"))
    if wheel.cxx_abi:
        out.append(Line(f"  C++ string ABI: {wheel.cxx_abi}", "dim"))
    for f in wheel.files:
        kind = "extension" if f.is_extension else "library"
        abi = f", C++ ABI {f.cxx_abi['abi']}" if f.cxx_abi and f.cxx_abi["abi"] != "none" else ""
        families = ", ".join(f"{k} {v}" for k, v in ((f.exposure or {}).get("families") or {}).items())
        loads = ", ".join(f"{r['soname']} ({r['status']})" for r in f.runtime_libraries)
        out.append(Line(f"  {f.path}: {kind}, {f.exported_symbols} exported symbols"
                        + (f" ({families})" if families else "") + abi + _isa(f)
                        + f", needs {', '.join(f.needed) or 'nothing'}" + (f", may load {loads}" if loads else ""),
                        "dim"))
    return out


def _isa(f) -> str:
    """The x86-64 level the ISA note claims beside the one the instructions need (and how much code was walked)."""
    note = f", ISA note x86-64-v{f.isa_level}" if f.isa_level else ""
    code = f.isa_code
    if not code:
        return note
    walked = "all code" if code["complete"] else f"{code['scanned_bytes'] * 100 // max(code['code_bytes'], 1)}% of code"
    guard = ", behind a CPU check" if code["guard"] and code["level"] > 1 else ""
    return f"{note}, instructions x86-64-v{code['level']}{guard} ({walked} walked)"
