"""A repair carries the licenses of what it grafts: real Debian libraries of this machine (installed at test
time by tests/fixtures/host_packages.py), one per kind of license: libgmp10 (GPL-2+ or LGPL-3+), libffi8
(Expat) and libsqlite3-0 (public domain, which SPDX has no id for).

What is expected is read from the Debian files themselves (the copyright file, the common-licenses texts it
points to), from packaging's METADATA parser and from pip's install, never from wheelcheck's own output;
auditwheel is the control whose output carries no license.
"""
from __future__ import annotations

import ctypes
import json
import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from packaging.metadata import Metadata

from tests.fixtures.host_packages import host_libraries  # noqa: F401 (fixture)
from tests.fixtures.repair_scenario import EXT_SUFFIX, python_tag
from tests.fixtures.sources import extension_source
from tests.fixtures.wheels import build_wheel
from tests.helpers import audit_one, by_rule, make_venv, pip_install, repair_json, run_cli
from tests.test_sbom import validate_cyclonedx
from wheelcheck.api import sbom

TAG = f"{python_tag()}-{python_tag()}-linux_x86_64"
DIST = "licapp-1.0.dist-info"
SBOM = f"{DIST}/sboms/wheelcheck.cdx.json"
OWN_LICENSE = b"MIT License\n\nCopyright (c) the licapp authors\n"
# what each package's copyright file says of `Files: *` (checked below), and what SPDX calls it
DEBIAN_LICENSE = {"libgmp10": "GPL-2+ or LGPL-3+", "libffi8": "Expat", "libsqlite3-0": "public-domain"}
SPDX = {"libgmp10": "GPL-2.0-or-later OR LGPL-3.0-or-later", "libffi8": "MIT", "libsqlite3-0": None}
# the three libraries, declared here rather than through headers (the -dev packages are not needed)
PRELUDE = """#include <string.h>
extern int sqlite3_libversion_number(void);
extern const char *const __gmp_version;
extern const unsigned long ffi_type_double[];  /* ffi_type: its size first */
"""
BODY = "    return (long)sqlite3_libversion_number() * 1000 + (long)strlen(__gmp_version) * 10 + (long)ffi_type_double[0];"


def expected_call(libraries: dict[str, Path]) -> int:
    """What the extension's call() returns, asked of the same libraries through ctypes."""
    sqlite = ctypes.CDLL(str(libraries["libsqlite3-0"])).sqlite3_libversion_number()
    gmp = ctypes.c_char_p.in_dll(ctypes.CDLL(str(libraries["libgmp10"])), "__gmp_version").value
    double = ctypes.c_size_t.in_dll(ctypes.CDLL(str(libraries["libffi8"])), "ffi_type_double").value
    return sqlite * 1000 + len(gmp) * 10 + double


def copyright_file(package: str) -> Path:
    return Path(os.path.realpath(f"/usr/share/doc/{package}/copyright"))


@pytest.fixture(scope="module")
def app_wheel(build, host_libraries, tmp_path_factory) -> Path:  # noqa: F811
    for package, synopsis in DEBIAN_LICENSE.items():  # the premise of the expected SPDX expressions
        text = copyright_file(package).read_text(errors="replace")
        assert re.search(rf"^Files: \*\n(?:.+\n)*?License: {re.escape(synopsis)}$", text, re.M), package
    ext = build.compile_c(extension_source("_lic", BODY, prelude=PRELUDE), f"_lic{EXT_SUFFIX}",
                          libs=[f":{path.name}" for path in host_libraries.values()])
    # a project whose METADATA (2.1) declares its own LICENSE where setuptools put it before PEP 639
    metadata = b"Metadata-Version: 2.1\nName: licapp\nVersion: 1.0\nLicense: MIT\nLicense-File: LICENSE\n\nlicapp\n"
    return build_wheel(tmp_path_factory.mktemp("licapp"), "licapp", "1.0", TAG, {
        f"licapp/_lic{EXT_SUFFIX}": ext, "licapp/__init__.py": b"from licapp._lic import call\n",
        f"{DIST}/METADATA": metadata, f"{DIST}/LICENSE": OWN_LICENSE})


