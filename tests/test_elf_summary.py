"""ELF summaries, checked against pyelftools' section-based reading (an independent oracle) per arch."""

from __future__ import annotations

import io
import struct

import pytest
from elftools.elf.dynamic import DynamicSection
from elftools.elf.elffile import ELFFile
from elftools.elf.gnuversions import GNUVerNeedSection

from tests.fixtures.compat_wheels import RUNNABLE_SRC, RUNTIME_SRC
from tests.fixtures.compile import ELF_MACHINES, ZIG_TARGETS
from tests.fixtures.sources import LIBC_USER_SRC, math_extension_source
from wheelcheck.elf import summarize
from wheelcheck.errors import BadElfError

USER_SRC = LIBC_USER_SRC + "__attribute__((weak)) extern int maybe_there(void);\n" \
    "int probe(void) { return maybe_there ? maybe_there() : -1; }\n"


def oracle(data: bytes) -> dict:
    """What pyelftools reads through the section headers."""
    elf = ELFFile(io.BytesIO(data))
    dyn = next(s for s in elf.iter_sections() if isinstance(s, DynamicSection))
    tags = list(dyn.iter_tags())
    needs = {}
    for sec in elf.iter_sections():
        if isinstance(sec, GNUVerNeedSection):
            for verneed, auxes in sec.iter_versions():
                for aux in auxes:
                    needs[(verneed.name, aux.name)] = aux["vna_flags"]
    dynsym = elf.get_section_by_name(".dynsym")
    symbols = list(dynsym.iter_symbols())[1:]
    return {
        "needed": [t.needed for t in tags if t.entry.d_tag == "DT_NEEDED"],
        "soname": next((t.soname for t in tags if t.entry.d_tag == "DT_SONAME"), None),
        "runpath": [p for t in tags if t.entry.d_tag == "DT_RUNPATH" for p in t.runpath.split(":")],
        "needs": needs,
        "names": [s.name for s in symbols],
        "undefined": {s.name for s in symbols if s["st_shndx"] == "SHN_UNDEF"},
        "weak_undefined": {s.name for s in symbols if s["st_shndx"] == "SHN_UNDEF"
                           and s["st_info"]["bind"] == "STB_WEAK"},
        "class": elf.elfclass,
        "little": elf.little_endian,
        "machine": elf["e_machine"],
    }


def check_against_oracle(data: bytes, path: str = "libuser.so.1"):
    info = summarize(data, path)
    want = oracle(data)
    assert list(info.needed) == want["needed"]
    assert info.soname == want["soname"]
    assert list(info.runpath) == want["runpath"]
    assert {(n.library, n.version) for n in info.version_needs} == set(want["needs"])
    assert [s.name for s in info.symbols] == want["names"]
    assert {s.name for s in info.symbols if not s.defined} == want["undefined"]
    assert {s.name for s in info.symbols if not s.defined and s.bind == "WEAK"} == want["weak_undefined"]
    assert info.symtab.undefined_names() == want["undefined"] and want["weak_undefined"]
    assert info.symtab.undefined_names(strong_only=True) == want["undefined"] - want["weak_undefined"]
    assert info.elf_class == want["class"]
    assert (info.endianness == "little") == want["little"]
    assert info.machine == want["machine"]
    # every undefined versioned symbol is listed under exactly the version it needs
    for need in info.version_needs:
        for name in need.symbols:
            assert name in want["undefined"]
    return info


@pytest.mark.parametrize("arch", sorted(ZIG_TARGETS))
def test_summary_per_arch(build, arch):
    lib = build.compile_c(USER_SRC, "libuser.so.1", target=ZIG_TARGETS[arch],
                          flags=("-Wl,-soname,libuser.so.1", "-Wl,-rpath,$ORIGIN/../lib", "-Wl,--enable-new-dtags"))
    info = check_against_oracle(lib.read_bytes())
    assert info.arch == arch
    assert info.machine == ELF_MACHINES[arch]
    assert info.endianness == ("big" if arch == "s390x" else "little")
    assert info.soname == "libuser.so.1"
    assert info.runpath == ("$ORIGIN/../lib",)
    assert any(n.startswith("libc.so") for n in info.needed)
    glibc = [n for n in info.version_needs if n.version.startswith("GLIBC_")]
    assert glibc, "a libc user needs GLIBC_ versions"
    assert "strdup" in {s for n in glibc for s in n.symbols}
    assert "maybe_there" in {s.name for s in info.symbols if not s.defined and s.bind == "WEAK"}
    assert "libc_user" in {s.name for s in info.exports()}


def test_host_extension_needs_glibc_2_29(build):
    ext = build.compile_c(math_extension_source("mathmod"), "mathmod.cpython-311-x86_64-linux-gnu.so",
                          libs=("m",))
    info = check_against_oracle(ext.read_bytes(), "pkg/mathmod.cpython-311-x86_64-linux-gnu.so")
    assert info.is_extension and info.python_init == "PyInit_mathmod"
    need = next(n for n in info.version_needs if n.version == "GLIBC_2.29")
    assert need.library == "libm.so.6"
    assert {"exp2", "log2"} <= set(need.symbols)


def strip_section_headers(data: bytes) -> bytes:
    """Zero e_shoff, e_shnum and e_shstrndx, as a hostile strip tool would."""
    elf = ELFFile(io.BytesIO(data))
    out = bytearray(data)
    endian = "<" if elf.little_endian else ">"
    if elf.elfclass == 64:
        struct.pack_into(endian + "Q", out, 0x28, 0)  # e_shoff
        struct.pack_into(endian + "HH", out, 0x3C, 0, 0)  # e_shnum, e_shstrndx
    else:
        struct.pack_into(endian + "I", out, 0x20, 0)
        struct.pack_into(endian + "HH", out, 0x30, 0, 0)
    return bytes(out)


