"""A real torch extension, built here with g++ against the torch 2.13.0 CPU wheel's headers and libraries:
compat says it loads with that torch, and it does (installed beside torch in a fresh venv, then imported).

Opt-in (``--torch``): the torch wheel is about 190 MB and installs to about 800 MB. It is found in
$WHEELCHECK_TORCH_DIR or ~/.cache/wheelcheck-torch, else fetched there with ``pip download --no-deps
torch==2.13.0``, which gives the local CPU build (2.13.0+cpu); anything else (a CUDA build) is refused
and deleted, and the test skips.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.fixtures.compile import compile_c
from tests.fixtures.sources import extension_source
from tests.fixtures.wheels import build_wheel, dist_info
from tests.helpers import make_venv, run_cli

pytestmark = pytest.mark.torch

TORCH = "2.13.0"
EXT = "torchext/_ext.cpython-311-x86_64-linux-gnu.so"
PRELUDE = "#include <ATen/core/Tensor.h>\n#include <ATen/ops/ones.h>\n#include <ATen/ops/sum.h>\n"
BODY = "    return (long)at::ones({2, 3}).sum().item<double>();"  # 6


def _torch_dir() -> Path:
    return Path(os.environ.get("WHEELCHECK_TORCH_DIR") or Path.home() / ".cache" / "wheelcheck-torch")


@pytest.fixture(scope="module")
def torch_wheel() -> Path:
    if sys.version_info[:2] != (3, 11):
        pytest.skip("the extension is built for CPython 3.11")
    folder = _torch_dir()
    found = sorted(folder.glob(f"torch-{TORCH}+cpu-cp311-*manylinux*_x86_64.whl"))
    if not found:
        folder.mkdir(parents=True, exist_ok=True)
        proc = subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d", str(folder),
                               f"torch=={TORCH}"], capture_output=True, text=True, timeout=1800)
        for wheel in folder.glob("torch-*.whl"):
            if "+cpu" not in wheel.name:  # never keep (or use) a CUDA torch
                wheel.unlink()
        found = sorted(folder.glob(f"torch-{TORCH}+cpu-cp311-*manylinux*_x86_64.whl"))
        if not found:
            pytest.skip(f"torch {TORCH} (CPU) cannot be had here: {proc.stderr.strip()[-300:]}")
    return found[0]


@pytest.fixture(scope="module")
def torch_extension(torch_wheel, tmp_path_factory) -> Path:
    """torchext 0.1 (Requires-Dist: torch==2.13.0): an extension that links libc10.so and libtorch_cpu.so
    without an RPATH, as torch.utils.cpp_extension builds them; its __init__ imports torch first."""
    tree = tmp_path_factory.mktemp("torch-tree")
    with zipfile.ZipFile(torch_wheel) as zf:
        for name in zf.namelist():
            if name.startswith("torch/include/") or name in ("torch/lib/libc10.so", "torch/lib/libtorch_cpu.so"):
                zf.extract(name, tree)
    out = tmp_path_factory.mktemp("torchext")
    ext = compile_c(extension_source("_ext", BODY, prelude=PRELUDE), out / "torchext_ext.so", cxx=True,
                    lang_std="c++20", flags=("-O0", "-I", str(tree / "torch" / "include")),
                    libs=(str(tree / "torch" / "lib" / "libc10.so"), str(tree / "torch" / "lib" / "libtorch_cpu.so")))
    metadata = f"Metadata-Version: 2.1\nName: torchext\nVersion: 0.1\nRequires-Dist: torch=={TORCH}\n".encode()
    return build_wheel(out, "torchext", "0.1", "cp311-cp311-linux_x86_64", {
        "torchext/__init__.py": b"import torch\nfrom ._ext import call\n", EXT: ext,
        f"{dist_info('torchext', '0.1')}/METADATA": metadata})


def test_torch_extension_loads_with_the_torch_it_was_built_against(torch_wheel, torch_extension, tmp_path):
    proc = run_cli("compat", "--format", "json", torch_extension, torch_wheel)
    report = json.loads(proc.stdout)
    (pair,) = report["pairs"]
    assert proc.returncode == 0 and pair["verdict"] == "loads", pair
    assert [h["name"] for h in pair["hosts"]] == ["torch"]
    assert pair["requirements"][0]["satisfied"] and pair["requirements"][0]["given"] == f"{TORCH}+cpu"
    links = {link["name"]: link for link in pair["files"][0]["links"]}
    assert {n: (link["how"], link["file"]) for n, link in links.items()} == {
        "libc10.so": ("loaded", "torch/lib/libc10.so"), "libtorch_cpu.so": ("loaded", "torch/lib/libtorch_cpu.so")}
    assert pair["files"][0]["symbols"]["unbound"] == 0 and pair["files"][0]["symbols"]["checked"] > 0
    assert pair["cxx"]["subject_abi"] == pair["cxx"]["host_abi"] == "new"
    # and it does load: torch (with its dependencies from the index) and the extension in a fresh venv
    python = make_venv(tmp_path / "v")
    install = subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "-q",
                              "--disable-pip-version-check", str(torch_wheel), str(torch_extension)],
                             capture_output=True, text=True, timeout=1800)
    if install.returncode != 0:
        pytest.skip(f"torch's dependencies cannot be installed here: {install.stderr.strip()[-300:]}")
    imported = subprocess.run([str(python), "-c", "import torchext; print(torchext.call())"], capture_output=True,
                              text=True, timeout=600)
    assert imported.returncode == 0 and imported.stdout.split() == ["6"], imported.stderr