def repair(wheel: Path, out: Path, *args: str | Path) -> tuple[Path, dict]:
    proc, report = repair_json(wheel, "-w", out, *args)
    assert proc.returncode == 0, proc.stderr
    outcome = report["wheels"][0]
    return Path(outcome["output"]), outcome


@pytest.fixture(scope="module")
def repaired(app_wheel, tmp_path_factory) -> tuple[Path, dict]:
    return repair(app_wheel, tmp_path_factory.mktemp("repaired"))


def grafts_by_package(outcome: dict) -> dict[str, dict]:
    """package -> graft, from where each came on this machine."""
    out = {}
    for graft in outcome["grafted"]:
        owner = subprocess.run(["dpkg", "-S", graft["realpath"]], capture_output=True, text=True).stdout
        if not owner:  # registered under the other /usr spelling
            owner = subprocess.run(["dpkg", "-S", graft["realpath"].replace("/usr/lib/", "/lib/", 1)],
                                   capture_output=True, text=True).stdout
        out[owner.split(":", 1)[0]] = graft
    return out


def test_each_graft_carries_its_packages_license_text(repaired, host_libraries):  # noqa: F811
    out, outcome = repaired
    grafts = grafts_by_package(outcome)
    assert sorted(grafts) == sorted(DEBIAN_LICENSE)
    with zipfile.ZipFile(out) as zf:
        for package, graft in grafts.items():
            license = graft["license"]
            assert license["problem"] is None and license["file"].startswith(f"{DIST}/licenses/licapp.libs/")
            text = zf.read(license["file"])
            own = copyright_file(package).read_bytes()
            assert own in text and package in license["origin"]
            # the GPL and LGPL texts the copyright file points to instead of repeating them travel too
            for common in set(re.findall(rb"/usr/share/common-licenses/[A-Za-z0-9.+-]*[A-Za-z0-9+]", own)):
                assert Path(os.path.realpath(common.decode())).read_bytes() in text, common
            assert license["expression"] == SPDX[package]
        files = {g["license"]["file"] for g in grafts.values()}
        assert len(files) == 3  # one per package, none colliding


def test_metadata_declares_each_text_and_keeps_the_projects_license(repaired):
    out, outcome = repaired
    with zipfile.ZipFile(out) as zf:
        metadata = Metadata.from_email(zf.read(f"{DIST}/METADATA"), validate=True)  # packaging's strict reading
        names = set(zf.namelist())
        own = zf.read(f"{DIST}/licenses/LICENSE")
    assert str(metadata.metadata_version) == "2.4" and outcome["metadata_version_raised"] == "2.1"
    assert metadata.license == "MIT" and metadata.license_expression is None  # the project's own, untouched
    assert sorted(metadata.license_files) == sorted(
        ["LICENSE"] + [g["license"]["file"][len(f"{DIST}/licenses/"):] for g in outcome["grafted"]])
    assert all(f"{DIST}/licenses/{path}" in names for path in metadata.license_files)
    assert own == OWN_LICENSE  # where 2.4 reads the LICENSE the 2.1 METADATA declared


def test_sbom_gives_each_component_its_license(repaired):
    out, outcome = repaired
    grafts = grafts_by_package(outcome)
    with zipfile.ZipFile(out) as zf:
        document = validate_cyclonedx(zf.read(SBOM).decode())
    components = {c["name"]: c for c in document["components"]}
    for package, graft in grafts.items():
        component = components[package]
        stated = component["licenses"]
        props = {p["name"]: p["value"] for p in component["properties"]}
        assert props["wheelcheck:license-file"] == graft["license"]["file"]
        if SPDX[package]:
            assert stated == [{"acknowledgement": "declared", "expression": SPDX[package]}]
        else:  # no SPDX id: the license is the text, named by its file
            assert stated == [{"license": {"acknowledgement": "declared", "name": graft["license"]["file"]}}]
    # `wheelcheck sbom` reads them back from the wheel, without asking this machine
    (bom,) = sbom(out)
    by_file = {c.file: c.license for c in bom.components if c.kind == "vendored"}
    assert {g["member"]: (by_file[g["member"]].expression, by_file[g["member"]].file) for g in grafts.values()} == \
           {g["member"]: (SPDX[p], g["license"]["file"]) for p, g in grafts.items()}


