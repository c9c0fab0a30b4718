"""graft-host-plugins: a grafted library built to load plugins from a directory of the build host (graphviz, libvips,
gio, OpenSSL's engines), gcc-built here: repaired, pip-installed and imported.

libhost.so.1 has its plugin directory compiled in and opens ``plugin.so`` from it; the plugin needs libhost.so.1 and
reads a value the library set. Unrepaired, with the host's directory on the search path, there is one copy and the
plugin reads 41. Repaired, the vendored copy (renamed) still opens the host's plugin: without the host's library
the plugin cannot load; with it, the plugin loads a second copy and reads that copy's 0.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.fixtures.repair_scenario import EXT_SUFFIX, python_tag
from tests.fixtures.sources import extension_source
from tests.fixtures.wheels import build_wheel
from tests.helpers import make_venv, pip_install, repair_json, run_cli

HOST = r"""
#include <dlfcn.h>
#include <stdio.h>
static int ready;
int host_value(void) { return ready; }
const char *host_libdir(void) { return LIBDIR; }
int host_run(const char *name) {
    char path[4096];
    ready = 41;
    snprintf(path, sizeof path, "%s/%s", PLUGDIR, name);
    void *handle = dlopen(path, RTLD_NOW);
    if (!handle) { fprintf(stderr, "%s\n", dlerror()); return -1; }
    int (*run)(void) = (int (*)(void))dlsym(handle, "plugin_run");
    return run();
}
"""
PLUGIN = "extern int host_value(void);\nint plugin_run(void) { return host_value(); }\n"


@pytest.fixture(scope="module")
def scenario(build, tmp_path_factory):
    root = tmp_path_factory.mktemp("hostplugins")
    libdir, plugdir = root / "host" / "lib", root / "host" / "lib" / "hostlib" / "plugins"
    plugdir.mkdir(parents=True)
    host = build.compile_c(HOST, "libhost.so.1", flags=(
        "-Wl,-soname,libhost.so.1", f'-DPLUGDIR="{plugdir}"', f'-DLIBDIR="{libdir}"'))
    shutil.copy(host, libdir / "libhost.so.1")
    shutil.copy(build.compile_c(PLUGIN, "plugin.so", libs=(host,)), plugdir / "plugin.so")
    # a library beside libhost in its own directory that needs it too: a library, not a plugin
    shutil.copy(build.compile_c(PLUGIN, "libhostxx.so.1", libs=(host,), flags=("-Wl,-soname,libhostxx.so.1",)),
                libdir / "libhostxx.so.1")
    ext = build.compile_c(extension_source("_hp", '    return host_run("plugin.so");',
                                           prelude="extern int host_run(const char *);\n"), "_hp.so", libs=(host,))
    tag = python_tag()
    wheel = build_wheel(root / "dist", "hostplug", "1.0", f"{tag}-{tag}-linux_x86_64",
                        {"hostplug/__init__.py": b"", f"hostplug/_hp{EXT_SUFFIX}": ext})
    return wheel, libdir, plugdir, root


def _call(python: Path, cwd: Path, ld_library_path: Path | None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("LD_LIBRARY_PATH", "PYTHONPATH")}
    if ld_library_path is not None:
        env["LD_LIBRARY_PATH"] = str(ld_library_path)
    return subprocess.run([str(python), "-c", "import hostplug._hp as m; print(m.call())"], capture_output=True,
                          text=True, cwd=cwd, env=env, timeout=120)


def test_the_plugin_directory_is_named_and_vendoring_breaks_it(scenario, tmp_path):
    wheel, libdir, plugdir, _root = scenario
    proc, report = repair_json("--lib-path", libdir, "-w", tmp_path / "out", wheel)
    assert proc.returncode == 0, proc.stderr
    (result,) = report["wheels"]
    (graft,) = result["grafted"]
    found = [f for f in result["findings"] if f["rule"] == "graft-host-plugins"]
    assert len(found) == 1, found  # the plugin directory; not libhost's own directory, whose libhostxx is a library
    (finding,) = found
    assert finding["severity"] == "warning" and finding["file"] == graft["member"]
    assert finding["message"].startswith(f"libhost.so.1 loads plugins from {plugdir}, a directory of the build host")
    assert "(plugin.so there needs libhost.so.1)" in finding["message"]
    assert "--exclude 'libhost.so.1'" in finding["hint"]
    assert result["status"] == "repaired"  # a warning: the wheel is written all the same
    text = run_cli("repair", "--lib-path", libdir, "-w", tmp_path / "again", wheel)
    assert f"warning graft-host-plugins: {graft['member']}: libhost.so.1 loads plugins from {plugdir}" in text.stdout

    # what it warns about, for real: one copy before the repair, none or two after
    before = make_venv(tmp_path / "before")
    assert pip_install(before, wheel).returncode == 0
    proc = _call(before, tmp_path, libdir)
    assert proc.returncode == 0 and proc.stdout.strip() == "41", proc.stderr
    after = make_venv(tmp_path / "after")
    assert pip_install(after, Path(result["output"])).returncode == 0
    proc = _call(after, tmp_path, None)  # a machine without the host's library: the plugin cannot load
    assert proc.stdout.strip() == "-1" and "libhost.so.1: cannot open shared object file" in proc.stderr
    proc = _call(after, tmp_path, libdir)  # a machine with it: the plugin loads a second copy, not the vendored one
    assert proc.returncode == 0 and proc.stdout.strip() == "0", proc.stderr


def test_a_compiled_in_directory_without_plugins_of_the_grafts_is_no_finding(scenario, build, tmp_path):
    wheel, libdir, plugdir, root = scenario
    # the plugin directory holds a shared object that needs no grafted library: nothing the vendored copy breaks
    aside = root / "aside"
    aside.mkdir(exist_ok=True)
    (plugdir / "plugin.so").rename(aside / "plugin.so")
    shutil.copy(build.compile_c("int plugin_run(void) { return 1; }\n", "plugin.so"), plugdir / "other.so")
    try:
        proc, report = repair_json("--lib-path", libdir, "-w", tmp_path / "out", wheel)
    finally:
        (plugdir / "other.so").unlink()
        (aside / "plugin.so").rename(plugdir / "plugin.so")
    assert proc.returncode == 0, proc.stderr
    assert report["wheels"][0]["grafted"] and report["wheels"][0]["status"] == "repaired"
    assert not [f for f in report["wheels"][0]["findings"] if f["rule"] == "graft-host-plugins"]


def test_a_policy_file_can_turn_it_off(scenario, tmp_path):
    """As for every hygiene rule, a policy's ``rules`` setting applies (here: the one repair aims at)."""
    wheel, libdir, _plugdir, _root = scenario
    policies = tmp_path / "team.json"
    policies.write_text(json.dumps([{"name": "team_2_39", "extends": "manylinux_2_39", "priority": 1,
                                     "rules": {"graft-host-plugins": "off"}}]))
    proc, report = repair_json("--lib-path", libdir, "--policy-file", policies, "--plat", "team_2_39",
                               "-w", tmp_path / "off", wheel)
    assert proc.returncode == 0, proc.stderr
    assert report["wheels"][0]["grafted"] and not [
        f for f in report["wheels"][0]["findings"] if f["rule"] == "graft-host-plugins"]
    policies.write_text(json.dumps([{"name": "team_2_39", "extends": "manylinux_2_39", "priority": 1,
                                     "rules": {"graft-host-plugins": "error"}}]))
    proc, report = repair_json("--lib-path", libdir, "--policy-file", policies, "--plat", "team_2_39",
                               "-w", tmp_path / "error", wheel)
    assert [f["severity"] for f in report["wheels"][0]["findings"] if f["rule"] == "graft-host-plugins"] == ["error"]
