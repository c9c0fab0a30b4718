"""CPython's Stable ABI (abi3) as data: which C-API names it holds and the version that added each.

The table is CPython's own manifest (Misc/stable_abi.toml), kept as wheelcheck/data/stable_abi.json by
tools/gen_stable_abi.py.
"""

from __future__ import annotations

import functools
from typing import NamedTuple

from wheelcheck.data import load_table

__all__ = ["StableSymbol", "stable_symbol", "is_c_api_name", "parse_version", "format_version"]

# names the C API owns: the public Py*/PY* and the private _Py* (a module's own PyInit_* is its entry point)
_C_API_PREFIXES = ("Py", "_Py", "PY")


class StableSymbol(NamedTuple):
    name: str
    added: tuple[int, int]  # the CPython version whose Stable ABI first holds it
    kind: str  # function or data
    abi_only: bool  # kept for binaries built against older headers; not in the Limited API


def is_c_api_name(name: str) -> bool:
    """Does ``name`` belong to CPython's C API (and so bind to the interpreter)? PyInit_* is the module's own."""
    return name.startswith(_C_API_PREFIXES) and not name.startswith("PyInit_")


def stable_symbol(name: str) -> StableSymbol | None:
    """The Stable ABI entry for ``name``; None when the Stable ABI does not hold it."""
    return _table().get(name)


def parse_version(text: str) -> tuple[int, int]:
    major, _, minor = text.partition(".")
    return int(major), int(minor or 0)


def format_version(version: tuple[int, int]) -> str:
    return f"{version[0]}.{version[1]}"


@functools.lru_cache(maxsize=1)
def _table() -> dict[str, StableSymbol]:
    symbols = load_table("stable_abi.json")["symbols"]
    return {name: StableSymbol(name, parse_version(entry[0]), entry[1], "abi_only" in entry[2:])
            for name, entry in symbols.items()}
