"""Exported-symbol exposure: counts, leaked families, GNU_UNIQUE, policy settings; synthetic libraries."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from elftools.elf.elffile import ELFFile

from tests.fixtures.hygiene_sources import (UNIQUE_SRC, USES_VENDORED, VENDORED_NS_SRC, exporting_c,
                                            synthetic_exports_asm)
from tests.fixtures.sources import extension_source
from tests.fixtures.wheels import build_wheel
from tests.helpers import audit_one as one, bundled_policy_with, by_rule
from wheelcheck.audit.exposure import exposure_of
from wheelcheck.symbols.families import families, family_members
from wheelcheck.elf.elf_summary import summarize

TAG = "cp311-cp311-linux_x86_64"
EXT = "pkg/{}.cpython-311-x86_64-linux-gnu.so"
MULTIARCH = Path("/usr/lib/x86_64-linux-gnu")


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


def cxxfilt(names: list[str]) -> list[str]:
    """c++filt's reading of each name, in order."""
    return subprocess.run(["c++filt"], input="\n".join(names), capture_output=True, text=True,
                          check=True).stdout.splitlines()


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
    readable = cxxfilt(names)
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


# std::make_shared and std::to_chars define libstdc++'s unique constants in the file that uses them, with default
# visibility whatever -fvisibility says (awkward_cpp, pi_heif's libheif, chroma-hnswlib); so does a use of the
# C++17 inline variable std::piecewise_construct (pymupdf's libmupdfcpp, torchcodec)
_STD_UNIQUE_SRC = """\
#include <charconv>
#include <memory>
#include <string>
#include <utility>
extern "C" __attribute__((visibility("default"))) const void *tag(void) { return &std::piecewise_construct; }
extern "C" __attribute__((visibility("default"))) int digits(unsigned n) {
    char buf[16];
    auto shared = std::make_shared<std::string>("x");
    return (int)(std::to_chars(buf, buf + sizeof buf, n).ptr - buf) + (int)shared->size()
        + (int)std::string("y").find('z', std::string::npos - 1);
}
inline int &own_counter() { static int count = 0; return count; }
extern "C" __attribute__((visibility("default"))) int bump(void) { return ++own_counter(); }
"""


def test_a_programs_unique_symbols_are_no_finding(build, tmp_path):
    """openbabel's tools and node export STB_GNU_UNIQUE objects: a program is never dlclosed, and no Python
    process loads it beside another copy, so neither harm applies."""
    source = ("inline int &unique_seed() { static int seed = 7; return seed; }\n"
              "int main() { return ++unique_seed() == 8 ? 0 : 1; }\n")
    program = build.compile_c(source, "uniq-tool", cxx=True, shared=False, flags=("-rdynamic",))
    assert [n for n, bind in pyelftools_exports(program) if bind == "STB_GNU_UNIQUE"]
    w = one(build_wheel(tmp_path, "uniq", "1.0", TAG, {"uniq-1.0.data/scripts/uniq-tool": program}))
    assert not by_rule(w, "gnu-unique-symbols")


def test_libstdcxx_unique_constants_are_not_the_files_own(build, tmp_path):
    hidden = build.compile_c(_STD_UNIQUE_SRC, "libstdunique.so", cxx=True,
                             flags=("-std=c++17", "-fvisibility=hidden", "-fvisibility-inlines-hidden"))
    std_unique = [n for n, bind in pyelftools_exports(hidden) if bind == "STB_GNU_UNIQUE"]
    assert std_unique and all(n.startswith(("_ZZNSt", "_ZNSt", "_ZSt")) for n in std_unique)
    assert "_ZSt19piecewise_construct" in std_unique
    assert not by_rule(one(build_wheel(tmp_path / "h", "stdu", "1.0", TAG, {"stdu/libstdunique.so": hidden})),
                       "gnu-unique-symbols")
    plain = build.compile_c(_STD_UNIQUE_SRC, "libstdunique.so", cxx=True, flags=("-std=c++17",))
    (f,) = by_rule(one(build_wheel(tmp_path / "p", "stdu", "1.0", TAG, {"stdu/libstdunique.so": plain})),
                   "gnu-unique-symbols")
    assert f.symbols == ("_ZZ11own_countervE5count",) and "exports 1 STB_GNU_UNIQUE symbol" in f.message


