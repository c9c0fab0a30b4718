"""One audited wheel as table rows: a wheel row, its finding rows and its ELF-file rows (plain dicts).

Pure: no Dask, no pyarrow. The column names and types live in ``census/tables.py``.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from wheelcheck.audit.findings import WheelReport
from wheelcheck.wheel.wheel_filename import InvalidWheelFilename, parse_wheel_filename
from wheelcheck.wheel.wheel_model import WheelModel

__all__ = ["AuditRows", "error_rows", "report_rows"]

AuditRows = dict[str, list[dict[str, Any]]]  # {"wheels": [one row], "findings": [...], "elf_files": [...]}


def _name_version(filename: str) -> tuple[str | None, str | None, list[str]]:
    try:
        parsed = parse_wheel_filename(filename)
    except InvalidWheelFilename:
        return None, None, []
    return str(parsed.name), str(parsed.version), sorted(str(t) for t in parsed.tags)


def _wheel_row(identity: dict[str, Any], report: WheelReport | None, error: str | None) -> dict[str, Any]:
    name, version, tags = _name_version(identity["filename"])
    row: dict[str, Any] = {**identity, "name": name, "version": version, "claimed_tags": tags, "deserved_tag": None,
                           "required_tag": None, "passed": None, "pure": None, "arch": None, "libc": None,
                           "cxx_abi": None, "elf_files": 0, "exported_symbols": 0, "family_exports": [],
                           "sbom_components": None, "findings": 0, "errors": 0, "error": error}
    if report is None or report.error is not None:
        return row
    families: Counter[str] = Counter()
    for elf in report.files:
        families.update((elf.exposure or {}).get("families", {}))
    row.update(claimed_tags=report.claimed_tags or tags, deserved_tag=report.deserved_tag, required_tag=report.required_tag,
               passed=report.passed, pure=report.pure, arch=report.arch, libc=report.libc, cxx_abi=report.cxx_abi,
               elf_files=len(report.files), exported_symbols=sum(f.exported_symbols for f in report.files),
               family_exports=[{"family": k, "symbols": v} for k, v in sorted(families.items())],
               findings=len(report.findings), errors=sum(f.severity == "error" for f in report.findings))
    return row


def report_rows(identity: dict[str, Any], report: WheelReport, model: WheelModel | None) -> AuditRows:
    """The rows of one audit. ``identity`` holds sha256, source, filename, size, audit_seconds, audited_at,
    wheelcheck_version; every row of the wheel repeats its sha256 and filename so tables join on them."""
    if report.error is not None:
        return error_rows(identity, report.error)
    key = {"sha256": identity["sha256"], "filename": identity["filename"]}
    findings = [{**key, "rule": f.rule, "severity": f.severity, "file": f.file, "message": f.message,
                 "hint": f.hint, "symbols": list(f.symbols), "limit_tag": f.limit} for f in report.findings]
    needs = {elf.path: elf.version_needs for elf in (model.elves if model else ())}
    elves = [{**key, "path": f.path, "arch": f.arch, "soname": f.soname, "needed": list(f.needed),
              "rpath": list(f.rpath), "runpath": list(f.runpath), "is_extension": f.is_extension,
              "isa_level": f.isa_level, "exported_symbols": f.exported_symbols,
              "cxx_abi": (f.cxx_abi or {}).get("abi"),
              "family_exports": [{"family": k, "symbols": v}
                                 for k, v in sorted((f.exposure or {}).get("families", {}).items())],
              "version_needs": [{"library": n.library, "version": n.version, "symbols": list(n.symbols)}
                                for n in needs.get(f.path, ())]}
             for f in report.files]
    return {"wheels": [_wheel_row(identity, report, None)], "findings": findings, "elf_files": elves}


def error_rows(identity: dict[str, Any], error: str) -> AuditRows:
    """A wheel that could not be audited (bad input, a crash, a time-out): one wheel row with its error."""
    return {"wheels": [_wheel_row(identity, None, error)], "findings": [], "elf_files": []}
