"""SARIF 2.1.0 rendering, for GitHub code scanning and other SARIF viewers.

One run; ``tool.driver.rules`` is the whole rules reference (data/rules.json), in its order, so a rule's
index is stable; one result per finding at error and warning, and at info too when ``--fail-on info`` makes
infos fail a wheel (every result is an alert in code scanning, and infos say why a tag is not better, which
needs no action). A suppressed finding is a result with a ``suppressions`` entry.

Where a result points: a finding is about a member *inside* a wheel, and no SARIF consumer we target can
open a zip. GitHub code scanning wants a physical location whose ``artifactLocation.uri`` is "a file either
in the repository or generated during a build" and ignores logical locations, so:

- ``physicalLocation.artifactLocation.uri`` is the wheel file (relative to ``base`` when under it, as a
  workflow's checkout is; otherwise an absolute ``file:`` URI), with no region: the whole file;
- the member is a ``logicalLocation`` (kind ``module``, its path inside the wheel as the fully qualified
  name) and is also the start of the message text, so GitHub's alert shows it;
- ``partialFingerprints`` hash the project name (not its version), member, rule and the finding's cause
  (what it shares with the same problem in other files: no counts, no symbol lists), so an alert stays the
  same alert when the next release's wheel has the same problem.

A ``wheel!/member`` URI (the jar-URL style) was rejected: GitHub would show it as a path it cannot resolve,
and it is no more useful to other viewers than the logical location.
"""

from __future__ import annotations

import hashlib
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import quote

from wheelcheck.data import load_table
from wheelcheck.audit.findings import AuditReport, Finding, WheelReport
from wheelcheck.report.escaping import json_text, sarif_text

__all__ = ["render_audit_sarif", "sarif_log", "artifact_uri", "SARIF_SCHEMA_URI", "FINGERPRINT_KEY"]

SARIF_SCHEMA_URI = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
FINGERPRINT_KEY = "wheelcheckFinding/v2"  # bump the suffix only if the hashed parts change (v1: the message)
_LEVEL = {"error": "error", "warning": "warning", "info": "note"}


def render_audit_sarif(report: AuditReport, *, base: Path | None = None) -> str:
    return json_text(sarif_log(report, base=base))


def sarif_log(report: AuditReport, *, base: Path | None = None) -> dict:
    """The SARIF log as a dict. ``base``: the folder wheel paths are made relative to (a checkout)."""
    from wheelcheck._version import __version__

    rules = load_table("rules.json")["rules"]
    index = {rule["id"]: i for i, rule in enumerate(rules)}
    # code scanning makes every result an alert: infos (why a tag is not better) only when they can fail a wheel
    shown = ("error", "warning", "info") if report.fail_on == "info" else ("error", "warning")
    results = [_result(w, f, index, base) for w in report.wheels if w.error is None for f in w.findings
               if f.severity in shown]
    results += [_suppressed_result(w, s, index, base) for w in report.wheels if w.error is None
                for s in w.suppressed if s.severity in shown]
    notifications = [{"level": "error", "message": {"text": sarif_text(w.error)},
                      "locations": [{"physicalLocation": {"artifactLocation": {"uri": _uri(w, base)}}}]}
                     for w in report.wheels if w.error is not None]
    invocation: dict[str, Any] = {"executionSuccessful": report.exit_code != 2, "exitCode": report.exit_code}
    if notifications:
        invocation["toolExecutionNotifications"] = notifications
    run = {
        "tool": {"driver": {"name": "wheelcheck", "version": __version__, "semanticVersion": __version__,
                            "rules": [_rule(r) for r in rules]}},
        "invocations": [invocation],
        "results": results,
        "properties": {"wheels": [_wheel_summary(w) for w in report.wheels],
                       "relaxedBy": [r.to_dict() for r in report.relaxed_by]},
    }
    return {"$schema": SARIF_SCHEMA_URI, "version": "2.1.0", "runs": [run]}