# std:: members with a ref-qualifier (value() const &: _ZNKRSt...) or cv-qualifier volatile (load() const volatile:
# _ZNVKSt...), which -O0 leaves out of line and exports like any other instantiation (faiss's and torch's
# _ZNKRSt7__cxx1115basic_stringbuf...3strEv, C++20's str() const &)
_STD_QUALIFIED_SRC = """\
#include <atomic>
#include <optional>
#include <utility>
struct Pair { int a, b; };
extern "C" int qualified(void) {
    std::optional<int> o(4);
    const std::optional<int> c(5);
    volatile std::atomic<Pair> p(Pair{1, 2});
    return o.value() + c.value() + std::move(o).value() + std::move(c).value() + p.load().a;
}
"""


@pytest.mark.skipif(shutil.which("c++filt") is None, reason="no c++filt (binutils) here")
def test_std_members_with_ref_and_volatile_qualifiers_are_libstdcxx(build, tmp_path):
    lib = build.compile_c(_STD_QUALIFIED_SRC, "libqualified.so", cxx=True, flags=("-O0", "-std=c++17"))
    mangled = sorted(n for n, _ in pyelftools_exports(lib) if n.startswith("_Z"))
    readable = cxxfilt(mangled)
    assert all("std::" in r for r in readable)  # every C++ name it exports is libstdc++'s code
    qualified = [n for n, r in zip(mangled, readable) if r.endswith(("const &", "const &&", ") &", ") &&", "volatile"))]
    assert {n[:n.index("St")] for n in qualified} == {"_ZNKR", "_ZNKO", "_ZNR", "_ZNO", "_ZNVK"}, qualified
    (libstdcxx,) = [f for f in families() if f.id == "libstdcxx"]
    assert family_members(mangled, libstdcxx) == set(mangled)
    w = one(build_wheel(tmp_path, "qualified", "1.0", TAG, {"qualified/libqualified.so": lib}))
    assert w.files[0].exposure["families"] == {"libstdcxx": len(mangled)}


_NAMESPACED_STATICS_SRC = """
#include <string>
namespace google { namespace protobuf {
struct Arena { int n = 0;
  int &slot() const & { static int s = n; return s; }
  int &slot() && { static int t = 2; return t; }
  int &vslot() volatile { static int v = 3; return v; }
};
int make() { return 7; }
inline int &counter() { static int c = make(); return c; }
thread_local std::string tls_name = std::to_string(make());
const int &ref_temp = make();
std::string &name() { return tls_name; }
int use() { Arena a; volatile Arena va; return a.slot() + Arena().slot() + va.vslot() + counter() + ref_temp; }
} }
"""


@pytest.mark.skipif(shutil.which("c++filt") is None, reason="no c++filt (binutils) here")
def test_a_namespaces_local_statics_guards_and_tls_functions_are_its_family(build, tmp_path):
    """A family counted only _ZN…/_ZZN…/_ZZNK… among the forms of a namespace's statics: the guard variable of a
    function's static (_ZGVZN…), the statics of a member qualified & / && / volatile (_ZZNKR…, _ZZNO…, _ZZNV…), a
    thread_local's init function (_ZTHN…) and a reference temporary (_ZGRN…) were left out."""
    lib = build.compile_c(_NAMESPACED_STATICS_SRC, "libns.so", cxx=True)
    mangled = sorted(n for n, _ in pyelftools_exports(lib) if n.startswith("_Z"))
    readable = cxxfilt(mangled)
    # c++filt's reading (binutils 2.40 leaves _ZGR… as it is: its nested name is the namespace's)
    ours = {n for n, r in zip(mangled, readable) if "google::protobuf::" in r or r == n and "N6google8protobuf" in n}
    assert {n[:n.index("6google")] for n in ours} >= {"_ZN", "_ZZN", "_ZGVZN", "_ZGVZNKR", "_ZZNKR", "_ZZNO", "_ZZNV",
                                                      "_ZTHN", "_ZGRN"}
    (protobuf,) = [f for f in families() if f.id == "protobuf"]
    assert family_members(mangled, protobuf) == ours
    assert exposure_of(summarize(lib.read_bytes(), "libns.so")).families["protobuf"] == len(ours)


