"""repair --hide-symbols details: STB_GNU_UNIQUE, --keep-symbols, extension modules, reruns."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from tests.fixtures.sources import (COUNTER_EXT_BODY, COUNTER_EXT_PRELUDE, COUNTER_LIB_SRC, COUNTER_NAME,
                                    UNDERLINKED_SRCS, extension_source)
from tests.fixtures.wheels import build_wheel
from tests.helpers import make_venv, pip_install, repair_json, run_cli
from wheelcheck.symbols.sonames import hashed_stem, unhashed
from wheelcheck.elf import summarize
from wheelcheck.wheel.wheel_reader import WheelReader

# an inline function with a static local: g++ makes the guard and the variable STB_GNU_UNIQUE
UNIQUE_LIB = r"""
inline int &counter() { static int n = 0; return n; }
extern "C" int bump(void) { return ++counter(); }
extern "C" int keep_me_visible(void) { return 1; }
"""
EXT_BODY = "    return bump();"
EXT_PRELUDE = "extern int bump(void);\nint ext_extra_api(void) { return 3; }\n"


def _wheel(build, tmp_path):
    lib_dir = tmp_path / "build"
    lib_dir.mkdir()
    lib = build.compile_c(UNIQUE_LIB, "libuniq.so.1", cxx=True, flags=("-Wl,-soname,libuniq.so.1",))
    shutil.copy(lib, lib_dir / "libuniq.so.1")
    ext = build.compile_c(extension_source("_ext", EXT_BODY, prelude=EXT_PRELUDE), "uniq_ext.so", libs=(lib,))
    wheel = build_wheel(tmp_path / "dist", "uniq", "1.0", "cp311-cp311-linux_x86_64",
                        {"uniq/_ext.cpython-311-x86_64-linux-gnu.so": ext})
    return wheel, lib_dir, lib


def _underlinked(build):
    """libbase, libunder (uses libbase's names, does not link it) and libtop (links both), built by g++."""
    built: dict = {}
    for name, src in UNDERLINKED_SRCS.items():
        libs = (built["libbase.so.1"], built["libunder.so.1"]) if name == "libtop.so.1" else ()
        built[name] = build.compile_c(src, name, flags=(f"-Wl,-soname,{name}",), libs=libs)
    return built["libbase.so.1"], built["libunder.so.1"], built["libtop.so.1"]


def _elves(wheel):
    with WheelReader(wheel) as reader:
        return {m.filename: summarize(reader.read(m.filename), m.filename) for m in reader.members
                if m.filename.endswith(".so") or ".so." in m.filename}


def test_gnu_unique_hidden_keep_symbols_and_extensions(build, tmp_path):
    wheel, lib_dir, lib = _wheel(build, tmp_path)
    unique = {s.name for s in summarize(lib.read_bytes(), "lib").symbols if s.bind == "GNU_UNIQUE" and s.defined}
    assert unique, "g++ should have made the static local STB_GNU_UNIQUE"
    proc, report = repair_json("--hide-symbols", "--hide-extension-symbols", "--keep-symbols", "keep_me_*",
                               "--lib-path", lib_dir, "-w", tmp_path / "out", wheel)
    assert proc.returncode == 0, proc.stderr
    out = report["wheels"][0]
    by_member = {h["member"].split("/")[0]: h for h in out["hidden"]}
    libs = by_member["uniq.libs"]
    assert libs["renamed"] == {"bump": libs["renamed"]["bump"]} and libs["renamed"]["bump"].endswith("_bump")
    assert libs["kept"] == {"keep_me_visible": "matches --keep-symbols keep_me_*"}
    ext = by_member["uniq"]
    assert ext["hidden"] == 1 and not ext["renamed"]
    elves = _elves(out["output"])
    grafted = next(e for p, e in elves.items() if p.startswith("uniq.libs/"))
    visible = {s.name for s in grafted.exports()}
    assert visible == {libs["renamed"]["bump"], "keep_me_visible"}
    assert all(s.bind == "LOCAL" and s.visibility == "HIDDEN" for s in grafted.symbols if s.name in unique)
    extension = next(e for p, e in elves.items() if p.startswith("uniq/"))
    assert {s.name for s in extension.exports()} == {"PyInit__ext"}
    assert libs["renamed"]["bump"] in {s.name for s in extension.imports()}


def test_rerun_and_reproducible(build, tmp_path):
    wheel, lib_dir, _ = _wheel(build, tmp_path)
    first, report = repair_json("--hide-symbols", "--lib-path", lib_dir, "-w", tmp_path / "one", wheel)
    again, _ = repair_json("--hide-symbols", "--lib-path", lib_dir, "-w", tmp_path / "two", wheel)
    assert first.returncode == again.returncode == 0
    output = report["wheels"][0]["output"]
    twice = tmp_path / "two" / output.rsplit("/", 1)[1]
    assert open(output, "rb").read() == twice.read_bytes()
    rerun, report2 = repair_json("--hide-symbols", "-w", tmp_path / "three", output)
    assert rerun.returncode == 0, rerun.stderr
    assert open(report2["wheels"][0]["output"], "rb").read() == twice.read_bytes()
    # in words: the grafted library exports nothing any more, which is said as such, not as "0 of 0 hidden"
    (hidden,) = [h for h in report2["wheels"][0]["hidden"] if ".libs/" in h["member"]]
    assert hidden["exports"] == 0
    text = run_cli("repair", "--hide-symbols", "-w", tmp_path / "four", output)
    assert f"symbols of {hidden['member']}: none exported, nothing to hide" in text.stdout
    assert "0 of 0" not in text.stdout


def test_two_wheels_hiding_the_same_library_load_together(build, tmp_path):
    """From repairing real projects (lxml + xmlsec, pycurl + psycopg2, netCDF4 + h5py): two wheels vendor one build of
    libfoo.so.1, pkga using foo_a and pkgb foo_b. Hiding edits each copy for what its own wheel imports; had both
    kept the name made from the original's hash, ld.so would load one file for that SONAME and the second wheel's
    import would fail ("undefined symbol: wc…_foo_b"). Each edited copy is named after its edit too, so both load,
    in either order; the original's hash stays first in both names."""
    lib_dir = tmp_path / "build"
    lib_dir.mkdir()
    lib = build.compile_c("int foo_a(void) { return 1; }\nint foo_b(void) { return 2; }\n", "libfoo.so.1",
                          flags=("-Wl,-soname,libfoo.so.1",))
    shutil.copy(lib, lib_dir / "libfoo.so.1")
    names = {}
    python = make_venv(tmp_path / "venv")
    for pkg, symbol in (("pkga", "foo_a"), ("pkgb", "foo_b")):
        ext = build.compile_c(extension_source("_ext", f"    return {symbol}();", prelude=f"extern int {symbol}(void);\n"),
                              f"{pkg}_ext.so", libs=(lib,))
        wheel = build_wheel(tmp_path / "dist", pkg, "1.0", "cp311-cp311-linux_x86_64",
                            {f"{pkg}/__init__.py": b"", f"{pkg}/_ext.cpython-311-x86_64-linux-gnu.so": ext})
        proc, report = repair_json("--hide-symbols", "--lib-path", lib_dir, "-w", tmp_path / "out", wheel)
        assert proc.returncode == 0, proc.stderr
        (grafted,) = [p for p in _elves(report["wheels"][0]["output"]) if p.startswith(f"{pkg}.libs/")]
        names[pkg] = grafted.split("/")[1]
        assert pip_install(python, Path(report["wheels"][0]["output"])).returncode == 0
    assert names["pkga"] != names["pkgb"] and unhashed(names["pkga"]) == unhashed(names["pkgb"]) == "libfoo.so.1"
    assert hashed_stem(names["pkga"]) == hashed_stem(names["pkgb"])  # one original build
    for order in (("pkga", "pkgb"), ("pkgb", "pkga")):
        script = "; ".join(f"import {p}._ext as {p}" for p in order) + f"; print({order[0]}.call(), {order[1]}.call())"
        run = subprocess.run([str(python), "-c", script], capture_output=True, text=True, timeout=60)
        assert run.stdout.split() == (["1", "2"] if order[0] == "pkga" else ["2", "1"]), run.stderr


def test_a_library_that_uses_another_without_linking_it_keeps_working(build, tmp_path):
    """From repairing GDAL 3.6.2: Debian's libmfhdfalt.so.0 uses libdfalt.so.0's names without linking it,
    and finds them because libgdal loads both. Here libunder uses libbase's base_top and base_get the same way,
    and libtop links both. Hidden in libbase (nothing that links libbase imports them), the repaired wheel failed
    to import ("undefined symbol: base_top"); they stay visible, said why, and the wheel works."""
    lib_dir = tmp_path / "build"
    lib_dir.mkdir()
    base, under, top = _underlinked(build)
    for lib in (base, under, top):
        shutil.copy(lib, lib_dir / lib.name)
    assert "libbase.so.1" not in summarize(under.read_bytes(), "libunder.so.1").needed
    ext = build.compile_c(extension_source("_ext", "    return top_get();", prelude="extern int top_get(void);\n"),
                          "under_ext.so", libs=(top,))
    wheel = build_wheel(tmp_path / "dist", "under", "1.0", "cp311-cp311-linux_x86_64",
                        {"under/__init__.py": b"", "under/_ext.cpython-311-x86_64-linux-gnu.so": ext})
    proc, report = repair_json("--hide-symbols", "--lib-path", lib_dir, "-w", tmp_path / "out", wheel)
    assert proc.returncode == 0, proc.stderr
    (hiding,) = [h for h in report["wheels"][0]["hidden"] if "libbase" in h["member"]]
    assert set(hiding["kept"]) == {"base_top", "base_get"}
    assert all("does not link this library" in why and "libunder" in why for why in hiding["kept"].values())
    python = make_venv(tmp_path / "venv")
    assert pip_install(python, Path(report["wheels"][0]["output"])).returncode == 0
    run = subprocess.run([str(python), "-c", "import under._ext as m; print(m.call())"], capture_output=True,
                         text=True, timeout=60, cwd=tmp_path)
    assert run.stdout.split() == ["714"], run.stderr


def _install_and_call(tmp_path, output: str, venv: str, module: str):
    python = make_venv(tmp_path / venv)
    assert pip_install(python, Path(output)).returncode == 0
    return subprocess.run([str(python), "-c", f"import {module} as m; print(m.call())"], capture_output=True,
                          text=True, timeout=60, cwd=tmp_path)


def test_an_object_the_extension_and_the_library_both_define_stays_one(build, tmp_path):
    """A header-only counter (an inline function's static local, STB_GNU_UNIQUE) is
    defined in the vendored libfoo and in the extension; the loader makes the two one object. Hidden in libfoo
    (nothing imports it), libfoo counted in a copy of its own and the extension read 0, not 2. It stays visible
    in libfoo, said why, in the extension too with --hide-extension-symbols, and the wheel counts 2."""
    lib_dir = tmp_path / "build"
    lib_dir.mkdir()
    lib = build.compile_c(COUNTER_LIB_SRC, "libfoo.so.1", cxx=True, flags=("-Wl,-soname,libfoo.so.1",))
    shutil.copy(lib, lib_dir / "libfoo.so.1")
    ext = build.compile_c(extension_source("_ext", COUNTER_EXT_BODY, prelude=COUNTER_EXT_PRELUDE), "counter_ext.so",
                          cxx=True, libs=(lib,))
    for elf in (summarize(lib.read_bytes(), "lib"), summarize(ext.read_bytes(), "ext")):
        assert COUNTER_NAME in elf.symtab.unique_export_names(), "g++ should have made the counter STB_GNU_UNIQUE"
    wheel = build_wheel(tmp_path / "dist", "counter", "1.0", "cp311-cp311-linux_x86_64",
                        {"counter/__init__.py": b"", "counter/_ext.cpython-311-x86_64-linux-gnu.so": ext})
    for flags in (("--hide-symbols",), ("--hide-symbols", "--hide-extension-symbols")):
        proc, report = repair_json(*flags, "--lib-path", lib_dir, "-w", tmp_path / flags[-1].strip("-"), wheel)
        assert proc.returncode == 0, proc.stderr
        hiding = {h["member"].split("/")[0]: h for h in report["wheels"][0]["hidden"]}
        assert hiding["counter.libs"]["kept"] == {
            COUNTER_NAME: "defined in counter/_ext.cpython-311-x86_64-linux-gnu.so too (C++ vague linkage)"}
        assert list(hiding["counter.libs"]["renamed"]) == ["_Z7foo_incv"]  # what the extension calls
        if "--hide-extension-symbols" in flags:
            assert hiding["counter"]["kept"][COUNTER_NAME].startswith("defined in counter.libs/libfoo-")
        output = report["wheels"][0]["output"]
        for member, elf in _elves(output).items():
            assert COUNTER_NAME in elf.symtab.unique_export_names(), member
        run = _install_and_call(tmp_path, output, f"venv-{len(flags)}", "counter._ext")
        assert run.stdout.split() == ["2"], run.stderr


def test_a_plain_duplicate_definition_binds_as_without_hiding(build, tmp_path):
    """A C library and the extension both define shared_count and which() (GLOBAL, strong): the loader binds the
    library's own uses to the extension's, first in the scope of its dlopen. --hide-symbols keeps that as it was
    (one counter, the extension's which()), where hiding them in the library gave it copies of its own."""
    lib_dir = tmp_path / "build"
    lib_dir.mkdir()
    lib = build.compile_c("int shared_count = 0;\nint which(void) { return 1; }\n"
                          "void foo_inc(void) { shared_count++; }\nint foo_which(void) { return which(); }\n",
                          "libdup.so.1", flags=("-Wl,-soname,libdup.so.1",))
    shutil.copy(lib, lib_dir / "libdup.so.1")
    prelude = "int shared_count = 0;\nint which(void) { return 2; }\nvoid foo_inc(void);\nint foo_which(void);\n"
    ext = build.compile_c(extension_source("_ext", "    foo_inc();\n    foo_inc();\n"
                                                   "    return shared_count * 10 + foo_which();", prelude=prelude),
                          "dup_ext.so", libs=(lib,))
    binds = {s.name: s.bind for s in summarize(lib.read_bytes(), "lib").exports()}
    assert binds["shared_count"] == binds["which"] == "GLOBAL"
    wheel = build_wheel(tmp_path / "dist", "dup", "1.0", "cp311-cp311-linux_x86_64",
                        {"dup/__init__.py": b"", "dup/_ext.cpython-311-x86_64-linux-gnu.so": ext})
    got = {}
    for flags in ((), ("--hide-symbols",)):
        proc, report = repair_json(*flags, "--lib-path", lib_dir, "-w", tmp_path / f"out{len(flags)}", wheel)
        assert proc.returncode == 0, proc.stderr
        if flags:
            (hiding,) = report["wheels"][0]["hidden"]
            assert hiding["kept"] == {name: "defined in dup/_ext.cpython-311-x86_64-linux-gnu.so too (a duplicate "
                                            "definition)" for name in ("shared_count", "which")}
            assert set(hiding["renamed"]) == {"foo_inc", "foo_which"}
        run = _install_and_call(tmp_path, report["wheels"][0]["output"], f"venv{len(flags)}", "dup._ext")
        got[flags] = run.stdout.split()
        assert run.returncode == 0, run.stderr
    assert got[()] == got[("--hide-symbols",)] == ["22"]  # two increments of one counter, and the extension's which()
