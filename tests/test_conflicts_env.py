"""wheelcheck conflicts --env (installed distributions read through RECORD), and the split of wheels
into the processes they can share."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from packaging.tags import parse_tag

from tests.fixtures.conflict_wheels import TAG, ext_member, member_bytes, openmp_pair, pip_install, soname_pair
from tests.fixtures.wheels import build_wheel
from tests.helpers import run_cli
from wheelcheck.conflicts.distribution import Distribution
from wheelcheck.conflicts.processes import group_processes, left_out
from wheelcheck.conflicts.global_loading import names_rtld_global as uses_rtld_global


def conflicts_json(*args) -> tuple[int, dict]:
    proc = run_cli("conflicts", "--format", "json", *args)
    assert proc.returncode in (0, 1), proc.stderr
    return proc.returncode, json.loads(proc.stdout)


def summary(report: dict) -> list[tuple]:
    """What a report says, without where the files came from."""
    return sorted((f["rule"], f["severity"], f["family"] or "", tuple(f["names"]),
                   tuple(sorted((p["distribution"], p["file"]) for p in f["providers"])))
                  for p in report["processes"] for f in p["findings"])


@pytest.fixture(scope="module")
def wheels(build, tmp_path_factory):
    out = tmp_path_factory.mktemp("env")
    return [*openmp_pair(build, out / "omp").values(), *soname_pair(build, out / "so").values()]


def test_env_directory_reports_what_the_wheels_report(wheels, tmp_path):
    site = tmp_path / "site"
    pip_install(site, *wheels)
    _code, from_wheels = conflicts_json(*wheels)
    code, from_env = conflicts_json("--env", site)
    assert code == 1  # the shared libfoo.so.1 is an error
    assert from_env["mode"] == "environment" and from_env["sources"] == [str(site.resolve())]
    assert summary(from_env) == summary(from_wheels)
    (proc,) = from_env["processes"]
    assert sorted(d["name"] for d in proc["distributions"]) == ["gomp_a", "gomp_b", "so_a", "so_b"]


def test_env_python_reads_its_site_packages(wheels, tmp_path):
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    pip_install(venv, *wheels, python=venv / "bin" / "python")
    code, report = conflicts_json("--env", venv / "bin" / "python")
    assert summary(report) == summary(conflicts_json(*wheels)[1])
    assert report["sources"] and all(str(venv.resolve()) in s for s in report["sources"])
    text = run_cli("conflicts", "--env", venv / "bin" / "python")
    assert "read the environment at" in text.stdout and text.returncode == 1


def test_env_bad_target(tmp_path):
    proc = run_cli("conflicts", "--env", tmp_path / "nowhere")
    assert proc.returncode == 2 and "nowhere" in proc.stderr
    not_python = tmp_path / "false-python"
    not_python.write_text("#!/bin/sh\nexit 3\n")
    not_python.chmod(0o755)
    proc = run_cli("conflicts", "--env", not_python)
    assert proc.returncode == 2 and "false-python" in proc.stderr


def test_rtld_global_in_code_not_in_comments():
    assert uses_rtld_global(b"import os, sys\nsys.setdlopenflags(os.RTLD_GLOBAL | os.RTLD_NOW)\n")
    assert uses_rtld_global(b"lib = ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)\n")
    assert not uses_rtld_global(b"# we used to pass RTLD_GLOBAL here\nimport os\n")
    assert not uses_rtld_global(b"lib = ctypes.CDLL(path)\n")


def dist(filename: str) -> Distribution:
    """A distribution known only by its wheel file name: the grouping reads nothing else."""
    name, version, tags = filename[:-len(".whl")].split("-", 2)
    return Distribution(name, version, filename, tags=frozenset(parse_tag(tags)))


def test_processes_split_by_platform_and_interpreter():
    given = [dist(f) for f in (
        "numpy-2.4.6-cp311-cp311-manylinux_2_27_x86_64.manylinux_2_28_x86_64.whl",
        "numpy-1.16.6-cp37-cp37m-manylinux1_x86_64.whl",
        "opencv_python_headless-5.0.0.93-cp37-abi3-manylinux_2_28_x86_64.whl",
        "numpy-2.4.6-cp311-cp311-manylinux_2_27_aarch64.manylinux_2_28_aarch64.whl",
        "numpy-2.4.6-cp311-cp311-musllinux_1_2_x86_64.whl",
        "scipy-1.17.1-cp311-cp311-linux_x86_64.whl",
        "six-1.17.0-py2.py3-none-any.whl",
        "cryptography-50.0.2-cp311-abi3-manylinux_2_28_x86_64.whl",
        "free-1.0-cp313-cp313t-manylinux_2_28_x86_64.whl",
        "mac-1.0-cp311-cp311-macosx_11_0_arm64.whl")]
    processes = group_processes(given)
    assert [d.name for d in left_out(given, processes)] == ["mac"]
    groups = {p.label: sorted(d.source.split("-")[0] + "-" + d.version for d in p.members) for p in processes}
    assert groups == {
        "x86_64, glibc, cp311": ["cryptography-50.0.2", "numpy-2.4.6", "opencv_python_headless-5.0.0.93",
                                 "scipy-1.17.1", "six-1.17.0"],
        "x86_64, glibc, cp37": ["numpy-1.16.6", "opencv_python_headless-5.0.0.93", "six-1.17.0"],
        "x86_64, glibc, cp313t": ["free-1.0", "six-1.17.0"],  # abi3 does not load in a free-threaded build
        "aarch64, glibc, cp311": ["numpy-2.4.6", "six-1.17.0"],
        "x86_64, musl, cp311": ["numpy-2.4.6", "six-1.17.0"],
    }


def test_two_versions_are_alternatives(build, tmp_path):
    """so_a 1.0 and a so_a 2.0 with so_b's different libfoo.so.1: compared with each other they would be an
    error (test_conflicts.py), but two versions of one distribution are never installed together."""
    pair = soname_pair(build, tmp_path / "one")
    members = {"so_a/__init__.py": b"from ._ext import call\n",
               ext_member("so_a"): member_bytes(pair["b"], ext_member("so_b")),
               "so_a.libs/libfoo.so.1": member_bytes(pair["b"], "so_b.libs/libfoo.so.1")}
    newer = build_wheel(tmp_path / "two", "so_a", "2.0", TAG, members)
    code, report = conflicts_json("--fail-on", "info", pair["a"], newer)
    (proc,) = report["processes"]
    assert code == 0 and proc["findings"] == []
    assert any("so_a: 2 versions given (1.0, 2.0)" in n for n in proc["notes"])
    code, report = conflicts_json(pair["a"], newer, pair["b"])  # each version still meets so_b
    assert {(f["rule"], f["severity"]) for p in report["processes"] for f in p["findings"]} >= {
        ("conflict-soname", "error")}


def test_env_without_a_target_says_which_python_it_inspects(tmp_path):
    """Under pipx with no environment active, the default is wheelcheck's own: the report says so."""
    import sys

    proc = run_cli("conflicts", "--env", env={"VIRTUAL_ENV": None})
    assert proc.returncode in (0, 1), proc.stderr
    assert f"no virtual environment is active: inspected the Python wheelcheck runs in, {sys.executable}" in proc.stdout


