"""The verdict and its explanations, on wheels built at test time, judged through the public API."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import zipfile

import pytest

from tests.fixtures.compile import ZIG_TARGETS, zig_triple
from tests.fixtures.sources import extension_source, math_extension_source
from tests.fixtures.vendoring import patchelf
from tests.fixtures.wheels import build_wheel
from tests.helpers import audit_json, run_cli
from wheelcheck import audit
from wheelcheck.elf import summarize

EXT = "pkg/{}.cpython-311-x86_64-linux-gnu.so"
USES_ALPHA = extension_source("usealpha", "    return alpha_value();", prelude="extern int alpha_value(void);\n")


def one(wheel, **kw):
    report = audit(wheel, **{"any_platform_tag": True, **kw})  # linux_ tags: tests/test_package_rules.py
    assert len(report.wheels) == 1
    return report.wheels[0], report.exit_code


def test_glibc_2_29_explained(build, tmp_path):
    ext = build.compile_c(math_extension_source("mathmod"), "mathmod.so", libs=("m",))
    wheel = build_wheel(tmp_path, "mathmod", "1.0", "cp311-cp311-manylinux_2_17_x86_64", {EXT.format("mathmod"): ext})
    w, code = one(wheel)
    assert w.deserved_tag == "manylinux_2_31_x86_64"  # no 2_29 policy exists; 2_31 is the first allowing GLIBC_2.29
    assert code == 1 and not w.passed and w.required_tag == "manylinux_2_17_x86_64"
    finding = next(f for f in w.findings if f.rule == "symbol-version" and "GLIBC_2.29" in f.message)
    assert finding.severity == "error" and finding.file == EXT.format("mathmod")
    assert {"exp2", "log2"} <= set(finding.symbols)
    assert "exp2, log2" in finding.message and "manylinux_2_31 at best" in finding.message
    assert finding.hint
    proc = run_cli("audit", wheel)
    assert proc.returncode == 1
    assert "GLIBC_2.29 needed by exp2, log2 → manylinux_2_31 at best" in proc.stdout


def test_old_glibc_build_passes_its_claim(build, tmp_path):
    ext = build.compile_c(math_extension_source("mathmod"), "mathmod.so", target=zig_triple("x86_64"), libs=("m",))
    wheel = build_wheel(tmp_path, "mathmod", "1.0", "cp311-cp311-manylinux_2_17_x86_64", {EXT.format("mathmod"): ext})
    w, code = one(wheel)
    assert code == 0 and w.passed
    assert w.deserved_tag in ("manylinux_2_5_x86_64", "manylinux_2_12_x86_64", "manylinux_2_17_x86_64")
    needed = [v for versions in w.versioned_symbols.values() for v in versions if v.startswith("GLIBC_2")]
    assert needed and all(tuple(map(int, v[6:].split("."))) <= (2, 17) for v in needed), needed
    # --plat stricter than the claim: fails only if the verdict is worse than it
    w2, code2 = one(wheel, plat="manylinux_2_5_x86_64")
    assert (code2 == 0) == (w2.deserved_tag == "manylinux_2_5_x86_64")


@pytest.mark.parametrize("arch", sorted(ZIG_TARGETS))
def test_each_arch_gets_a_manylinux_tag(build, tmp_path, arch):
    src = extension_source("plain", python_h=False)
    ext = build.compile_c(src, "plain.so", target=ZIG_TARGETS[arch])
    wheel = build_wheel(tmp_path, "plain", "1.0", f"cp311-cp311-linux_{arch}", {"plain.so": ext})
    w, code = one(wheel)
    assert code == 0 and w.arch == arch and w.libc == "glibc"
    glibc = ZIG_TARGETS[arch].rsplit(".", 2)
    assert w.deserved_tag.startswith("manylinux_") and w.deserved_tag.endswith(arch)
    major_minor = tuple(int(x) for x in w.deserved_tag.split("_")[1:3])
    first_covering = min((p for p in json.loads(run_cli("policy", "list", "--format", "json").stdout)
                          if p["libc"] == "glibc" and arch in p["arches"]), key=lambda p: p["libc_version"].split("."))
    assert major_minor <= max((2, int(glibc[-1])), tuple(map(int, first_covering["libc_version"].split(".")))), \
        (w.deserved_tag, ZIG_TARGETS[arch])


def test_external_library_then_vendored(build, tmp_path):
    alpha, beta = build.alpha_beta()
    ext = build.compile_c(USES_ALPHA, "usealpha.so", libs=(alpha,), flags=("-Wl,-rpath,$ORIGIN/../pkg.libs",))
    # without the libraries: both are external (alpha directly; beta is alpha's own need, unseen)
    bare = build_wheel(tmp_path / "bare", "usealpha", "1.0", "cp311-cp311-linux_x86_64", {EXT.format("usealpha"): ext})
    w, code = one(bare)
    assert code == 0 and w.deserved_tag == "linux_x86_64" and w.external_libs == ["libalpha.so.1"]
    f = next(f for f in w.findings if f.rule == "external-library")
    assert f.severity == "warning" and "libalpha.so.1" in f.message
    # --lib-path reads alpha's own needs, as a repair would graft them
    lib_dir = tmp_path / "libs"
    lib_dir.mkdir()
    shutil.copy(alpha, lib_dir)
    shutil.copy(beta, lib_dir)
    w, _ = one(bare, lib_path=[str(lib_dir)])
    assert w.external_libs == ["libalpha.so.1", "libbeta.so.1"]
    # --exclude treats it as provided by the system
    w, _ = one(bare, exclude=["libalpha.so*"])
    assert w.deserved_tag.startswith("manylinux_")
    # vendored where the extension's DT_RPATH points (alpha has none: it inherits its loader's RPATH)
    with_rpath = build.compile_c(USES_ALPHA, "usealpha_rpath.so", libs=(alpha,),
                                 flags=("-Wl,-rpath,$ORIGIN/../pkg.libs", "-Wl,--disable-new-dtags"))
    vendored = build_wheel(tmp_path / "vendored", "usealpha", "1.0", "cp311-cp311-linux_x86_64", {
        EXT.format("usealpha"): with_rpath, "pkg.libs/libalpha.so.1": alpha, "pkg.libs/libbeta.so.1": beta})
    w, code = one(vendored)
    assert w.external_libs == [] and w.deserved_tag.startswith("manylinux_"), w.findings


def test_runpath_is_not_inherited(build, tmp_path):
    """ld.so: DT_RUNPATH of the extension does not serve its libraries' own needs (DT_RPATH would)."""
    alpha, beta = build.alpha_beta()
    runpath = build.compile_c(USES_ALPHA, "usealpha_runpath.so", libs=(alpha,),
                              flags=("-Wl,-rpath,$ORIGIN/../pkg.libs", "-Wl,--enable-new-dtags"))
    rpath = build.compile_c(USES_ALPHA, "usealpha_rpath.so", libs=(alpha,),
                            flags=("-Wl,-rpath,$ORIGIN/../pkg.libs", "-Wl,--disable-new-dtags"))
    libs = {"pkg.libs/libalpha.so.1": alpha, "pkg.libs/libbeta.so.1": beta}
    for ext, external in ((runpath, ["libbeta.so.1"]), (rpath, [])):
        wheel = build_wheel(tmp_path / ext.stem, "usealpha", "1.0", "cp311-cp311-linux_x86_64",
                            {EXT.format("usealpha"): ext, **libs})
        w, _ = one(wheel)
        assert w.external_libs == external, (ext.name, w.findings)
        # and the real loader agrees: unpack as pip would, import in a clean process
        site = tmp_path / f"site-{ext.stem}"
        with zipfile.ZipFile(wheel) as zf:
            zf.extractall(site)
        for member in libs:
            (site / member).chmod(0o755)
        proc = subprocess.run([sys.executable, "-c", "import pkg.usealpha as m; print(m.call())"], cwd=site,
                              capture_output=True, text=True, env={"PATH": "/usr/bin:/bin"})
        if external:
            assert proc.returncode != 0 and "libbeta.so.1" in proc.stderr, proc.stderr
        else:
            assert proc.returncode == 0 and proc.stdout.strip() == "42", proc.stderr