def test_global_cxx_functions_are_one_group_not_namespaces(build, tmp_path):
    """From repairing GDAL 3.6.2: GDAL's extension exports ApplyVerticalShiftGrid(...), a function of the global
    namespace, which was shown as a namespace of its own ('ApplyVerticalShiftGrid:: (1)')."""
    lib = build.compile_c("int shift_grid(int a) { return a; }\nint scale_grid(double b) { return (int)b; }\n"
                          "namespace geo { int area(int a) { return a; } int span(int a) { return a; } }\n",
                          "libgrid.so", cxx=True)
    names = [n for n, _ in pyelftools_exports(lib)]
    assert {"_Z10shift_gridi", "_Z10scale_gridd", "_ZN3geo4areaEi", "_ZN3geo4spanEi"} <= set(names)
    groups = dict(exposure_of(summarize(lib.read_bytes(), "libgrid.so")).groups)
    assert groups["(global C++ functions)"] == 2 and groups["geo::"] == 2
    assert not any(g.startswith(("shift_grid", "scale_grid")) for g in groups)


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


def _leaks(build, tmp_path, member: str, functions, pointers=()) -> list:
    """The leaked-library-symbols findings of a wheel holding one library that exports these names."""
    lib = build.compile_c(exporting_c(functions, pointers), member.rsplit("/", 1)[-1])
    exported = {n for n, _ in pyelftools_exports(lib)}
    assert set(functions) | set(pointers) <= exported
    wheel = build_wheel(tmp_path / f"w{len(list(tmp_path.iterdir()))}", "shaped", "1.0", TAG, {member: lib})
    return by_rule(one(wheel), "leaked-library-symbols")


# sqlite-vec's vec0.so: SQLITE_EXTENSION_INIT1 defines the sqlite3_api pointer, and SQLite finds the entry
# point by name (sqlite3_extension_init, or sqlite3_<name>_init from the file name), so both stay exported.
def test_sqlite_loadable_extension_is_not_a_copy_of_sqlite(build, tmp_path):
    entry_points = ["sqlite3_vec_init", "sqlite3_vec_numpy_init", "sqlite3_vec_static_blobs_init",
                    "sqlite3_extension_init"]
    assert not _leaks(build, tmp_path, "sqlite_vec/vec0.so", entry_points, pointers=["sqlite3_api"])


def test_sqlite_api_is_still_a_copy_of_sqlite(build, tmp_path):
    # sqlite3_initialize, sqlite3_backup_init and sqlite3_os_init are SQLite's own API despite their shape
    api = ["sqlite3_open", "sqlite3_close", "sqlite3_prepare_v2", "sqlite3_step", "sqlite3_initialize",
           "sqlite3_backup_init", "sqlite3_os_init"]
    (leak,) = _leaks(build, tmp_path, "pkg/libembedded.so", api + ["sqlite3_embedded_init"], pointers=["sqlite3_api"])
    assert f"exports {len(api)} SQLite symbols" in leak.message and set(leak.symbols) <= set(api)


# pycryptodome(x)'s Cryptodome/Hash and Cipher modules export their own C API, called through ctypes/cffi:
# the names start like OpenSSL's (SHA256_, MD5_, AES_) but none is one of OpenSSL's.
def test_pycryptodome_api_is_not_openssl(build, tmp_path):
    pycryptodome = [f"{algo}_{op}" for algo in ("SHA1", "SHA256", "SHA512", "MD5")
                    for op in ("init", "update", "digest", "copy", "destroy", "pbkdf2_hmac_assist")]
    assert not _leaks(build, tmp_path, "Cryptodome/Hash/_SHA256.abi3.so", pycryptodome)
    assert not _leaks(build, tmp_path, "Cryptodome/Cipher/_raw_aes.abi3.so", ["AES_start_operation", "AES_stop_operation",
                                                                              "AESNI_start_operation"])


