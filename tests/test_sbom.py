"""The bill of materials (wheelcheck sbom): third-party code found in wheels built here with gcc, from the
host's own static archives and libraries (Debian's zlib1g-dev, libssl-dev, libsqlite3-dev: what the
project's machines carry). Expected versions come from the same packages' headers, never from our code.
Every document is checked with the formats' own tools: the CycloneDX 1.6 schema as cyclonedx-python-lib
ships it, SPDX's parser and validator (spdx-tools)."""
from __future__ import annotations

import hashlib
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from tests.fixtures.repair_scenario import EXT_SUFFIX, python_tag
from tests.fixtures.sources import extension_source
from tests.fixtures.wheels import build_wheel
from tests.helpers import audit_json
from wheelcheck.api import sbom
from wheelcheck.elf.version_strings import MAX_CANDIDATES, MAX_KEPT, version_strings
from wheelcheck.report.audit_json import audit_schema
from wheelcheck.report.sbom_spdx import render_spdx
from wheelcheck.report.sbom_text import render_sbom_text
from wheelcheck.sbom.cyclonedx_json import cyclonedx_json

TAG = f"{python_tag()}-{python_tag()}-linux_x86_64"
MULTIARCH = Path("/usr/lib/x86_64-linux-gnu")
INCLUDE = Path("/usr/include")


def _needs(*paths: Path) -> None:
    missing = [str(p) for p in paths if not p.exists()]
    if missing:
        pytest.skip(f"needs {', '.join(missing)} (Debian's zlib1g-dev, libssl-dev, libsqlite3-dev)")


def header_define(header: Path, name: str) -> str:
    """A string macro of a C header: the version as the library's own package states it."""
    match = re.search(rf'^#\s*define\s+{name}\s+"([^"]+)"', header.read_text(), re.MULTILINE)
    assert match, f"{name} not in {header}"
    return match.group(1)


def validate_cyclonedx(text: str) -> dict:
    from cyclonedx.schema import SchemaVersion
    from cyclonedx.validation.json import JsonStrictValidator

    error = JsonStrictValidator(SchemaVersion.V1_6).validate_str(text)
    assert error is None, error
    return json.loads(text)


def validate_spdx(text: str, tmp_path: Path) -> None:
    from spdx_tools.spdx.parser.parse_anything import parse_file
    from spdx_tools.spdx.validation.document_validator import validate_full_spdx_document

    path = tmp_path / "doc.spdx.json"
    path.write_text(text)
    messages = validate_full_spdx_document(parse_file(str(path)))
    assert not messages, [m.validation_message for m in messages]


def one_wheel(tmp_path: Path, name: str, members: dict) -> Path:
    return build_wheel(tmp_path / "dist", name, "1.0", TAG, {**members, f"{name}/__init__.py": b""})


def components(wheel: Path) -> list:
    (bom,) = sbom(wheel)
    return list(bom.components)


ZLIB_USER = """#include <zlib.h>
#include <string.h>
static long wc_zlib(void) {
    unsigned char packed[128]; unsigned long n = sizeof packed; const char *s = "abcabcabcabcabc";
    return compress(packed, &n, (const unsigned char *)s, strlen(s)) == Z_OK ? (long)n : -1;
}
"""


def test_hidden_static_zlib_is_found_by_its_version_string(build, tmp_path):
    """libz.a linked into an extension with every symbol hidden: only zlib's own copyright string tells."""
    _needs(MULTIARCH / "libz.a", INCLUDE / "zlib.h")
    ext = build.compile_c(extension_source("_z", "    return wc_zlib();", prelude=ZLIB_USER), f"_z{EXT_SUFFIX}",
                          flags=("-Wl,--exclude-libs,ALL",), libs=(MULTIARCH / "libz.a",))
    (found,) = components(one_wheel(tmp_path, "zhidden", {f"zhidden/_z{EXT_SUFFIX}": ext}))
    version = header_define(INCLUDE / "zlib.h", "ZLIB_VERSION")
    assert (found.name, found.version, found.kind, found.file) == ("zlib", version, "static", f"zhidden/_z{EXT_SUFFIX}")
    assert {e.kind for e in found.evidence} == {"string"}  # deflate's banner (compress() links no inflate)
    assert all(f" {version} Copyright" in e.value for e in found.evidence)
    assert found.cpe == f"cpe:2.3:a:zlib:zlib:{version}:*:*:*:*:*:*:*" and found.purl == f"pkg:generic/zlib@{version}"


