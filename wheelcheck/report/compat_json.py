"""`wheelcheck compat --format json`: the report as JSON, following compat-schema.json beside this file."""

from __future__ import annotations

from wheelcheck.compat.compat_report import CompatReport
from wheelcheck.report.json_document import as_json, load_schema

__all__ = ["render_compat_json", "compat_schema"]


def render_compat_json(report: CompatReport) -> str:
    return as_json(report)


def compat_schema() -> dict:
    return load_schema("compat")