def test_openssl_digest_and_aes_names_are_still_openssl(build, tmp_path):
    openssl = ["SHA256_Init", "SHA256_Update", "SHA256_Final", "MD5_Init", "AES_set_encrypt_key", "AES_encrypt"]
    (leak,) = _leaks(build, tmp_path, "pkg/libdigest.so", openssl + ["SHA256_init", "MD5_digest"])
    assert f"exports {len(openssl)} OpenSSL/BoringSSL symbols" in leak.message and set(leak.symbols) <= set(openssl)


# zlib's internals zcalloc, zcfree, z_errmsg, inflate_fast, inflate_table and the copyright strings: exported by
# static builds of older zlib, hidden in Debian's
@pytest.mark.parametrize("family, library, internals", [
    ("sqlite", "libsqlite3.so.0", set()), ("openssl", "libcrypto.so.3", set()),
    ("zlib", "libz.so.1", {"zcalloc", "zcfree", "z_errmsg", "inflate_fast", "inflate_table", "inflate_copyright",
                           "deflate_copyright"})])
def test_real_library_is_recognised_by_its_family(family, library, internals):
    """The host's own SQLite, OpenSSL and zlib (Debian's libsqlite3-0, libssl3, zlib1g): every exported name under the family's
    prefixes still counts (no real API name is excluded), and each exact name is one the library exports."""
    path = MULTIARCH / library
    if not path.is_file():
        pytest.skip(f"needs {path}")
    fam = {f.id: f for f in families()}[family]
    with open(path, "rb") as f:  # OPENSSL_3.0.0 and the like: version definitions, not the library's API
        verdef = ELFFile(f).get_section_by_name(".gnu.version_d")
        versions = {aux.name for _, auxes in verdef.iter_versions() for aux in auxes} if verdef else set()
    exported = sorted(n for n, _ in pyelftools_exports(path) if n not in versions)
    by_prefix = [n for n in exported if n.startswith(fam.prefixes) and not n.startswith(fam.exclude_prefixes)]
    assert set(by_prefix) <= family_members(exported, fam)
    assert set(fam.names) - internals <= set(exported)
    counted = exposure_of(summarize(path.read_bytes(), library)).families[family]
    assert counted == len(family_members(exported, fam))
    # zlib's whole API is the family; SQLite's and OpenSSL's internals (sqlite3Expr..., ossl_...) are partly left out
    assert counted == len(exported) if family == "zlib" else counted > 50 * fam.min_symbols


# scip and MUMPS, built with gcc-toolset-14 against manylinux's older libgfortran, define the newer runtime's
# _gfortran_os_error_at beside their NEEDED libgfortran.so.5, as libstdc++_nonshared.a does for C++
def test_a_newer_libgfortran_piece_is_not_a_copy_of_libgfortran(build, tmp_path):
    assert not _leaks(build, tmp_path, "pkg/libscip.so", ["_gfortran_os_error_at"])


def test_a_static_libgfortran_is_still_one(build, tmp_path):
    runtime = ["_gfortran_st_write", "_gfortran_st_write_done", "_gfortran_transfer_character_write",
               "_gfortran_set_args", "_gfortran_set_options", "_gfortran_stop_string"]
    (leak,) = _leaks(build, tmp_path, "pkg/libsolver.so", runtime)
    assert f"exports {len(runtime)} libgfortran symbols" in leak.message


