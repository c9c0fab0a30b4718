"""The immutable, picklable summary of one ELF file: everything the analyses may look at."""

from __future__ import annotations

from array import array
from dataclasses import dataclass, field
from functools import cached_property
from itertools import compress
from typing import NamedTuple
from collections.abc import Iterable

from wheelcheck.elf.fatbin_scan import GpuCode
from wheelcheck.elf.isa_scan import IsaScan

__all__ = ["ElfInfo", "Symbol", "SymbolTable", "VersionNeed", "EXPORT_BINDS", "EXPORT_VISIBILITIES", "mask_and",
           "libc_of_elf", "libc_linked"]

EXPORT_BINDS = frozenset({"GLOBAL", "WEAK", "GNU_UNIQUE"})
EXPORT_VISIBILITIES = frozenset({"DEFAULT", "PROTECTED"})


class Symbol(NamedTuple):
    """One dynamic symbol (an entry of .dynsym, found through DT_SYMTAB)."""

    name: str
    defined: bool
    bind: str  # LOCAL, GLOBAL, WEAK, GNU_UNIQUE
    type: str  # NOTYPE, OBJECT, FUNC, TLS, GNU_IFUNC, ...
    visibility: str  # DEFAULT, PROTECTED, HIDDEN, INTERNAL
    version: str | None  # the version name (GLIBC_2.17), None when unversioned
    library: str | None  # for an undefined versioned symbol: the file the version is needed from
    size: int

    @property
    def is_export(self) -> bool:
        return self.defined and self.bind in EXPORT_BINDS and self.visibility in EXPORT_VISIBILITIES

    @property
    def is_import(self) -> bool:
        return not self.defined and self.bind != "LOCAL"


class VersionNeed(NamedTuple):
    """A version this file needs from a library, and the symbols that need it."""

    library: str  # the vn_file, e.g. libc.so.6
    version: str  # GLIBC_2.29
    weak: bool  # VER_FLG_WEAK on the vernaux entry
    symbols: tuple[str, ...]  # undefined symbols bound to this version, sorted
    weak_symbols: tuple[str, ...]  # the subset referenced with STB_WEAK


_BINDS = {0: "LOCAL", 1: "GLOBAL", 2: "WEAK", 10: "GNU_UNIQUE"}
_TYPES = {0: "NOTYPE", 1: "OBJECT", 2: "FUNC", 3: "SECTION", 4: "FILE", 5: "COMMON", 6: "TLS", 10: "GNU_IFUNC"}
_VISIBILITIES = ("DEFAULT", "INTERNAL", "HIDDEN", "PROTECTED")
_EXPORT_BIND_CODES = frozenset({1, 2, 10})
_ONE_IF_SET = bytes([0]) + bytes([1]) * 255
_EXPORT_BIND = bytes(1 if b >> 4 in _EXPORT_BIND_CODES else 0 for b in range(256))
_EXPORT_VISIBILITY = bytes(1 if b & 3 in (0, 3) else 0 for b in range(256))  # DEFAULT, PROTECTED
_UNIQUE_BIND = bytes(1 if b >> 4 == 10 else 0 for b in range(256))  # STB_GNU_UNIQUE
_VAGUE_BIND = bytes(1 if b >> 4 in (2, 10) else 0 for b in range(256))  # STB_WEAK or STB_GNU_UNIQUE
_UNDEFINED = bytes([1]) + bytes(255)  # the defined column (0/1) -> 1 where undefined
_NOT_WEAK = bytes(0 if b >> 4 == 2 else 1 for b in range(256))  # st_info -> 0 for STB_WEAK


def mask_and(a: bytes, b: bytes) -> bytes:
    """The AND of two equal-length 0/1 byte strings, as one big-integer operation."""
    return (int.from_bytes(a, "little") & int.from_bytes(b, "little")).to_bytes(len(a), "little")


