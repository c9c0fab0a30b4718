"""Find libraries outside the wheel in directories the user names (--lib-path): the one host read."""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

from wheelcheck.analysis.model import WheelModel
from wheelcheck.elf.model import ElfInfo
from wheelcheck.elf.summary import is_elf, summarize
from wheelcheck.errors import BadElfError

__all__ = ["find_external_libraries", "find_library"]


def find_library(soname: str, dirs: list[str], like: ElfInfo) -> tuple[Path, ElfInfo] | None:
    """The first ``dir/soname`` that is an ELF file of the same machine, class and byte order as ``like``."""
    for directory in dirs:
        candidate = Path(directory) / soname
        if not candidate.is_file():
            continue
        data = candidate.read_bytes()
        if not is_elf(data):
            continue
        try:
            info = summarize(data, str(candidate))
        except BadElfError:
            continue
        if (info.machine, info.elf_class, info.endianness) == (like.machine, like.elf_class, like.endianness):
            return candidate, info
    return None


def find_external_libraries(model: WheelModel, dirs: list[str]) -> dict[str, ElfInfo]:
    """soname -> summary for every library the wheel needs (transitively) that ``dirs`` hold."""
    if not model.elves:
        return {}
    arches = Counter((e.machine, e.elf_class, e.endianness) for e in model.elves)
    machine = arches.most_common(1)[0][0]
    like = next(e for e in model.elves if (e.machine, e.elf_class, e.endianness) == machine)
    inside = {e.path.rsplit("/", 1)[-1] for e in model.elves} | {e.soname for e in model.elves if e.soname}
    wanted = [n for e in model.elves for n in e.needed if n not in inside]
    found: dict[str, ElfInfo] = {}
    seen = set()
    dirs = [d for d in dirs if os.path.isdir(d)]
    while wanted:
        soname = wanted.pop()
        if soname in seen:
            continue
        seen.add(soname)
        hit = find_library(soname, dirs, like)
        if hit is not None:
            found[soname] = hit[1]
            wanted.extend(hit[1].needed)
    return found
