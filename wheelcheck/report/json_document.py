"""What the JSON renderers share: a report's ``to_dict()`` as indented JSON, and the schemas beside it."""

from __future__ import annotations

import json
from importlib import resources
from typing import Any, Protocol

from wheelcheck.report.escaping import json_text

__all__ = ["as_json", "load_schema"]


class _Report(Protocol):
    def to_dict(self) -> dict[str, Any]: ...


def as_json(report: _Report) -> str:
    return json_text(report.to_dict())


def load_schema(command: str) -> dict:
    """The JSON Schema of ``wheelcheck <command> --format json`` (wheelcheck/report/<command>-schema.json)."""
    return json.loads(resources.files("wheelcheck.report").joinpath(f"{command}-schema.json").read_text("utf-8"))
