"""The libstdc++ string ABI rules on g++-built modules: classification, in-wheel mismatch, policy."""

from __future__ import annotations

import ctypes
import json
import shutil

import pytest
from elftools.elf.elffile import ELFFile

from tests.fixtures.hygiene_sources import ABI_MODULE, CONSUMER_SRC, PROVIDER_SRC, THROWER_SRC
from tests.fixtures.wheels import build_wheel
from tests.helpers import audit_json, bundled_policy_with
from wheelcheck import audit
from wheelcheck.symbols.mangling import abi_neutral, has_new_abi, has_old_abi, short_name

TAG = "cp311-cp311-linux_x86_64"  # host builds need a newer glibc than most policies allow
EXT = "pkg/{}.cpython-311-x86_64-linux-gnu.so"


def abi_flag(value: int) -> tuple[str, ...]:
    return (f"-D_GLIBCXX_USE_CXX11_ABI={value}",)


def dynamic_names(path) -> list[str]:
    with open(path, "rb") as f:
        return [s.name for s in ELFFile(f).get_section_by_name(".dynsym").iter_symbols() if s.name]


def one(wheel, **kw):
    (w,) = audit(wheel, **{"any_platform_tag": True, **kw}).wheels  # linux_ tags: tests/test_package_rules.py
    return w


def by_rule(w, rule):
    return [f for f in w.findings if f.rule == rule]


@pytest.fixture
def abi_modules(build):
    return {v: build.compile_c(ABI_MODULE, f"abimod{v}.so", cxx=True, flags=abi_flag(v)) for v in (0, 1)}


@pytest.mark.parametrize("value, expected", [(0, "old"), (1, "new")])
def test_module_classified_by_its_abi_flag(abi_modules, tmp_path, value, expected):
    names = dynamic_names(abi_modules[value])
    # what the compiler did, read with pyelftools: the new ABI spells std::__cxx11, the old one does not
    assert any("__cxx11" in n for n in names) == (value == 1)
    wheel = build_wheel(tmp_path, "abimod", "1.0", TAG, {EXT.format("abimod"): abi_modules[value]})
    w = one(wheel)
    (f,) = w.files
    assert f.cxx_abi["abi"] == expected and w.cxx_abi == expected
    decided = f.cxx_abi[f"{expected}_examples"]
    assert decided and f.cxx_abi[f"{expected}_count"] >= len(decided)
    assert any("abi_join" in s for s in decided), decided  # the module's own export is named first
    assert all(s in names for s in decided)
    assert not by_rule(w, "cxx-abi-mixed") and not by_rule(w, "cxx-abi-policy")


def test_c_only_module_is_none(build, tmp_path):
    from tests.fixtures.sources import extension_source

    ext = build.compile_c(extension_source("plainc"), "plainc.so")
    (w,) = audit(build_wheel(tmp_path, "plainc", "1.0", TAG, {EXT.format("plainc"): ext})).wheels
    assert w.cxx_abi == "none" and w.files[0].cxx_abi == {
        "abi": "none", "old_count": 0, "new_count": 0, "old_examples": [], "new_examples": []}


@pytest.mark.parametrize("forced, fails", [("new", True), ("old", False)])
def test_cxx_abi_option_on_old_module(abi_modules, tmp_path, forced, fails):
    wheel = build_wheel(tmp_path, "abimod", "1.0", TAG, {EXT.format("abimod"): abi_modules[0]})
    code, doc = audit_json("--cxx-abi", forced, wheel)
    policy = [f for f in doc["wheels"][0]["findings"] if f["rule"] == "cxx-abi-policy"]
    assert code == (1 if fails else 0)
    assert bool(policy) == fails
    if fails:
        assert policy[0]["severity"] == "error" and policy[0]["file"] == EXT.format("abimod")
        assert "--cxx-abi new" in policy[0]["message"] and policy[0]["symbols"]


def test_policy_requiring_new_abi(abi_modules, tmp_path):
    policy_file = bundled_policy_with(tmp_path / "team.json", "manylinux_2_28", cxx_abi=["new"])
    old = build_wheel(tmp_path / "o", "abimod", "1.0", TAG, {EXT.format("abimod"): abi_modules[0]})
    new = build_wheel(tmp_path / "n", "abimod", "1.0", TAG, {EXT.format("abimod"): abi_modules[1]})
    w_old, w_new = one(old, policy_file=policy_file), one(new, policy_file=policy_file)
    assert not w_old.passed and by_rule(w_old, "cxx-abi-policy")[0].severity == "error"
    assert w_new.passed and not by_rule(w_new, "cxx-abi-policy")


