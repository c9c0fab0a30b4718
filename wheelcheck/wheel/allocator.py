"""Make the C allocator give large buffers back to the system as soon as they are freed (glibc only).

The scan streams members in pieces of about a megabyte and briefly holds a few larger buffers (a kept prefix,
a part of a string table). glibc serves a freed large buffer's size from its heaps from then on (its mmap
threshold rises, up to 32 MB) and keeps one heap per thread, so the freed megabytes stay resident: on the
largest wheels that was a third of the peak. A fixed threshold above the piece size keeps the pieces cheap
(reused from the heap) and returns every larger buffer at once. Called by the command line, which owns its
process; a program using the Python API keeps its own allocator settings.
"""

from __future__ import annotations

import ctypes
import sys

__all__ = ["return_large_buffers"]

_M_MMAP_THRESHOLD = -3
_THRESHOLD = 2 << 20  # above the largest stream piece (1 MiB), below every buffer that must not linger


def return_large_buffers() -> bool:
    """Fix glibc's mmap threshold; False where that is not possible (another libc, no ctypes)."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        return bool(ctypes.CDLL(None).mallopt(_M_MMAP_THRESHOLD, _THRESHOLD))  # this process's own libc
    except (OSError, AttributeError):
        return False
