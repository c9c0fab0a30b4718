"""A wheel that ships a piece of the C library itself: glibc's libc, libm, libpthread, libdl, librt (and the rest
of its libraries) or musl's libc, or a dynamic loader. These must come from the system, whatever the tag: the
loader and libc are one ABI with the kernel interface and each other, a process holds one of each, and a copy
in a wheel is either never loaded (the system's, already in the process, wins by SONAME) or loaded beside the
system's, which breaks at once or later. No repair can fix it: the copy must go.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from wheelcheck.audit.check_context import CheckContext
from wheelcheck.audit.findings import Finding
from wheelcheck.elf.elf_info import is_dynamic_loader
from wheelcheck.symbols.sonames import unhashed

__all__ = ["check_libc_vendored", "is_libc_part"]

# glibc's own libraries, by SONAME (not libcrypt or libnsl, projects of their own now); musl's libc is its loader
_GLIBC = re.compile(r"lib(c|m|pthread|dl|rt|util|resolv|anl|BrokenLocale|mvec|thread_db)\.so\.\d+")
_MUSL = re.compile(r"(libc\.musl|ld-musl)-[a-z0-9_]+\.so\.1")


def is_libc_part(name: str) -> bool:
    """Is ``name`` (a SONAME or file name, a repair's hash in it or not) one of the C library's own?"""
    name = unhashed(name)
    return bool(_GLIBC.fullmatch(name) or _MUSL.fullmatch(name)) or is_dynamic_loader(name)


def check_libc_vendored(context: CheckContext) -> Iterator[Finding]:
    for elf in context.model.elves:
        named = elf.soname or elf.path.rsplit("/", 1)[-1]
        if not is_libc_part(named):
            continue
        yield Finding(
            "libc-vendored", "error", elf.path,
            f"is a copy of {unhashed(named)}, a part of the C library, which must come from the system",
            "remove it from the wheel (and the build step that copied it): the system's C library is the one every "
            "process loads; a wheel's tag says which glibc or musl it needs", subject=unhashed(named),
            cause=f"is a copy of {unhashed(named)}, a part of the C library")
