"""compat's "loads" is a proof: every undefined symbol is bound to a file it loads, to a system library whose
export list defines it, or it is unbound; unbound is "will fail" when nothing out of sight is loaded and
"cannot tell" (naming what is out of sight) otherwise. Each answer is checked against a real import in a venv.

``prohost`` 2.0 adds to 1.0 a global C++ function (host_mul(int, int)), a C function (host_mul_c) and a class
member (host::Engine::boost(int)). One plugin per kind, built against 2.0, calls the new one: against 1.0 it
fails compat and its import fails with the same undefined symbol; against 2.0 both say it loads.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.fixtures.sources import extension_source
from tests.fixtures.wheels import build_wheel, dist_info
from tests.helpers import make_venv, run_cli
from tests.test_compat import compat_json, install_all, pair_of, rules

TAG = "cp311-cp311-linux_x86_64"
HEADER = {
    "1.0": 'namespace host { struct Engine { int twice(int); }; }\nint host_add(int, int);\n'
           'extern "C" int host_add_c(int, int);\n',
    "2.0": 'namespace host { struct Engine { int twice(int); int boost(int); }; }\nint host_add(int, int);\n'
           'int host_mul(int, int);\nextern "C" int host_add_c(int, int);\nextern "C" int host_mul_c(int, int);\n',
}
SOURCE = {
    "1.0": 'int host::Engine::twice(int x) { return 2 * x; }\nint host_add(int a, int b) { return a + b; }\n'
           'extern "C" int host_add_c(int a, int b) { return a + b; }\n',
    "2.0": 'int host::Engine::twice(int x) { return 2 * x; }\nint host::Engine::boost(int x) { return 3 * x; }\n'
           'int host_add(int a, int b) { return a + b; }\nint host_mul(int a, int b) { return a * b; }\n'
           'extern "C" int host_add_c(int a, int b) { return a + b; }\n'
           'extern "C" int host_mul_c(int a, int b) { return a * b; }\n',
}
# the kind of function, what the plugin calls, its mangled name, how it reads demangled
PLUGINS = {
    "global": ("    return host_mul(6, 7);", "_Z8host_mulii", "host_mul(int, int)"),
    "c": ("    return host_mul_c(6, 7);", "host_mul_c", "host_mul_c"),
    "member": ("    host::Engine e; return e.boost(14);", "_ZN4host6Engine5boostEi", "host::Engine::boost(int)"),
}
HOST_LIB = "prohost/lib/libprohost.so"


def _meta(name: str, version: str, *requires: str) -> bytes:
    return (f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"
            + "".join(f"Requires-Dist: {r}\n" for r in requires)).encode()


def ext(pkg: str) -> str:
    return f"{pkg}/_ext.cpython-311-x86_64-linux-gnu.so"


def host_wheel(build, out: Path, version: str) -> Path:
    lib = build.compile_c(HEADER[version] + SOURCE[version], f"libprohost-{version}.so", cxx=True,
                          flags=("-Wl,-soname,libprohost.so",))
    module = build.compile_c(extension_source("_ext", "    return host_add_c(1, 1);", prelude=HEADER[version]),
                             f"prohost-ext-{version}.so", cxx=True, libs=(lib,), flags=("-Wl,-rpath,$ORIGIN/lib",))
    return build_wheel(out / version, "prohost", version, TAG, {
        "prohost/__init__.py": b"from ._ext import call\n", ext("prohost"): module, HOST_LIB: lib,
        f"{dist_info('prohost', version)}/METADATA": _meta("prohost", version)})


def plugin_wheel(build, out: Path, kind: str) -> Path:
    """Built against prohost 2.0's header and library, as its extension would be."""
    body = PLUGINS[kind][0]
    against = build.compile_c(HEADER["2.0"] + SOURCE["2.0"], "libprohost-2.0.so", cxx=True,
                              flags=("-Wl,-soname,libprohost.so",))
    name = f"plug_{kind}"
    module = build.compile_c(extension_source("_ext", body, prelude=HEADER["2.0"]), f"{name}.so", cxx=True,
                             libs=(against,), flags=("-Wl,-rpath,$ORIGIN/../prohost/lib",))
    return build_wheel(out, name, "1.0", TAG, {
        f"{name}/__init__.py": b"import prohost\nfrom ._ext import call\n", ext(name): module,
        f"{dist_info(name, '1.0')}/METADATA": _meta(name, "1.0", "prohost")})


