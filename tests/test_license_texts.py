"""Reading a package's license: Debian's machine-readable copyright, the names package managers use turned into
SPDX, rpm's and apk's answers, and the License-File lines a repair adds to METADATA.

The expected SPDX ids are SPDX's own names for what each short name means (the Debian copyright-format 1.0
spec for its names and its comma rule, Fedora's old tags); METADATA is judged by packaging's strict parser.
"""
from __future__ import annotations

import pytest
from packaging.metadata import Metadata

from wheelcheck.sbom.cyclonedx_json import licenses_in
from wheelcheck.sbom.debian_copyright import is_machine_readable, package_license
from wheelcheck.sbom.license_names import spdx_expression
from wheelcheck.sbom.package_licenses import joined_texts, parse_apk_info, parse_rpm_licenses
from wheelcheck.wheel.metadata_license_files import license_file_lines, with_license_files


@pytest.mark.parametrize("stated, spdx", [
    ("GPL-2+ or LGPL-3+", "GPL-2.0-or-later OR LGPL-3.0-or-later"),  # libgmp10
    ("Expat", "MIT"),
    ("Zlib", "Zlib"),
    ("zlib", "Zlib"),  # short names are case-insensitive
    ("BSD-3-clause or GPL-2", "BSD-3-Clause OR GPL-2.0-only"),  # libzstd1
    ("MPL-1.1 or GPL-2+ or LGPL-2.1+", "MPL-1.1 OR GPL-2.0-or-later OR LGPL-2.1-or-later"),
    ("GPL-3+ with Bison exception", "GPL-3.0-or-later WITH Bison-exception-2.2"),
    ("GPL-2+ with Autoconf exception", "GPL-2.0-or-later WITH Autoconf-exception-2.0"),
    ("GPL-3+ with GCC-exception-3.1", "GPL-3.0-or-later WITH GCC-exception-3.1"),
    ("GPL-2+ or Artistic-2.0, and BSD-3-clause", "(GPL-2.0-or-later OR Artistic-2.0) AND BSD-3-Clause"),
    ("GPL-2+ and LGPL-2.1+ or MIT", "(GPL-2.0-or-later AND LGPL-2.1-or-later) OR MIT"),  # and binds first
    ("LGPLv3+ or GPLv2+", "LGPL-3.0-or-later OR GPL-2.0-or-later"),  # an old Fedora tag
    ("MIT AND (Apache-2.0 OR BSD-2-Clause)", "MIT AND (Apache-2.0 OR BSD-2-Clause)"),  # SPDX stays SPDX
    ("GFDL-NIV-1.3+", "GFDL-1.3-no-invariants-or-later"),
    ("Apache-2", "Apache-2.0"),
    ("CC0", "CC0-1.0"),
])
def test_stated_licenses_become_spdx(stated, spdx):
    assert spdx_expression(stated) == spdx


@pytest.mark.parametrize("stated", ["public-domain", "BSD", "GPL", "GPL-2 with OpenSSL exception", "MIT/X11",
                                    "GPL-2+ or", "(MIT", "MIT)", "", "Expat and public-domain"])
def test_a_name_spdx_lacks_leaves_the_expression_unstated(stated):
    assert spdx_expression(stated) is None


COPYRIGHT = """\
Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: GMP

Files: demos/*
Copyright: FSF
License: GPL-3+

Files: *
Copyright: 1991 Free Software Foundation, Inc.
License: GPL-2+ or LGPL-3+
 This file is part of the GNU MP Library.

Files: debian/*
Copyright: Debian
License: GPL-2+
"""


def test_the_package_license_is_that_of_files_star():
    assert is_machine_readable(COPYRIGHT)
    assert package_license(COPYRIGHT) == "GPL-2+ or LGPL-3+"


def test_a_header_license_speaks_for_the_whole_package():
    header = COPYRIGHT.replace("Upstream-Name: GMP\n", "Upstream-Name: GMP\nLicense: LGPL-3+\n")
    assert package_license(header) == "LGPL-3+"


def test_a_copyright_file_in_free_form_states_nothing():
    free = "This package was debianized by someone.\n\nLicense: GPL-2+\n"
    assert not is_machine_readable(free) and package_license(free) is None