def _rule(rule: dict) -> dict:
    severity = rule["severity"].split()[0].rstrip(";,")  # "error / warning / info" -> its strongest, first
    detects = rule["detects"]
    return {
        "id": rule["id"],
        "name": "".join(part.capitalize() for part in rule["id"].split("-")),
        "shortDescription": {"text": _first_sentence(detects)},
        "fullDescription": {"text": detects},
        "help": {"text": f"Why it breaks programs: {rule['why']}\nFix: {rule['fix']}",
                 "markdown": f"{detects}\n\n**Why it breaks programs.** {rule['why']}\n\n**Fix.** {rule['fix']}"},
        "defaultConfiguration": {"level": _LEVEL.get(severity, "warning")},
        "properties": {"tags": ["wheel", rule["group"]], "precision": "very-high"},
    }


def _result(wheel: WheelReport, finding: Finding, index: dict[str, int], base: Path | None) -> dict:
    member = finding.file
    text = f"{wheel.filename}: {member}: {finding.message}" if member else f"{wheel.filename}: {finding.message}"
    if finding.explanation:
        text += f". Why: {finding.explanation.rstrip('.')}"
    if finding.hint:
        text += f". Fix: {finding.hint}"
    location: dict = {"physicalLocation": {"artifactLocation": {"uri": _uri(wheel, base)}}}
    if member:
        location["logicalLocations"] = [{"name": PurePosixPath(member).name, "fullyQualifiedName": member,
                                         "kind": "module"}]
    result: dict[str, Any] = {
        "ruleId": finding.rule,
        "level": _LEVEL[finding.severity],
        "message": {"text": sarif_text(text)},
        "locations": [location],
        "partialFingerprints": {FINGERPRINT_KEY: _fingerprint(wheel, finding)},
        "properties": {"wheel": wheel.filename, "member": member, "cause": finding.cause,
                       "explanation": finding.explanation, "hint": finding.hint,
                       "symbols": list(finding.symbols), "limit": finding.limit},
    }
    if finding.rule in index:
        result["ruleIndex"] = index[finding.rule]
    return result


def _suppressed_result(wheel: WheelReport, suppressed: Any, index: dict[str, int], base: Path | None) -> dict:
    """A suppressed finding as SARIF says one (code scanning shows it closed): the result, and why it is
    suppressed."""
    finding = Finding(suppressed.rule, suppressed.severity, suppressed.file, suppressed.message)
    result = _result(wheel, finding, index, base)
    result["suppressions"] = [{"kind": "external", "justification": sarif_text(f"{suppressed.by} ({suppressed.source})")}]
    return result


def _uri(wheel: WheelReport, base: Path | None) -> str:
    return artifact_uri(wheel.path or wheel.filename, base)


def artifact_uri(source: str, base: Path | None) -> str:
    """The SARIF artifact URI of the file at ``source``: relative to ``base`` when it lies below it (what code
    scanning resolves against the checkout), a file: URI when it is elsewhere, the path itself when relative."""
    path = Path(source)
    if path.is_absolute():
        if base is not None and path.is_relative_to(base):
            path = path.relative_to(base)
        else:
            return path.as_uri()
    return quote(path.as_posix(), safe="/")


def _fingerprint(wheel: WheelReport, finding: Finding) -> str:
    project = wheel.filename.split("-", 1)[0]
    digest = hashlib.sha256()
    for part in (project, finding.file or "", finding.rule, finding.cause):
        digest.update(part.encode("utf-8") + b"\0")
    return digest.hexdigest()


def _wheel_summary(wheel: WheelReport) -> dict:
    if wheel.error is not None:
        return {"filename": wheel.filename, "error": wheel.error}
    return {"filename": wheel.filename, "passed": wheel.passed, "claimed_tags": wheel.claimed_tags,
            "deserved_tag": wheel.deserved_tag, "required_tag": wheel.required_tag, "required_met": wheel.required_met}


def _first_sentence(text: str) -> str:
    head, dot, _ = text.partition(". ")
    return head + "." if dot else text
