"""The verdict on hand-built wheel models (tests/models.py): no compiler, one rule at a time.

Each expected tag is worked out from auditwheel 6.8.2's own policy data (the oracle), never from running
wheelcheck: the most compatible policy whose symbol versions, whitelist and blacklist allow what the model
needs. The compiled-wheel tests (test_verdict.py) show the same rules hold for real files.
"""
from __future__ import annotations

import pytest

from tests.helpers import auditwheel_policies, by_rule
from tests.models import FUNC, GLOBAL, elf, extension, wheel
from wheelcheck.audit.audit_options import AuditOptions
from wheelcheck.audit.verdict import judge
from wheelcheck.errors import UsageError

MOD = "pkg/_mod.cpython-311-x86_64-linux-gnu.so"


def oracle_tag(arch: str = "x86_64", glibc: str = "2.2.5", needed=("libc.so.6",), symbol: str | None = None,
               library: str | None = None) -> str:
    """The most compatible manylinux tag auditwheel's data allows for a file needing GLIBC_``glibc`` and
    ``needed``, and (if given) ``symbol`` of ``library``."""
    for doc in sorted(auditwheel_policies().values(), key=lambda d: -d["priority"]):
        versions = doc["symbol_versions"].get(arch, {}).get("GLIBC", [])
        if doc["name"] == "linux" or glibc not in versions:
            continue
        if not set(needed) <= set(doc["lib_whitelist"]):
            continue
        if symbol is not None and symbol in doc["blacklist"].get(library, []):
            continue
        return f"{doc['name']}_{arch}"
    return f"linux_{arch}"


def audited(model, **options):
    # the models are tagged linux_x86_64, as a wheel is before its repair: the tag the index refuses is
    # tests/test_package_rules.py's to test
    return judge(model, AuditOptions(**{"any_platform_tag": True, **options}))


def test_the_newest_symbol_version_sets_the_tag():
    ext = extension("_mod", needed=("libm.so.6", "libc.so.6"),
                    needs={"exp2": ("GLIBC_2.29", "libm.so.6"), "memcpy": ("GLIBC_2.14", "libc.so.6")})
    report = audited(wheel(ext, tag="cp311-cp311-manylinux_2_17_x86_64"))
    expected = oracle_tag(glibc="2.29", needed=("libm.so.6", "libc.so.6"))
    assert expected == "manylinux_2_31_x86_64"  # no 2_29 policy: 2_31 is the first allowing GLIBC_2.29
    assert report.deserved_tag == expected
    assert not report.passed and report.required_tag == "manylinux_2_17_x86_64"
    (finding,) = [f for f in by_rule(report, "symbol-version") if "GLIBC_2.29" in f.message]
    assert (finding.severity, finding.file, finding.limit) == ("error", MOD, expected)
    assert list(finding.symbols) == ["exp2"]


@pytest.mark.parametrize("glibc", ["2.2.5", "2.11", "2.17", "2.24", "2.27", "2.28", "2.33", "2.34", "2.39"])
def test_each_glibc_version_gets_auditwheels_tag(glibc):
    report = audited(wheel(extension("_mod", needs={"some_function": (f"GLIBC_{glibc}", "libc.so.6")})))
    assert report.deserved_tag == oracle_tag(glibc=glibc)


def test_old_symbol_versions_reach_the_most_compatible_policy_and_its_alias():
    report = audited(wheel(extension("_mod", needs={"memcpy": ("GLIBC_2.2.5", "libc.so.6")})))
    assert report.deserved_tag == oracle_tag() == "manylinux_2_5_x86_64"
    assert report.deserved_tags == ["manylinux_2_5_x86_64", "manylinux1_x86_64"]
    assert report.passed and report.arch == "x86_64" and report.libc == "glibc"


def test_external_library_then_excluded():
    ext = extension("_mod", needed=("libfoo.so.1", "libc.so.6"))
    report = audited(wheel(ext))
    assert report.deserved_tag == "linux_x86_64" and report.external_libs == ["libfoo.so.1"]
    (finding,) = by_rule(report, "external-library")
    assert finding.severity == "warning" and "libfoo.so.1" in finding.message
    assert report.passed  # claims linux only; a warning does not fail at --fail-on error ...
    assert not audited(wheel(ext), fail_on="warning").passed  # ... but does at warning
    assert not audited(wheel(ext, tag="cp311-cp311-manylinux_2_17_x86_64")).passed  # the claim is not met
    excluded = audited(wheel(ext), exclude=["libfoo.so.*"])
    assert excluded.deserved_tag == oracle_tag() and not by_rule(excluded, "external-library")


