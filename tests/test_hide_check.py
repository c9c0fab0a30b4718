"""Which names several ELF files of a wheel define as one object (repair.hide_check), on gcc-built libraries."""

from __future__ import annotations

from wheelcheck.elf import summarize
from wheelcheck.repair.hide_plan import plan_hiding


def _elves(files):
    return [summarize(path.read_bytes(), member) for member, path in files.items()]


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
