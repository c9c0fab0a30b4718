"""Where the wheel installs its ELF files: an ELF file in purelib loads, but belongs in platlib."""

from __future__ import annotations

from collections.abc import Iterator

from wheelcheck.audit.check_context import CheckContext
from wheelcheck.audit.findings import Finding

__all__ = ["check_layout"]


def check_layout(ctx: CheckContext) -> Iterator[Finding]:
    model = ctx.model
    for elf in ctx.elves:
        if not model.in_purelib(elf.path):
            continue
        how = ("the wheel says Root-Is-Purelib: true" if model.root_is_purelib
               and not elf.path.startswith(model.data_dir + "/") else "it is under .data/purelib/")
        # installers copy it with the rest of its package, so it loads: the tag stands (docs/rules.md)
        yield Finding(
            "elf-in-purelib", "warning", elf.path,
            f"is installed into purelib ({how})",
            "build a platform wheel (Root-Is-Purelib: false); `wheelcheck repair` sets it",
            cause="is installed into purelib",
            explanation="It loads, since it is installed with the rest of its package, but where purelib and "
                        "platlib differ (/usr/lib and /usr/lib64 on Fedora) it lands in the directory meant for "
                        "pure-Python code.")