def test_a_library_the_wheel_ships_is_not_external():
    ext = extension("_mod", needed=("libfoo.so.1", "libc.so.6"), rpath=("$ORIGIN/../pkg.libs",),
                    needs={"foo": None})
    lib = elf("pkg.libs/libfoo.so.1", soname="libfoo.so.1", defines={"foo": (GLOBAL, FUNC, None)})
    report = audited(wheel(ext, lib))
    assert report.external_libs == [] and report.deserved_tag == oracle_tag()
    # without the RPATH the loader would not look in pkg.libs/: external after all
    unreachable = extension("_mod", needed=("libfoo.so.1", "libc.so.6"))
    assert audited(wheel(unreachable, lib)).external_libs == ["libfoo.so.1"]


def test_a_file_of_another_architecture_is_left_out():
    stray = elf("pkg/stray.so", arch="aarch64", needs={"memcpy": ("GLIBC_2.34", "libc.so.6")})
    report = audited(wheel(extension("_mod"), stray))
    (finding,) = by_rule(report, "wrong-architecture")
    assert finding.file == "pkg/stray.so" and finding.severity == "warning"
    assert report.deserved_tag == oracle_tag()  # GLIBC_2.34 of the stray file does not count
    assert [f.path for f in report.files] == [MOD]


def test_blacklisted_symbol_of_a_whitelisted_library():
    docs = auditwheel_policies()
    symbol = sorted(docs["manylinux_2_28"]["blacklist"]["libz.so.1"])[0]
    ext = extension("_mod", needed=("libz.so.1", "libc.so.6"), needs={symbol: None})
    report = audited(wheel(ext))
    expected = oracle_tag(needed=("libz.so.1", "libc.so.6"), symbol=symbol, library="libz.so.1")
    assert expected == "linux_x86_64"  # every policy whitelisting libz.so.1 blacklists it
    assert report.deserved_tag == expected
    (finding,) = by_rule(report, "blacklisted-symbol")
    assert symbol in finding.symbols and finding.file == MOD
    assert audited(wheel(extension("_mod", needed=("libz.so.1", "libc.so.6"), needs={"deflate": None}))).deserved_tag \
        == oracle_tag(needed=("libz.so.1", "libc.so.6"), symbol="deflate", library="libz.so.1")


def test_plat_is_a_target_to_meet():
    ext = extension("_mod", needs={"exp2": ("GLIBC_2.29", "libc.so.6")})
    expected = oracle_tag(glibc="2.29")
    assert not audited(wheel(ext), plat="manylinux_2_17_x86_64").passed
    assert not audited(wheel(ext), plat="manylinux2014").passed  # an alias names the same policy
    meets = audited(wheel(ext), plat=expected)
    assert meets.passed and meets.required_tag == expected
    with pytest.raises(UsageError, match="is a tag for aarch64, but the wheel is x86_64"):
        audited(wheel(ext), plat="manylinux_2_17_aarch64")


def test_pure_wheel():
    report = audited(wheel())
    assert report.pure and report.passed and report.deserved_tag is None


def test_musl_versions_cannot_be_told_apart():
    ext = extension("_mod", needed=("libc.musl-x86_64.so.1",))
    report = audited(wheel(ext, tag="cp311-cp311-musllinux_1_1_x86_64"))
    assert report.libc == "musl" and report.deserved_tag == "musllinux_1_2_x86_64" and report.passed
    (note,) = by_rule(report, "musl-version")
    assert note.severity == "info"


def test_executable_stack_is_reported():
    report = audited(wheel(extension("_mod", exec_stack=True)))
    (finding,) = by_rule(report, "executable-stack")
    assert finding.file == MOD


@pytest.mark.parametrize("field, value", [("cxx_abi", "older"), ("fail_on", "fatal"), ("jobs", 0)])
def test_options_are_checked_where_they_are_built(field, value):
    with pytest.raises(UsageError, match=repr(value)):
        AuditOptions(**{field: value})


def test_options_take_lists_and_keep_tuples():
    options = AuditOptions(exclude=["libfoo.so.*"], lib_path="/opt/lib")
    assert options.exclude == ("libfoo.so.*",) and options.lib_path == ("/opt/lib",)