def test_isa_level_forces_linux(build, tmp_path):
    ext = build.compile_c(extension_source("fast"), "fast.so", flags=("-march=x86-64-v3", "-Wl,-z,x86-64-v3"))
    wheel = build_wheel(tmp_path, "fast", "1.0", "cp311-cp311-manylinux_2_17_x86_64", {EXT.format("fast"): ext})
    w, code = one(wheel)
    assert w.deserved_tag == "linux_x86_64" and code == 1
    assert any(f.rule == "isa-level" and "x86-64-v3" in f.message for f in w.findings)


def test_libpython_forces_linux(build, tmp_path):
    import sysconfig

    libdir = sysconfig.get_config_var("LIBDIR")
    ldlib = sysconfig.get_config_var("LDLIBRARY")
    if not ldlib or not ldlib.endswith(".so") and ".so." not in ldlib:
        pytest.skip("this Python has no shared libpython")
    ext = build.compile_c(extension_source("linked"), "linked.so", flags=(f"-L{libdir}",),
                          libs=(f"python{sysconfig.get_config_var('LDVERSION')}",))
    wheel = build_wheel(tmp_path, "linked", "1.0", "cp311-cp311-linux_x86_64", {EXT.format("linked"): ext})
    w, _ = one(wheel)
    assert w.deserved_tag == "linux_x86_64"
    assert any(f.rule == "libpython" for f in w.findings)
    assert not any(lib.startswith("libpython") for lib in w.external_libs)