def test_exported_static_zlib_is_found_by_symbols_and_string(build, tmp_path):
    """An executable linked with libz.a and -rdynamic exports zlib: the exposure analysis names the family."""
    _needs(MULTIARCH / "libz.a", INCLUDE / "zlib.h")
    tool = build.compile_c(ZLIB_USER + "int main(void) { return wc_zlib() < 0; }\n", "ztool", shared=False,
                           flags=("-rdynamic",), libs=(MULTIARCH / "libz.a",))
    subprocess.run([str(tool)], check=True)
    (found,) = components(one_wheel(tmp_path, "zexported", {"zexported/ztool": tool}))
    assert (found.name, found.version, found.kind) == ("zlib", header_define(INCLUDE / "zlib.h", "ZLIB_VERSION"),
                                                       "static")
    kinds = [e.kind for e in found.evidence]
    assert kinds[0] == "symbols" and "string" in kinds
    assert re.match(r"exports \d+ zlib symbols \(", found.evidence[0].value)


def test_zlib_loaded_dynamically_is_not_a_component(build, tmp_path):
    """A file that loads libz.so.1 is not carrying zlib, even holding zlib's banner (headers can put zlib's
    strings in any program): the string counts only in a file that does not load the library."""
    _needs(INCLUDE / "zlib.h")
    banner = ('__attribute__((used)) const char wc_banner[] = '
              '" deflate 1.2.13 Copyright 1995-2022 Jean-loup Gailly and Mark Adler ";\n')
    ext = build.compile_c(extension_source("_z", "    return wc_zlib();", prelude=ZLIB_USER + banner),
                          f"_z{EXT_SUFFIX}", libs=("z",))
    wheel = one_wheel(tmp_path, "zdynamic", {f"zdynamic/_z{EXT_SUFFIX}": ext})
    assert components(wheel) == []


def test_hidden_static_openssl_states_its_version(build, tmp_path):
    _needs(MULTIARCH / "libcrypto.a", INCLUDE / "openssl" / "opensslv.h")
    prelude = "#include <openssl/crypto.h>\n"
    ext = build.compile_c(extension_source("_c", "    return (long)OpenSSL_version(OPENSSL_VERSION)[0];", prelude=prelude),
                          f"_c{EXT_SUFFIX}", flags=("-Wl,--exclude-libs,ALL",), libs=(MULTIARCH / "libcrypto.a", "pthread"))
    (found,) = components(one_wheel(tmp_path, "sslhidden", {f"sslhidden/_c{EXT_SUFFIX}": ext}))
    version = header_define(INCLUDE / "openssl" / "opensslv.h", "OPENSSL_VERSION_STR")
    assert (found.name, found.version, found.kind) == ("openssl", version, "static")
    assert found.evidence[0].value.startswith(f"OpenSSL {version} ")
    assert found.cpe == f"cpe:2.3:a:openssl:openssl:{version}:*:*:*:*:*:*:*"


def test_static_sqlite_states_its_version_in_an_exported_symbol(build, tmp_path):
    """SQLite holds its version only as the value of sqlite3_version[], read when the symbol is exported."""
    _needs(MULTIARCH / "libsqlite3.a", INCLUDE / "sqlite3.h")
    src = '#include <sqlite3.h>\nint main(void) { return sqlite3_libversion()[0] != \'3\'; }\n'
    tool = build.compile_c(src, "sqltool", shared=False, flags=("-rdynamic",),
                           libs=(MULTIARCH / "libsqlite3.a", "m", "pthread", "dl"))
    (found,) = components(one_wheel(tmp_path, "sqlstatic", {"sqlstatic/sqltool": tool}))
    version = header_define(INCLUDE / "sqlite3.h", "SQLITE_VERSION")
    assert (found.name, found.version, found.kind) == ("sqlite", version, "static")
    assert {e.kind for e in found.evidence} == {"symbols", "string"}
    assert f"sqlite3_version={version}" in [e.value for e in found.evidence]


@pytest.fixture(scope="module")
def vendored_wheel(tmp_path_factory) -> Path:
    """The host's libz.so.1 as an earlier auditwheel repair leaves it: renamed with a hash, in <dist>.libs."""
    real = MULTIARCH / "libz.so.1"
    _needs(real, INCLUDE / "zlib.h")
    tmp = tmp_path_factory.mktemp("vendored")
    return one_wheel(tmp, "zvend", {"zvend.libs/libz-1a2b3c4d.so.1.2.13": Path(real.resolve()).read_bytes()})


def test_vendored_library_is_named_by_its_upstream(vendored_wheel):
    (found,) = components(vendored_wheel)
    assert (found.name, found.kind, found.file) == ("zlib", "vendored", "zvend.libs/libz-1a2b3c4d.so.1.2.13")
    assert found.version == header_define(INCLUDE / "zlib.h", "ZLIB_VERSION")
    assert found.soname == "libz.so.1"  # its SONAME: the name before a repair renamed it
    assert found.sha256 == hashlib.sha256((MULTIARCH / "libz.so.1").resolve().read_bytes()).hexdigest()
    assert found.evidence[0].kind == "filename" and "(libz.so.1 before a repair renamed it)" in found.evidence[0].value


