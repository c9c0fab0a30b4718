"""Exported-symbol exposure: counts, leaked families, GNU_UNIQUE, policy settings; synthetic libraries."""

from __future__ import annotations

import subprocess

import pytest
from elftools.elf.elffile import ELFFile

from tests.fixtures.hygiene_sources import UNIQUE_SRC, USES_VENDORED, VENDORED_NS_SRC, synthetic_exports_asm
from tests.fixtures.sources import extension_source
from tests.fixtures.wheels import build_wheel
from tests.helpers import audit_one as one, bundled_policy_with, by_rule
from wheelcheck.audit.exposure import exposure_of
from wheelcheck.symbols.families import families
from wheelcheck.elf.elf_summary import summarize

TAG = "cp311-cp311-linux_x86_64"
EXT = "pkg/{}.cpython-311-x86_64-linux-gnu.so"


def pyelftools_exports(path) -> list[tuple[str, str]]:
    """(name, bind) of every exported dynamic symbol, as pyelftools reads them."""
    with open(path, "rb") as f:
        out = []
        for s in ELFFile(f).get_section_by_name(".dynsym").iter_symbols():
            bind = {"STB_LOOS": "STB_GNU_UNIQUE"}.get(s["st_info"]["bind"], s["st_info"]["bind"])  # 10 = LOOS
            if s.name and s["st_shndx"] != "SHN_UNDEF" and bind in ("STB_GLOBAL", "STB_WEAK", "STB_GNU_UNIQUE") \
                    and s["st_other"]["visibility"] in ("STV_DEFAULT", "STV_PROTECTED"):
                out.append((s.name, bind))
        return out


def synthetic_library(tmp_path, kinds: dict[str, int]):
    asm = tmp_path / "exports.s"
    asm.write_text(synthetic_exports_asm(kinds))
    out = tmp_path / "libsynthetic.so"
    subprocess.run(["gcc", "-shared", "-nostdlib", str(asm), "-o", str(out)], check=True)
    return out


def test_synthetic_library_counts(tmp_path):
    kinds = {"llvm": 300, "protobuf": 40, "png": 25, "blas": 15, "plain": 120}
    lib = synthetic_library(tmp_path, kinds)
    exp = exposure_of(summarize(lib.read_bytes(), "libsynthetic.so"))
    assert exp.exports == sum(kinds.values()) == len(pyelftools_exports(lib))
    assert exp.families == {"llvm": 300, "protobuf": 40, "libpng": 25, "blas": 15}
    assert exp.beyond_init is None and exp.unique == ()
    # C names group by their first word
    assert exp.groups[0] == ("llvm::", 300) and ("app_*", 120) in exp.groups and ("png_*", 25) in exp.groups


def test_extension_exporting_a_vendored_namespace(build, tmp_path):
    obj = build.compile_c(VENDORED_NS_SRC, "vendored.o", cxx=True, shared=False, flags=("-c", "-fPIC"))
    archive = tmp_path / "libvendored.a"
    subprocess.run(["ar", "rcs", str(archive), str(obj)], check=True)
    leaky = build.compile_c(USES_VENDORED, "vendoring.so", cxx=True, libs=(archive,))
    hidden = build.compile_c(USES_VENDORED, "vendoring.so", cxx=True, libs=(archive,),
                             flags=("-Wl,--exclude-libs,ALL",))
    names = [n for n, _ in pyelftools_exports(leaky)]
    readable = subprocess.run(["c++filt"], input="\n".join(names), capture_output=True, text=True,
                              check=True).stdout.splitlines()
    # c++filt's reading: functions, vtables and typeinfo of google::protobuf
    protobuf = [n for n, r in zip(names, readable) if r.split(" for ")[-1].startswith("google::protobuf::")]
    assert len(protobuf) >= 5
    w = one(build_wheel(tmp_path / "a", "vendoring", "1.0", TAG, {EXT.format("vendoring"): leaky}))
    (leak,) = by_rule(w, "leaked-library-symbols")
    assert leak.file == EXT.format("vendoring") and leak.severity == "warning"
    assert f"exports {len(protobuf)} protobuf symbols" in leak.message and set(leak.symbols) <= set(protobuf)
    (ext,) = by_rule(w, "extension-exports")
    assert ext.severity == "info" and "PyInit_vendoring" in ext.message and "google::" in ext.message
    assert w.files[0].exposure["families"]["protobuf"] == len(protobuf)
    w_hidden = one(build_wheel(tmp_path / "b", "vendoring", "1.0", TAG, {EXT.format("vendoring"): hidden}))
    assert not by_rule(w_hidden, "leaked-library-symbols")