@pytest.mark.parametrize("arch", ["x86_64", "s390x", "i686"])
def test_stripped_section_headers_change_nothing(build, arch):
    lib = build.compile_c(USER_SRC, "libuser.so.1", target=ZIG_TARGETS[arch],
                          flags=("-Wl,-soname,libuser.so.1",))
    data = lib.read_bytes()
    stripped = strip_section_headers(data)
    assert ELFFile(io.BytesIO(stripped)).num_sections() == 0
    full, bare = summarize(data, "libuser.so.1"), summarize(stripped, "libuser.so.1")
    assert bare.needed == full.needed and bare.soname == full.soname
    assert bare.version_needs == full.version_needs
    assert bare.symbols == full.symbols and len(bare.symbols) > 5


def test_isa_level_from_gnu_property(build):
    lib = build.compile_c("int f(int x) { return x * 3; }\n", "libv3.so",
                          flags=("-march=x86-64-v3", "-Wl,-z,x86-64-v3"))
    assert summarize(lib.read_bytes(), "libv3.so").isa_level == 3
    plain = build.compile_c("int f(int x) { return x * 3; }\n", "libplain.so")
    assert summarize(plain.read_bytes(), "libplain.so").isa_level is None


def test_a_program_is_told_from_a_library_that_names_an_interpreter(build):
    """A PIE program and a runnable library (libQt6Core.so.6's shape: an interpreter, an entry point and a
    SONAME) are both ET_DYN with PT_INTERP; only the one without a SONAME is a program."""
    program = build.compile_c("int main(void) { return 0; }\n", "prog", shared=False, flags=("-pie", "-fPIE"))
    runnable = build.compile_c(RUNTIME_SRC + RUNNABLE_SRC, "librun.so.1", flags=("-Wl,-soname,librun.so.1",
                                                                                "-Wl,-e,rt_main"))
    plain = build.compile_c(RUNTIME_SRC, "libplain.so.1", flags=("-Wl,-soname,libplain.so.1",))
    elves = {path.name: summarize(path.read_bytes(), path.name) for path in (program, runnable, plain)}
    assert [(e.elf_type, e.interpreter is not None) for e in elves.values()] == [("ET_DYN", True)] * 2 + [
        ("ET_DYN", False)]
    assert {name: e.is_program for name, e in elves.items()} == {"prog": True, "librun.so.1": False,
                                                                 "libplain.so.1": False}


def test_truncated_and_garbage(build):
    lib = build.compile_c(USER_SRC, "libuser.so.1", flags=("-Wl,-soname,libuser.so.1",))
    data = lib.read_bytes()
    for cut in (16, 64, len(data) // 3):
        with pytest.raises(BadElfError):
            summarize(data[:cut], "libuser.so.1")
    with pytest.raises(BadElfError, match="not an ELF"):
        summarize(b"hello world", "x.so")


def test_musl_extension(build):
    lib = build.compile_c(USER_SRC, "libuser.so.1", target="x86_64-linux-musl")
    info = summarize(lib.read_bytes(), "libuser.so.1")
    assert info.version_needs == () and any(n.startswith("libc.so") for n in info.needed)


def _header_only(phnum: int) -> bytes:
    """A 64-bit little-endian ELF header that announces ``phnum`` program headers right after it, and no more."""
    ident = b"\x7fELF" + bytes([2, 1, 1, 0]) + bytes(8)
    return ident + struct.pack("<HHIQQQIHHHHHH", 3, 62, 1, 0, 64, 0, 0, 64, 56, phnum, 64, 0, 0)


def test_malformed_elf_names_the_file_and_quotes_the_values():
    with pytest.raises(BadElfError) as caught:
        summarize(_header_only(phnum=7), "pkg/_bad.so")
    assert caught.value.path == "pkg/_bad.so"
    assert "7 of 56 bytes at offset 64" in caught.value.problem  # the values read, as they were
    with pytest.raises(BadElfError, match=r"bad ELF identification \(class 9, data 1\)"):
        summarize(b"\x7fELF" + bytes([9, 1]) + bytes(58), "pkg/_odd.so")


def test_a_bug_in_the_reader_is_not_reported_as_a_malformed_file(build, monkeypatch):
    """Only what reading the bytes raises becomes 'malformed ELF': an AttributeError, KeyError or IndexError
    is a bug of ours, and must surface as one (before, the summary turned it into BadElfError)."""
    from wheelcheck.elf import _tables

    lib = build.compile_c(USER_SRC, "libuser.so.1", flags=("-Wl,-soname,libuser.so.1",))

    def broken(*args, **kwargs):
        raise KeyError("a bug")

    monkeypatch.setattr(_tables, "read_symbols", broken)
    with pytest.raises(KeyError, match="a bug"):
        summarize(lib.read_bytes(), "libuser.so.1")


def test_version_symbol_is_read_only_from_a_defined_data_symbol(build):
    """``sqlite3_version=...`` comes from an exported data symbol's value; a file that only uses the symbol, or
    defines a function of that name, states no version."""
    definer = build.compile_c('const char sqlite3_version[] = "3.45.1";\n', "libdefines.so")
    user = build.compile_c("extern const char sqlite3_version[];\nconst char *v(void) { return sqlite3_version; }\n",
                           "libuses.so")
    function = build.compile_c('const char *sqlite3_version(void) { return "3.45.1"; }\n', "libfunction.so")
    assert "sqlite3_version=3.45.1" in summarize(definer.read_bytes(), "libdefines.so").version_strings
    for lib in (user, function):
        assert not [s for s in summarize(lib.read_bytes(), lib.name).version_strings if s.startswith("sqlite3_")]
