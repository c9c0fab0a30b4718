"""The vendored-license rule on wheels built here: a real shared library vendored as a repair would vendor it
(in <dist>.libs/ under a hashed name), with and without license files that name it."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.fixtures.repair_scenario import EXT_SUFFIX, python_tag
from tests.fixtures.sources import extension_source
from tests.fixtures.wheels import build_wheel
from tests.helpers import audit_one, by_rule

TAG = f"{python_tag()}-{python_tag()}-linux_x86_64"
LIB = "demo.libs/libfrobnicate-1a2b3c4d.so.2.1"


@pytest.fixture(scope="module")
def parts(build) -> dict[str, Path]:
    lib = build.compile_c("int frob(void) { return 3; }\n", "libfrobnicate.so.2.1",
                          flags=("-Wl,-soname,libfrobnicate-1a2b3c4d.so.2.1",))
    ext = build.compile_c(extension_source("_demo", "    return frob();", prelude="extern int frob(void);\n"),
                          f"_demo{EXT_SUFFIX}", libs=[lib], flags=("-Wl,-rpath,$ORIGIN/../demo.libs",))
    return {"lib": lib, "ext": ext}


def wheel(parts: dict[str, Path], tmp_path: Path, members: dict[str, bytes], lib_member: str = LIB) -> Path:
    return build_wheel(tmp_path, "demo", "1.0", TAG, {f"demo/_demo{EXT_SUFFIX}": parts["ext"],
                                                       lib_member: parts["lib"], **members})


def test_a_vendored_library_without_a_license_file_is_warned_about(parts, tmp_path):
    report = audit_one(wheel(parts, tmp_path, {"demo-1.0.dist-info/licenses/LICENSE": b"MIT License, the demo authors"}))
    (finding,) = by_rule(report, "vendored-license")
    assert finding.file == LIB and finding.severity == "warning" and finding.subject == "libfrobnicate.so.2.1"
    assert report.passed  # a warning


@pytest.mark.parametrize("notice", [
    {"demo-1.0.dist-info/licenses/LICENSE": b"MIT\n\nBundled: libfrobnicate, BSD-2-Clause ..."},
    {"demo-1.0.dist-info/licenses/third_party/frobnicate/COPYING": b"BSD-2-Clause ..."},
    {"demo-1.0.dist-info/LICENSES_bundled.txt": b"Name: Frobnicate\nFiles: demo.libs/libfrobnicate*.so\n"},
    {"demo/THIRD_PARTY_NOTICES.txt": b"frobnicate (libfrobnicate.so.2): BSD-2-Clause"},
])
def test_a_license_file_that_names_the_library_is_its_notice(parts, tmp_path, notice):
    assert not by_rule(audit_one(wheel(parts, tmp_path, notice)), "vendored-license")


def test_the_wheels_wheelcheck_sbom_ties_a_library_to_its_license_file(parts, tmp_path):
    text = "demo-1.0.dist-info/licenses/demo.libs/deb-libfoo7.txt"  # a package name that does not name it
    sbom = {"components": [{"name": "libfoo7", "properties": [
        {"name": "wheelcheck:file", "value": LIB}, {"name": "wheelcheck:license-file", "value": text}]}]}
    members = {text: b"Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/\n",
               "demo-1.0.dist-info/sboms/wheelcheck.cdx.json": json.dumps(sbom).encode()}
    assert not by_rule(audit_one(wheel(parts, tmp_path / "tied", members)), "vendored-license")
    missing = {"demo-1.0.dist-info/sboms/wheelcheck.cdx.json": json.dumps(sbom).encode()}  # the text is not there
    assert by_rule(audit_one(wheel(parts, tmp_path / "untied", missing)), "vendored-license")


def test_a_hashed_name_outside_libs_counts_and_the_extension_does_not(parts, tmp_path):
    report = audit_one(wheel(parts, tmp_path, {}, lib_member="demo/libfrobnicate-1a2b3c4d.so.2.1"))
    assert [f.file for f in by_rule(report, "vendored-license")] == ["demo/libfrobnicate-1a2b3c4d.so.2.1"]


def test_a_projects_own_library_beside_its_modules_is_not_vendored(parts, tmp_path):
    report = audit_one(wheel(parts, tmp_path, {}, lib_member="demo/libfrobnicate.so.2.1"))
    assert not by_rule(report, "vendored-license")


def test_a_word_that_only_begins_the_name_is_not_a_notice(parts, tmp_path):
    """"frob" begins libfrobnicate, but names other things too: too short to stand for it."""
    notice = {"demo-1.0.dist-info/licenses/LICENSE": b"MIT; the frob tool and libfrob are ours"}
    assert by_rule(audit_one(wheel(parts, tmp_path, notice)), "vendored-license")
