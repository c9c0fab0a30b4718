"""`wheelcheck show` answers what `auditwheel show` (6.8.2, the oracle) answers: the same JSON document and,
where no deliberate difference applies, the same text, on auditwheel's own test wheels and on wheels built here."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fixtures.sources import extension_source, math_extension_source
from tests.fixtures.wheels import build_wheel
from tests.helpers import AUDITWHEEL_BUNDLED, run_cli

EXT = "pkg/{}.cpython-311-x86_64-linux-gnu.so"
USES_ALPHA = extension_source("usealpha", "    return alpha_value();", prelude="extern int alpha_value(void);\n")
BUNDLED = [
    "glibc/testsimple-0.0.1-cp313-cp313-linux_aarch64.whl",
    "glibc/testsimple-0.0.1-cp313-cp313-linux_x86_64.whl",
    "glibc/testsimple-0.0.1-cp313-cp313-linux_s390x.whl",
    "cffi-1.5.0-cp27-none-linux_x86_64.whl",
    "fpewheel-0.0.0-cp35-cp35m-linux_x86_64.whl",
    "python_snappy-0.5.2-pp260-pypy_41-linux_x86_64.whl",
    "testzlib-0.0.1-cp310-cp310-linux_x86_64.whl",
]


def auditwheel(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "auditwheel", "show", *map(str, args)], capture_output=True,
                          text=True, timeout=600)


def normalised(theirs: dict, ours: dict) -> tuple[dict, dict, list[str]]:
    """Apply the deliberate differences of docs/differences.md; returns which applied."""
    applied = []
    if any(lib.startswith("libpython") for lib in theirs["external_libs"]):  # 2: libpython is not external
        applied.append("libpython")
        theirs["external_libs"] = {k: v for k, v in theirs["external_libs"].items() if not k.startswith("libpython")}
        for entry in theirs["policy_upgrades"].values():
            libs = [lib for lib in entry.get("libs_to_eliminate", []) if not lib.startswith("libpython")]
            entry.pop("libs_to_eliminate", None)
            if libs:
                entry["libs_to_eliminate"] = libs
        theirs["policy_upgrades"] = {k: v for k, v in theirs["policy_upgrades"].items() if v}
    extra = [k for k in ours.get("policy_upgrades", {}) if k.startswith("manylinux_2_43_")]
    if extra:  # 11: manylinux_2_43 is a bundled policy auditwheel does not have
        applied.append("2_43")
        for key in extra:
            del ours["policy_upgrades"][key]
    return theirs, ours, applied


def check_same_answer(wheel, *extra):
    """Difference 1 (auditwheel reads external libraries from this machine: libsnappy.so.1 once a build of
    python-snappy installed it) is met by giving wheelcheck the directories auditwheel read them from, so the
    answer does not hang on what this machine has, and the libraries' own needs are compared too."""
    theirs_proc = auditwheel("--json", *extra, wheel)
    host = sorted({str(Path(p).parent) for p in json.loads(theirs_proc.stdout or "{}").get("external_libs", {}).values()
                   if p})
    if host:
        extra = (*extra, "--ldpaths", ":".join(host))
    ours_proc = run_cli("show", "--json", *extra, wheel)
    assert ours_proc.returncode == theirs_proc.returncode == 0, (ours_proc.stderr, theirs_proc.stderr)
    theirs, ours, applied = normalised(json.loads(theirs_proc.stdout), json.loads(ours_proc.stdout))
    assert list(ours) == list(theirs)  # the same keys in the same order
    assert ours == theirs
    if not applied:  # then the text is auditwheel's, word for word (set reprs sorted)
        assert run_cli("show", *extra, wheel).stdout == auditwheel(*extra, wheel).stdout
    return ours, applied


@pytest.mark.parametrize("name", BUNDLED)
def test_auditwheel_test_wheels(name):
    check_same_answer(AUDITWHEEL_BUNDLED / name)


def test_symbol_versions_limit(build, tmp_path):
    ext = build.compile_c(math_extension_source("mathmod"), "mathmod.so", libs=("m",))
    wheel = build_wheel(tmp_path, "mathmod", "1.0", "cp311-cp311-manylinux_2_17_x86_64", {EXT.format("mathmod"): ext})
    ours, applied = check_same_answer(wheel)
    assert not applied and ours["sym_tag"] == ours["overall_tag"] == "manylinux_2_31_x86_64"
    assert ours["versioned_symbols"]["libm.so.6"] == ["GLIBC_2.29"]  # exp2, log2 in the source
    text = run_cli("show", wheel).stdout
    assert 'This constrains the platform tag to "manylinux_2_31_x86_64"' in text.replace("\n", " ")


def test_external_library_and_upgrades(build, tmp_path):
    alpha, _ = build.alpha_beta()
    ext = build.compile_c(USES_ALPHA, "usealpha.so", libs=(alpha,))
    wheel = build_wheel(tmp_path, "usealpha", "1.0", "cp311-cp311-linux_x86_64", {EXT.format("usealpha"): ext})
    ours, applied = check_same_answer(wheel)
    assert ours["overall_tag"] == "linux_x86_64" and ours["external_libs"] == {"libalpha.so.1": None}
    assert ours["policy_upgrades"]["manylinux_2_17_x86_64"] == {"libs_to_eliminate": ["libalpha.so.1"]}


