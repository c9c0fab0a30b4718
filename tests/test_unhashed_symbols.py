"""An executable that exports nothing: its .gnu.hash hashes no symbol, and GNU ld writes the header 1, 1, 1, 0
whatever .dynsym holds (clangd 22.1.1). Its symbol count comes from the tables beside .dynsym instead, so every
symbol check still sees its imports."""

from __future__ import annotations

import struct

import pytest
from elftools.elf.elffile import ELFFile

from tests.fixtures.compile import ZIG_TARGETS
from tests.fixtures.wheels import build_wheel
from tests.helpers import audit_one, auditwheel_show, by_rule
from wheelcheck.elf import summarize

PROGRAM = ('#include <math.h>\n#include <stdio.h>\n'
           'int main(int argc, char **argv) { printf("%f\\n", expf((float)argc)); return argc > 5; }\n')


def _undefined(path) -> set[str]:
    """The undefined symbols pyelftools reads from .dynsym (by its section header)."""
    with open(path, "rb") as f:
        return {s.name for s in ELFFile(f).get_section_by_name(".dynsym").iter_symbols()
                if s.name and s["st_shndx"] == "SHN_UNDEF"}


def _gnu_hash_header(path) -> tuple[int, ...]:
    with open(path, "rb") as f:
        return struct.unpack("<IIII", ELFFile(f).get_section_by_name(".gnu.hash").data()[:16])


@pytest.mark.parametrize("linker", ["gnu-ld", "zig"])
def test_an_executable_exporting_nothing_has_all_its_imports_read(build, linker):
    if linker == "gnu-ld":
        program = build.compile_c(PROGRAM, "prog", shared=False, flags=("-no-pie",), libs=("m",))
        assert _gnu_hash_header(program)[:2] == (1, 1)  # nothing hashed: symoffset says nothing of the count
    else:
        program = build.compile_c(PROGRAM, "prog", shared=False, target=ZIG_TARGETS["x86_64"], libs=("m",))
    info = summarize(program.read_bytes(), "prog")
    undefined = {n for n, d in zip(info.symtab.names, info.symtab.defined) if not d}
    assert undefined == _undefined(program) and {"expf", "printf"} <= undefined
    expf = next(need for need in info.version_needs if "expf" in need.symbols)
    assert expf.library == "libm.so.6"


def test_a_blacklisted_symbol_of_a_non_pie_program_fails_the_wheel(build, tmp_path):
    """The same program built as PIE and not: both call _tr_init of libz.so.1, which every policy whitelisting
    libz.so.1 blacklists; auditwheel says linux_x86_64 for both, and so must this tool."""
    zlib = build.compile_c("void _tr_init(void *s) { (void)s; }\n", "libz.so.1", flags=("-Wl,-soname,libz.so.1",))
    source = "void _tr_init(void *);\nint main(int argc, char **argv) { if (argc > 5) _tr_init(argv); return 0; }\n"
    for pie in ("-no-pie", "-pie"):
        program = build.compile_c(source, f"tool{pie}", shared=False, flags=(pie, f"-L{zlib.parent}"),
                                  libs=(zlib,))
        wheel = build_wheel(tmp_path / pie, "bl", "1.0", "py3-none-manylinux_2_17_x86_64",
                            {"bl-1.0.data/scripts/tool": program})
        report = audit_one(wheel)
        (finding,) = by_rule(report, "blacklisted-symbol")
        assert "_tr_init" in finding.symbols
        assert report.deserved_tag == auditwheel_show(wheel)["overall_tag"] == "linux_x86_64"
