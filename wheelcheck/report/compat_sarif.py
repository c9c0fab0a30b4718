"""The compat report as SARIF 2.1.0 (for GitHub code scanning), shaped like the audit's (audit_sarif.py).

One run; ``tool.driver.rules`` holds the compat rules of the rules reference; one result per finding,
located at the subject's wheel (or manifest, or dist-info directory) with its file as a logical location;
the answer of each pair is in ``run.properties.pairs`` and decides ``invocations[0].exitCode``.
"""

from __future__ import annotations

import hashlib
from typing import Any
from pathlib import Path, PurePosixPath

from wheelcheck.compat.compat_report import CompatFinding, CompatReport, PairResult
from wheelcheck.data import load_table
from wheelcheck.report.audit_sarif import FINGERPRINT_KEY, SARIF_SCHEMA_URI, _rule, artifact_uri
from wheelcheck.report.escaping import json_text, sarif_text

__all__ = ["render_compat_sarif", "compat_sarif_log"]

_LEVEL = {"error": "error", "warning": "warning", "info": "note"}


def render_compat_sarif(report: CompatReport, *, base: Path | None = None) -> str:
    return json_text(compat_sarif_log(report, base=base))


def compat_sarif_log(report: CompatReport, *, base: Path | None = None) -> dict:
    from wheelcheck._version import __version__

    rules = [r for r in load_table("rules.json")["rules"] if r["id"].startswith("compat-")]
    index = {rule["id"]: i for i, rule in enumerate(rules)}
    results = [_result(pair, f, index, base) for pair in report.pairs for f in pair.findings]
    run = {
        "tool": {"driver": {"name": "wheelcheck", "version": __version__, "semanticVersion": __version__,
                            "rules": [_rule(r) for r in rules]}},
        "invocations": [{"executionSuccessful": True, "exitCode": report.exit_code}],
        "results": results,
        "properties": {"pairs": [{"subject": p.subject, "hosts": p.hosts, "verdict": p.verdict, "reason": p.reason}
                                 for p in report.pairs]},
    }
    return {"$schema": SARIF_SCHEMA_URI, "version": "2.1.0", "runs": [run]}


def _result(pair: PairResult, finding: CompatFinding, index: dict[str, int], base: Path | None) -> dict:
    member = finding.file
    text = f"{pair.label}: {finding.message}"
    if finding.hint:
        text += f". Fix: {finding.hint}"
    location: dict = {"physicalLocation": {"artifactLocation": {"uri": _uri(pair.subject["source"], base)}}}
    if member:
        location["logicalLocations"] = [{"name": PurePosixPath(member).name, "fullyQualifiedName": member,
                                         "kind": "module"}]
    digest = hashlib.sha256()
    for part in (pair.subject["name"], member or "", finding.rule, finding.symbol or finding.message):
        digest.update(part.encode("utf-8") + b"\0")
    result: dict[str, Any] = {
        "ruleId": finding.rule, "level": _LEVEL[finding.severity], "message": {"text": sarif_text(text)},
        "locations": [location], "partialFingerprints": {FINGERPRINT_KEY: digest.hexdigest()},
        "properties": {"verdict": pair.verdict, "effect": finding.effect, "loader_message": finding.loader_message,
                       "symbol": finding.symbol, "demangled": finding.demangled, "nearest": finding.nearest},
    }
    if finding.rule in index:
        result["ruleIndex"] = index[finding.rule]
    return result


def _uri(source: str, base: Path | None) -> str:
    return artifact_uri(source.split(" (manifest of", 1)[0], base)