def test_ldpaths_finds_external_libraries(build, tmp_path):
    """Given the same folder, both tools find libalpha and its own need libbeta there, at the same paths."""
    alpha, beta = build.alpha_beta()
    ext = build.compile_c(USES_ALPHA, "usealpha.so", libs=(alpha,))
    wheel = build_wheel(tmp_path, "usealpha", "1.0", "cp311-cp311-linux_x86_64", {EXT.format("usealpha"): ext})
    libs = tmp_path / "libs"
    libs.mkdir()
    for lib in (alpha, beta):
        (libs / lib.name).write_bytes(lib.read_bytes())
    theirs = json.loads(auditwheel("--json", "--ldpaths", libs, wheel).stdout)
    ours = json.loads(run_cli("show", "--json", "--ldpaths", libs, wheel).stdout)
    found = {"libalpha.so.1": str(libs / "libalpha.so.1"), "libbeta.so.1": str(libs / "libbeta.so.1")}
    assert ours["external_libs"] == theirs["external_libs"] == found
    del ours["policy_upgrades"]["manylinux_2_43_x86_64"]  # difference 11
    assert ours == theirs


def test_ldpaths_stop_at_what_the_system_provides(build, tmp_path):
    """A folder as a system's library directory is: libalpha.so.1 links to libalpha.so.1.0.0, a C++ library that
    needs libstdc++.so.6, which is there too. Both tools name the file the link leads to, and list libalpha's
    symbol versions but not libstdc++'s own (GLIBC_2.x, GCC_x): the system provides libstdc++, repair would not
    graft it. (wheelcheck listed them, and the link's name, while `show --ldpaths /usr/lib/...` read on.)"""
    alpha = build.compile_c('#include <string>\nextern "C" int alpha_value(void) { return (int)std::to_string(42).size(); }\n',
                            "libalpha.so.1", cxx=True, flags=("-Wl,-soname,libalpha.so.1",))
    ext = build.compile_c(USES_ALPHA, "usealpha.so", libs=(alpha,))
    wheel = build_wheel(tmp_path, "usealpha", "1.0", "cp311-cp311-linux_x86_64", {EXT.format("usealpha"): ext})
    libs = tmp_path / "libs"
    libs.mkdir()
    (libs / "libalpha.so.1.0.0").write_bytes(alpha.read_bytes())
    (libs / "libalpha.so.1").symlink_to("libalpha.so.1.0.0")
    cxx_runtime = subprocess.run(["g++", "-print-file-name=libstdc++.so.6"], capture_output=True, text=True).stdout
    (libs / "libstdc++.so.6").write_bytes(Path(cxx_runtime.strip()).resolve().read_bytes())
    stdcxx_needs = subprocess.run(["readelf", "-VW", str(libs / "libstdc++.so.6")], capture_output=True, text=True)
    assert "GCC_3.0" in stdcxx_needs.stdout  # what would show if it were read on
    theirs = json.loads(auditwheel("--json", "--ldpaths", libs, wheel).stdout)
    ours = json.loads(run_cli("show", "--json", "--ldpaths", libs, wheel).stdout)
    assert ours["external_libs"] == theirs["external_libs"] == {"libalpha.so.1": str(libs / "libalpha.so.1.0.0")}
    assert "libgcc_s.so.1" not in ours["versioned_symbols"] and "GLIBCXX_3.4.21" in ours["versioned_symbols"]["libstdc++.so.6"]
    del ours["policy_upgrades"]["manylinux_2_43_x86_64"]  # difference 11
    assert ours == theirs


def test_isa_level_and_disable_isa_ext_check(build, tmp_path):
    ext = build.compile_c(extension_source("fast"), "fast.so", flags=("-march=x86-64-v3", "-Wl,-z,x86-64-v3"))
    wheel = build_wheel(tmp_path, "fast", "1.0", "cp311-cp311-linux_x86_64", {EXT.format("fast"): ext})
    ours, _ = check_same_answer(wheel)
    assert ours["unsupported_isa"] is True and ours["overall_tag"] == "linux_x86_64"
    ours, _ = check_same_answer(wheel, "--disable-isa-ext-check")
    assert ours["unsupported_isa"] is False and ours["overall_tag"].startswith("manylinux_")
    audit = run_cli("audit", wheel, "--disable-isa-ext-check", "--format", "json")
    assert json.loads(audit.stdout)["wheels"][0]["deserved_tag"] == ours["overall_tag"]


def test_pure_wheel():
    wheel = AUDITWHEEL_BUNDLED / "plumbum-1.6.8-py2.py3-none-any.whl"
    theirs, ours = auditwheel("--json", wheel), run_cli("show", "--json", wheel)
    assert ours.returncode == theirs.returncode == 1
    assert set(json.loads(ours.stdout)) == set(json.loads(theirs.stdout)) == {"version", "wheel", "error"}
    theirs = auditwheel("--json", "--allow-pure-python-wheel", wheel)
    ours = run_cli("show", "--json", "--allow-pure-python-wheel", wheel)
    assert ours.returncode == theirs.returncode == 0
    assert json.loads(ours.stdout) == json.loads(theirs.stdout) == {"version": 1, "wheel": wheel.name, "pure": True}


def test_bad_input_is_one_line(tmp_path):
    missing = run_cli("show", tmp_path / "nothing-1.0-py3-none-any.whl")
    assert missing.returncode == 2 and missing.stderr.count("\n") == 1 and "nothing-1.0" in missing.stderr
