"""The conflicts report as JSON, and the schema it follows (wheelcheck/report/conflicts-schema.json)."""

from __future__ import annotations

import json
from importlib import resources

from wheelcheck.conflicts.conflict_findings import ConflictReport

__all__ = ["render_conflicts_json", "conflicts_schema"]


def render_conflicts_json(report: ConflictReport) -> str:
    return json.dumps(report.to_dict(), indent=2) + "\n"


def conflicts_schema() -> dict:
    return json.loads(resources.files("wheelcheck.report").joinpath("conflicts-schema.json").read_text("utf-8"))
