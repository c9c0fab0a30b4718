"""repair.hide_check: the check a --hide-symbols plan must pass, on g++-built files and the plans that broke them.

The plans written out by hand here break an underlinked library and a header-only counter (tests/fixtures/sources.py); the
check must refuse both, on the plan alone and on the files as LIEF edits them, and pass what plan_hiding makes now.
"""

from __future__ import annotations

import shutil

import pytest

from tests.fixtures.sources import (COUNTER_EXT_BODY, COUNTER_EXT_PRELUDE, COUNTER_LIB_SRC, COUNTER_NAME,
                                    UNDERLINKED_SRCS, extension_source)
from wheelcheck.elf import summarize
from wheelcheck.elf.symbol_edit import SymbolEdit, apply_symbol_edit
from wheelcheck.errors import RepairError
from wheelcheck.repair.hide_check import broken_bindings, check_hiding
from wheelcheck.repair.hide_plan import plan_hiding

LIB, EXT = "counter.libs/libfoo-1a2b3c4d.so.1", "counter/_ext.cpython-311-x86_64-linux-gnu.so"
BASE, UNDER, TOP = (f"under.libs/{name}" for name in UNDERLINKED_SRCS)


@pytest.fixture
def counter(build):
    """The counter's files: libfoo and the extension both define the counter (STB_GNU_UNIQUE); member path -> file."""
    lib = build.compile_c(COUNTER_LIB_SRC, "libfoo.so.1", cxx=True, flags=("-Wl,-soname,libfoo.so.1",))
    ext = build.compile_c(extension_source("_ext", COUNTER_EXT_BODY, prelude=COUNTER_EXT_PRELUDE), "counter_ext.so",
                          cxx=True, libs=(lib,))
    return {LIB: lib, EXT: ext}


@pytest.fixture
def underlinked(build):
    """The underlinked library's files: libunder uses libbase's names without linking it; libtop links both."""
    built = {}
    for name, src in UNDERLINKED_SRCS.items():
        libs = (built["libbase.so.1"], built["libunder.so.1"]) if name == "libtop.so.1" else ()
        built[name] = build.compile_c(src, name, flags=(f"-Wl,-soname,{name}",), libs=libs)
    return {f"under.libs/{name}": path for name, path in built.items()}


def _elves(files):
    return [summarize(path.read_bytes(), member) for member, path in files.items()]


def _made(files, edits, tmp_path):
    """The files as LIEF edits them, summarised under their member names."""
    out = []
    for i, (member, edit) in enumerate(edits.items()):
        copy = tmp_path / f"edited-{i}.so"
        shutil.copy(files[member], copy)
        apply_symbol_edit(copy, edit)
        out.append(summarize(copy.read_bytes(), member))
    return out


def test_the_check_refuses_the_split_counter_of_w2(counter, tmp_path):
    elves = _elves(counter)
    foo_inc = "_Z7foo_incv"
    old = {LIB: SymbolEdit(frozenset({COUNTER_NAME}), {foo_inc: "wc1a2b3c4d_" + foo_inc}),
           EXT: SymbolEdit(rename={foo_inc: "wc1a2b3c4d_" + foo_inc})}
    for after in ((), _made(counter, old, tmp_path)):
        (broken,) = broken_bindings(elves, old, after)
        assert broken.name == COUNTER_NAME and broken.user == LIB
        assert f"{LIB} hides it" in broken.problem and f"{EXT} exports {COUNTER_NAME}" in broken.problem
    with pytest.raises(RepairError, match=f"would break {COUNTER_NAME}: one object in 2 files before"):
        check_hiding(elves, old)
    # the rename alone breaks nothing: the extension asks for the name libfoo now exports
    assert broken_bindings(elves, {LIB: SymbolEdit(rename=old[LIB].rename), EXT: old[EXT]}) == []
    plan = plan_hiding(elves, [LIB], {LIB: "wc1a2b3c4d_"})
    assert plan.edits[LIB] == SymbolEdit(frozenset(), {foo_inc: "wc1a2b3c4d_" + foo_inc})
    assert broken_bindings(elves, plan.edits, _made(counter, plan.edits, tmp_path)) == []


def test_the_check_refuses_the_underlinked_plan_of_w1(underlinked, tmp_path):
    elves = _elves(underlinked)
    renamed = {"base_get": "wcaaaaaaaa_base_get"}
    old = {BASE: SymbolEdit(frozenset({"base_top"}), renamed), TOP: SymbolEdit(rename=renamed)}
    for after in ((), _made(underlinked, old, tmp_path)):
        broken = broken_bindings(elves, old, after)
        assert [(b.user, b.name) for b in broken] == [(UNDER, "base_get"), (UNDER, "base_top")]
        assert all(f"from {BASE}, and after the edit no file of the wheel exports" in b.problem for b in broken)
    plan = plan_hiding(elves, [BASE, UNDER, TOP], {BASE: "wcaaaaaaaa_", UNDER: "wcbbbbbbbb_", TOP: "wccccccccc_"})
    assert set(plan.libraries[0].kept) == {"base_top", "base_get"}
    assert broken_bindings(elves, plan.edits, _made(underlinked, plan.edits, tmp_path)) == []


def test_the_check_reads_the_edited_files_themselves(underlinked, tmp_path):
    """Given the files as made, an importer left asking for the old name is found, though the plan was right."""
    elves = _elves(underlinked)
    renamed = {"under_get": "wcbbbbbbbb_under_get"}
    plan = {UNDER: SymbolEdit(rename=renamed), TOP: SymbolEdit(rename=renamed)}
    assert broken_bindings(elves, plan) == []
    made = _made(underlinked, {UNDER: plan[UNDER]}, tmp_path) + [e for e in elves if e.path == TOP]  # TOP unedited
    (broken,) = broken_bindings(elves, plan, made)
    assert (broken.user, broken.name) == (TOP, "under_get") and "did not" in broken.problem


def test_what_is_not_one_object_stays_hidden(build, tmp_path):
    """Two libraries define dup in versions of their own (V_A, V_B), same in one version of both (V_CD), wc_first
    unversioned, and the bound of a section of their own (__start_wcsec) and version nodes (V_CD, V_A): only same
    and wc_first are one object to the loader, and only they stay visible."""
    libs = {}
    for side, value in (("a", 1), ("b", 2)):
        script = tmp_path / f"{side}.map"
        script.write_text(f"V_{side.upper()} {{ global: dup; }};\nV_CD {{ global: same; }};\n")
        src = (f"int dup(void) {{ return {value}; }}\nint same(void) {{ return {value}; }}\n"
               '__attribute__((used, section("wcsec"))) static int wc_entry = 1;\n'
               "extern char __start_wcsec[];\nchar *wc_first(void) { return __start_wcsec; }\n")
        lib = build.compile_c(src, f"lib{side}.so", flags=(f"-Wl,--version-script={script}", f"-Wl,-soname,lib{side}.so"))
        libs[f"two.libs/lib{side}.so"] = lib
    elves = _elves(libs)
    assert {"__start_wcsec", "V_CD"} <= set(elves[0].symtab.export_names())
    paths = list(libs)
    plan = plan_hiding(elves, paths, {path: f"wc{i}_" for i, path in enumerate(paths)})
    for entry, other in zip(plan.libraries, reversed(paths)):
        assert entry.kept == {name: f"defined in {other} too (a duplicate definition)" for name in ("same", "wc_first")}
        own = "V_A" if entry.path.endswith("liba.so") else "V_B"
        assert set(entry.hidden) == {"dup", "__start_wcsec", "V_CD", own}
    assert broken_bindings(elves, plan.edits) == []