def test_musl_wheel(build, tmp_path):
    ext = build.compile_c(extension_source("m", python_h=False), "m.so", target="x86_64-linux-musl")
    for claim in ("musllinux_1_1_x86_64", "musllinux_1_2_x86_64"):
        wheel = build_wheel(tmp_path / claim, "m", "1.0", f"cp311-cp311-{claim}", {"m.cpython-311-x86_64-linux-musl.so": ext})
        w, code = one(wheel)
        assert w.libc == "musl" and w.deserved_tag == "musllinux_1_2_x86_64" and code == 0
        assert any(f.rule == "musl-version" for f in w.findings)


MUSL_LIBC_USER = extension_source("m", python_h=False) + (
    "#include <stdlib.h>\n#include <math.h>\n"
    "void *grab(unsigned n) { return malloc(n); }\ndouble root(double x) { return sqrt(x); }\n")


@pytest.mark.parametrize("arch", ["x86_64", "aarch64"])
def test_musl_wheel_needing_libc_so_by_that_name(build, tmp_path, arch):
    """zig (maturin --zig) and other non-Alpine toolchains link musl extensions against "libc.so", and a
    glibc-minded build may need "libm.so.6" or "libpthread.so.0": musl's loader answers all of these with
    itself, by name (ldso/dynlink.c), so the wheel works on every musl system. auditwheel calls them external."""
    ext = build.compile_c(MUSL_LIBC_USER, "m.so", target=f"{arch}-linux-musl", libs=("m",))
    assert "libc.so" in summarize(ext.read_bytes(), "m.so").needed  # what real maturin --zig wheels need
    patched = tmp_path / "m.so"
    shutil.copy(ext, patched)
    subprocess.run([patchelf(), "--add-needed", "libm.so.6", "--add-needed", "libpthread.so.0", str(patched)],
                   check=True)
    for name, lib in (("plain", ext), ("glibc-named", patched)):
        claim = f"musllinux_1_1_{arch}"
        wheel = build_wheel(tmp_path / name, "m", "1.0", f"cp311-cp311-{claim}",
                            {f"m.cpython-311-{arch}-linux-musl.so": lib})
        w, code = one(wheel)
        assert w.libc == "musl" and w.deserved_tag == f"musllinux_1_2_{arch}" and code == 0, w.findings
        assert not w.external_libs
    # the same names are not glibc's: a manylinux claim on a file needing "libc.so" is still external
    glibc = build.compile_c(MUSL_LIBC_USER, "g.so", target=zig_triple(arch), libs=("m",))
    odd = tmp_path / "g.so"
    shutil.copy(glibc, odd)
    subprocess.run([patchelf(), "--add-needed", "libc.so", str(odd)], check=True)
    wheel = build_wheel(tmp_path / "glibc", "g", "1.0", f"cp311-cp311-manylinux_2_17_{arch}",
                        {f"g.cpython-311-{arch}-linux-gnu.so": odd})
    w, code = one(wheel)
    assert code == 1 and "libc.so" in w.external_libs


def test_pure_wheel(tmp_path):
    wheel = build_wheel(tmp_path, "pure", "1.0", "py3-none-any", {"pure/__init__.py": b"x = 1\n"})
    w, code = one(wheel)
    assert w.pure and w.deserved_tag is None and code == 0


def test_json_matches_schema_and_api(build, tmp_path):
    jsonschema = pytest.importorskip("jsonschema")
    from wheelcheck.report.audit_json import audit_schema

    ext = build.compile_c(math_extension_source("mathmod"), "mathmod.so", libs=("m",))
    wheel = build_wheel(tmp_path, "mathmod", "1.0", "cp311-cp311-manylinux_2_17_x86_64", {EXT.format("mathmod"): ext})
    code, doc = audit_json(wheel)
    jsonschema.Draft202012Validator(audit_schema()).validate(doc)
    assert code == 1
    api = audit(wheel).to_dict()
    api["tool"] = doc["tool"]
    for report in (api, doc):  # the one thing two runs differ in
        assert report["wheels"][0]["summary"].pop("seconds") >= 0
    assert api == doc
    w = doc["wheels"][0]
    assert w["files"][0]["is_extension"] and w["files"][0]["path"] == EXT.format("mathmod")
    assert "GLIBC_2.29" in w["versioned_symbols"]["libm.so.6"]


