"""repair --hide-symbols: hide or rename the symbols of the wheel's vendored libraries in the output.

Runs after the grafts are patched, on the files as they will be written: the plan comes from
analysis.hiding (pure), the edits from elf.symbol_edit (LIEF). Libraries already in ``<dist>.libs/``
are treated like the ones grafted now, so repairing an old auditwheel output hides its libraries too.
"""

from __future__ import annotations

import hashlib
import re
import tempfile
from dataclasses import replace
from pathlib import Path

from wheelcheck.repair.hide_plan import HidingPlan, plan_hiding
from wheelcheck.wheel.wheel_model import WheelModel
from wheelcheck.data import load_table
from wheelcheck.elf.rodata_strings import identifier_strings
from wheelcheck.elf.elf_summary import summarize_hashed
from wheelcheck.elf.symbol_edit import SymbolEditError, apply_symbol_edit
from wheelcheck.errors import RepairError
from wheelcheck.repair.graft_apply import Applied
from wheelcheck.wheel.wheel_reader import WheelReader
from wheelcheck.wheel.wheel_rebuild import NewMember

__all__ = ["hide_symbols", "prefix_for", "RENAMED"]

_HASHED = re.compile(r"-([0-9a-f]{8})(?=\.so)")
RENAMED = re.compile(r"^wc[0-9a-f]{8}_")  # what prefix_for makes: a name an earlier repair made unique
_PY_STRING = re.compile(rb"""["']([A-Za-z_][A-Za-z0-9_]{2,200})["']""")


def prefix_for(member: str, data: bytes) -> str:
    """A rename prefix unique to this copy: the content hash auditwheel put in the name, else the file's own.

    Taken from the name when there is one, so that repairing the output again finds the same prefix and
    leaves the names alone (idempotence).
    """
    found = _HASHED.search(member.rsplit("/", 1)[-1])
    digest = found.group(1) if found else hashlib.sha256(data).hexdigest()[:8]
    return f"wc{digest}_"


def hide_symbols(model: WheelModel, applied: Applied, reader: WheelReader, *, keep_patterns: tuple[str, ...] = (),
                 extensions: bool = False, lib_sdir: str = ".libs") -> tuple[WheelModel, HidingPlan]:
    """Edit the output's ELF files in ``applied``; return the model of the result and what was done."""
    data = {e.path: applied.elves.get(e.path) or reader.read(e.path) for e in model.elves}
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
                raise RepairError(member, f"cannot hide its symbols ({exc})") from None
            changed[member] = scratch.read_bytes()
    for member, blob in changed.items():
        applied.elves[member] = blob
        if member in applied.add:
            applied.add[member] = NewMember(blob, applied.add[member].mode)
        else:
            applied.replace[member] = blob
    elves = tuple(summarize_hashed(changed[e.path], e.path) if e.path in changed else e for e in model.elves)
    return replace(model, elves=elves), plan


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