# isal (Intel ISA-L) exports its own checksums beside its zlib-like API: none is a name libz.so.1 defines, so
# none can interpose on it
def test_checksums_named_like_zlibs_are_not_zlib(build, tmp_path):
    isal = ["adler32_base", "adler32_sse", "adler32_avx2_4", "crc32_gzip_refl", "crc32_gzip_refl_base", "crc32_ieee",
            "crc32_ieee_base", "crc32_iscsi", "crc32_iscsi_base"]
    assert not _leaks(build, tmp_path, "pkg/libisal_like.so", isal)
    (leak,) = _leaks(build, tmp_path, "pkg/libzcopy.so", isal + ["adler32", "adler32_combine", "crc32", "crc32_z",
                                                                 "crc32_combine"])
    assert "exports 5 zlib symbols" in leak.message


# inflate64 exports its own deflate9/inflate9 API beside the zlib copy it carries; a codec names its functions
# inflate_tile and deflate_level: zlib's names are deflate and inflate alone, or followed by a capital
# (deflateInit_, inflateBackEnd), never by a digit or a lowercase word
def test_names_that_merely_start_like_zlibs_are_not_zlib(build, tmp_path):
    own = ["deflate9", "deflate9Init", "inflate9", "inflate9Init", "inflate_table9", "inflate_tile", "deflate_level"]
    assert not _leaks(build, tmp_path, "pkg/libdeflate9.so", own)
    zlib = ["deflate", "deflateInit2_", "deflateEnd", "inflate", "inflateInit2_", "inflateEnd"]
    (leak,) = _leaks(build, tmp_path, "pkg/libinflate64.so", own + zlib)
    assert "exports 6 zlib symbols" in leak.message and set(leak.symbols) <= set(zlib)


# spiceypy's libcspice exports CSPICE's f2c-translated routines, whose names have LAPACK's shape (chbase_: c + hb +
# ase_; str2et_: s + tr + 2et_): without BLAS's own lsame_/xerbla_ or a gemm, the shape alone is not BLAS
def test_names_shaped_like_lapack_without_blas_are_not_blas(build, tmp_path):
    cspice = ["chbase_", "copyc_", "shellc_", "str2et_", "sctiks_", "dgeodr_", "zzgetelm_"]
    assert not _leaks(build, tmp_path, "pkg/libcspice.so", cspice)
    lapack = ["dgetrf_", "dgetrs_", "dgesv_", "dpotrf_", "dsyev_", "lsame_", "xerbla_"]
    (leak,) = _leaks(build, tmp_path, "pkg/libsolver.so", cspice + lapack)
    assert leak.subject == "BLAS/LAPACK" and leak.count >= 5  # the five LAPACK routines at least


# PCRE2's fuzz harness, compiled into sqlean's module: libFuzzer calls the target's LLVMFuzzerTestOneInput, which no
# LLVM defines
def test_a_fuzz_targets_callbacks_are_not_llvm(build, tmp_path):
    assert not _leaks(build, tmp_path, "pkg/libpcre_like.so", ["LLVMFuzzerTestOneInput", "LLVMFuzzerInitialize"])
    (leak,) = _leaks(build, tmp_path, "pkg/libllvm_c.so", ["LLVMFuzzerTestOneInput", "LLVMContextCreate"])
    assert "exports 1 LLVM symbol (LLVMContextCreate)" in leak.message


ZLIB_SHAPED = ["deflate", "deflateInit_", "deflateEnd", "inflate", "inflateInit_", "inflateEnd", "adler32", "crc32",
               "compress2", "uncompress", "zlibVersion", "gzopen"]


def test_a_programs_exports_are_an_info_a_librarys_a_warning(build, tmp_path):
    """clang-tidy exports its LLVM for the plugins it loads: no Python process loads a program, so what it
    exports meets only those. The same exports from a library are a warning."""
    source = exporting_c(ZLIB_SHAPED) + "int main(void) { return 0; }\n"
    program = build.compile_c(source, "tool", shared=False, flags=("-rdynamic",))
    assert {n for n, _ in pyelftools_exports(program)} >= set(ZLIB_SHAPED)
    w = one(build_wheel(tmp_path / "p", "tool", "1.0", TAG, {"tool-1.0.data/scripts/tool": program}))
    (leak,) = by_rule(w, "leaked-library-symbols")
    assert leak.severity == "info" and leak.subject == "zlib"
    (lib_leak,) = _leaks(build, tmp_path, "pkg/libtool.so", ZLIB_SHAPED)
    assert lib_leak.severity == "warning" and lib_leak.subject == "zlib"


