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
        if model.root_is_purelib and not elf.path.startswith(model.data_dir + "/"):
            how, fix = ("the wheel says Root-Is-Purelib: true",
                        "build a platform wheel (Root-Is-Purelib: false); `wheelcheck repair` sets it")
        else:  # named into purelib by its path, whatever the WHEEL file says: repair leaves paths alone
            how, fix = (f"it is under {model.data_dir}/purelib/",
                        f"install it with the package's code instead: at the wheel's root (Root-Is-Purelib: false) "
                        f"or under {model.data_dir}/platlib/")
        # installers copy it with the rest of its package, so it loads: the tag stands (docs/rules.md)
        yield Finding(
            "elf-in-purelib", "warning", elf.path,
            f"is installed into purelib ({how})", fix,
            cause="is installed into purelib",
            explanation="It loads, since it is installed with the rest of its package, but where purelib and "
                        "platlib differ (/usr/lib and /usr/lib64 on Fedora) it lands in the directory meant for "
                        "pure-Python code.")