def test_extending_policy_requires_new_abi(abi_modules, tmp_path):
    """The team policy of the issue: manylinux_2_28 as it is, but only the new ABI (torch >= 2.7's)."""
    policy_file = tmp_path / "torch-abi.json"
    policy_file.write_text(json.dumps({"name": "torch_2_28", "extends": "manylinux_2_28", "cxx_abi": ["new"]}))
    old = build_wheel(tmp_path / "o", "abimod", "1.0", TAG, {EXT.format("abimod"): abi_modules[0]})
    new = build_wheel(tmp_path / "n", "abimod", "1.0", TAG, {EXT.format("abimod"): abi_modules[1]})
    w_old, w_new = one(old, policy_file=policy_file), one(new, policy_file=policy_file)
    assert not w_old.passed and by_rule(w_old, "cxx-abi-policy")[0].severity == "error"
    assert w_new.passed and w_new.deserved_tag == "torch_2_28_x86_64"


def build_pair(build, tmp_path, provider_abi: int, consumer_abi: int):
    provider = build.compile_c(PROVIDER_SRC, "libprovider.so", cxx=True, flags=abi_flag(provider_abi)
                               + ("-Wl,-soname,libprovider.so",))
    consumer = build.compile_c(CONSUMER_SRC, "consumer.so", cxx=True,
                               flags=abi_flag(consumer_abi) + ("-Wl,-rpath,$ORIGIN", "-Wl,--no-as-needed"),
                               libs=(provider,))
    members = {EXT.format("consumer"): consumer, "pkg/libprovider.so": provider}
    return build_wheel(tmp_path, "pair", "1.0", TAG, members), consumer, provider


def test_mismatch_across_libraries_fails_import_and_audit(build, tmp_path):
    wheel, consumer, provider = build_pair(build, tmp_path, provider_abi=1, consumer_abi=0)
    with open(consumer, "rb") as f:
        needed = [t.needed for t in ELFFile(f).get_section_by_name(".dynamic").iter_tags() if t.entry.d_tag == "DT_NEEDED"]
    assert "libprovider.so" in needed  # so the two are loaded together
    # the loader's own verdict: importing the consumer beside its provider fails on the old-ABI name
    site = tmp_path / "site"
    site.mkdir()
    shutil.copy(provider, site / "libprovider.so")
    shutil.copy(consumer, site / "consumer.so")
    with pytest.raises(OSError, match=r"undefined symbol: _Z4takeRKSs"):
        ctypes.CDLL(str(site / "consumer.so"))
    w = one(wheel)
    (f,) = by_rule(w, "cxx-abi-mismatch")
    assert f.severity == "error" and f.file == EXT.format("consumer") and not w.passed
    assert f.symbols[0] == "_Z4takeRKSs" and "__cxx11" in f.symbols[1] and f.symbols[1] in dynamic_names(provider)
    assert "pkg/libprovider.so" in f.message and "take" in f.message
    assert w.cxx_abi == "mixed"


def test_same_abi_pair_has_no_mismatch(build, tmp_path):
    wheel, consumer, provider = build_pair(build, tmp_path, provider_abi=1, consumer_abi=1)
    w = one(wheel)
    assert not by_rule(w, "cxx-abi-mismatch") and w.cxx_abi == "new"


def test_static_libstdcxx_exported(build, tmp_path):
    leaky = build.compile_c(THROWER_SRC, "thrower.so", cxx=True, flags=("-static-libstdc++",))
    hidden = build.compile_c(THROWER_SRC, "thrower.so", cxx=True,
                             flags=("-static-libstdc++", "-Wl,--exclude-libs,ALL"))
    exported = dynamic_names(leaky)
    assert "__gxx_personality_v0" in exported and "__gxx_personality_v0" not in dynamic_names(hidden)
    w_leaky = one(build_wheel(tmp_path / "a", "thrower", "1.0", TAG, {EXT.format("thrower"): leaky}))
    w_hidden = one(build_wheel(tmp_path / "b", "thrower", "1.0", TAG, {EXT.format("thrower"): hidden}))
    (f,) = by_rule(w_leaky, "libstdcxx-exported")
    assert f.severity == "warning" and any(s.startswith("__cxa_") for s in f.symbols)
    assert all(s in exported for s in f.symbols)
    assert not by_rule(w_hidden, "libstdcxx-exported")


