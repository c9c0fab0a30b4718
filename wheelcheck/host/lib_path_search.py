"""Find libraries outside the wheel in directories the user names (--lib-path): the one host read of audit."""

from __future__ import annotations

import os
import posixpath
from dataclasses import replace

from wheelcheck.wheel.wheel_model import WheelModel
from wheelcheck.elf.elf_info import ElfInfo
from wheelcheck.host.host_library_search import examine_library, typical_elf

__all__ = ["find_external_libraries"]


def find_external_libraries(model: WheelModel, dirs: list[str]) -> dict[str, ElfInfo]:
    """soname -> summary for every library the wheel needs (transitively) that ``dirs`` hold: the first
    ``dir/soname`` that is an ELF file of the wheel's machine, class and byte order. A summary's path is the
    file the name links to (libsnappy.so.1.1.9 for libsnappy.so.1), as auditwheel names it."""
    if not model.elves:
        return {}
    like = typical_elf(list(model.elves))
    inside = {e.path.rsplit("/", 1)[-1] for e in model.elves} | {e.soname for e in model.elves if e.soname}
    wanted = [n for e in model.elves for n in e.needed if n not in inside]
    found: dict[str, ElfInfo] = {}
    seen = set()
    dirs = [os.path.abspath(d) for d in dirs if os.path.isdir(d)]
    while wanted:
        soname = wanted.pop()
        if soname in seen:
            continue
        seen.add(soname)
        hit = next(filter(None, (examine_library(posixpath.join(d, soname), soname, like) for d in dirs)), None)
        if hit is not None:
            found[soname] = replace(hit.info, path=_link_target(hit.path))
            wanted.extend(hit.info.needed)
    return found


def _link_target(path: str) -> str:
    """``path`` with its last component's symbolic links followed, the directories left as named (auditwheel's
    lddtree.readlink: /lib/x86_64-linux-gnu/libsnappy.so.1.1.9, not /usr/lib/..., where /lib links to usr/lib)."""
    for _ in range(40):  # the kernel's limit on a chain of links; a loop ends here
        if not os.path.islink(path):
            break
        path = posixpath.normpath(posixpath.join(posixpath.dirname(path), os.readlink(path)))
    return path
