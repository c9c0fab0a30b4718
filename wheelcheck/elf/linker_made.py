"""Names the linker makes in a file, for that file: not the author's interface, and never one object shared.

Older toolchains export the bounds of a shared object's segments (``_end``, ``_edata``, ``__bss_start``) and its
``_init``/``_fini``; every library with a section named like a C identifier exports that section's bounds
(``__start_<sec>``, ``__stop_<sec>``: section_bounds.py). Each names something of its own file: two files'
copies are two things, and when the loader binds one file's use to another's copy, that is a bug, not a
sharing to keep.
"""

from __future__ import annotations

from wheelcheck.elf.section_bounds import BOUND_PREFIXES

__all__ = ["LINKER_MADE", "names_own_file"]

# Defined by the linker in every shared object of older toolchains; never a choice of the author.
LINKER_MADE = frozenset({"_init", "_fini", "_edata", "_end", "__bss_start", "_etext", "__end__", "_DYNAMIC",
                         "_GLOBAL_OFFSET_TABLE_", "__data_start", "data_start", "_IO_stdin_used"})


def names_own_file(name: str) -> bool:
    """Does ``name`` stand for a part of the file that defines it (a linker-made marker or section bound)?"""
    return name in LINKER_MADE or name.startswith(BOUND_PREFIXES)