def test_output_file_and_quiet(build, tmp_path):
    ext = build.compile_c(math_extension_source("mathmod"), "mathmod.so", libs=("m",))
    wheel = build_wheel(tmp_path, "mathmod", "1.0", "cp311-cp311-linux_x86_64", {EXT.format("mathmod"): ext})
    out = tmp_path / "report.json"
    proc = run_cli("audit", "--any-platform-tag", "--format", "json", "--output", out, wheel)
    assert proc.returncode == 0 and proc.stdout == ""
    assert json.loads(out.read_text())["wheels"][0]["deserved_tag"] == "manylinux_2_31_x86_64"
    assert [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []
    quiet = run_cli("audit", "--any-platform-tag", "-q", wheel)
    assert quiet.stdout.strip().count("\n") == 0 and "PASS" in quiet.stdout
    proc = run_cli("audit", "--output", tmp_path / "no" / "such" / "dir" / "r.txt", wheel)
    assert proc.returncode == 2 and "cannot write" in proc.stderr


def test_directory_and_glob_paths(build, tmp_path):
    ext = build.compile_c(math_extension_source("mathmod"), "mathmod.so", libs=("m",))
    for tag in ("cp311-cp311-linux_x86_64", "cp311-cp311-manylinux_2_17_x86_64"):
        build_wheel(tmp_path, "mathmod", "1.0", tag, {EXT.format("mathmod"): ext})
    code, doc = audit_json(tmp_path)
    assert code == 1 and len(doc["wheels"]) == 2
    code, doc = audit_json(str(tmp_path / "*linux_x86_64.whl"))
    assert code == 0 and len(doc["wheels"]) == 1


def test_policy_file_both_formats(build, tmp_path):
    ext = build.compile_c(math_extension_source("mathmod"), "mathmod.so", libs=("m",))
    wheel = build_wheel(tmp_path, "mathmod", "1.0", "cp311-cp311-linux_x86_64", {EXT.format("mathmod"): ext})
    ours = json.loads((run_cli("policy", "show", "manylinux_2_17").stdout))
    team = dict(ours, name="team_2_35", aliases=[], priority=57)
    team["symbol_versions"] = {"x86_64": dict(ours["symbol_versions"]["x86_64"])}
    team["symbol_versions"]["x86_64"]["GLIBC"] = ours["symbol_versions"]["x86_64"]["GLIBC"] + ["2.29"]
    path = tmp_path / "team.json"
    path.write_text(json.dumps(team))
    w, _ = one(wheel, policy_file=path)
    assert w.deserved_tag == "team_2_35_x86_64"
    import importlib.util
    from pathlib import Path

    spec = importlib.util.find_spec("auditwheel")
    if spec is None:
        pytest.skip("auditwheel not installed")
    aw = Path(spec.origin).parent / "policy" / "manylinux-policy.json"
    proc = run_cli("audit", "--policy-file", aw, wheel)  # its names are the standard ones: no file redefines them
    assert proc.returncode == 2 and "'manylinux_2_5', a standard tag's name" in proc.stderr
    renamed = tmp_path / "aw-renamed.json"
    renamed.write_text(json.dumps([dict(p, name=p["name"].replace("manylinux", "aw"), aliases=[], libc="glibc")
                                   for p in json.loads(aw.read_text())]))
    w, _ = one(wheel, policy_file=renamed)
    assert w.deserved_tag == "aw_2_31_x86_64"


def test_policy_list_and_show():
    proc = run_cli("policy", "list")
    assert proc.returncode == 0 and "manylinux_2_17 (manylinux2014)" in proc.stdout
    doc = json.loads(run_cli("policy", "show", "manylinux2014").stdout)
    assert doc["name"] == "manylinux_2_17" and "2.17" in doc["symbol_versions"]["x86_64"]["GLIBC"]
    proc = run_cli("policy", "show", "nonesuch")
    assert proc.returncode == 2 and "no such policy" in proc.stderr


def test_a_linker_script_named_like_a_library_is_not_bad_input(build, tmp_path):
    """intel-cmplr-lib-rt ships lib/libintlc.so as the GNU ld script 'INPUT (libintlc.so.5)' beside the
    library; the loader never reads it, so the wheel is judged on its ELF files."""
    lib = build.compile_c("int intlc_value(void) { return 5; }", "libintlc.so.5", flags=("-Wl,-soname,libintlc.so.5",))
    wheel = build_wheel(tmp_path, "scripted", "1.0", "py3-none-manylinux_2_17_x86_64", {
        "scripted-1.0.data/data/lib/libintlc.so.5": lib,
        "scripted-1.0.data/data/lib/libintlc.so": b"INPUT (libintlc.so.5)\n",
    })
    report, status = one(wheel)
    assert status == 0 and report.error is None
    assert [f.path for f in report.files] == ["scripted-1.0.data/data/lib/libintlc.so.5"]
