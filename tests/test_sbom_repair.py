"""The SBOM a repair writes (PEP 770: <dist>.dist-info/sboms/wheelcheck.cdx.json), and the OS-package lookup
behind it, against this machine's dpkg and a real system library: libsqlite3.so.0 (Debian's libsqlite3-0,
with libsqlite3-dev to link against), which no manylinux policy whitelists, so a repair grafts it.

auditwheel 6.8.2 is the oracle: its SBOM of the same repair names the same package."""
from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from packageurl import PackageURL

from tests.fixtures.repair_scenario import EXT_SUFFIX, python_tag
from tests.fixtures.sources import extension_source
from tests.fixtures.wheels import build_wheel
from tests.helpers import repair_json
from tests.test_sbom import header_define, validate_cyclonedx
from wheelcheck.api import sbom
from wheelcheck.sbom.os_packages import (lookup_cache_clear, os_package_of, os_packages_of, parse_apk_owner,
                                         parse_dpkg_search, parse_rpm_query, path_spellings)

TAG = f"{python_tag()}-{python_tag()}-linux_x86_64"
SQLITE = Path("/usr/lib/x86_64-linux-gnu/libsqlite3.so.0")
SQLITE_H = Path("/usr/include/sqlite3.h")
SBOM = "sqlapp-1.0.dist-info/sboms/wheelcheck.cdx.json"

needs_dpkg = pytest.mark.skipif(shutil.which("dpkg-query") is None or not SQLITE.exists() or not SQLITE_H.exists(),
                                reason="needs dpkg and Debian's libsqlite3-0 and libsqlite3-dev")


def dpkg_query(package: str, field: str) -> str:
    return subprocess.run(["dpkg-query", "-W", f"-f=${{{field}}}", package], capture_output=True, text=True,
                          check=True).stdout.strip()


def dpkg_owner(path: Path) -> str:
    """The package dpkg names for ``path``, under whichever /usr spelling it registered (asked directly)."""
    for spelling in (str(path), str(path).replace("/usr/lib/", "/lib/", 1)):
        proc = subprocess.run(["dpkg", "-S", spelling], capture_output=True, text=True)
        if proc.returncode == 0:
            return proc.stdout.split(":", 1)[0]
    raise AssertionError(f"dpkg owns no spelling of {path}")


def whichprovides(path: str):
    from auditwheel._vendor.whichprovides import whichprovides as theirs

    return theirs([path]).get(path)


@needs_dpkg
def test_lookup_agrees_with_auditwheel_and_dpkg():
    lookup_cache_clear()
    ours = os_package_of(str(SQLITE))
    assert (ours.type, ours.name) == ("deb", "libsqlite3-0")
    assert ours.version == dpkg_query("libsqlite3-0", "Version")
    assert ours.distro == re.search(r"^ID=\"?([^\"\n]+)", Path("/etc/os-release").read_text(), re.M).group(1)
    theirs = whichprovides(str(SQLITE))
    assert theirs is not None and PackageURL.from_string(ours.purl) == PackageURL.from_string(theirs.purl)


@needs_dpkg
def test_lookup_finds_a_library_registered_under_the_other_usr_spelling():
    """Debian registers zlib1g's files under /lib; the loader finds them under /usr/lib (merged /usr).
    auditwheel's lookup misses such a library; ours asks both spellings (docs/differences.md R9)."""
    found = Path("/usr/lib/x86_64-linux-gnu/libz.so.1")
    if not found.exists() or Path("/lib").resolve() != Path("/usr/lib"):
        pytest.skip("needs a merged-/usr system with zlib1g")
    package = dpkg_owner(found.resolve())
    ours = os_package_of(str(found))
    assert ours is not None and ours.name == package and ours.version == dpkg_query(package, "Version")
    assert f"/lib/x86_64-linux-gnu/{found.resolve().name}" in path_spellings(str(found))


