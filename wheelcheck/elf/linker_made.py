"""Names the linker makes in a file, for that file: not the author's interface."""

from __future__ import annotations

__all__ = ["LINKER_MADE"]

# Defined by the linker in every shared object of older toolchains; never a choice of the author.
LINKER_MADE = frozenset({"_init", "_fini", "_edata", "_end", "__bss_start", "_etext", "__end__", "_DYNAMIC",
                         "_GLOBAL_OFFSET_TABLE_", "__data_start", "data_start", "_IO_stdin_used"})
