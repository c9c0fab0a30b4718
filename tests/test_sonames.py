"""auditwheel's hashed library names (symbols/sonames.py): the one grammar every room reads them with.

The names are auditwheel's own: ``hashed_name`` is checked against auditwheel 6.8.2's renaming of the same
file, so a wheel repaired by either tool is read the same way by the other's analyses.
"""
from __future__ import annotations

import hashlib

import pytest

from wheelcheck.symbols.sonames import hashed_name, hashed_stem, last_hash, unhashed

DIGEST = "1a2b3c4d" + "0" * 56


@pytest.mark.parametrize("filename, digest, expected", [
    ("libfoo.so.1.2.3", DIGEST, "libfoo-1a2b3c4d.so.1.2.3"),
    ("libfoo-1a2b3c4d.so.1", DIGEST, "libfoo-1a2b3c4d.so.1"),  # already carries its hash: unchanged
    ("libfoo-5e6f7a8b.so.1", DIGEST, "libfoo-5e6f7a8b-1a2b3c4d.so.1"),  # another copy's hash: a second one
    ("libopenblasp-r0.3.15.so", DIGEST, "libopenblasp-r0-1a2b3c4d.3.15.so"),  # before the first dot
    ("libnodots", "deadbeef" + "0" * 56, "libnodots-deadbeef"),
])
def test_hashed_name(filename, digest, expected):
    assert hashed_name(filename, digest) == expected


class _NoPatcher:
    """auditwheel's copylib sets the copy's SONAME through its patcher; the name is all we compare."""

    def set_soname(self, path, soname):
        pass


@pytest.mark.parametrize("name", ["libfoo.so.1.2.3", "libopenblasp-r0.3.15.so", "libbar-5e6f7a8b.so.2"])
def test_hashed_name_is_auditwheels(tmp_path, name):
    auditwheel_repair = pytest.importorskip("auditwheel.repair")
    source = tmp_path / "host" / name
    source.parent.mkdir()
    source.write_bytes(b"library bytes of " + name.encode())
    (tmp_path / "libs").mkdir()
    theirs, _ = auditwheel_repair.copylib(source, tmp_path / "libs", _NoPatcher())
    assert hashed_name(name, hashlib.sha256(source.read_bytes()).hexdigest()) == theirs
    assert unhashed(theirs) == unhashed(name)


@pytest.mark.parametrize("name, original, stem, last", [
    ("libcuda-1a2b3c4d.so.1", "libcuda.so.1", "libcuda-1a2b3c4d", "1a2b3c4d"),
    ("libgfortran-040039e1-0352e75f.so.5.0.0", "libgfortran.so.5.0.0", "libgfortran-040039e1", "0352e75f"),
    ("libopenblasp-r0-59ffcd50.3.15.so", "libopenblasp-r0.3.15.so", "libopenblasp-r0-59ffcd50", "59ffcd50"),
    ("libz.so.1", "libz.so.1", None, None),  # no hash
    ("libfoo-1A2B3C4D.so.1", "libfoo-1A2B3C4D.so.1", None, None),  # sha256 hex digits are lower case
    ("libfoo-1a2b3c4.so.1", "libfoo-1a2b3c4.so.1", None, None),  # seven digits are a version, not a hash
    ("libfoo.so.1-1a2b3c4d", "libfoo.so.1-1a2b3c4d", None, None),  # after the first dot: not auditwheel's
])
def test_reading_a_hashed_name(name, original, stem, last):
    assert unhashed(name) == original
    assert hashed_stem(name) == stem
    assert last_hash(name) == last


def test_round_trip():
    for name in ("libfoo.so.1.2.3", "libopenblasp-r0.3.15.so"):  # a library name has a dot
        renamed = hashed_name(name, DIGEST)
        assert unhashed(renamed) == name
        assert last_hash(renamed) == DIGEST[:8]
        assert hashed_name(renamed, DIGEST) == renamed


def test_hiding_prefix_reads_the_hash_of_this_copy():
    """repair --hide-symbols names a vendored library's symbols after the hash in its name, so that a
    second repair finds the same prefix (before this module, a hash not right before '.so' was missed)."""
    from wheelcheck.repair.hide_apply import prefix_for

    assert prefix_for("a.libs/libgfortran-040039e1-0352e75f.so.5.0.0", b"") == "wc0352e75f_"
    assert prefix_for("a.libs/libopenblasp-r0-59ffcd50.3.15.so", b"") == "wc59ffcd50_"
    assert prefix_for("a.libs/libplain.so.1", b"abc") == "wc" + hashlib.sha256(b"abc").hexdigest()[:8] + "_"
