"""The zlib that reads wheels: zlib-ng's where it is installed, the standard library's otherwise.

zlib-ng (a dependency on x86_64 and aarch64 Linux, the platforms it has wheels for) inflates the same raw
deflate streams to the same bytes about twice as fast, and computes CRC-32 several times faster; on a large
wheel those two are a third of the audit. Its Python binding is CPython's zlib module built on zlib-ng: the
same functions, the same ``decompressobj`` (``copy``, ``unconsumed_tail``, ``eof``), the GIL released while
it inflates. Only reading uses it: what repair writes is deflated by the standard library's zlib, so the
bytes of a repaired wheel do not depend on which is installed.
"""

from __future__ import annotations

import zlib as _stdlib_zlib
from types import ModuleType

__all__ = ["inflater", "crc32", "ERRORS", "BACKEND", "use"]

inflater: ModuleType
try:
    from zlib_ng import zlib_ng as inflater
except ImportError:  # another architecture, or a Python zlib-ng has no wheel for yet
    inflater = _stdlib_zlib

# what either raises on corrupt deflate data (a test may switch between them, see ``use``)
ERRORS: tuple[type[Exception], ...] = tuple({_stdlib_zlib.error, inflater.error})
BACKEND = "zlib-ng" if inflater is not _stdlib_zlib else "zlib"


def crc32(data: bytes, value: int = 0) -> int:
    return inflater.crc32(data, value)


def decompressobj():
    """A decompressor of raw deflate data, as zip members hold it (no zlib header, no trailer)."""
    return inflater.decompressobj(-15)


def use(backend: str) -> str:
    """Read with ``backend`` ("zlib" or "zlib-ng") from now on; returns the one used before. For the tests,
    which check that both read every wheel alike."""
    global inflater, BACKEND
    before = BACKEND
    if backend == "zlib":
        inflater = _stdlib_zlib
    else:
        from zlib_ng import zlib_ng

        inflater = zlib_ng
    BACKEND = backend
    return before