@dataclass(frozen=True)
class SymbolTable:
    """The dynamic symbols in columns: cheap to build, to pickle across processes and to keep.

    Symbol objects are made only when an analysis asks for them; a 400,000-symbol library
    crosses a process boundary as a few arrays instead of 400,000 objects.
    """

    names: tuple[str, ...] = ()
    info: bytes = b""  # st_info: bind << 4 | type
    other: bytes = b""  # st_other: the low two bits are the visibility
    defined: bytes = b""  # 1 where st_shndx != SHN_UNDEF
    sizes: array = field(default_factory=lambda: array("Q"))
    version_index: array = field(default_factory=lambda: array("H"))  # into version_names, 0 = none
    version_names: tuple[tuple[str | None, str | None], ...] = ((None, None),)  # (version, library)

    def __len__(self) -> int:
        return len(self.names)

    def is_export(self, i: int) -> bool:
        return bool(self.defined[i]) and (self.info[i] >> 4) in _EXPORT_BIND_CODES and (self.other[i] & 3) in (0, 3)

    def export_indices(self) -> list[int]:
        """Indices of exported symbols (defined; global, weak or unique; default or protected), from the columns."""
        binds, defined, other = _EXPORT_BIND_CODES, self.defined, self.other
        return [i for i, inf in enumerate(self.info) if defined[i] and inf >> 4 in binds and other[i] & 3 in (0, 3)]

    def export_mask(self) -> bytes:
        """1 per exported symbol (see ``export_indices``), 0 per other: a column to ``compress`` others with."""
        mask = mask_and(self.defined.translate(_ONE_IF_SET), self.other.translate(_EXPORT_VISIBILITY))
        return mask_and(mask, self.info.translate(_EXPORT_BIND))

    def export_names(self) -> list[str]:
        """Names of the exported symbols, in table order (see ``export_indices``), cut out at C speed."""
        return list(compress(self.names, self.export_mask())) if self.names else []

    def unique_export_names(self) -> list[str]:
        """Names of the exported STB_GNU_UNIQUE symbols, in table order."""
        return list(compress(self.names, mask_and(self.export_mask(), self.info.translate(_UNIQUE_BIND)))) \
            if self.names else []

    def weak_export_names(self) -> list[str]:
        """Names of the exported STB_WEAK and STB_GNU_UNIQUE symbols (C++ vague linkage), in table order."""
        return list(compress(self.names, mask_and(self.export_mask(), self.info.translate(_VAGUE_BIND)))) \
            if self.names else []

    def export_versions(self) -> dict[str, frozenset[str | None]]:
        """Exported name -> the versions it is defined in (None: unversioned, or the file's base version)."""
        out: dict[str, set[str | None]] = {}
        for i in self.export_indices():
            out.setdefault(self.names[i], set()).add(self.version_names[self.version_index[i]][0])
        return {name: frozenset(versions) for name, versions in out.items()}

    def undefined_mask(self) -> bytes:
        """1 per undefined symbol, 0 per defined one: a column to ``compress`` others with."""
        return self.defined.translate(_UNDEFINED)

    def strong_undefined_mask(self) -> bytes:
        """1 per undefined symbol that is not an STB_WEAK reference, 0 per other."""
        return mask_and(self.undefined_mask(), self.info.translate(_NOT_WEAK))

    def undefined_names(self, *, strong_only: bool = False) -> frozenset[str]:
        """Names of undefined symbols (strong_only: leave out STB_WEAK references)."""
        return frozenset(compress(self.names, self.strong_undefined_mask() if strong_only else self.undefined_mask()))

    def position(self, name: str) -> int | None:
        """Index of the first symbol called ``name`` (a C-speed scan; no index is kept)."""
        try:
            return self.names.index(name)
        except ValueError:
            return None

    def type_of(self, i: int) -> str:
        return _TYPES.get(self.info[i] & 0xF, f"TYPE_{self.info[i] & 0xF}")

    def type_of_name(self, name: str) -> str | None:
        """The type of the first symbol called ``name``; None when there is none."""
        i = self.position(name)
        return None if i is None else self.type_of(i)

    def build(self) -> tuple[Symbol, ...]:
        out = []
        versions = self.version_names
        for name, info, other, defined, size, vi in zip(
                self.names, self.info, self.other, self.defined, self.sizes, self.version_index):
            version, library = versions[vi]
            out.append(Symbol(name, bool(defined), _BINDS.get(info >> 4, f"BIND_{info >> 4}"),
                              _TYPES.get(info & 0xF, f"TYPE_{info & 0xF}"), _VISIBILITIES[other & 3],
                              version, None if defined else library, size))
        return tuple(out)

    def defined_function(self, names: Iterable[str]) -> str | None:
        """The first of ``names`` that this table defines as a function."""
        wanted = tuple(names)
        present = set(wanted).intersection(self.names)  # one pass: a large library has none of them
        for name in filter(present.__contains__, wanted):
            i = self.position(name)
            if i is not None and self.defined[i] and self.type_of(i) == "FUNC":
                return name
        return None


