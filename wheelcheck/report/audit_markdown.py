"""Markdown rendering: the summary a CI job shows (GitHub's step summary, a merge-request note).

A table of every wheel (result, the tag it deserves, the tag it was required to meet, counts), then per
wheel its findings grouped by cause as in the text report: one row per group, errors first. Whatever the
input names (wheels, files, tags, the messages that quote them) goes through report/escaping.py.
"""

from __future__ import annotations

from wheelcheck.audit.finding_groups import FindingGroup
from wheelcheck.audit.findings import summarize
from wheelcheck.audit.findings import AuditReport, WheelReport
from wheelcheck.report.escaping import md_code, md_text
from wheelcheck.report.audit_text import suppressed_summary
from wheelcheck.report.finding_lines import describe_files

__all__ = ["render_audit_markdown"]

_ICON = {True: "✅", False: "❌"}
_FILES_LISTED = 10


def render_audit_markdown(report: AuditReport) -> str:
    lines = ["## wheelcheck audit", "",
             "| wheel | result | deserves | required | errors | warnings | infos |", "|---|---|---|---|--:|--:|--:|"]
    for w in report.wheels:
        if w.error is not None:
            lines.append(f"| {md_code(w.filename)} | ❌ bad input | | | | | |")
            continue
        deserved = "pure" if w.pure else md_code(w.deserved_tag or "")
        required = md_code(w.required_tag) if w.required_tag else ""
        if w.meets_claim_between_rungs:  # a claim no policy is named after, older than the policy deserved, met
            required += " (met)"
        counts = summarize(w).severities
        lines.append(f"| {md_code(w.filename)} | {_ICON[w.passed]} {'pass' if w.passed else 'fail'} | {deserved} | "
                     f"{required} | {counts['error']} | {counts['warning']} | {counts['info']} |")
    if report.relaxed_by:  # said before the details: a relaxed gate is read as such
        lines += ["", "**Relaxed by settings:**", ""]
        lines += [f"- {md_text(r.describe())}" for r in report.relaxed_by]
    quieted = [w for w in report.wheels if w.error is None and w.suppressed]
    if quieted:
        lines += ["", "**Suppressed:**", ""]
        lines += [f"- {md_code(w.filename, in_table=False)}: {md_text(suppressed_summary(w.suppressed))}"
                  for w in quieted]
    for w in report.wheels:
        lines.extend(_wheel_section(w, report.fail_on == "info"))
    return "\n".join(lines) + "\n"


def _wheel_section(w: WheelReport, with_info: bool) -> list[str]:
    if w.error is not None:
        return ["", f"### {md_code(w.filename, in_table=False)}", "", f"Error: {md_text(w.error)}"]
    shown = [g for g in w.groups() if with_info or g.severity != "info"]
    if not shown:
        return []
    out = ["", f"### {md_code(w.filename, in_table=False)}", "",
           "| severity | rule | files | finding | why | fix |", "|---|---|---|---|---|---|"]
    out += [f"| {g.severity} | {md_code(g.rule)} | {_files(g)} | {md_text(g.headline)} | {md_text(g.explanation)} | "
            f"{md_text(g.hint)} |" for g in shown]
    return out


def _files(group: FindingGroup) -> str:
    if len(group.files) == 1:
        return md_code(group.files[0]) if group.files[0] else "(the wheel)"
    listed = ", ".join(md_code(f or "(the wheel)") for f in group.files[:_FILES_LISTED])
    more = len(group.files) - _FILES_LISTED
    return f"{md_text(describe_files(group.files))}: {listed}" + (f" and {more} more" if more > 0 else "")
