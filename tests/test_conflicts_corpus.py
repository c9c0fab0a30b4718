"""wheelcheck conflicts over the dev corpus (opt-in: --corpus), checked against pyelftools' reading of the
very files it names, and against what the wheel file names say about platforms and interpreters."""

from __future__ import annotations

import json
import re
import subprocess
import zipfile
from pathlib import Path

import jsonschema
import pytest

from tests.fixtures.conflict_wheels import exported
from tests.helpers import run_cli
from wheelcheck.report.conflicts_json import conflicts_schema

pytestmark = pytest.mark.corpus


@pytest.fixture(scope="module")
def report(corpus_dir: Path) -> dict:
    proc = run_cli("conflicts", "--format", "json", *sorted(corpus_dir.glob("*.whl")))
    assert proc.returncode in (0, 1), proc.stderr
    out = json.loads(proc.stdout)
    jsonschema.validate(out, conflicts_schema())
    return out


def member(corpus_dir: Path, wheel_prefix: str, path: str) -> bytes:
    (wheel,) = [w for w in corpus_dir.glob(f"{wheel_prefix}*.whl") if "x86_64" in w.name and "musl" not in w.name]
    with zipfile.ZipFile(wheel) as zf:
        return zf.read(path)


def process(report: dict, label: str) -> dict:
    return next(p for p in report["processes"] if p["label"] == label)


def test_processes_follow_platform_and_interpreter(report):
    members = {p["label"]: sorted(f"{d['name']} {d['version']}" for d in p["distributions"])
               for p in report["processes"]}
    assert set(members) == {"x86_64, glibc, cp311", "x86_64, glibc, cp37", "x86_64, musl, cp311",
                            "aarch64, glibc, cp311", "ppc64le, glibc, cp311", "s390x, glibc, cp311"}
    # numpy 1.16.6 is a cp37m wheel: only the cp37-abi3 opencv can share its process
    assert members["x86_64, glibc, cp37"] == ["numpy 1.16.6", "opencv-python-headless 5.0.0.93"]
    assert "numpy 2.4.6" in members["x86_64, glibc, cp311"] and len(members["x86_64, glibc, cp311"]) == 13
    assert members["x86_64, musl, cp311"] == ["cryptography 50.0.2", "numpy 2.4.6"]


def test_libpng_copies_of_opencv_and_pillow(report, corpus_dir):
    cp311 = process(report, "x86_64, glibc, cp311")
    (png,) = [f for f in cp311["findings"] if f["rule"] == "conflict-symbols" and f["family"] == "libpng"]
    files = {p["distribution"]: p["file"] for p in png["providers"]}
    opencv = exported(member(corpus_dir, "opencv_python_headless", files["opencv-python-headless"]))
    pillow = exported(member(corpus_dir, "pillow", files["pillow"]))
    assert set(png["names"]) == {n for n in opencv & pillow if n.startswith("png_")}
    assert png["hazard"] == "strong" and png["liveness"] == "latent"


def test_numpy_and_scipy_openblas_share_unprefixed_names(report, corpus_dir):
    """scipy-openblas prefixes the BLAS/LAPACK API (scipy_dgemm_), but numpy's ILP64 copy and scipy's LP64
    copy both still export some LAPACK routines and OpenBLAS internals under their plain names."""
    cp311 = process(report, "x86_64, glibc, cp311")
    (blas,) = [f for f in cp311["findings"] if f["rule"] == "conflict-symbols" and f["family"] == "blas"]
    files = {p["distribution"]: p["file"] for p in blas["providers"]}
    both = exported(member(corpus_dir, "numpy-2.4.6", files["numpy"])) & \
        exported(member(corpus_dir, "scipy", files["scipy"]))
    assert {"claqz0_", "dlaqz0_", "blas_thread_init", "blas_memory_alloc"} <= both
    assert {"claqz0_", "dlaqz0_", "blas_thread_init", "blas_memory_alloc"} <= set(blas["names"])
    (copies,) = [f for f in cp311["findings"] if f["rule"] == "conflict-runtime-copies"]
    assert copies["family"] == "blas" and copies["count"] == 3
    assert all("openblas" in p["file"] for p in copies["providers"])


def test_openssl_1_1_and_3_are_kept_apart_by_versions(report, corpus_dir, tmp_path):
    """opencv's libcrypto 1.1.1k and psycopg2's libcrypto 3 export the same names, versioned OPENSSL_1_1_0
    and OPENSSL_3.0.0: a reference bound to one version never binds to the other."""
    versions = {}
    for prefix, lib in (("opencv_python_headless", "libcrypto-5409cd36.so.1.1.1k"),
                        ("psycopg2_binary", "libcrypto-fb8d5b21.so.3")):
        wheel = next(corpus_dir.glob(f"{prefix}*x86_64.whl"))
        with zipfile.ZipFile(wheel) as zf:
            path = tmp_path / lib
            path.write_bytes(zf.read(next(n for n in zf.namelist() if n.endswith(lib))))
        dynsyms = subprocess.run(["readelf", "-W", "--dyn-syms", str(path)], capture_output=True, text=True).stdout
        versions[lib] = {line.split()[-1].split("@@")[1] for line in dynsyms.splitlines()
                         if line.split() and line.split()[-1].startswith("EVP_DigestInit_ex@@")}
    assert versions == {"libcrypto-5409cd36.so.1.1.1k": {"OPENSSL_1_1_0"}, "libcrypto-fb8d5b21.so.3": {"OPENSSL_3.0.0"}}
    cp311 = process(report, "x86_64, glibc, cp311")
    assert not [f for f in cp311["findings"] if f["family"] == "openssl"]
    assert cp311["stats"]["versioned_apart"] > 1000


def test_text_report_quotes_its_time(corpus_dir):
    proc = run_cli("conflicts", *sorted(corpus_dir.glob("*.whl")))
    assert proc.returncode in (0, 1)
    assert re.search(r"; read \d+ wheels in [0-9.]+ s, analysed in [0-9.]+ s$", proc.stdout.splitlines()[-1])