def test_mangling_helpers_on_known_names():
    old, new = "_Z4takeRKSs", "_Z4takeRKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEE"
    assert has_old_abi(old) and not has_new_abi(old) and has_new_abi(new) and not has_old_abi(new)
    assert abi_neutral(old) == abi_neutral(new)
    # two strings: substitution numbers differ between the ABIs (S0_ vs S6_)
    assert abi_neutral("_Z1fRKSsS0_") == abi_neutral(
        "_Z1fRKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEES6_")
    assert abi_neutral("_Z3getB5cxx11v") == abi_neutral("_Z3getv")
    # "Ss" inside an identifier is not std::string
    assert not has_old_abi("_ZN4grpc14SslCredentialsERKNS_24SslCredentialsOptionsE")
    assert has_old_abi("_Z8abi_joinRKSt4listIiSaIiEE")  # std::list<int> of the old ABI
    assert short_name("_ZNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEE10_M_replaceEmmPKcm") == \
        "std::__cxx11::basic_string<…>::_M_replace"
    assert short_name("_ZSt28__throw_bad_array_new_lengthv") == "std::__throw_bad_array_new_length"
    assert short_name("_Z4takeRKSs") == "take"
    # function-local entities (rdkit's boost::python guard variables were shown mangled), c++filt's words
    assert short_name("_ZGVZN3foo3barEvE1x") == "guard variable for foo::bar::x"
    assert short_name("_ZZ3fooRKSsE5cache_0") == "foo::cache"  # a discriminator ends it
    assert short_name("_ZZN3foo3barEvE5cache__12_") == "foo::bar::cache"
    assert short_name("_ZZN3foo3barEvEs") == "foo::bar::(string literal)"
    assert short_name("_ZTSZN3foo3barEvEUlvE_") == "typeinfo name for foo::bar::(lambda)"
    assert short_name("_ZGVN5boost6python9converter10registeredIiE10convertersE") == \
        "guard variable for boost::python::converter::registered<…>::converters"
    assert short_name("_ZTISt9exception") == "typeinfo for std::exception"
    assert short_name("_ZTVN3foo3BarE") == "vtable for foo::Bar"
    assert short_name("_ZGTtNSt12domain_errorC1EPKc") == "transaction clone for std::domain_error::domain_error"
    for odd in ("_ZGV", "_ZTIi", "_ZGVZ", "_ZZ3fooE", "_ZZ3fooE9x", "_ZZ3fooE" + "9" * 5000 + "x", "_ZZ3fooE1x" + "E1x" * 3000):
        assert short_name(odd) == odd  # malformed, or longer than anyone reads: shown as it is
    # operator names (what c++filt prints, parameters and template arguments left out)
    assert short_name("_ZStplIcSt11char_traitsIcESaIcEENSt7__cxx1112basic_stringIT_T0_T1_EEPKS5_RKS8_") == \
        "std::operator+<…>"
    assert short_name("_ZNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEaSEOS4_") == \
        "std::__cxx11::basic_string<…>::operator="
    assert short_name("_ZNKSt6vectorIiSaIiEEixEm") == "std::vector<…>::operator[]"
    assert short_name("_ZNK3foo3barplERKS_") == "foo::bar::operator+"
    assert short_name("_ZdlPv") == "operator delete"
    # special names: the typeinfo (name) of short and bool is no std::string; of the old std::string it is;
    # thunks and guard variables are about the function they name (c++filt: "virtual thunk to foo::bar(std::string
    # const&)", "guard variable for f(std::string const&)::x")
    assert not any(map(has_old_abi, ("_ZTSs", "_ZTSb", "_ZTIs", "_ZThn8_N3foo3barEv")))
    assert all(map(has_old_abi, ("_ZTSSs", "_ZTISs", "_ZThn8_N3foo3barERKSs", "_ZTv0_n24_N3foo3barERKSs",
                                 "_ZTch0_h16_N3foo5cloneERKSs", "_ZGVZ1fRKSsE1x")))


