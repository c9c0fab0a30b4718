"""`wheelcheck audit --format json`: the report as JSON, following audit-schema.json beside this file."""

from __future__ import annotations

from wheelcheck.audit.findings import AuditReport
from wheelcheck.report.json_document import as_json, load_schema

__all__ = ["render_audit_json", "audit_schema"]


def render_audit_json(report: AuditReport) -> str:
    return as_json(report)


def audit_schema() -> dict:
    return load_schema("audit")