def test_a_wheel_given_with_env_joins_the_environment(wheels, tmp_path):
    """`conflicts WHEEL --env PYTHON`, as compat takes it: the wheel is judged beside what is installed, in place
    of the installed distribution of its name (here: one of a pair is installed, its partner is the wheel)."""
    site = tmp_path / "site"
    gomp_a, gomp_b, so_a, so_b = wheels
    pip_install(site, so_a, gomp_a)
    _code, alone = conflicts_json("--env", site)
    assert not [f for p in alone["processes"] for f in p["findings"] if f["rule"] == "conflict-soname"]
    code, joined = conflicts_json(so_b, "--env", site)
    assert code == 1 and joined["mode"] == "environment"
    (proc,) = joined["processes"]
    assert sorted(d["name"] for d in proc["distributions"]) == ["gomp_a", "so_a", "so_b"]
    assert summary(joined) == summary(conflicts_json(so_a, so_b, gomp_a)[1])
    code, replaced = conflicts_json(so_a, "--env", site)  # the same distribution given as a wheel: one copy
    assert sorted(d["name"] for d in replaced["processes"][0]["distributions"]) == ["gomp_a", "so_a"]


@pytest.mark.parametrize("args", [["--env"], ["--env", "-q"], ["-q", "--env"], ["--env", "--format", "text"]])
def test_env_alone_anywhere_means_the_default_python(args):
    proc = run_cli("conflicts", *args, env={"VIRTUAL_ENV": None})
    assert proc.returncode in (0, 1), proc.stderr
    if "-q" not in args:
        assert f"inspected the Python wheelcheck runs in, {sys.executable}" in proc.stdout


def test_env_takes_the_same_value_on_compat_and_conflicts(tmp_path):
    """--env PYTHON means one thing on both commands; a file that is no interpreter is the same error."""
    for command in ("conflicts", "compat"):
        proc = run_cli(command, "--env", tmp_path / "nowhere")
        assert proc.returncode == 2 and "nowhere" in proc.stderr and len(proc.stderr.splitlines()) == 1