@pytest.fixture(scope="module")
def made(build, tmp_path_factory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("proof")
    wheels = {f"host-{v}": host_wheel(build, out, v) for v in ("1.0", "2.0")}
    wheels.update({kind: plugin_wheel(build, out / kind, kind) for kind in PLUGINS})
    return wheels


def run_import(python: Path, module: str, env: dict | None = None) -> subprocess.CompletedProcess:
    clean = {k: v for k, v in os.environ.items() if k not in ("LD_LIBRARY_PATH", "PYTHONPATH")}
    return subprocess.run([str(python), "-c", f"import {module}; print({module}.call())"], capture_output=True,
                          text=True, timeout=120, env={**clean, **(env or {})})


@pytest.mark.parametrize("kind", sorted(PLUGINS))
def test_a_function_the_older_host_lacks_fails_compat_and_the_import(made, kind, tmp_path):
    _, mangled, readable = PLUGINS[kind]
    code, report = compat_json(made[kind], made["host-1.0"])
    pair = pair_of(report, f"plug_{kind}")
    assert (code, pair["verdict"]) == (1, "will-fail"), pair
    assert pair["reason"] == f"{ext(f'plug_{kind}')}: undefined symbol: {mangled}"
    (missing,) = rules(pair)["compat-missing-symbol"]
    assert (missing["symbol"], missing["demangled"], missing["file"]) == (mangled, readable, ext(f"plug_{kind}"))
    # the nearest symbol the host defines: of the same class for the member, of the same spelling otherwise
    assert missing["nearest"]["file"] == HOST_LIB, missing
    expected = {"global": "host_add(int, int)", "c": "host_add_c", "member": "host::Engine::twice(int)"}[kind]
    assert missing["nearest"]["demangled"] == expected
    python = make_venv(tmp_path / "old")
    install_all(python, made["host-1.0"], made[kind])
    proc = run_import(python, f"plug_{kind}")
    assert proc.returncode != 0 and f"undefined symbol: {mangled}" in proc.stderr, proc.stderr


@pytest.mark.parametrize("kind", sorted(PLUGINS))
def test_the_same_plugin_with_the_host_it_was_built_against_loads(made, kind, tmp_path):
    code, report = compat_json(made[kind], made["host-2.0"])
    pair = pair_of(report, f"plug_{kind}")
    assert (code, pair["verdict"]) == (0, "loads"), pair
    assert pair["files"][0]["symbols"]["unseen_libraries"] == []
    python = make_venv(tmp_path / "new")
    install_all(python, made["host-2.0"], made[kind])
    proc = run_import(python, f"plug_{kind}")
    assert proc.returncode == 0 and proc.stdout.split() == ["42"], proc.stderr


def test_a_library_out_of_sight_makes_an_unbound_name_cannot_tell(build, made, tmp_path):
    """The plugin also needs libunseen.so.1, which no given distribution ships and no policy whitelists, and
    calls unseen_value, which nothing given defines: it may come from that library. Where the system has one
    that defines it, the import works."""
    unseen = build.compile_c("int unseen_value(void) { return 40; }\n", "libunseen.so.1",
                             flags=("-Wl,-soname,libunseen.so.1",))
    against = build.compile_c(HEADER["2.0"] + SOURCE["2.0"], "libprohost-2.0.so", cxx=True,
                              flags=("-Wl,-soname,libprohost.so",))
    module = build.compile_c(extension_source("_ext", "    return host_add(1, 1) + unseen_value();",
                                              prelude=HEADER["2.0"] + 'extern "C" int unseen_value(void);\n'),
                             "plug_unseen.so", cxx=True, libs=(against, unseen),
                             flags=("-Wl,-rpath,$ORIGIN/../prohost/lib",))
    plugin = build_wheel(tmp_path / "p", "plug_unseen", "1.0", TAG, {
        "plug_unseen/__init__.py": b"import prohost\nfrom ._ext import call\n", ext("plug_unseen"): module,
        f"{dist_info('plug_unseen', '1.0')}/METADATA": _meta("plug_unseen", "1.0", "prohost")})
    code, report = compat_json(plugin, made["host-2.0"])
    pair = pair_of(report, "plug_unseen")
    assert (code, pair["verdict"]) == (2, "cannot-tell"), pair
    assert "libunseen.so.1" in pair["reason"]
    assert pair["files"][0]["symbols"]["unseen_libraries"] == ["libunseen.so.1"]
    (symbol,) = rules(pair)["compat-missing-symbol"]
    assert (symbol["symbol"], symbol["effect"]) == ("unseen_value", "unknown")
    assert "libunseen.so.1, which wheelcheck cannot see" in symbol["message"]
    python = make_venv(tmp_path / "v")
    install_all(python, made["host-2.0"], plugin)
    assert "libunseen.so.1: cannot open shared object file" in run_import(python, "plug_unseen").stderr
    proc = run_import(python, "plug_unseen", {"LD_LIBRARY_PATH": str(Path(unseen).parent)})
    assert proc.returncode == 0 and proc.stdout.split() == ["42"], proc.stderr


def test_names_the_system_libraries_export_are_bound_and_others_fail(build, tmp_path):
    """Linked with nothing but libc (unresolved names allowed), an extension's references are unversioned:
    cos is the Python process's libm's, by libm's export list, and it loads; cos_of_nothing is defined by no
    library at all: compat says it will fail, and so does the import."""
    wheels = {}
    for name, call in (("sysbound", "cos"), ("sysnone", "cos_of_nothing")):
        module = build.compile_c(extension_source("_ext", f"    return (long)({call}(0.0) * 42);",
                                                  prelude=f"double {call}(double);\n"),
                                 f"{name}.so", flags=("-Wl,--unresolved-symbols=ignore-all", "-fno-builtin"))
        wheels[name] = build_wheel(tmp_path / name, name, "1.0", TAG, {
            f"{name}/__init__.py": b"from ._ext import call\n", ext(name): module})
    python = make_venv(tmp_path / "v")
    install_all(python, *wheels.values())
    code, report = compat_json("sysbound", "sysnone", "--env", python)  # named: judged though they have no host
    bound, unbound = pair_of(report, "sysbound"), pair_of(report, "sysnone")
    assert bound["verdict"] == "loads" and bound["files"][0]["symbols"]["system_libraries"] == {"libm.so.6": 1}
    assert (code, unbound["verdict"]) == (1, "will-fail")
    assert unbound["reason"] == f"{ext('sysnone')}: undefined symbol: cos_of_nothing"
    ok = run_import(python, "sysbound")
    assert ok.returncode == 0 and ok.stdout.split() == ["42"], ok.stderr
    assert "undefined symbol: cos_of_nothing" in run_import(python, "sysnone").stderr
    assert "1 from system libraries" in run_cli("compat", "-v", "sysbound", "--env", python).stdout