@dataclass(frozen=True)
class ElfInfo:
    """Summary of one ELF member. Parsed once; analyses never reread bytes."""

    path: str
    size: int
    elf_class: int  # 32 or 64
    endianness: str  # little or big
    machine: str  # e_machine name, e.g. EM_X86_64
    osabi: str
    elf_type: str  # ET_DYN, ET_EXEC, ET_REL ...
    arch: str | None  # wheel arch name (x86_64, aarch64, ...) or None when not a supported platform
    arch_problem: str | None  # why arch is None (unknown machine, soft-float ARM, ...)
    interpreter: str | None = None
    soname: str | None = None
    needed: tuple[str, ...] = ()
    rpath: tuple[str, ...] = ()
    runpath: tuple[str, ...] = ()
    # (RPATH or RUNPATH, its value) for each value with an empty entry (a ":" at either end, or "::"): glibc
    # searches the working directory there; rpath and runpath above hold the non-empty entries only
    empty_search_entries: tuple[tuple[str, str], ...] = ()
    version_needs: tuple[VersionNeed, ...] = ()
    version_defs: tuple[str, ...] = ()
    symtab: SymbolTable = field(default_factory=SymbolTable, repr=False)
    isa_level: int | None = None  # x86-64 microarchitecture level (2, 3, 4) from the GNU property note
    isa_problem: str | None = None
    isa_code: IsaScan | None = None  # x86-64: the level the instructions need (isa_scan.py)
    gpu_code: GpuCode | None = None  # the CUDA device code of its fatbins (fatbin_scan.py); None when it has none
    textrel: bool = False
    # with textrel: how many relocations (R_*_NONE aside) patch a non-writable segment; None when not told
    text_relocations: int | None = None
    gnu_stack: bool = False  # a PT_GNU_STACK header exists
    exec_stack: bool = False  # the stack is executable (PF_X on PT_GNU_STACK, or no PT_GNU_STACK)
    has_dynamic: bool = False
    soname_strings: tuple[str, ...] = ()  # soname-looking strings in read-only data, sorted: dlopen candidates
    version_strings: tuple[str, ...] = ()  # strings stating a library's version (elf/version_strings.py), sorted
    sha256: str = ""  # hex digest of the file's bytes, when the reader computed it ("" otherwise)
    # the section bounds it defines (__start_<sec>, __stop_<sec>) that a dynamic relocation of its own refers to: it
    # reaches them through the loader, so another copy in scope serves it (elf/section_bounds.py)
    relocated_bounds: tuple[str, ...] = ()
    # a separate debug-information file (objcopy --only-keep-debug): the binary's headers, none of its contents;
    # nothing loads it
    debug_only: bool = False

    @cached_property
    def symbols(self) -> tuple[Symbol, ...]:
        """Every dynamic symbol after the null entry, built from the columns on first use."""
        return self.symtab.build()

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        for cache in ("symbols", "python_init", "export_names", "sorted_exports"):
            state.pop(cache, None)  # caches: the columns travel, the rest is rebuilt on demand
        return state

    @cached_property
    def export_names(self) -> list[str]:
        """The exported names in table order, made once per file for the analyses (read only)."""
        return self.symtab.export_names()

    @cached_property
    def sorted_exports(self) -> list[str]:
        """The exported names, sorted: made once per file for the analyses that bisect them (read only)."""
        return sorted(self.export_names)

    @property
    def module_name(self) -> str:
        return self.path.rsplit("/", 1)[-1].split(".", 1)[0]

    @cached_property
    def python_init(self) -> str | None:
        """The module init function if this is a Python extension (auditwheel's rule)."""
        mod = self.module_name
        return self.symtab.defined_function(("PyInit_" + mod, "init" + mod, "_cffi_pypyinit_" + mod))

    @property
    def search_path_tag(self) -> str:
        """How messages name the file's own search path: its DT_RUNPATH, its DT_RPATH, or both."""
        if self.runpath and self.rpath:
            return "RPATH and RUNPATH"
        return "RUNPATH" if self.runpath else "RPATH"

    @property
    def is_extension(self) -> bool:
        return self.python_init is not None

    @property
    def is_program(self) -> bool:
        """A program: it names an interpreter, and has no SONAME or module init. A library may name one too and
        still be loaded as a library (glibc's libc.so.6, Qt's libQt6Core.so.6 print their version when run)."""
        return self.interpreter is not None and self.soname is None and not self.is_extension

    def exports(self) -> list[Symbol]:
        return [s for s in self.symbols if s.is_export]

    def imports(self) -> list[Symbol]:
        return [s for s in self.symbols if s.is_import]

    def versioned_symbols(self) -> dict[str, list[str]]:
        """{library: sorted version names}, without the dynamic loader (auditwheel's view)."""
        out: dict[str, set[str]] = {}
        for need in self.version_needs:
            if is_dynamic_loader(need.library):
                continue
            out.setdefault(need.library, set()).add(need.version)
        return {lib: sorted(v) for lib, v in sorted(out.items())}


def is_dynamic_loader(soname: str) -> bool:
    """ld-linux*.so.*, ld64.so.1 (ppc64le), ld64.so.2 (s390x), ld-musl-*: never a dependency to judge."""
    return soname.startswith(("ld-linux", "ld-musl-")) or soname in ("ld64.so.1", "ld64.so.2", "ld.so.1")


def libc_of_elf(elf: ElfInfo) -> str | None:
    """"musl" or "glibc" by what the file needs and its interpreter; None when nothing says."""
    names = list(elf.needed) + ([elf.interpreter.rsplit("/", 1)[-1]] if elf.interpreter else [])
    if any(n.startswith(("libc.musl-", "ld-musl-")) for n in names):
        return "musl"
    if any(n == "libc.so.6" or n.startswith(("ld-linux", "ld64.so.")) for n in names):
        return "glibc"
    return None


def libc_linked(elf: ElfInfo) -> str | None:
    """``libc_of_elf``, with a bare ``libc.so`` in DT_NEEDED taken as musl's (glibc's is libc.so.6; zig and
    other non-Alpine musl toolchains link so)."""
    return libc_of_elf(elf) or ("musl" if "libc.so" in elf.needed else None)
