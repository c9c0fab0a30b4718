"""Hand-built models for unit tests that need no compiler: ELF summaries and wheels written in Python.

An ``ElfInfo`` here says what a real file would: its NEEDED entries, the versions it needs and the dynamic
symbols it defines and references, in the column form the reader produces (``SymbolTable``). The analyses
cannot tell the difference, so the verdict and the conflict rules can be tested case by case, and the
expectations come from the policy files and the documented rules, not from running the code.
"""
from __future__ import annotations

import json
from array import array
from pathlib import Path

from packaging.tags import parse_tag

from wheelcheck.elf.elf_info import ElfInfo, SymbolTable, VersionNeed
from wheelcheck.wheel.wheel_model import WheelModel

ROOT = Path(__file__).resolve().parents[1]

FUNC, OBJECT = 2, 1
GLOBAL, WEAK, GNU_UNIQUE = 1, 2, 10
MACHINES = {"x86_64": ("EM_X86_64", 64, "little"), "aarch64": ("EM_AARCH64", 64, "little"),
            "i686": ("EM_386", 32, "little"), "s390x": ("EM_S390", 64, "big")}


def symtab(defines: dict[str, tuple[int, int, str | None]] = {},
           needs: dict[str, tuple[str, str] | None] = {}) -> SymbolTable:
    """Columns of a .dynsym: ``defines`` name -> (binding, type, version defined or None); ``needs`` name ->
    (version, library) or None for an unversioned reference."""
    version_names: list[tuple[str | None, str | None]] = [(None, None)]
    rows = []
    for name, (bind, kind, version) in defines.items():
        rows.append((name, bind << 4 | kind, 1, version and (version, None)))
    for name, versioned in needs.items():
        rows.append((name, GLOBAL << 4 | FUNC, 0, versioned))
    index = array("H")
    for *_, entry in rows:
        if entry is None:
            index.append(0)
            continue
        if entry not in version_names:
            version_names.append(entry)
        index.append(version_names.index(entry))
    return SymbolTable(names=tuple(r[0] for r in rows), info=bytes(r[1] for r in rows), other=bytes(len(rows)),
                       defined=bytes(r[2] for r in rows), sizes=array("Q", [8] * len(rows)), version_index=index,
                       version_names=tuple(version_names))


def elf(path: str, *, arch: str = "x86_64", needed: tuple[str, ...] = ("libc.so.6",), soname: str | None = None,
        defines: dict[str, tuple[int, int, str | None]] | None = None,
        needs: dict[str, tuple[str, str] | None] | None = None, rpath: tuple[str, ...] = (),
        size: int = 16_384, exec_stack: bool = False, interpreter: str | None = None,
        elf_type: str = "ET_DYN") -> ElfInfo:
    """One ELF file as the reader would summarise it; its version needs follow from ``needs``."""
    machine, bits, endianness = MACHINES[arch]
    needs = needs or {}
    by_version: dict[tuple[str, str], list[str]] = {}
    for name, versioned in needs.items():
        if versioned is not None:
            by_version.setdefault(versioned, []).append(name)
    version_needs = tuple(VersionNeed(library, version, False, tuple(sorted(names)), ())
                          for (version, library), names in sorted(by_version.items()))
    return ElfInfo(path=path, size=size, elf_class=bits, endianness=endianness, machine=machine,
                   osabi="ELFOSABI_SYSV", elf_type=elf_type, arch=arch, arch_problem=None, interpreter=interpreter,
                   soname=soname, needed=needed, rpath=rpath, version_needs=version_needs,
                   symtab=symtab(defines or {}, needs), gnu_stack=True, exec_stack=exec_stack, has_dynamic=True)


def extension(module: str, package: str = "pkg", **kwargs) -> ElfInfo:
    """A CPython 3.11 extension module ``package/module``: it defines PyInit_<module>."""
    defines = {f"PyInit_{module}": (GLOBAL, FUNC, None), **kwargs.pop("defines", {})}
    return elf(f"{package}/{module}.cpython-311-x86_64-linux-gnu.so", defines=defines, **kwargs)


def wheel(*elves: ElfInfo, tag: str = "cp311-cp311-linux_x86_64", name: str = "pkg", version: str = "1.0",
          members: tuple[str, ...] = ()) -> WheelModel:
    """The model of a wheel holding ``elves`` (and ``members``, other files), tagged ``tag``."""
    filename = f"{name}-{version}-{tag}.whl"
    return WheelModel(filename=filename, name=name, version=version, tags=frozenset(parse_tag(tag)), elves=elves,
                      members=tuple(e.path for e in elves) + members, data_dir=f"{name}-{version}.data")


def policy_documents() -> list[dict]:
    """The bundled policy files as JSON, most compatible first: where the tests take their expectations."""
    docs = [json.loads(p.read_text()) for p in (ROOT / "policies").glob("*linux_*.json")]
    return sorted(docs, key=lambda d: -d["priority"])
