"""CUDA claims of variant wheels against the binaries: the fatbins' cubins and PTX (elf/fatbin_scan.py), the CUDA
runtime the files need; and a variant-aware installer choosing by those claims.

Device code is built without nvcc (tests/fixtures/variant_wheels.py lays a fatbin out as nvcc 13.0 does, and gcc
puts it in .nv_fatbin); where nvcc is installed, its own output is read too, with the architectures asked of it
as the oracle."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

from tests.fixtures.repair_scenario import EXT_SUFFIX, python_tag
from tests.fixtures.variant_wheels import cuda_stub, extension_with, fatbin, fatbin_source, variant_json, variant_wheel
from tests.fixtures.wheels import build_wheel
from wheelcheck import audit
from wheelcheck.elf.elf_summary import summarize, summarize_stream

AMPERE_HOPPER = [("sass", 80, ""), ("sass", 90, ""), ("ptx", 90, "")]


def device_ext(build, module, images):
    return extension_with(build, module, fatbin_source(fatbin(images)))


def props_of(report):
    return {p["property"]: p["status"] for p in report.variant["properties"]}


def test_device_code_is_read_in_any_pieces(build):
    lib = device_ext(build, "_dev", AMPERE_HOPPER + [("sass", 90, "a"), ("sass", 100, "f")]).read_bytes()
    whole = summarize(lib, "_dev.so").gpu_code
    assert [str(i) for i in whole.images] == ["compute_90", "sm_80", "sm_90", "sm_90a", "sm_100f"]
    for size in (1, 7, 61, 4096):  # the magic and the headers cut at every place
        pieces = (lib[at:at + size] for at in range(0, len(lib), size))
        streamed = summarize_stream(pieces, len(lib), "_dev.so", lambda offset, n: iter((lib[offset:offset + n],)))
        assert streamed.gpu_code == whole
    assert summarize(build.compile_c("int f(void) { return 1; }\n", "libplain.so").read_bytes(), "p").gpu_code is None


NVCC_CASES = {
    "ampere-hopper": (["arch=compute_80,code=sm_80", "arch=compute_90,code=[sm_90,compute_90]"],
                      ["compute_90", "sm_80", "sm_90"]),
    "arch-and-family": (["arch=compute_90a,code=sm_90a", "arch=compute_100f,code=sm_100f",
                         "arch=compute_120,code=compute_120"], ["compute_120", "sm_90a", "sm_100f"]),
}


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc (the CUDA toolkit) is not installed")
@pytest.mark.parametrize("case", sorted(NVCC_CASES))
def test_nvcc_output_is_read_as_asked(tmp_path, case):
    """The oracle: what nvcc was asked to build is what the fatbins are found to carry."""
    gencode, expected = NVCC_CASES[case]
    source = tmp_path / "k.cu"
    source.write_text("__global__ void scale(float *y, float a) { y[threadIdx.x] *= a; }\n"
                      "extern \"C\" int launch(float *y) { scale<<<1, 32>>>(y, 2.0f); return cudaGetLastError(); }\n")
    lib = tmp_path / "libk.so"
    flags = [f for g in gencode for f in ("-gencode", g)]
    proc = subprocess.run(["nvcc", "-shared", "-Xcompiler", "-fPIC", "-cudart", "shared", *flags, "-o", str(lib),
                           str(source)], capture_output=True, text=True, timeout=600)
    if proc.returncode != 0:
        pytest.skip(f"nvcc cannot build here: {proc.stderr[-300:]}")
    info = summarize(lib.read_bytes(), "libk.so")
    assert [str(i) for i in info.gpu_code.images] == expected
    assert any(n.startswith("libcudart.so.") for n in info.needed)


@pytest.mark.parametrize("value, status, severity", [
    ("80_real", "holds", None), ("86_real", "holds", None),  # sm_80 SASS runs on 8.6
    ("90_real", "holds", None), ("90_virtual", "holds", None),
    ("120_virtual", "holds", None),  # compute_90 PTX JIT-compiles on 12.0
    ("100_real", "false", "warning"),  # only the PTX runs there
    ("75_real", "false", "error"),  # nothing does
    ("80_virtual", "false", "warning"),  # SASS runs on 8.0, but there is no PTX for it
])
def test_gpu_architectures_against_the_fatbin(build, tmp_path, value, status, severity):
    wheel = variant_wheel(tmp_path, "gpu", "cu13", {"nvidia": {"sm_arch": [value]}},
                          device_ext(build, "_gpu", AMPERE_HOPPER))
    report = audit(wheel, any_platform_tag=True).wheels[0]
    assert props_of(report) == {f"nvidia :: sm_arch :: {value}": status}
    found = [f for f in report.findings if f.rule == "variant-gpu-arch"]
    assert [f.severity for f in found] == ([severity] if severity else [])
    if severity == "error":
        assert "compute capability 7.5" in found[0].message and found[0].file.endswith(".so")


def test_each_file_with_device_code_must_carry_the_claimed_architecture(build, tmp_path):
    """Two extensions: one built for Hopper too, one for Ampere only. Hopper's property fails on the second."""
    py = python_tag()
    ampere = device_ext(build, "_old", [("sass", 80, "")])
    members = {"two/__init__.py": b"", f"two/_new{EXT_SUFFIX}": device_ext(build, "_new", AMPERE_HOPPER),
               f"two/_old{EXT_SUFFIX}": ampere,
               "two-1.0.dist-info/variant.json": variant_json("sm90", {"nvidia": {"sm_arch": ["80_real", "90_real"]}})}
    report = audit(build_wheel(tmp_path, "two", "1.0", f"{py}-{py}-manylinux_2_17_x86_64", members, label="sm90"),
                   ).wheels[0]
    assert props_of(report) == {"nvidia :: sm_arch :: 80_real": "holds", "nvidia :: sm_arch :: 90_real": "false"}
    (error,) = [f for f in report.findings if f.rule == "variant-gpu-arch"]
    assert error.severity == "error" and error.file.endswith(f"_old{EXT_SUFFIX}") and not report.passed
    files = {f.path.rsplit("/", 1)[-1]: f.gpu_code for f in report.files}
    assert files[f"_old{EXT_SUFFIX}"] == {"sass": ["sm_80"], "ptx": [], "containers": 1}