def test_installed_wheel_imports_and_keeps_the_license_files(repaired, host_libraries, tmp_path):  # noqa: F811
    out, _ = repaired
    python = make_venv(tmp_path / "venv")
    proc = pip_install(python, out)
    assert proc.returncode == 0, proc.stderr
    env = {k: v for k, v in os.environ.items() if k not in ("LD_LIBRARY_PATH", "PYTHONPATH")}
    script = ("import json, importlib.metadata as m, licapp; d = m.distribution('licapp'); "
              "print(json.dumps({'call': licapp.call(), 'files': [str(d.locate_file(f)) for f in d.files "
              "if '/licenses/' in str(f)], 'declared': d.metadata.get_all('License-File')}))")
    proc = subprocess.run([str(python), "-c", script], capture_output=True, text=True, cwd=tmp_path, env=env,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    found = json.loads(proc.stdout)
    assert found["call"] == expected_call(host_libraries)
    assert len(found["declared"]) == 4 and all(Path(f).is_file() for f in found["files"])
    assert sorted(Path(f).name for f in found["files"]) == sorted(
        ["LICENSE"] + [Path(d).name for d in found["declared"] if d != "LICENSE"])


def test_record_lists_every_new_member_as_installer_checks_it(repaired, tmp_path):
    out, _ = repaired
    proc = subprocess.run([sys.executable, "-m", "installer", "--validate-record", "all", "--no-compile-bytecode",
                           "--destdir", str(tmp_path / "dest"), str(out)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    with zipfile.ZipFile(out) as zf:
        record = zf.read(f"{DIST}/RECORD").decode()
        licenses = [n for n in zf.namelist() if n.startswith(f"{DIST}/licenses/")]
    assert all(f"\n{name}," in f"\n{record}" for name in licenses + [f"{DIST}/METADATA"])


def test_repair_is_reproducible_and_idempotent_with_the_licenses(app_wheel, repaired, tmp_path):
    out, _ = repaired
    again, _ = repair(app_wheel, tmp_path / "again")
    assert again.read_bytes() == out.read_bytes()
    twice, outcome = repair(out, tmp_path / "twice")
    assert twice.read_bytes() == out.read_bytes() and outcome["unchanged"]


def test_audit_passes_the_repaired_wheel_and_warns_of_auditwheels(app_wheel, repaired, tmp_path):
    out, _ = repaired
    assert not by_rule(audit_one(out), "vendored-license")
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}")
    proc = subprocess.run([sys.executable, "-m", "auditwheel", "repair", "-w", str(tmp_path), str(app_wheel)],
                          capture_output=True, text=True, timeout=600, env=env)
    assert proc.returncode == 0, proc.stderr
    (theirs,) = tmp_path.glob("*.whl")
    with zipfile.ZipFile(theirs) as zf:
        vendored = sorted(n for n in zf.namelist() if n.startswith("licapp.libs/") and not n.endswith("/"))
    warned = by_rule(audit_one(theirs), "vendored-license")
    assert sorted(f.file for f in warned) == vendored and len(vendored) == 3
    assert all(f.severity == "warning" for f in warned)


def test_text_report_says_the_wheel_carries_other_licenses(app_wheel, tmp_path):
    proc = run_cli("repair", "-w", tmp_path, app_wheel)
    assert proc.returncode == 0, proc.stderr
    assert "license GPL-2.0-or-later OR LGPL-3.0-or-later:" in proc.stdout and "license MIT:" in proc.stdout
    assert "the wheel now also carries code under: GPL-2.0-or-later OR LGPL-3.0-or-later; MIT; 1 text without" \
        in proc.stdout
    assert "Metadata-Version raised from 2.1 to 2.4" in proc.stdout


# -- a library no package installed


@pytest.fixture(scope="module")
def plain_wheel(build, tmp_path_factory) -> tuple[Path, Path]:
    """A wheel whose extension needs libplain.so.1, a library of a build directory (--lib-path)."""
    lib_dir = tmp_path_factory.mktemp("plain-lib")
    lib = build.compile_c("int plain_value(void) { return 7; }\n", "libplain.so.1", flags=("-Wl,-soname,libplain.so.1",))
    (lib_dir / "libplain.so.1").write_bytes(lib.read_bytes())
    ext = build.compile_c(extension_source("_plain", "    return plain_value();",
                                           prelude="extern int plain_value(void);\n"), f"_plain{EXT_SUFFIX}",
                          libs=[lib_dir / "libplain.so.1"])
    wheel = build_wheel(tmp_path_factory.mktemp("plainapp"), "plainapp", "1.0", TAG, {
        f"plainapp/_plain{EXT_SUFFIX}": ext, "plainapp/__init__.py": b""})
    return wheel, lib_dir


def test_a_library_no_package_installed_has_no_license_and_the_audit_says_so(plain_wheel, tmp_path):
    wheel, lib_dir = plain_wheel
    out, outcome = repair(wheel, tmp_path, "--lib-path", lib_dir)
    (graft,) = outcome["grafted"]
    assert graft["license"]["file"] is None and "--license-file libplain.so.1=FILE" in graft["license"]["problem"]
    (finding,) = [f for f in outcome["findings"] if f["rule"] == "vendored-license"]
    assert finding["file"] == graft["member"] and finding["severity"] == "warning"
    with zipfile.ZipFile(out) as zf:
        assert not [n for n in zf.namelist() if "/licenses/" in n]
        assert b"License-File" not in zf.read("plainapp-1.0.dist-info/METADATA")


def test_license_file_option_supplies_one(plain_wheel, tmp_path):
    wheel, lib_dir = plain_wheel
    given = tmp_path / "COPYING.plain"
    given.write_bytes(b"plain: BSD-2-Clause\n")
    out, outcome = repair(wheel, tmp_path / "out", "--lib-path", lib_dir, "--license-file", f"libplain.so.1={given}")
    (graft,) = outcome["grafted"]
    member = "plainapp-1.0.dist-info/licenses/plainapp.libs/libplain.so.1.txt"
    assert graft["license"]["file"] == member and graft["license"]["expression"] is None
    assert not [f for f in outcome["findings"] if f["rule"] == "vendored-license"]
    with zipfile.ZipFile(out) as zf:
        assert zf.read(member) == given.read_bytes()
        metadata = Metadata.from_email(zf.read("plainapp-1.0.dist-info/METADATA"), validate=True)
    assert metadata.license_files == ["plainapp.libs/libplain.so.1.txt"]


def test_license_files_setting_takes_only_the_projects_own_files(plain_wheel, tmp_path):
    wheel, lib_dir = plain_wheel
    project = tmp_path / "project"
    (project / "licenses").mkdir(parents=True)
    (project / "licenses" / "plain.txt").write_bytes(b"plain's license\n")
    (project / "pyproject.toml").write_text('[tool.wheelcheck.license-files]\n"libplain.so.1" = "licenses/plain.txt"\n')
    proc = run_cli("repair", "--format", "json", "-w", tmp_path / "out", "--lib-path", lib_dir, wheel, cwd=project)
    assert proc.returncode == 0, proc.stderr
    (graft,) = json.loads(proc.stdout)["wheels"][0]["grafted"]
    assert graft["license"]["origin"].startswith(str(project / "licenses" / "plain.txt"))
    shown = run_cli("config", cwd=project).stdout
    assert f"libplain.so.1: {project / 'licenses' / 'plain.txt'}" in shown
    # a file outside the repository's folder is refused: its settings may not publish the machine's files
    (project / "pyproject.toml").write_text('[tool.wheelcheck.license-files]\n"libplain.so.1" = "../../etc/passwd"\n')
    proc = run_cli("repair", "-w", tmp_path / "out2", "--lib-path", lib_dir, wheel, cwd=project)
    assert proc.returncode == 2 and "outside the project's folder" in proc.stderr
    assert not (tmp_path / "out2").exists() or not list((tmp_path / "out2").iterdir())
