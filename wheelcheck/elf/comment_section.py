"""The compilers that built an ELF file, from its .comment section ("GCC: (GNU) 13.3.1 20240522").

Section headers are optional in a loadable file (strip --strip-section-headers, some packers): then
there is no answer, never an error. Sizes come from the file, so every offset is checked against it.
"""

from __future__ import annotations

import struct

from wheelcheck.elf.elf_summary import is_elf

__all__ = ["compiler_comments"]

_MAX_COMMENT = 64 << 10  # a real .comment is a few hundred bytes
_SHT_NOBITS = 8


def compiler_comments(data: bytes) -> tuple[str, ...]:
    """The distinct strings of .comment, in order; () when there is none or the headers are unreadable."""
    if not is_elf(data) or len(data) < 64 or data[4] not in (1, 2) or data[5] not in (1, 2):
        return ()
    wide, endian = data[4] == 2, "<" if data[5] == 1 else ">"
    try:
        if wide:
            shoff, = struct.unpack_from(endian + "Q", data, 0x28)
            shentsize, shnum, shstrndx = struct.unpack_from(endian + "HHH", data, 0x3A)
            fmt = endian + "IIQQQQIIQQ"
        else:
            shoff, = struct.unpack_from(endian + "I", data, 0x20)
            shentsize, shnum, shstrndx = struct.unpack_from(endian + "HHH", data, 0x2E)
            fmt = endian + "IIIIIIIIII"
        if not shoff or shnum == 0 or shstrndx >= shnum or shentsize < struct.calcsize(fmt) \
                or shoff + shnum * shentsize > len(data):
            return ()
        headers = [struct.unpack_from(fmt, data, shoff + i * shentsize) for i in range(shnum)]
        names_at, names_size = headers[shstrndx][4], headers[shstrndx][5]
        for name, kind, _flags, _addr, offset, size, *_ in headers:
            if kind == _SHT_NOBITS or not 0 <= name < names_size or offset + size > len(data):
                continue
            start = names_at + name
            if data[start:start + 9] == b".comment\0":
                raw = data[offset:offset + min(size, _MAX_COMMENT)]
                texts = (s.decode("utf-8", "replace").strip() for s in raw.split(b"\0"))
                return tuple(dict.fromkeys(t for t in texts if t))
    except struct.error:
        return ()
    return ()