def test_glibcxx_violation_gets_a_cxx_hint(abi_modules, tmp_path):
    wheel = build_wheel(tmp_path, "abimod", "1.0", "cp311-cp311-manylinux_2_17_x86_64",
                        {EXT.format("abimod"): abi_modules[1]})
    w = one(wheel)
    # the new-ABI std::string came with GCC 5 (GLIBCXX_3.4.21): manylinux2014's libstdc++ lacks it
    found = [f for f in w.findings if f.rule == "symbol-version" and "GLIBCXX_3.4.2" in f.message]
    assert found and not w.passed
    for f in found:
        assert "-static-libstdc++" in f.hint and "manylinux image" in f.hint
        assert short_name(f.symbols[0]) in f.hint  # names the function that pulled the version in
        # the message names it as a reader knows it (std::__cxx11::basic_string...), the report keeps the mangled name
        assert f.symbols[0].startswith("_Z") and f.symbols[0] not in f.message
        assert short_name(f.symbols[0]) in f.message and "std::__cxx11::" in f.message


OVERLOAD_PROVIDER = r"""
#include <string>
struct A { int x; void f(A other, std::string s); };
void A::f(A other, std::string s) { x += other.x + (int)s.size(); }
int g(std::string s) { return (int)s.size(); }
"""
OVERLOAD_CONSUMER = r"""
#include <string>
struct A { int x; void f(std::string s, std::string t); };
extern "C" int use(void) { A a{0}; a.f(std::string("x"), std::string("y")); return a.x; }
"""


def test_an_overload_is_not_taken_for_the_other_abis_counterpart(build, tmp_path):
    """A::f(std::string, std::string) (new ABI) is needed; the old-ABI sibling exports only the overload
    A::f(A, std::string) (_ZN1A1fES_Ss), whose mangled key is the same (a substitution reference keys like the
    old std::string): no mismatch may be claimed, the function is simply missing."""
    provider = build.compile_c(OVERLOAD_PROVIDER, "libprovider.so", cxx=True,
                               flags=abi_flag(0) + ("-Wl,-soname,libprovider.so",))
    consumer = build.compile_c(OVERLOAD_CONSUMER, "consumer.so", cxx=True,
                               flags=abi_flag(1) + ("-Wl,-rpath,$ORIGIN", "-Wl,--no-as-needed"), libs=(provider,))
    exported = dynamic_names(provider)
    assert "_ZN1A1fES_Ss" in exported and "_Z1gSs" in exported
    wanted = "_ZN1A1fENSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEES5_"
    assert wanted in dynamic_names(consumer) and abi_neutral(wanted) == abi_neutral("_ZN1A1fES_Ss")
    wheel = build_wheel(tmp_path, "pair", "1.0", TAG, {EXT.format("consumer"): consumer,
                                                      "pkg/libprovider.so": provider})
    w = one(wheel)
    assert w.cxx_abi == "mixed"  # both files are classified: the check did look for counterparts
    assert not by_rule(w, "cxx-abi-mismatch")


# What gcc-toolset's libstdc++_nonshared.a leaves in a new-ABI file: std::logic_error's move constructor keeps the
# message in a reference-counted string under either ABI, and references its empty representation. The
# reference is made here by name; the file's own interface is new-ABI.
COW_REFERENCE_SRC = r"""
#include <string>
extern char cow_empty_rep[] __asm__("_ZNSs4_Rep20_S_empty_rep_storageE");
extern "C" void *cow_empty(void) { return cow_empty_rep; }
std::string abi_join(const std::string &a, const std::string &b) { return a + "/" + b; }
"""


def test_the_exception_classes_cow_string_is_not_the_old_abi(build, tmp_path):
    lib = build.compile_c(COW_REFERENCE_SRC, "libcowref.so", cxx=True, flags=abi_flag(1))
    assert "_ZNSs4_Rep20_S_empty_rep_storageE" in dynamic_names(lib)  # the reference the toolchain leaves
    w = one(build_wheel(tmp_path, "cowref", "1.0", TAG, {"pkg/libcowref.so": lib}))
    assert w.files[0].cxx_abi["abi"] == "new" and w.files[0].cxx_abi["old_count"] == 0
    assert not by_rule(w, "cxx-abi-mixed")