def test_no_device_code_leaves_the_architecture_unverified(build, tmp_path):
    wheel = variant_wheel(tmp_path, "nodev", "sm90", {"nvidia": {"sm_arch": ["90_real"]}},
                          extension_with(build, "_nodev"))
    report = audit(wheel).wheels[0]
    assert props_of(report) == {"nvidia :: sm_arch :: 90_real": "unverified"}
    assert not [f for f in report.findings if f.rule == "variant-gpu-arch"]


def cuda_ext(build, module, runtime):
    stub = cuda_stub(build, runtime)
    return extension_with(build, module, "int cudaGetDeviceCount(int *n);\nint count(void) { int n; "
                                         "return cudaGetDeviceCount(&n); }\n", libs=(stub,))


@pytest.mark.parametrize("prop, value, status", [
    ("cuda_version_lower_bound", "12.8", "false"),  # installers would choose it on a CUDA 12.8 driver
    ("cuda_version_lower_bound", "13.0", "holds"),
    ("cuda_version_lower_bound", "13", "holds"),
    ("cuda_version_upper_bound", "13", "false"),  # only drivers older than 13: none runs CUDA 13
    ("cuda_version_upper_bound", "14", "unverified"),
])
def test_the_cuda_bounds_against_the_runtime_the_files_need(build, tmp_path, prop, value, status):
    wheel = variant_wheel(tmp_path, "cu", "cu13", {"nvidia": {prop: [value]}},
                          cuda_ext(build, "_cu", "libcudart.so.13"))
    report = audit(wheel).wheels[0]
    assert props_of(report) == {f"nvidia :: {prop} :: {value}": status}
    errors = [f for f in report.findings if f.rule == "variant-cuda"]
    assert len(errors) == (status == "false")
    if errors:
        assert "libcudart.so.13" in errors[0].message and errors[0].severity == "error"


def test_the_cuda_bound_against_the_requirements(build, tmp_path):
    ext = extension_with(build, "_req")
    requires = ("nvidia-cuda-runtime-cu12==12.8.90", 'nvidia-cublas-cu12; extra == "cuda"')
    props = {"nvidia": {"cuda_version_lower_bound": ["11.8", "12.0"]}}
    report = audit(variant_wheel(tmp_path, "req", "cu12", props, ext, requires=requires)).wheels[0]
    assert props_of(report) == {"nvidia :: cuda_version_lower_bound :: 11.8": "false",
                                "nvidia :: cuda_version_lower_bound :: 12.0": "holds"}
    bare = audit(variant_wheel(tmp_path / "bare", "req", "cu12", props, ext)).wheels[0]
    assert set(props_of(bare).values()) == {"unverified"}


# -- an installer that reads variant wheels


