"""`wheelcheck repair --format json`: the report as JSON, following repair-schema.json beside this file."""

from __future__ import annotations

from wheelcheck.repair.repair_outcome import RepairReport
from wheelcheck.report.json_document import as_json, load_schema

__all__ = ["render_repair_json", "repair_schema"]


def render_repair_json(report: RepairReport) -> str:
    return as_json(report)


def repair_schema() -> dict:
    return load_schema("repair")