def test_policy_settings_change_family_severity_and_allow(build, tmp_path):
    obj = build.compile_c(VENDORED_NS_SRC, "vendored.o", cxx=True, shared=False, flags=("-c", "-fPIC"))
    archive = tmp_path / "libvendored.a"
    subprocess.run(["ar", "rcs", str(archive), str(obj)], check=True)
    leaky = build.compile_c(USES_VENDORED, "vendoring.so", cxx=True, libs=(archive,))
    wheel = build_wheel(tmp_path, "vendoring", "1.0", TAG, {EXT.format("vendoring"): leaky})

    def judged(**fields):
        return one(wheel, policy_file=bundled_policy_with(tmp_path / f"p{len(fields)}{sorted(fields)}.json", **fields))

    w = judged(exposure={"families": {"protobuf": "error"}, "extension_warn_above": 1})
    assert by_rule(w, "leaked-library-symbols")[0].severity == "error" and not w.passed
    assert by_rule(w, "extension-exports")[0].severity == "warning"
    w = judged(exposure={"allow": {"pkg/vendoring.*": ["protobuf"]}})
    assert not by_rule(w, "leaked-library-symbols")
    w = judged(rules={"extension-exports": "off", "leaked-library-symbols": "error"})
    assert not by_rule(w, "extension-exports") and not w.passed


def test_gnu_unique_static_local(build, tmp_path):
    ext = build.compile_c(UNIQUE_SRC, "uniq.so", cxx=True)
    unique = sorted(n for n, bind in pyelftools_exports(ext) if bind == "STB_GNU_UNIQUE")
    assert "_ZZ11unique_seedvE4seed" in unique  # the static local of the inline function
    w = one(build_wheel(tmp_path, "uniq", "1.0", TAG, {EXT.format("uniq"): ext}))
    (f,) = by_rule(w, "gnu-unique-symbols")
    assert f.file == EXT.format("uniq") and list(f.symbols) == unique and f.severity == "warning"
    hidden = build.compile_c(UNIQUE_SRC, "uniq.so", cxx=True, flags=("-fvisibility=hidden",))
    assert not by_rule(one(build_wheel(tmp_path / "h", "uniq", "1.0", TAG, {EXT.format("uniq"): hidden})),
                       "gnu-unique-symbols")


def test_clean_extension_exports_only_its_init(build, tmp_path):
    ext = build.compile_c(extension_source("clean"), "clean.so", flags=("-fvisibility=hidden",))
    assert [n for n, _ in pyelftools_exports(ext) if n not in ("_init", "_fini")] == ["PyInit_clean"]
    w = one(build_wheel(tmp_path, "clean", "1.0", TAG, {EXT.format("clean"): ext}))
    assert not by_rule(w, "extension-exports")
    assert w.files[0].exposure["beyond_init"] == 0 and w.files[0].exported_symbols == 1


def test_family_table_is_consistent():
    table = families()
    ids = [f.id for f in table]
    assert len(ids) == len(set(ids))
    prefixes = [(p, f.id) for f in table for p in f.prefixes]
    for p, fid in prefixes:  # no prefix of one family swallows another family's names
        assert not [q for q, other in prefixes if other != fid and q != p and q.startswith(p)], p
    for f in table:
        assert f.note and f.owners and f.min_symbols >= 1


@pytest.mark.parametrize("count", [20000])
def test_large_synthetic_library_is_counted_exactly(tmp_path, count):
    lib = synthetic_library(tmp_path, {"llvm": count, "plain": count // 4})
    exp = exposure_of(summarize(lib.read_bytes(), "libbig.so"))
    assert exp.exports == count + count // 4 and exp.families == {"llvm": count}


def test_bad_hygiene_settings_are_policy_errors(tmp_path):
    from tests.helpers import run_cli

    for fields, wanted in (({"rules": {"executable-stack": "fatal"}}, "rules.executable-stack"),
                           ({"exposure": {"families": {"zlib": "loud"}}}, "exposure.families.zlib"),
                           ({"exposure": {"extension_warn_above": 0}}, "extension_warn_above")):
        policy = bundled_policy_with(tmp_path / "bad.json", **fields)
        proc = run_cli("policy", "list", "--policy-file", policy)
        assert proc.returncode == 2 and wanted in proc.stderr and str(policy) in proc.stderr
