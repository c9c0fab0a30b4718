"""Markdown rendering: the summary a CI job shows (GitHub's step summary, a merge-request note)."""

from __future__ import annotations

from wheelcheck.audit.findings import AuditReport, WheelReport

__all__ = ["render_markdown"]

_ICON = {True: "✅", False: "❌"}


def render_markdown(report: AuditReport) -> str:
    lines = ["## wheelcheck audit", "", "| wheel | result | best tag | must meet |", "|---|---|---|---|"]
    for w in report.wheels:
        if w.error is not None:
            lines.append(f"| `{w.filename}` | ❌ bad input | | |")
            continue
        best = "pure" if w.pure else f"`{w.best_tag}`"
        target = f"`{w.target_tag}`" if w.target_tag else ""
        lines.append(f"| `{w.filename}` | {_ICON[w.passed]} {'pass' if w.passed else 'fail'} | {best} | {target} |")
    for w in report.wheels:
        lines.extend(_wheel_section(w, report.fail_on == "info"))
    return "\n".join(lines) + "\n"


def _wheel_section(w: WheelReport, with_info: bool) -> list[str]:
    if w.error is not None:
        return ["", f"### `{w.filename}`", "", f"Error: {_escape(w.error)}"]
    shown = [f for f in w.findings if with_info or f.severity != "info"]
    if not shown:
        return []
    out = ["", f"### `{w.filename}`", "", "| severity | rule | file | finding | hint |", "|---|---|---|---|---|"]
    for f in shown:
        out.append(f"| {f.severity} | `{f.rule}` | `{f.file or '(wheel)'}` | {_escape(f.message)} | {_escape(f.hint)} |")
    return out


def _escape(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")
