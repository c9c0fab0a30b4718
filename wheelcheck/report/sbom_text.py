"""The bill of materials for people (``wheelcheck sbom --format table``): one line per component."""

from __future__ import annotations

from collections.abc import Sequence

from wheelcheck.report.escaping import inert_lines
from wheelcheck.report.text_lines import Line, plural
from wheelcheck.sbom.bill_of_materials import BillOfMaterials, Component

__all__ = ["render_sbom_text"]

_HEADER = ("component", "version", "how", "license", "file", "evidence")


def render_sbom_text(boms: Sequence[BillOfMaterials], *, verbosity: int = 0) -> list[Line]:
    """A heading per wheel, then a table of its components (``verbosity`` > 0: every evidence line whole; below 0,
    the headings alone)."""
    lines: list[Line] = []
    for wheel in boms:
        lines.append(Line(f"{wheel.filename}: {plural(len(wheel.components), 'third-party component')}", "bold"))
        rows = [_row(c, verbosity) for c in wheel.components] if verbosity >= 0 else []
        if not rows:
            continue
        widths = [max(len(r[i]) for r in rows + [_HEADER]) for i in range(len(_HEADER) - 1)]
        for row, style in [(_HEADER, "dim")] + [(r, "") for r in rows]:
            cells = [cell.ljust(width) for cell, width in zip(row, widths)] + [row[-1]]
            lines.append(Line("  " + "  ".join(cells).rstrip(), style))
    return inert_lines(lines)


def _row(c: Component, verbosity: int) -> tuple[str, str, str, str, str, str]:
    name = c.name if c.os_package is None else f"{c.name} ({c.os_package.type} {c.os_package.name})"
    version = c.version or "-"
    if c.os_package is not None:
        version = f"{c.version or '-'} ({c.os_package.version})"
    shown = [e for e in c.evidence if e.kind != "filename" or verbosity > 0]
    evidence = "; ".join(f"{e.kind}: {e.value if verbosity > 0 else e.value.splitlines()[0]}" for e in shown)
    return name, version, c.kind, _license(c), c.file, evidence or "file name"


def _license(c: Component) -> str:
    """The SPDX expression a repair found, else the license file it wrote (its name), else -."""
    if c.license is None:
        return "-"
    return c.license.expression or f"see {(c.license.file or '-').rsplit('/', 1)[-1]}"
