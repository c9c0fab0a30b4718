"""Reading ELF summaries; editing ELF files is the only other job of this package."""

from wheelcheck.elf.elf_info import ElfInfo, Symbol, VersionNeed
from wheelcheck.elf.elf_summary import is_elf, summarize

__all__ = ["ElfInfo", "Symbol", "VersionNeed", "is_elf", "summarize"]