# pyhdf's libdf exports HDF4's own jpeg_HDF_dest/src and jpeg_message_handler and NEEDs the libjpeg it vendors
# (renamed by a repair); yara-python's extension exports YARA's d2i_Spc* beside the libcrypto it links.
HDF_JPEG = ["jpeg_HDF_dest", "jpeg_HDF_src", "jpeg_HDF_dest_term", "jpeg_message_handler"]


def test_a_file_that_loads_the_library_exports_its_own_names_not_a_copy(build, tmp_path):
    libjpeg = build.compile_c(exporting_c(["jpeg_std_error", "jpeg_create_compress", "jpeg_destroy"]),
                              "libjpeg-e87d2658.so.62.2.0", flags=("-Wl,-soname,libjpeg-e87d2658.so.62.2.0",))
    libdf = build.compile_c(exporting_c(HDF_JPEG), "libdf.so", libs=(libjpeg,), flags=("-Wl,--no-as-needed",))
    wheel = build_wheel(tmp_path / "linked", "hdf", "1.0", TAG, {
        "hdf.libs/libdf.so": libdf, "hdf.libs/libjpeg-e87d2658.so.62.2.0": libjpeg})
    report = one(wheel)
    assert not by_rule(report, "leaked-library-symbols")
    # the control: the same exports in a file that does not load libjpeg are a copy
    (leak,) = _leaks(build, tmp_path, "hdf.libs/libdf.so", HDF_JPEG)
    assert "libjpeg" in leak.message


def test_an_extension_other_files_link_is_a_library_too(build, tmp_path):
    """pysam's libchtslib: an extension module whose 600 exports 12 sibling extensions NEED and bind to. Hiding
    all but PyInit_* would break them, so the finding is an info that says so, not the usual warning."""
    api = [f"hts_api_{i}" for i in range(120)]
    member = EXT.format("libchts")
    shared = build.compile_c(exporting_c(api) + extension_source("libchts"), "libchts.so",
                             flags=(f"-Wl,-soname,{member.rsplit('/', 1)[1]}",))
    user = build.compile_c(extension_source("user", body_c="    return hts_api_7();",
                                            prelude="extern int hts_api_7(void);\n"),
                           "user.so", libs=(shared,), flags=("-Wl,-rpath,$ORIGIN",))
    alone = by_rule(one(build_wheel(tmp_path / "alone", "chts", "1.0", TAG, {member: shared})), "extension-exports")
    assert [f.severity for f in alone] == ["warning"] and "only its init function" in alone[0].hint
    linked = one(build_wheel(tmp_path / "linked", "chts", "1.0", TAG, {member: shared, EXT.format("user"): user}))
    (finding,) = [f for f in by_rule(linked, "extension-exports") if f.file == member]
    assert finding.severity == "info" and "another file of the wheel links it as a library" in finding.message
    assert "what the wheel's other files use" in finding.hint


def test_a_vendored_library_is_told_to_hide_with_repair(build, tmp_path):
    """A leaked family in a library a repair vendored (<dist>.libs/, a hashed name) is hidden by `repair
    --hide-symbols`, not by relinking a library nobody here builds; the wheel's own library gets the link flag."""
    zlib_api = ["deflate", "inflate", "deflateInit_", "inflateInit_", "deflateEnd", "inflateEnd", "crc32", "adler32",
                "compress", "uncompress", "zlibVersion", "gzopen", "gzread", "gzwrite", "gzclose"]
    (vendored,) = _leaks(build, tmp_path, "shaped.libs/libcodec-1a2b3c4d.so.1", zlib_api)
    assert "wheelcheck repair --hide-symbols" in vendored.hint
    (own,) = _leaks(build, tmp_path, "shaped/libcodec.so", zlib_api)
    assert "-Wl,--exclude-libs,ALL" in own.hint