def test_documents_are_valid_in_each_format(vendored_wheel, tmp_path):
    boms = sbom(vendored_wheel)
    document = validate_cyclonedx(cyclonedx_json(boms, {}))
    assert document["specVersion"] == "1.6" and "timestamp" not in document["metadata"]
    assert document["metadata"]["component"]["purl"].startswith("pkg:pypi/zvend@1.0?file_name=")
    (component,) = document["components"]
    assert component["name"] == "zlib" and component["hashes"][0]["alg"] == "SHA-256"
    assert cyclonedx_json(boms, {}) == cyclonedx_json(boms, {})  # no clock, no random serial number
    dated = validate_cyclonedx(cyclonedx_json(boms, {"SOURCE_DATE_EPOCH": "1700000000"}))
    assert dated["metadata"]["timestamp"].startswith("2023-11-14T22:13:20")
    validate_spdx(render_spdx(boms, {"SOURCE_DATE_EPOCH": "1700000000"}), tmp_path)
    table = [line.text for line in render_sbom_text(boms)]
    assert table[0].endswith(": 1 third-party component") and "zlib" in table[2] and "vendored" in table[2]


def test_several_wheels_make_one_valid_document(vendored_wheel, build, tmp_path):
    ext = build.compile_c(extension_source("_p"), f"_p{EXT_SUFFIX}")
    plain = one_wheel(tmp_path, "plain", {f"plain/_p{EXT_SUFFIX}": ext})
    boms = sbom([vendored_wheel, plain])
    assert [len(b.components) for b in boms] == [1, 0]
    document = validate_cyclonedx(cyclonedx_json(boms, {}))
    assert "component" not in document["metadata"]
    assert sorted(c["name"] for c in document["components"]) == ["plain", "zlib", "zvend"]
    validate_spdx(render_spdx(boms), tmp_path)


