"""The compat report as JSON, and the schema it follows (wheelcheck/report/compat-schema.json)."""

from __future__ import annotations

import json
from importlib import resources

from wheelcheck.compat.compat_report import CompatReport

__all__ = ["render_compat_json", "compat_schema"]


def render_compat_json(report: CompatReport) -> str:
    return json.dumps(report.to_dict(), indent=2) + "\n"


def compat_schema() -> dict:
    return json.loads(resources.files("wheelcheck.report").joinpath("compat-schema.json").read_text("utf-8"))