# What gcc-toolset 14's libstdc++_nonshared.a leaves in a new-ABI file on manylinux_2_28 (matplotlib 3.11.2, cp314t):
# the std::ios_base::failure libstdc++ throws is built for a handler of either ABI, the old one through its
# constructor from the old std::string, which the file imports. The reference is made here by name.
IOS_FAILURE_REFERENCE_SRC = r"""
#include <sstream>
#include <string>
void old_failure(void *self, const void *message) __asm__("_ZNSt8ios_base7failureC1ERKSs");
extern "C" void construct_old_failure(void *self, const void *message) { old_failure(self, message); }
std::string abi_join(const std::string &a, const std::string &b) { std::ostringstream s; s << a << b; return s.str(); }
"""
# A file whose own code throws the old-ABI std::ios_base::failure: the same constructor, and the old string with it
OLD_FAILURE_SRC = r"""
#include <ios>
#include <string>
void fail_old(const char *message) { throw std::ios_base::failure(std::string(message)); }
"""


def test_libstdcxx_dual_abi_ios_failure_is_not_the_old_abi(build, tmp_path):
    lib = build.compile_c(IOS_FAILURE_REFERENCE_SRC, "libiosref.so", cxx=True, flags=abi_flag(1))
    assert "_ZNSt8ios_base7failureC1ERKSs" in dynamic_names(lib)
    w = one(build_wheel(tmp_path, "iosref", "1.0", TAG, {"pkg/libiosref.so": lib}))
    assert w.files[0].cxx_abi["abi"] == "new" and w.files[0].cxx_abi["old_count"] == 0, w.files[0].cxx_abi
    assert not by_rule(w, "cxx-abi-mixed")


def test_own_code_throwing_the_old_abi_ios_failure_is_mixed(build, tmp_path):
    lib, names = _library(build, 1, {OLD_FAILURE_SRC: 0})
    assert "_ZNSt8ios_base7failureC1ERKSs" in names
    w = one(build_wheel(tmp_path, "iosold", "1.0", TAG, {"pkg/libjoin.so": lib}))
    assert w.files[0].cxx_abi["abi"] == "mixed", w.files[0].cxx_abi
    assert by_rule(w, "cxx-abi-mixed")


# A copy of libstdc++'s own std::string, as libstdc++_nonshared.a or a static libstdc++ brings it: an explicit
# instantiation defines (and exports) every member, in the ABI the copy is compiled with
STRING_COPY_SRC = """
#include <string>
template class std::basic_string<char>;
"""
OWN_JOIN_SRC = """
#include <string>
std::string {name}(const std::string &a, const std::string &b) {{ return a + b; }}
"""


def _library(build, own_abi: int, objects: dict[str, int]) -> tuple:
    """A shared library of its own join function (in ``own_abi``) linked with objects {source: abi}."""
    linked = [build.compile_c(src, f"part{abi}{i}.o", cxx=True, shared=False, flags=("-c", "-fPIC", *abi_flag(abi)))
              for i, (src, abi) in enumerate(objects.items())]
    lib = build.compile_c(OWN_JOIN_SRC.format(name=f"join{own_abi}"), f"libjoin{own_abi}.so", cxx=True,
                          flags=abi_flag(own_abi), libs=linked)
    return lib, dynamic_names(lib)


@pytest.mark.parametrize("own, copy", [(0, 1), (1, 0)])
def test_a_copy_of_libstdcxx_strings_is_not_the_files_abi(build, tmp_path, own, copy):
    lib, names = _library(build, own, {STRING_COPY_SRC: copy})
    copy_marker = "_ZNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEE" if copy else "_ZNSs"
    assert any(n.startswith(copy_marker) for n in names)  # the copy's members are exported
    w = one(build_wheel(tmp_path, "joiner", "1.0", TAG, {"pkg/libjoin.so": lib}))
    expected = "new" if own else "old"
    assert w.files[0].cxx_abi["abi"] == expected, w.files[0].cxx_abi
    assert not by_rule(w, "cxx-abi-mixed")


