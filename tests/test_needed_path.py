"""A NEEDED entry that is a path with $ORIGIN (pykx 4.2.0: ``libobjstor.so`` needs ``$ORIGIN/libkurl.so``).

glibc's loader opens such a name as a path once $ORIGIN is expanded to the needer's directory; it does not
search. So the wheel's own file there satisfies it: the audit must not call it external (auditwheel does, and
says ``linux``), and `compat` must see the file of another distribution such a path reaches. musl expands
nothing in a NEEDED name: there it stays external. Built with gcc (and zig for musl), then patchelf writes
the path into NEEDED, as a build that links by path does; installed with pip and imported.
"""
from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.fixtures.repair_scenario import EXT_SUFFIX, python_tag
from tests.fixtures.sources import ALPHA_TIMES, LIBALPHA_SRC, USE_ALPHA, extension_source
from tests.fixtures.vendoring import patchelf
from tests.fixtures.wheels import build_wheel
from tests.helpers import audit_one, auditwheel_show, by_rule, import_and_call, make_venv, pip_install, run_cli


def _by_path(build, out: Path, module: str, needed: str, target: str | None = None) -> Path:
    """An extension calling libalpha, linked with RPATH $ORIGIN/lib (where libbeta is), whose NEEDED
    libalpha.so.1 is then replaced by the path ``needed``."""
    alpha, _ = build.alpha_beta(target)
    built = build.compile_c(extension_source(module, **USE_ALPHA), f"{module}.so", target=target, libs=(alpha,),
                            flags=("-Wl,-rpath,$ORIGIN/lib", "-Wl,--disable-new-dtags"))
    ext = out / f"{module}.so"
    out.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(built, ext)
    subprocess.run([patchelf(), "--replace-needed", "libalpha.so.1", needed, str(ext)], check=True)
    return ext


@pytest.fixture(scope="module")
def origin_wheel(build, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("origin")
    ext = _by_path(build, out / "build", "_bypath", "$ORIGIN/lib/libalpha.so.1")
    alpha, beta = build.alpha_beta()
    tag = python_tag()
    return build_wheel(out, "bypath", "1.0", f"{tag}-{tag}-manylinux_2_17_x86_64", {
        "pkg/__init__.py": b"", f"pkg/_bypath{EXT_SUFFIX}": ext,
        "pkg/lib/libalpha.so.1": alpha, "pkg/lib/libbeta.so.1": beta})


def test_a_needed_origin_path_to_a_file_of_the_wheel_is_provided(origin_wheel, tmp_path):
    report = audit_one(origin_wheel)
    assert not by_rule(report, "external-library") and report.passed
    assert not report.external_libs
    assert report.deserved_tag.startswith("manylinux_")
    # auditwheel takes the path for a library name it cannot find: the documented difference 21
    theirs = auditwheel_show(origin_wheel)
    assert theirs["overall_tag"] == "linux_x86_64" and "$ORIGIN/lib/libalpha.so.1" in theirs["external_libs"]
    # and the loader agrees with wheelcheck: installed, it imports from any working directory
    python = make_venv(tmp_path / "venv")
    assert pip_install(python, origin_wheel).returncode == 0
    proc = import_and_call(python, "pkg._bypath", tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == str(ALPHA_TIMES)


def test_a_path_that_names_no_file_of_the_wheel_is_external(build, tmp_path):
    ext = _by_path(build, tmp_path / "build", "_elsewhere", "$ORIGIN/../nowhere/libalpha.so.1")
    alpha, beta = build.alpha_beta()
    tag = python_tag()
    wheel = build_wheel(tmp_path, "elsewhere", "1.0", f"{tag}-{tag}-manylinux_2_17_x86_64", {
        "pkg/__init__.py": b"", f"pkg/_elsewhere{EXT_SUFFIX}": ext,
        "pkg/lib/libalpha.so.1": alpha, "pkg/lib/libbeta.so.1": beta})
    report = audit_one(wheel)
    assert not report.passed and report.deserved_tag == "linux_x86_64"
    assert "$ORIGIN/../nowhere/libalpha.so.1" in report.external_libs
    assert f"pkg/_elsewhere{EXT_SUFFIX}" in {f.file for f in by_rule(report, "external-library")}


def test_musl_does_not_expand_origin_in_needed(build, tmp_path):
    target = "x86_64-linux-musl"
    ext = _by_path(build, tmp_path / "build", "_muslpath", "$ORIGIN/lib/libalpha.so.1", target=target)
    alpha, beta = build.alpha_beta(target)
    tag = python_tag()
    wheel = build_wheel(tmp_path, "muslpath", "1.0", f"{tag}-{tag}-musllinux_1_2_x86_64", {
        "pkg/__init__.py": b"", f"pkg/_muslpath{EXT_SUFFIX}": ext,
        "pkg/lib/libalpha.so.1": alpha, "pkg/lib/libbeta.so.1": beta})
    report = audit_one(wheel)
    assert "$ORIGIN/lib/libalpha.so.1" in report.external_libs and not report.passed


def test_compat_follows_a_needed_path_into_another_distribution(build, tmp_path):
    """plugin's extension needs ``$ORIGIN/../hostlib/lib/libalpha.so.1``, a file of the hostlib wheel."""
    _, beta = build.alpha_beta()
    alpha = build.compile_c(LIBALPHA_SRC, "libalpha.so.1", flags=("-Wl,-soname,libalpha.so.1", "-Wl,-rpath,$ORIGIN"),
                            libs=(beta,))
    tag = python_tag()
    host = build_wheel(tmp_path, "hostlib", "1.0", f"{tag}-{tag}-manylinux_2_17_x86_64", {
        "hostlib/__init__.py": b"", "hostlib/lib/libalpha.so.1": alpha, "hostlib/lib/libbeta.so.1": beta,
        "hostlib/_anchor.so": build.compile_c(extension_source("_anchor"), "_anchor.so")})
    ext = _by_path(build, tmp_path / "build", "_plug", "$ORIGIN/../hostlib/lib/libalpha.so.1")
    plugin = build_wheel(tmp_path, "plugin", "1.0", f"{tag}-{tag}-manylinux_2_17_x86_64", {
        "plugin/__init__.py": b"", f"plugin/_plug{EXT_SUFFIX}": ext})
    proc = run_cli("compat", "--format", "json", plugin, host)
    report = json.loads(proc.stdout)
    (pair,) = [p for p in report["pairs"] if p["subject"]["name"] == "plugin"]
    assert pair["verdict"] == "loads", pair
    links = {link["name"]: link for f in pair["files"] for link in f["links"]}
    assert links["$ORIGIN/../hostlib/lib/libalpha.so.1"]["distribution"] == "hostlib"
    python = make_venv(tmp_path / "venv")
    assert pip_install(python, host).returncode == 0 and pip_install(python, plugin).returncode == 0
    loaded = import_and_call(python, "plugin._plug", tmp_path)
    assert loaded.returncode == 0 and loaded.stdout.strip() == str(ALPHA_TIMES), loaded.stderr
