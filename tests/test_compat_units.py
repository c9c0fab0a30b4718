"""compat's pieces that need no compiler: demangling and qualified names (c++filt is the oracle where the
machine has it), Requires-Dist with markers and extras, and the install layout of RPATH entries."""

from __future__ import annotations

import shutil
import subprocess

import pytest
from packaging.tags import parse_tag

from wheelcheck.compat.installed_layout import install_path
from wheelcheck.wheel.library_resolution import expand_search_entry
from wheelcheck.compat.requirement_pins import declared_closure, declared_requirements, marker_environment, pin_checks
from wheelcheck.conflicts.distribution import Distribution
from wheelcheck.symbols.demangle import demangle, qualified_key

NAMES = ["_ZN3c1010TensorImpl4sizeEl", "_ZNK3c1010TensorImpl4sizeB5cxx11Ev",
         "_ZN4host5ShapeC1Ei", "_ZN4host5ShapeD2Ev", "_ZN2at4_ops5empty4callEN3c108ArrayRefINS2_6SymIntEEE",
         "_ZNSt6vectorIiSaIiEE9push_backERKi"]


@pytest.mark.skipif(shutil.which("c++filt") is None, reason="no c++filt (binutils) here")
@pytest.mark.parametrize("name", NAMES)
def test_demangle_agrees_with_cxxfilt(name):
    expected = subprocess.run(["c++filt", name], capture_output=True, text=True).stdout.strip()
    assert demangle(name).replace(">>", "> >") == expected.replace(">>", "> >")


def test_old_abi_string_reads_as_std_string():
    assert demangle("_ZN4core4takeERKSs") == "core::take(std::string const&)"  # c++filt spells out Ss


def test_hostile_names_come_back_as_they_are():
    for name in ("_Z" + "N" * 5000 + "E", "_ZN3foo", "not_mangled", "_Z" + "I" * 3000):
        assert isinstance(demangle(name), str)
    assert demangle("not_mangled") == "not_mangled"


def test_qualified_key_ignores_signature_constness_tags_and_templates():
    assert qualified_key("_ZNK3c1010TensorImpl4sizeB5cxx11Ev") == qualified_key("_ZN3c1010TensorImpl4sizeEl")
    assert qualified_key("_ZN4host5ShapeC1Ei") == qualified_key("_ZN4host5ShapeC2El")
    assert qualified_key("_ZN4host5scaleEi") != qualified_key("_ZN4host6scalesEi")
    assert qualified_key("_ZNSt6vectorIiSaIiEE9push_backERKi") == qualified_key("_ZNSt6vectorIlSaIlEE9push_backEOl")
    assert qualified_key("_ZTVN4host5ShapeE") is None and qualified_key("plain_c") is None


def _dist(name, version, requires=(), tag="cp311-cp311-manylinux_2_28_x86_64"):
    return Distribution(name, version, f"{name}.whl", tuple(requires), frozenset(parse_tag(tag)))


def test_pins_with_markers_and_extras():
    plugin = _dist("plugin", "1.0", ["host==2.14.0", "nvrt>=12; extra == 'cuda'", "winonly; sys_platform == 'win32'",
                                     "old-py; python_version < '3.9'", "helper"])
    host, nvrt = _dist("host", "2.13.0+cpu"), _dist("nvrt", "12.9")
    given = {"plugin": plugin, "host": host, "nvrt": nvrt}
    env = marker_environment(list(given.values()), "x86_64")
    assert env["python_version"] == "3.11" and env["sys_platform"] == "linux"
    declared = {d.key: d.extra for d in declared_requirements(plugin, env)}
    assert declared == {"host": None, "nvrt": "cuda", "helper": None}
    checks = pin_checks(plugin, declared_requirements(plugin, env), given)
    assert [(c.name, c.satisfied, c.extra) for c in checks] == [("host", False, None), ("nvrt", True, "cuda")]
    assert checks[0].message(plugin) == "plugin 1.0 requires host==2.14.0; 2.13.0+cpu given"
    assert pin_checks(_dist("p", "1", ["host==2.13.0"]), declared_requirements(_dist("p", "1", ["host==2.13.0"]), env),
                      given)[0].satisfied  # a local version meets a pin without one (PEP 440)
    assert declared_closure(plugin, given, env) == {"host": None, "nvrt": "cuda", "helper": None}


def test_install_layout_and_rpath_entries():
    assert install_path("pkg/_ext.so") == "/sp/pkg/_ext.so"
    assert install_path("pkg-1.0.data/platlib/pkg/lib.so") == "/sp/pkg/lib.so"
    assert install_path("pkg-1.0.data/scripts/tool") == "/bin/tool"
    assert install_path("../../../bin/tool") == "/bin/tool"  # an environment's RECORD path
    assert expand_search_entry("/sp/jax_plugins/xla/x.so", "$ORIGIN/../../nvidia/cublas/lib") == "/sp/nvidia/cublas/lib"
    assert expand_search_entry("/sp/a/b.so", "${ORIGIN}/lib") == "/sp/a/lib"
    assert expand_search_entry("/sp/a/b.so", "/usr/local/cuda/lib64") is None
    assert expand_search_entry("/sp/a/b.so", "$ORIGIN/../../../../..") is None
    assert expand_search_entry("/bin/tool", "$ORIGIN/../lib/python3.11/site-packages/pkg") == "/sp/pkg"


def test_system_libraries_are_the_whitelists_and_the_drivers_at_their_versions():
    """compat takes from the system what every manylinux system has and what the machine's drivers bring, the
    release-numbered NVIDIA libraries at any release, as the audit does (DriverNames)."""
    from wheelcheck.compat.check_compat import system_libraries
    from wheelcheck.policy.registry import bundled_policies

    system = system_libraries(bundled_policies())
    for name in ("libc.so.6", "libm.so.6", "libcuda.so.1", "libnvidia-tileiras.so.615.09", "libGL.so.1"):
        assert name in system, name
    assert "libfoo.so.1" not in system and "libnvidia-ptxjitcompiler.so.2" not in system
