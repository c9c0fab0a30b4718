"""repair --hide-symbols: hide or rename the symbols of the wheel's vendored libraries in the output.

Runs after the grafts are patched, on the files as they will be written: the plan comes from
repair.hide_plan (pure), the edits from elf.symbol_edit (LIEF). Libraries already in ``<dist>.libs/``
are treated like the ones grafted now, so repairing an old auditwheel output hides its libraries too.
Every ELF file is read from a file in a work directory (the patched ones are there already; the others are
extracted there in pieces), so memory does not grow with the libraries.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import struct
import tempfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path

from wheelcheck.data import load_table
from wheelcheck.elf.rodata_strings import identifier_strings_of_file
from wheelcheck.elf.symbol_edit import apply_symbol_edit
from wheelcheck.errors import ElfFormatError, RepairError, SymbolEditError
from wheelcheck.repair.graft_apply import summarize_contents
from wheelcheck.repair.hide_check import check_hiding
from wheelcheck.repair.hide_plan import HidingPlan, plan_hiding
from wheelcheck.symbols.sonames import last_hash
from wheelcheck.wheel.wheel_model import WheelModel
from wheelcheck.wheel.record import file_sha256
from wheelcheck.wheel.wheel_reader import WheelReader
from wheelcheck.wheel.wheel_rebuild import Changes, Contents

__all__ = ["Hidden", "hide_symbols", "prefix_for", "quoted_identifiers", "RENAMED"]

RENAMED = re.compile(r"^wc[0-9a-f]{8}_")  # what prefix_for makes: a name an earlier repair made unique
_PY_STRING = re.compile(rb"""["']([A-Za-z_][A-Za-z0-9_]{2,200})["']""")
_PY_STRING_LONGEST = 203  # a match of _PY_STRING: two quotes around at most 201 identifier characters


def prefix_for(member: str, data: bytes | Path) -> str:
    """A rename prefix unique to this copy: the content hash auditwheel put in the name, else the file's own.

    Taken from the name when there is one, so that repairing the output again finds the same prefix and
    leaves the names alone (idempotence).
    """
    digest = last_hash(member.rsplit("/", 1)[-1]) or _sha256(data)[:8]
    return f"wc{digest}_"


def _sha256(data: bytes | Path) -> str:
    return file_sha256(data) if isinstance(data, Path) else hashlib.sha256(data).hexdigest()


@dataclass(frozen=True)
class Hidden:
    """What hiding did: the edited files' new contents, the model of the wheel with them, and the plan."""

    changed: Mapping[str, Contents]  # output path -> the file with symbols hidden or renamed (bytes without workdir)
    model: WheelModel  # the wheel as it will be written, those files summarised again
    plan: HidingPlan


def hide_symbols(model: WheelModel, changes: Changes, reader: WheelReader, *, workdir: str | os.PathLike | None = None,
                 keep_patterns: tuple[str, ...] = (), extensions: bool = False, lib_sdir: str = ".libs") -> Hidden:
    """Plan and make the symbol edits of the output's ELF files (``model``: the output as ``changes`` make it).

    Neither argument is changed: the caller applies ``Hidden.changed`` on top of ``changes``. The edited
    files are left in ``workdir`` (and ``Hidden.changed`` names them); without one, they are made in a
    temporary directory and returned as bytes.
    """
    if workdir is None:
        with tempfile.TemporaryDirectory(prefix="wheelcheck-hide-") as tmp:
            hidden = hide_symbols(model, changes, reader, workdir=tmp, keep_patterns=keep_patterns,
                                  extensions=extensions, lib_sdir=lib_sdir)
            return replace(hidden, changed={m: f.read_bytes() if isinstance(f, Path) else f for m, f in hidden.changed.items()})
    work = Path(workdir)
    files = {elf.path: _as_file(changes.data(elf.path), reader, elf.path, work / f"hide-input-{i}.so")
             for i, elf in enumerate(model.elves)}
    targets = [path for path in files if _in_libs_dir(path, lib_sdir)]
    strings = frozenset().union(*(_identifiers(path, file) for path, file in files.items()), _python_strings(reader))
    prefixes = {path: prefix_for(path, files[path]) for path in targets}
    keep = {**default_keep(), **{glob: f"matches --keep-symbols {glob}" for glob in keep_patterns}}
    plan = plan_hiding(model.elves, targets, prefixes, keep_patterns=keep, strings=strings,
                       extension_targets=[e.path for e in model.elves if e.is_extension] if extensions else (),
                       already_unique=RENAMED)
    changed: dict[str, Path] = {}
    for member, edit in plan.edits.items():
        if not edit:
            continue
        scratch = work / f"hidden-{len(changed)}.so"
        shutil.copyfile(files[member], scratch)
        try:
            apply_symbol_edit(scratch, edit)
        except SymbolEditError as exc:
            raise RepairError(member, f"cannot hide its symbols ({exc.problem})") from None
        changed[member] = scratch
    elves = tuple(summarize_contents(changed[e.path], e.path) if e.path in changed else e for e in model.elves)
    check_hiding(model.elves, plan.edits, [e for e in elves if e.path in changed])  # the files as made, this time
    return Hidden(changed, replace(model, elves=elves), plan)


def _as_file(contents: Contents | None, reader: WheelReader, member: str, spare: Path) -> Path:
    """The ELF file ``member`` as a file: its work file, or its bytes (new or the input's) written to ``spare``."""
    if isinstance(contents, Path):
        return contents
    try:
        if contents is None:
            reader.extract(member, spare)
        else:
            spare.write_bytes(contents)
    except OSError as exc:
        raise RepairError(member, f"cannot write its work copy ({exc.strerror or exc})") from None
    return spare


def _identifiers(member: str, file: Path) -> frozenset[str]:
    try:
        return identifier_strings_of_file(file)
    except ElfFormatError as exc:
        raise RepairError(member, f"cannot read its strings ({exc.problem})") from None
    except (OSError, struct.error) as exc:
        raise RepairError(member, f"cannot read its strings ({exc})") from None


def default_keep() -> dict[str, str]:
    """glob -> why: names other packages look up with dlsym (data/keep_symbols.json)."""
    table = load_table("keep_symbols.json")["globs"]
    return {glob: f"kept by default: {who} looks it up with dlsym" for who, globs in table.items() for glob in globs}


def _in_libs_dir(member: str, lib_sdir: str) -> bool:
    top, _, rest = member.partition("/")
    return top.endswith(lib_sdir) and bool(rest)


def _python_strings(reader: WheelReader) -> frozenset[str]:
    """Identifier strings of the wheel's Python files: ctypes lookups (threadpoolctl-style) name symbols there.
    Each file streams in the reader's pieces: a wheel may hold a .py of gigabytes that deflate to a few."""
    found: set[str] = set()
    for entry in reader.entries:
        if entry.filename.endswith(".py"):
            found.update(quoted_identifiers(reader.pieces(entry.filename)))
    return frozenset(found)


def quoted_identifiers(pieces: Iterable[bytes]) -> set[str]:
    """What _PY_STRING finds in the text the pieces make, as one scan of the whole text would find it, holding a
    piece and at most the last _PY_STRING_LONGEST - 1 bytes before it: a match cut by a piece's end starts in
    them, and the next scan starts after the last match (so a closing quote never opens a second string)."""
    found: set[str] = set()
    carried = b""
    for piece in pieces:
        window = carried + piece
        resume = 0
        for match in _PY_STRING.finditer(window):
            found.add(match.group(1).decode("ascii"))
            resume = match.end()
        carried = window[max(resume, len(window) - (_PY_STRING_LONGEST - 1)):]
    return found