def test_cli(vendored_wheel, tmp_path):
    out = tmp_path / "bom.cdx.json"
    proc = subprocess.run([sys.executable, "-m", "wheelcheck", "sbom", str(vendored_wheel), "--output", str(out)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert validate_cyclonedx(out.read_text())["components"][0]["name"] == "zlib"
    proc = subprocess.run([sys.executable, "-m", "wheelcheck", "sbom", "--format", "table", str(vendored_wheel)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and "zvend.libs/libz-1a2b3c4d.so.1.2.13" in proc.stdout
    proc = subprocess.run([sys.executable, "-m", "wheelcheck", "sbom", str(tmp_path / "missing-1.0-py3-none-any.whl")],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and proc.stderr.startswith("wheelcheck: error: ") and proc.stdout == ""


def test_audit_json_lists_the_same_components(vendored_wheel):
    code, report = audit_json(vendored_wheel, "--format", "json")
    jsonschema.validate(report, audit_schema())
    assert report["schema_version"] == 2 and report["schema_minor"] >= 1  # components came with schema_minor 1
    (bom,) = sbom(vendored_wheel)
    assert report["wheels"][0]["components"] == [c.to_dict() for c in bom.components]


def test_version_strings_are_bounded():
    """Every byte is the author's: a flood of dot-digit pairs, or strings too long to be a version, costs
    a bounded amount of work and keeps a bounded number of strings."""
    flood = b"\0" + b".1\0" * (2 * MAX_CANDIDATES) + b"OpenSSL 3.0.13 30 Jan 2024\0"
    assert version_strings(flood, [(0, len(flood))]) == ()  # examined no further than the bound
    long = b"\0" + b"x" * 300 + b"OpenSSL 3.0.13 30 Jan 2024\0"
    assert version_strings(long, [(0, len(long))]) == ()  # part of a string too long to be a banner
    many = b"\0" + b"".join(b"OpenSSL 3.0.%d 30 Jan 2024\0" % i for i in range(MAX_KEPT * 2))
    assert len(version_strings(many, [(0, len(many))])) == MAX_KEPT
    plain = b"junk\0OpenSSL 3.0.13 30 Jan 2024\0more"
    assert version_strings(plain, [(0, len(plain))]) == ("OpenSSL 3.0.13 30 Jan 2024",)
    assert version_strings(plain, [(0, 10)]) == ()  # outside the spans given: not looked at


@pytest.mark.skipif(shutil.which("strings") is None, reason="needs binutils' strings")
def test_strings_agree_with_binutils(vendored_wheel, tmp_path):
    """What the summary keeps is what `strings` sees in the same file."""
    lib = tmp_path / "libz.so"
    lib.write_bytes((MULTIARCH / "libz.so.1").resolve().read_bytes())
    seen = subprocess.run(["strings", "-a", str(lib)], capture_output=True, text=True, check=True).stdout
    (found,) = components(Path(vendored_wheel))
    assert sorted(e.value for e in found.evidence if e.kind == "string") == \
        sorted(line.strip() for line in seen.splitlines() if "Mark Adler" in line)


def test_an_sbom_in_the_wheel_is_input_too():
    """A wheel's own SBOM is read only for the OS packages of its files; anything malformed is ignored."""
    from wheelcheck.sbom.cyclonedx_json import os_packages_in

    assert os_packages_in("[" * 100_000) == {}
    assert os_packages_in("not json") == {} and os_packages_in('{"components": 7}') == {}
    document = {"components": [
        {"purl": "pkg:deb/debian/zlib1g@1:1.2.13.dfsg-1", "properties": [
            {"name": "wheelcheck:file", "value": "x.libs/libz-1a2b3c4d.so.1"}, {"name": "wheelcheck:upstream", "value": "zlib"}]},
        {"purl": "pkg:generic/zlib@1.3", "properties": [
            {"name": "wheelcheck:file", "value": "x/_z.so"}, {"name": "wheelcheck:upstream", "value": "zlib"}]},
        {"purl": "not a purl", "properties": [
            {"name": "wheelcheck:file", "value": "y"}, {"name": "wheelcheck:upstream", "value": "zlib"}]}]}
    (member, package), = os_packages_in(json.dumps(document)).items()
    assert member == "x.libs/libz-1a2b3c4d.so.1" and (package.name, package.version) == ("zlib1g", "1:1.2.13.dfsg-1")


def _elf(path: str, *, soname: str | None = None, needed: tuple[str, ...] = (), strings: tuple[str, ...] = ()):
    from wheelcheck.elf.elf_info import ElfInfo

    return ElfInfo(path=path, size=1, elf_class=64, endianness="little", machine="EM_X86_64", osabi="ELFOSABI_SYSV",
                   elf_type="ET_DYN", arch="x86_64", arch_problem=None, soname=soname, needed=needed,
                   version_strings=strings, has_dynamic=True)


def _model(*elves):
    from packaging.tags import Tag

    from wheelcheck.wheel.wheel_model import WheelModel

    return WheelModel(filename="m-1.0-cp311-cp311-linux_x86_64.whl", name="m", version="1.0",
                      tags=frozenset({Tag("cp311", "cp311", "linux_x86_64")}), elves=tuple(elves),
                      members=tuple(e.path for e in elves))


def test_which_libraries_are_vendored_and_what_they_are_named():
    """On hand-built summaries (no compiler): the naming rules alone."""
    from wheelcheck.sbom.discover import components_of

    turbo = _elf("m.libs/libjpeg-6dc8d115.so.62.4.0", soname="libjpeg-6dc8d115.so.62.4.0",
                 strings=("libjpeg-turbo version 3.0.1 (build 20231212)",))
    ijg_or_turbo = _elf("m.libs/libjpeg-0a1b2c3d.so.9", soname="libjpeg-0a1b2c3d.so.9")  # two upstreams claim it
    own = _elf("m/libmine.so")  # the project's own library: not a component
    unknown = _elf("m.libs/libXau-154567c4.so.6.0.0")  # in .libs, upstream not in the table
    twice = _elf("m.libs/libgfortran-daac5196-038a5e3c.so.5.0.0")  # repaired twice: two hashes
    found = {c.file: c for c in components_of(_model(turbo, ijg_or_turbo, own, unknown, twice))}
    assert "m/libmine.so" not in found
    assert (found[turbo.path].name, found[turbo.path].version) == ("libjpeg-turbo", "3.0.1")
    assert (found[ijg_or_turbo.path].name, found[ijg_or_turbo.path].version) == ("libjpeg", None)
    assert found[ijg_or_turbo.path].upstream is None and found[ijg_or_turbo.path].soname == "libjpeg.so.9"
    assert (found[unknown.path].name, found[unknown.path].upstream) == ("libXau", None)
    assert (found[twice.path].name, found[twice.path].soname) == ("libgfortran", "libgfortran.so.5.0.0")
    assert all(c.kind == "vendored" for c in found.values())


def test_a_library_states_one_version_of_itself_and_others_linked_in():
    from wheelcheck.sbom.discover import components_of

    avif = _elf("m.libs/libavif-c6062d5f.so.16.4.2", needed=("libc.so.6",),
                strings=("AOMedia Project AV1 Decoder 3.14.1", "AOMedia Project AV1 Encoder 3.14.1"))
    links_libaom = _elf("m/_x.so", needed=("libaom-a0d22147.so.3",), strings=("AOMedia Project AV1 Encoder 3.9.0",))
    found = components_of(_model(avif, links_libaom))
    assert [(c.name, c.version, c.kind, c.file) for c in found] == [
        ("libavif", None, "vendored", avif.path), ("libaom", "3.14.1", "static", avif.path)]
    assert len(found[1].evidence) == 2  # both banners, one component
