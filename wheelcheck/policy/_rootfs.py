"""Find libraries in a root filesystem (an unpacked image or unpacked packages) as if chrooted into it.

Symbolic links are followed inside the root: an absolute target (``/lib/x86_64-linux-gnu/libc.so.6``)
means ``ROOT/lib/...``, never the host's file, and ``..`` stops at the root.
"""

from __future__ import annotations

import os
from pathlib import Path, PurePosixPath

__all__ = ["library_dirs", "resolve_in_root"]

_MAX_LINKS = 40  # as the kernel's ELOOP limit
# the directories ld.so and the distributions use, before the multiarch ones found under lib and usr/lib
_PLAIN_DIRS = ("lib64", "usr/lib64", "lib", "usr/lib")
_MULTIARCH_PARENTS = ("lib", "usr/lib")


def resolve_in_root(root: Path, relative: str) -> Path | None:
    """The regular file ``relative`` names inside ``root`` (links followed within it), or None."""
    path = _resolve(root, relative)
    return path if path is not None and path.is_file() else None


def library_dirs(root: Path) -> list[str]:
    """Library directories under ``root`` (relative, in search order): multiarch first, as ld.so.conf has them."""
    multiarch = []
    for parent in _MULTIARCH_PARENTS:
        real = _resolve(root, parent)
        if real is None or not real.is_dir():
            continue
        for child in sorted(real.iterdir(), key=lambda p: p.name):
            if "-linux-" in child.name:
                multiarch.append(f"{parent}/{child.name}")
    return multiarch + list(_PLAIN_DIRS)


def _resolve(root: Path, relative: str) -> Path | None:
    parts = list(PurePosixPath(relative).parts)
    resolved: list[str] = []
    links = 0
    while parts:
        part = parts.pop(0)
        if part in ("/", "", "."):
            continue
        if part == "..":
            if resolved:
                resolved.pop()
            continue
        candidate = root.joinpath(*resolved, part)
        if candidate.is_symlink():
            links += 1
            if links > _MAX_LINKS:
                return None
            target = os.readlink(candidate)
            if target.startswith("/"):
                resolved = []
            parts = list(PurePosixPath(target).parts) + parts
            continue
        if not candidate.exists():
            return None
        resolved.append(part)
    return root.joinpath(*resolved)