@needs_dpkg
def test_asking_for_many_paths_at_once_answers_as_one_at_a_time(tmp_path):
    """Repairing pycurl: its 28 grafts ran dpkg 82 times (5.7 s of 8 s). One dpkg -S and one dpkg -s for all
    of them give each path the answer os_package_of gives it alone: a library under the other /usr spelling, a
    file of an arch-qualified package, and one no package owns (dpkg then exits 1 for the lot)."""
    lonely = tmp_path / "libnobody.so.1"
    lonely.write_bytes(b"\x7fELF")
    paths = [str(SQLITE), "/usr/lib/x86_64-linux-gnu/libz.so.1", str(SQLITE_H), str(lonely)]
    lookup_cache_clear()
    alone = {p: os_package_of(p) for p in paths}
    lookup_cache_clear()
    assert os_packages_of(paths) == alone and alone[str(lonely)] is None and alone[str(SQLITE)] is not None
    lookup_cache_clear()


def test_a_file_no_package_owns_has_none(tmp_path):
    lonely = tmp_path / "libnobody.so.1"
    lonely.write_bytes(b"\x7fELF")
    assert os_package_of(str(lonely)) is None


def test_package_manager_answers_are_parsed_as_they_print_them():
    """rpm and apk are not on this machine: their parsers on the lines they print (auditwheel's formats)."""
    assert parse_dpkg_search("zlib1g:amd64: /lib/x86_64-linux-gnu/libz.so.1.2.13\n",
                             "/lib/x86_64-linux-gnu/libz.so.1.2.13") == "zlib1g:amd64"
    assert parse_dpkg_search("diversion by x from: /lib/a.so\nlibfoo1, libfoo2: /lib/a.so\n", "/lib/a.so") == "libfoo1"
    assert parse_dpkg_search("dpkg-query: no path found matching pattern /x\n", "/x") is None
    rpm = parse_rpm_query("zlib 1.2.11 40.el9 x86_64", "almalinux")
    assert (rpm.name, rpm.version, rpm.purl) == ("zlib", "1.2.11-40.el9", "pkg:rpm/almalinux/zlib@1.2.11-40.el9")
    assert parse_rpm_query("", "almalinux") is None
    apk = parse_apk_owner("/lib/libz.so.1.3.1 is owned by zlib-1.3.1-r2\n", "alpine")
    assert (apk.name, apk.version) == ("zlib", "1.3.1-r2")
    dashed = parse_apk_owner("/usr/lib/libssl.so.3 is owned by libssl3-3.3.2-r1\n", "alpine")
    assert (dashed.name, dashed.version) == ("libssl3", "3.3.2-r1")
    assert parse_apk_owner("/usr/lib/x.so is owned by py3-foo-bar-1.0-r0", "alpine").name == "py3-foo-bar"


@pytest.fixture(scope="module")
def app_wheel(build, tmp_path_factory) -> Path:
    if not SQLITE.exists() or not SQLITE_H.exists():
        pytest.skip("needs Debian's libsqlite3-0 and libsqlite3-dev")
    ext = build.compile_c(extension_source("_sql", "    return (long)sqlite3_libversion_number();",
                                           prelude="#include <sqlite3.h>\n"), f"_sql{EXT_SUFFIX}", libs=("sqlite3",))
    dist = tmp_path_factory.mktemp("sqlapp")
    return build_wheel(dist, "sqlapp", "1.0", TAG, {f"sqlapp/_sql{EXT_SUFFIX}": ext, "sqlapp/__init__.py": b""})


def repair(wheel: Path, out: Path, **env: str) -> tuple[Path, dict]:
    proc, report = repair_json(wheel, "-w", out, env={**os.environ, **env} if env else None)
    assert proc.returncode == 0, proc.stderr
    outcome = report["wheels"][0]
    return Path(outcome["output"]), outcome


@pytest.fixture(scope="module")
def repaired(app_wheel, tmp_path_factory) -> tuple[Path, dict]:
    return repair(app_wheel, tmp_path_factory.mktemp("repaired"))


