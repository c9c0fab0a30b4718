"""`wheelcheck conflicts --format json`: the report as JSON, following conflicts-schema.json beside this file."""

from __future__ import annotations

from wheelcheck.conflicts.conflict_findings import ConflictReport
from wheelcheck.report.json_document import as_json, load_schema

__all__ = ["render_conflicts_json", "conflicts_schema"]


def render_conflicts_json(report: ConflictReport) -> str:
    return as_json(report)


def conflicts_schema() -> dict:
    return load_schema("conflicts")
