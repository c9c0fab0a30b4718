"""The x86-64 level each file's instructions need (elf/isa_scan.py), against what the wheel claims.

PEP 600 sets no x86-64 level beyond the architecture's baseline, so code that needs x86-64-v2 or above and runs with
no CPU check found in the wheel dies with SIGILL on an older CPU: a warning, with the instruction and the function
that hold it. Where another file of the wheel checks the CPU (a package may check before it loads a file), or the
only evidence is SSE3 (on every x86-64 CPU made since 2005), it is an info.
Where the wheel claims a level explicitly (its ISA note, or ``isa_claims`` a caller adds: a variant property, an
option), code beyond the claim is an error. Code behind a CPU check (a dispatcher, IFUNCs, function multi-versioning)
is an info: it runs the newer code only where the CPU has it.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterator

from wheelcheck.audit.check_context import CheckContext, Fact
from wheelcheck.audit.findings import Finding
from wheelcheck.audit.variant_properties import variant_isa_claim
from wheelcheck.elf.elf_info import ElfInfo
from wheelcheck.elf.isa_scan import named_for_isa

__all__ = ["check_isa_code", "claimed_level"]

_FIX = ("build for the claimed level (-march=x86-64 for the baseline; the manylinux_2_34 images' compilers default "
        "to x86-64-v2), dispatch to newer code at run time (__attribute__((target_clones(...))), "
        "__builtin_cpu_supports), or publish a variant wheel whose x86_64 :: level property says what it needs")


def claimed_level(ctx: CheckContext, elf: ElfInfo) -> tuple[int, str] | None:
    """The level the wheel claims for this file explicitly, and who claims it: an option (``isa_claim`` of the
    options), else the lower of the wheel's ``x86_64 :: level`` variant property and the file's own ISA note."""
    claim = getattr(ctx.options, "isa_claim", None)
    if claim is not None:
        return claim
    claims = [c for c in (variant_isa_claim(ctx.model), (elf.isa_level, "its ISA note") if elf.isa_level else None)
              if c is not None]
    return min(claims, key=lambda c: c[0], default=None)


def check_isa_code(ctx: CheckContext) -> Iterator[Finding | Fact]:
    if not getattr(ctx.options, "isa_check", True):
        return
    # a CPU check in one file may guard another (pycryptodome asks _cpuid_c before it loads _raw_aesni; numpy's core
    # module refuses to import on a CPU below its baseline): the wheel's first one, for the files that have none
    checked = next((elf.path for elf in ctx.elves if elf.isa_code is not None and elf.isa_code.guard), None)
    for elf in ctx.elves:
        scan = elf.isa_code
        if scan is None:
            continue
        yield Fact(elf.path, "isa_code", scan.to_dict())
        claim = claimed_level(ctx, elf)
        ceiling = claim[0] if claim else 1
        top = scan.top
        if top is None or scan.level <= ceiling:
            continue
        level = f"x86-64-v{scan.level}"
        beyond = f"beyond x86-64-v{ceiling}, which {claim[1]} claims" if claim else "beyond the x86-64 baseline"
        if scan.guard:
            yield Finding("isa-instructions", "info", elf.path, f"runs {level} instructions behind a CPU check ({scan.guard}): "
                          f"{top.describe()}", "nothing to do: the code picks the instructions the CPU has",
                          cause=f"runs {level} instructions behind a CPU check",
                          explanation="A dispatcher runs the newer code only where the CPU has the instructions.")
            continue
        named = named_for_isa(posixpath.basename(elf.path))
        if not claim and (checked is not None or named or top.instruction.endswith("(SSE3)")):
            why = (f"{checked} of the wheel checks the CPU, which may guard it" if checked is not None else
                   "its name says the instruction set it is for: the package picks it for the CPU" if named else
                   "SSE3, the oldest part of x86-64-v2, is on every x86-64 CPU made since 2005")
            yield Finding("isa-instructions", "info", elf.path, f"executes {level} instructions with no CPU check in "
                          f"the file ({why}): {top.describe()}",
                          "make sure the check covers this file before the package loads it",
                          cause=f"executes {level} instructions with no CPU check in the file")
            continue
        yield Finding(
            "isa-instructions", "error" if claim else "warning", elf.path,
            f"executes {level} instructions ({beyond}) with no CPU check found: {top.describe()}", _FIX,
            cause=f"executes {level} instructions {beyond} with no CPU check found",
            explanation=f"On a CPU without them the process dies with SIGILL ('illegal instruction') when that code "
                        f"runs: at import, or later. {'The claim tells installers otherwise.' if claim else ''}".strip())