@needs_dpkg
def test_repaired_wheel_carries_a_valid_sbom_naming_the_grafted_library(repaired):
    out, outcome = repaired
    (graft,) = outcome["grafted"]
    assert graft["needed_as"] == ["libsqlite3.so.0"] and outcome["sbom"] == SBOM
    with zipfile.ZipFile(out) as zf:
        document = validate_cyclonedx(zf.read(SBOM).decode())
        library = zf.read(graft["member"])
        record = zf.read("sqlapp-1.0.dist-info/RECORD").decode()
    assert SBOM in record  # listed like any member
    assert "timestamp" not in document["metadata"]
    assert document["metadata"]["component"]["purl"] == f"pkg:pypi/sqlapp@1.0?file_name={out.name}"
    (component,) = document["components"]
    version = dpkg_query("libsqlite3-0", "Version")
    assert (component["name"], component["version"]) == ("libsqlite3-0", version)
    assert PackageURL.from_string(component["purl"]) == PackageURL("deb", "debian", "libsqlite3-0", version)
    assert component["hashes"] == [{"alg": "SHA-256", "content": hashlib.sha256(library).hexdigest()}]
    props = {p["name"]: p["value"] for p in component["properties"]}
    assert props["wheelcheck:file"] == graft["member"] and props["wheelcheck:upstream"] == "sqlite"
    assert props["wheelcheck:upstream-version"] == header_define(SQLITE_H, "SQLITE_VERSION")
    assert component["cpe"] == f"cpe:2.3:a:sqlite:sqlite:{header_define(SQLITE_H, 'SQLITE_VERSION')}:*:*:*:*:*:*:*"


@needs_dpkg
def test_same_package_as_auditwheels_sbom(app_wheel, repaired, tmp_path):
    _, outcome = repaired
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}")
    proc = subprocess.run([sys.executable, "-m", "auditwheel", "repair", "-w", str(tmp_path), str(app_wheel)],
                          capture_output=True, text=True, timeout=600, env=env)
    assert proc.returncode == 0, proc.stderr
    (theirs,) = tmp_path.glob("*.whl")
    with zipfile.ZipFile(theirs) as zf, zipfile.ZipFile(outcome["output"]) as ours:
        their_doc = json.loads(zf.read("sqlapp-1.0.dist-info/sboms/auditwheel.cdx.json"))
        our_doc = json.loads(ours.read(SBOM))
    their_packages = {PackageURL.from_string(c["purl"]) for c in their_doc["components"][1:]}
    assert their_packages == {PackageURL.from_string(c["purl"]) for c in our_doc["components"]}


@needs_dpkg
def test_repair_stays_reproducible_and_idempotent_with_the_sbom(app_wheel, repaired, tmp_path):
    out, _ = repaired
    again, _ = repair(app_wheel, tmp_path / "again")
    assert again.read_bytes() == out.read_bytes()  # no clock, no random serial number
    twice, outcome = repair(out, tmp_path / "twice")
    assert twice.read_bytes() == out.read_bytes() and outcome["sbom"] == SBOM
    dated, _ = repair(app_wheel, tmp_path / "dated", SOURCE_DATE_EPOCH="1700000000")
    with zipfile.ZipFile(dated) as zf:
        document = json.loads(zf.read(SBOM))
        assert zf.getinfo(SBOM).date_time == (2023, 11, 14, 22, 13, 20)
    assert document["metadata"]["timestamp"].startswith("2023-11-14T22:13:20")
    redated, _ = repair(app_wheel, tmp_path / "redated", SOURCE_DATE_EPOCH="1700000000")
    assert redated.read_bytes() == dated.read_bytes()


@needs_dpkg
def test_sbom_of_the_repaired_wheel_keeps_the_os_package(repaired):
    """`wheelcheck sbom` reads the OS package from the wheel's own SBOM: this machine's dpkg is not asked."""
    out, outcome = repaired
    (bom,) = sbom(out)
    (component,) = bom.components
    assert component.os_package is not None and component.os_package.name == "libsqlite3-0"
    assert component.file == outcome["grafted"][0]["member"] and component.name == "sqlite"
    assert [e.kind for e in component.evidence][-1] == "os-package"
