"""JSON rendering; the schema it follows is audit-schema.json beside this file."""

from __future__ import annotations

import json
from importlib import resources

from wheelcheck.audit.findings import AuditReport

__all__ = ["render_json", "audit_schema"]


def render_json(report: AuditReport) -> str:
    return json.dumps(report.to_dict(), indent=2, sort_keys=False) + "\n"


def audit_schema() -> dict:
    return json.loads(resources.files("wheelcheck.report").joinpath("audit-schema.json").read_text("utf-8"))