def test_rpm_and_apk_answers_are_read_as_they_print_them():
    rpm = ("license\tLGPL-3.0-or-later OR GPL-2.0-or-later\n"
           "file\t\t/usr/lib64/libgmp.so.10\nfile\tl\t/usr/share/licenses/gmp/COPYING\n"
           "file\tl\t/usr/share/licenses/gmp/COPYING.LESSERv3\nfile\td\t/usr/share/doc/gmp/NEWS\n"
           "license\tGPL\nfile\tl\t/usr/share/licenses/gmp-other/COPYING\n")  # a second (multilib) package
    assert parse_rpm_licenses(rpm) == ("LGPL-3.0-or-later OR GPL-2.0-or-later",
                                       ["/usr/share/licenses/gmp/COPYING", "/usr/share/licenses/gmp/COPYING.LESSERv3"])
    assert parse_rpm_licenses("") == (None, [])
    apk = "gmp-6.3.0-r1 license:\nLGPL-3.0-or-later OR GPL-2.0-or-later\n\n"
    assert parse_apk_info(apk) == ("LGPL-3.0-or-later OR GPL-2.0-or-later", [])
    contents = "gmp-doc-6.3.0-r1 contains:\nusr/share/licenses/gmp/COPYING\nusr/share/info/gmp.info.gz\n\n"
    assert parse_apk_info(contents) == (None, ["usr/share/licenses/gmp/COPYING", "usr/share/info/gmp.info.gz"])


def test_several_texts_become_one_file_each_under_its_path():
    assert joined_texts([("/a", b"A\n")]) == b"A\n"
    assert joined_texts([("/a", b"A"), ("/b", b"B\n")]) == b"==> /a <==\nA\n\n==> /b <==\nB\n"


# -- METADATA


def test_license_file_lines_raise_the_metadata_version_and_keep_the_rest():
    before = "Metadata-Version: 2.1\nName: app\nVersion: 1.0\nLicense: MIT\nLicense-File: LICENSE\n\nThe description.\n"
    after = with_license_files(before, ["app.libs/deb-libgmp10.txt"])
    assert after.raised_from == "2.1" and after.earlier == ("LICENSE",)
    assert after.text == ("Metadata-Version: 2.4\nName: app\nVersion: 1.0\nLicense: MIT\nLicense-File: LICENSE\n"
                          "License-File: app.libs/deb-libgmp10.txt\n\nThe description.\n")
    parsed = Metadata.from_email(after.text, validate=True)
    assert parsed.license_files == ["LICENSE", "app.libs/deb-libgmp10.txt"] and parsed.license == "MIT"
    assert with_license_files(after.text, ["app.libs/deb-libgmp10.txt"]).text == after.text  # once


def test_license_file_lines_leave_a_24_metadata_and_its_expression_alone():
    before = "Metadata-Version: 2.4\r\nName: app\r\nVersion: 1.0\r\nLicense-Expression: MIT\r\n"
    after = with_license_files(before, ["app.libs/rpm-gmp.txt"])
    assert after.raised_from is None and after.earlier == ()
    assert after.text == before + "License-File: app.libs/rpm-gmp.txt\r\n"
    assert Metadata.from_email(after.text, validate=True).license_expression == "MIT"
    assert license_file_lines(after.text) == ["app.libs/rpm-gmp.txt"]


def test_license_file_lines_go_after_a_folded_header_without_a_final_newline():
    before = "Metadata-Version: 2.2\nName: app\nVersion: 1.0\nSummary: one\n  two"
    after = with_license_files(before, ["x.txt"])
    assert after.text == "Metadata-Version: 2.4\nName: app\nVersion: 1.0\nSummary: one\n  two\nLicense-File: x.txt\n"


# -- what a wheel's SBOM says of licenses (the wheel's bytes: anything)


def test_licenses_read_back_from_a_wheels_sbom_are_checked():
    def document(*components):
        return '{"components": [%s]}' % ",".join(components)

    good = ('{"licenses": [{"expression": "MIT"}], "properties": [{"name": "wheelcheck:file", "value": "a.libs/x.so"},'
            ' {"name": "wheelcheck:license-file", "value": "a-1.dist-info/licenses/a.libs/deb-x.txt"}]}')
    not_spdx = '{"licenses": [{"expression": "not a license"}], "properties": [{"name": "wheelcheck:file", "value": "b"}]}'
    odd = '{"licenses": 7, "properties": [{"name": ["x"], "value": 1}, 3, {"name": "wheelcheck:file", "value": "c"}]}'
    found = licenses_in(document(good, not_spdx, odd))
    assert set(found) == {"a.libs/x.so"}
    assert (found["a.libs/x.so"].expression, found["a.libs/x.so"].file) == ("MIT", "a-1.dist-info/licenses/a.libs/deb-x.txt")
    assert licenses_in("[" * 100_000) == {} and licenses_in('{"components": {"properties": 1}}') == {}