def test_own_code_in_both_abis_is_mixed(build, tmp_path):
    lib, names = _library(build, 0, {OWN_JOIN_SRC.format(name="join_new"): 1})
    assert any(n.startswith("_Z8join_new") and "__cxx11" in n for n in names)
    assert any(n.startswith("_Z5join0") and "__cxx11" not in n for n in names)
    w = one(build_wheel(tmp_path, "joiner", "1.0", TAG, {"pkg/libjoin.so": lib}))
    assert w.files[0].cxx_abi["abi"] == "mixed"
    (f,) = by_rule(w, "cxx-abi-mixed")
    assert any("join_new" in s for s in f.symbols) and any("join0" in s for s in f.symbols)


def _needed(path) -> list[str]:
    with open(path, "rb") as f:
        return [t.needed for t in ELFFile(f).get_section_by_name(".dynamic").iter_tags() if t.entry.d_tag == "DT_NEEDED"]


def test_libstdcxx_pieces_beside_the_shared_runtime_are_not_a_static_copy(build, tmp_path):
    # the old string's internals, as libstdc++_nonshared.a gives them to gcc-toolset builds: the file still uses
    # the shared libstdc++ (and its exception runtime)
    lib, names = _library(build, 1, {STRING_COPY_SRC: 0})
    assert any(n.startswith("_ZNSs4_Rep") for n in names) and "libstdc++.so.6" in _needed(lib)
    with open(lib, "rb") as f:
        personality = ELFFile(f).get_section_by_name(".dynsym").get_symbol_by_name("__gxx_personality_v0")
    assert personality and all(s["st_shndx"] == "SHN_UNDEF" for s in personality)  # imported, not defined here
    w = one(build_wheel(tmp_path, "joiner", "1.0", TAG, {"pkg/libjoin.so": lib}))
    assert not by_rule(w, "libstdcxx-exported")


def test_a_c_library_s_cxa_atexit_is_not_libstdcxx(build, tmp_path):
    """From a real wheel (libscrc 1.8.1 vendors musl's libc): every C library defines __cxa_atexit and __cxa_finalize
    (the C runtime calls them for static destructors); they are no piece of libstdc++."""
    libc_like = build.compile_c("int __cxa_atexit(void (*f)(void *), void *a, void *d) { return 0; }\n"
                                "void __cxa_finalize(void *d) { }\nint clib_value(void) { return 1; }\n",
                                "libclike.so.1", flags=("-Wl,-soname,libclike.so.1",))
    assert {"__cxa_atexit", "__cxa_finalize"} <= set(dynamic_names(libc_like))
    w = one(build_wheel(tmp_path, "clike", "1.0", TAG, {"pkg/libclike.so.1": libc_like}))
    assert not by_rule(w, "libstdcxx-exported")


COUT_SRC = """
#include <iostream>
int main() { std::cout << "hello" << std::endl; return 0; }
"""


def test_an_executables_copy_relocated_cout_is_not_a_static_copy(build, tmp_path):
    exe = build.compile_c(COUT_SRC, "hello", cxx=True, shared=False)
    assert "_ZSt4cout" in dynamic_names(exe) and "libstdc++.so.6" in _needed(exe)  # defined here, by a copy relocation
    w = one(build_wheel(tmp_path, "hello", "1.0", TAG, {"hello-1.0.data/scripts/hello": exe}))
    assert not by_rule(w, "libstdcxx-exported")


FUNDAMENTAL_TYPEINFO_SRC = """
#include <string>
#include <typeinfo>
std::string join(const std::string &a, const std::string &b) { return a + b; }
const char *name_of_short() { return typeid(short).name(); }
"""


def test_a_static_libstdcxx_exporting_the_typeinfo_of_short_is_not_mixed(build, tmp_path):
    # a static libstdc++ defines the typeinfo of the fundamental types: _ZTSs is short's, not std::string's
    lib = build.compile_c(FUNDAMENTAL_TYPEINFO_SRC, "libtypeinfo.so", cxx=True, flags=("-static-libstdc++", *abi_flag(1)))
    assert "_ZTSs" in dynamic_names(lib)
    w = one(build_wheel(tmp_path, "typeinfo", "1.0", TAG, {"pkg/libtypeinfo.so": lib}))
    assert w.files[0].cxx_abi["abi"] == "new", w.files[0].cxx_abi
    assert not by_rule(w, "cxx-abi-mixed") and by_rule(w, "libstdcxx-exported")
