"""repair --hide-symbols: hide or rename the symbols of the wheel's vendored libraries in the output.

Runs after the grafts are patched, on the files as they will be written: the plan comes from
repair.hide_plan (pure), the edits from elf.symbol_edit (LIEF). Libraries already in ``<dist>.libs/``
are treated like the ones grafted now, so repairing an old auditwheel output hides its libraries too.
"""

from __future__ import annotations

import hashlib
import re
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path

from wheelcheck.repair.hide_plan import HidingPlan, plan_hiding
from wheelcheck.wheel.wheel_model import WheelModel
from wheelcheck.data import load_table
from wheelcheck.elf.rodata_strings import identifier_strings
from wheelcheck.elf.elf_summary import summarize_hashed
from wheelcheck.elf.symbol_edit import apply_symbol_edit
from wheelcheck.errors import RepairError, SymbolEditError
from wheelcheck.symbols.sonames import last_hash
from wheelcheck.wheel.wheel_reader import WheelReader
from wheelcheck.wheel.wheel_rebuild import Changes

__all__ = ["Hidden", "hide_symbols", "prefix_for", "RENAMED"]

RENAMED = re.compile(r"^wc[0-9a-f]{8}_")  # what prefix_for makes: a name an earlier repair made unique
_PY_STRING = re.compile(rb"""["']([A-Za-z_][A-Za-z0-9_]{2,200})["']""")


def prefix_for(member: str, data: bytes) -> str:
    """A rename prefix unique to this copy: the content hash auditwheel put in the name, else the file's own.

    Taken from the name when there is one, so that repairing the output again finds the same prefix and
    leaves the names alone (idempotence).
    """
    digest = last_hash(member.rsplit("/", 1)[-1]) or hashlib.sha256(data).hexdigest()[:8]
    return f"wc{digest}_"


@dataclass(frozen=True)
class Hidden:
    """What hiding did: the edited files' new bytes, the model of the wheel with them, and the plan."""

    changed: Mapping[str, bytes]  # output path -> bytes with symbols hidden or renamed
    model: WheelModel  # the wheel as it will be written, those files summarised again
    plan: HidingPlan


def hide_symbols(model: WheelModel, changes: Changes, reader: WheelReader, *, keep_patterns: tuple[str, ...] = (),
                 extensions: bool = False, lib_sdir: str = ".libs") -> Hidden:
    """Plan and make the symbol edits of the output's ELF files (``model``: the output as ``changes`` make it).

    Neither argument is changed: the caller applies ``Hidden.changed`` on top of ``changes``.
    """
    data = {e.path: changes.data(e.path) or reader.read(e.path) for e in model.elves}
    targets = [path for path in data if _in_libs_dir(path, lib_sdir)]
    strings = frozenset().union(*(identifier_strings(blob) for blob in data.values()), _python_strings(reader))
    prefixes = {path: prefix_for(path, data[path]) for path in targets}
    keep = {**default_keep(), **{glob: f"matches --keep-symbols {glob}" for glob in keep_patterns}}
    plan = plan_hiding(model.elves, targets, prefixes, keep_patterns=keep, strings=strings,
                       extension_targets=[e.path for e in model.elves if e.is_extension] if extensions else (),
                       already_unique=RENAMED)
    changed = {}
    with tempfile.TemporaryDirectory(prefix="wheelcheck-hide-") as tmp:
        for member, edit in plan.edits.items():
            if not edit:
                continue
            scratch = Path(tmp) / f"{len(changed)}.so"
            scratch.write_bytes(data[member])
            try:
                apply_symbol_edit(scratch, edit)
            except SymbolEditError as exc:
                raise RepairError(member, f"cannot hide its symbols ({exc.problem})") from None
            changed[member] = scratch.read_bytes()
    elves = tuple(summarize_hashed(changed[e.path], e.path) if e.path in changed else e for e in model.elves)
    return Hidden(changed, replace(model, elves=elves), plan)


def default_keep() -> dict[str, str]:
    """glob -> why: names other packages look up with dlsym (data/keep_symbols.json)."""
    table = load_table("keep_symbols.json")["globs"]
    return {glob: f"kept by default: {who} looks it up with dlsym" for who, globs in table.items() for glob in globs}


def _in_libs_dir(member: str, lib_sdir: str) -> bool:
    top, _, rest = member.partition("/")
    return top.endswith(lib_sdir) and bool(rest)


def _python_strings(reader: WheelReader) -> frozenset[str]:
    """Identifier strings of the wheel's Python files: ctypes lookups (threadpoolctl-style) name symbols there."""
    found: set[str] = set()
    for entry in reader.entries:
        if entry.filename.endswith(".py"):
            found.update(m.decode("ascii") for m in _PY_STRING.findall(reader.read(entry.filename)))
    return frozenset(found)
