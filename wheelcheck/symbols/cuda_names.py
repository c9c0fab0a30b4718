"""Which CUDA release a library name or a requirement names: shared knowledge of NVIDIA's naming.

The CUDA runtime and the toolkit libraries that follow its major version carry it as their soname's major
number (``libcudart.so.12`` is CUDA 12, ``libcudart.so.11.0`` CUDA 11, ``libcublas.so.13`` CUDA 13). Others do
not (``libcufft.so.11`` and ``libcusolver.so.11`` ship with CUDA 12, ``libcurand.so.10`` with 11 to 13): they
say nothing here. NVIDIA's wheels name the CUDA major version in the distribution
(``nvidia-cuda-runtime-cu12``, ``nvidia-cublas-cu13``).
"""

from __future__ import annotations

import re

from wheelcheck.symbols.sonames import unhashed

__all__ = ["cuda_major_of_soname", "cuda_major_of_requirement", "CUDA_VERSIONED"]

# the libraries whose soname's major number is the CUDA major version they belong to
CUDA_VERSIONED = ("libcudart", "libcublas", "libcublasLt", "libnvrtc", "libnvJitLink", "libcupti")
_SONAME = re.compile(r"(?P<stem>lib[A-Za-z]+)\.so\.(?P<major>\d{1,3})(?:\.\d+)*")
_REQUIREMENT = re.compile(r"nvidia-[a-z0-9-]+-cu(?P<major>\d{2,3})")


def cuda_major_of_soname(soname: str) -> int | None:
    """libcudart.so.13 -> 13; None for a name that does not state a CUDA version (a repair's hash ignored)."""
    found = _SONAME.fullmatch(unhashed(soname))
    if found is None or found.group("stem") not in CUDA_VERSIONED:
        return None
    return int(found.group("major"))


def cuda_major_of_requirement(name: str) -> int | None:
    """nvidia-cuda-runtime-cu12 -> 12 (a canonical distribution name); None for any other."""
    found = _REQUIREMENT.fullmatch(name)
    return int(found.group("major")) if found else None
