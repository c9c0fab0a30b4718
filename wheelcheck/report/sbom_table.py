"""The bill of materials as a table for people (``wheelcheck sbom --format table``): one line per component."""

from __future__ import annotations

from collections.abc import Sequence

from wheelcheck.sbom.bill_of_materials import BillOfMaterials, Component

__all__ = ["render_sbom_table"]

Line = tuple[str, str]
_HEADER = ("component", "version", "how", "file", "evidence")


def render_sbom_table(boms: Sequence[BillOfMaterials]) -> list[Line]:
    lines: list[Line] = []
    for wheel in boms:
        count = len(wheel.components)
        lines.append((f"{wheel.filename}: {count} third-party component{'s' * (count != 1)}", "bold"))
        rows = [_row(c) for c in wheel.components]
        if not rows:
            continue
        widths = [max(len(r[i]) for r in rows + [_HEADER]) for i in range(len(_HEADER) - 1)]
        for row, style in [(_HEADER, "dim")] + [(r, "") for r in rows]:
            cells = [cell.ljust(width) for cell, width in zip(row, widths)] + [row[-1]]
            lines.append(("  " + "  ".join(cells).rstrip(), style))
    return lines


def _row(c: Component) -> tuple[str, str, str, str, str]:
    name = c.name if c.os_package is None else f"{c.name} ({c.os_package.type} {c.os_package.name})"
    version = c.version or "-"
    if c.os_package is not None:
        version = f"{c.version or '-'} ({c.os_package.version})"
    evidence = "; ".join(f"{e.kind}: {e.value.splitlines()[0]}" for e in c.evidence if e.kind != "filename")
    return name, version, c.kind, c.file, evidence or "file name"
