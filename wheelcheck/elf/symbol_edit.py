"""Edit the dynamic symbols of an ELF file: hide definitions, rename definitions and references.

The edit is done with LIEF. Hiding must set local binding *and* hidden visibility (glibc's lazy
PLT path looks only at visibility; older glibc's eager lookup only at binding), and lld refuses a
.dynsym whose local symbols do not all precede the global ones (sh_info): LIEF re-sorts the table,
remaps every relocation and version entry, and rebuilds the hash tables. An in-place byte edit can do
none of that, and patchelf (>= 0.18) renames but cannot change binding or visibility.

LIEF is optional (``pip install 'wheelcheck[hide]'``): the index has LIEF wheels for few of the platforms the
manylinux and musllinux images cover, and nothing but ``repair --hide-symbols`` needs it.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from wheelcheck.errors import SymbolEditError

__all__ = ["SymbolEdit", "apply_symbol_edit", "SymbolEditError", "LIEF_MISSING", "lief_available"]

LIEF_MISSING = "needs LIEF, which is not installed: pip install 'wheelcheck[hide]'"


def lief_available() -> bool:
    """Can symbols be hidden here? (LIEF comes with the ``hide`` extra.)"""
    return importlib.util.find_spec("lief") is not None


@dataclass(frozen=True)
class SymbolEdit:
    """What to change in one file's .dynsym. Names absent from the file are ignored."""

    hide: frozenset[str] = frozenset()  # defined exports to make STB_LOCAL + STV_HIDDEN
    rename: Mapping[str, str] = field(default_factory=dict)  # old -> new, for definitions and references

    def __bool__(self) -> bool:
        return bool(self.hide or self.rename)


def apply_symbol_edit(path: Path, edit: SymbolEdit) -> dict[str, int]:
    """Rewrite ``path`` in place; returns how many symbols were hidden and renamed."""
    try:
        import lief  # noqa: PLC0415 - heavy, optional, and only repair --hide-symbols needs it
    except ImportError:
        raise SymbolEditError(str(path), f"hiding symbols {LIEF_MISSING}") from None

    lief.logging.disable()  # its warnings go to stderr; library code must not print
    binary = lief.ELF.parse(str(path))
    if binary is None:
        raise SymbolEditError(str(path), "LIEF cannot parse this ELF file")
    hidden = renamed = 0
    local = lief.ELF.Symbol.BINDING.LOCAL
    hidden_vis = lief.ELF.Symbol.VISIBILITY.HIDDEN
    for symbol in binary.dynamic_symbols:
        name = str(symbol.name)  # LIEF's stubs say str | bytes; dynamic symbol names come back as str
        if name in edit.rename:
            symbol.name = edit.rename[name]
            renamed += 1
        elif name in edit.hide and symbol.shndx != 0:
            symbol.binding = local
            symbol.visibility = hidden_vis
            hidden += 1
    binary.write(str(path))
    return {"hidden": hidden, "renamed": renamed}
