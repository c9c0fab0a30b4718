"""JSON rendering of a repair; the schema it follows is repair-schema.json beside this file."""

from __future__ import annotations

import json
from importlib import resources

from wheelcheck.repair.repair_outcome import RepairReport

__all__ = ["render_repair_json", "repair_schema"]


def render_repair_json(report: RepairReport) -> str:
    return json.dumps(report.to_dict(), indent=2) + "\n"


def repair_schema() -> dict:
    return json.loads(resources.files("wheelcheck.report").joinpath("repair-schema.json").read_text("utf-8"))