def uv_with_variants(tmp_path):
    """uv from the test extra (0.13.8 reads PEP 825 wheels with --preview-features wheel-variants), and a venv of
    this Python for it; the test is skipped without it."""
    uv = shutil.which("uv", path=os.path.dirname(sys.executable)) or shutil.which("uv")
    if uv is None:
        pytest.skip("uv is not installed (the test extra brings it)")
    version = subprocess.run([uv, "--version"], capture_output=True, text=True).stdout.split()[1]
    if tuple(int(part) for part in version.split(".")[:3]) < (0, 13, 8):
        pytest.skip(f"uv {version} predates its wheel-variants preview as this test knows it (0.13.8)")
    venv = tmp_path / "venv"
    subprocess.run([uv, "venv", "-q", "--python", sys.executable, str(venv)], check=True, timeout=120)
    return uv, venv


def uv_install(uv, venv, *args, env=None):
    return subprocess.run([uv, "pip", "install", "--offline", "--no-deps", "--reinstall", "--preview-features",
                           "wheel-variants", "--python", str(venv / "bin" / "python"), *map(str, args)],
                          capture_output=True, text=True, timeout=300, env={**os.environ, **(env or {})})


def test_pip_refuses_variant_wheels_uv_installs_them(build, tmp_path):
    """pip (26.x and before) reads the variant label as a bad build tag and installs nothing; uv with its
    wheel-variants preview chooses by the properties. The x86_64 level this machine has is the oracle's."""
    wheel = variant_wheel(tmp_path, "isa", "x86_64_v1", {"x86_64": {"level": ["v1"]}},
                          extension_with(build, "_isa", flags=("-march=x86-64",)), providers=True)
    pip = subprocess.run([sys.executable, "-m", "pip", "install", "--dry-run", "--no-index", "--no-deps", str(wheel)],
                         capture_output=True, text=True, timeout=300)
    assert pip.returncode != 0 and ("not a valid wheel filename" in pip.stderr or "Invalid" in pip.stderr)
    report = audit(wheel).wheels[0]
    assert report.passed and props_of(report) == {"x86_64 :: level :: v1": "holds"}
    uv, venv = uv_with_variants(tmp_path)
    proc = uv_install(uv, venv, wheel)
    assert proc.returncode == 0, proc.stderr
    out = subprocess.run([str(venv / "bin" / "python"), "-c", "import isa, isa._isa as m; print(isa.LABEL, m.call())"],
                         capture_output=True, text=True, cwd=tmp_path)
    assert out.stdout.split() == ["x86_64_v1", "42"], out.stderr


def test_an_installer_chooses_by_the_cuda_claim_wheelcheck_refutes(build, tmp_path):
    """Two variants of one release: cu128 claims CUDA 12.8 but its extension needs libcudart.so.13, cu130 claims
    13.0. On a machine whose driver is for CUDA 12.8, uv installs cu128: the claim is all it reads. wheelcheck
    finds the false one."""
    ext = cuda_ext(build, "_pick", "libcudart.so.13")
    wheels = tmp_path / "wheels"
    for label, bound in (("cu128", "12.8"), ("cu130", "13.0")):
        variant_wheel(wheels, "pick", label, {"nvidia": {"cuda_version_lower_bound": [bound], "sm_arch": ["90_real"]}},
                      ext, providers=True)
    index = variant_json("cu128", {"nvidia": {"cuda_version_lower_bound": ["12.8"], "sm_arch": ["90_real"]}},
                         providers=True)
    merged = json.loads(index)
    merged["variants"]["cu130"] = {"nvidia": {"cuda_version_lower_bound": ["13.0"], "sm_arch": ["90_real"]}}
    (wheels / "pick-1.0-variants.json").write_text(json.dumps(merged))
    report = audit(sorted(wheels.glob("*.whl")), variants_index=wheels / "pick-1.0-variants.json")
    by_label = {w.variant["label"]: w for w in report.wheels}
    assert [f.rule for f in by_label["cu128"].findings if f.severity == "error" and f.rule.startswith("variant")] \
        == ["variant-cuda"]
    assert not [f for f in by_label["cu130"].findings if f.rule.startswith("variant") and f.severity == "error"]
    uv, venv = uv_with_variants(tmp_path)
    chosen = {}
    for driver in ("12.8", "13.0"):
        env = {"UV_CUDA_DRIVER_VERSION": driver, "NV_VARIANT_PROVIDER_FORCE_CUDA_DRIVER_VERSION": driver,
               "NV_VARIANT_PROVIDER_FORCE_SM_ARCH": "9.0"}
        proc = uv_install(uv, venv, "--find-links", wheels, "pick", env=env)
        assert proc.returncode == 0, proc.stderr
        out = subprocess.run([str(venv / "bin" / "python"), "-c", "import pick; print(pick.LABEL)"],
                             capture_output=True, text=True, cwd=tmp_path)
        chosen[driver] = out.stdout.strip()
    assert chosen == {"12.8": "cu128", "13.0": "cu130"}
