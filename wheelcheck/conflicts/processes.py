"""Which of the given distributions can share one process.

Wheels of different platforms (architecture and libc) or for different interpreters never meet: a
cp37 numpy and a cp311 scipy are never imported together. So the distributions are split into
processes: one per platform and concrete interpreter named by some wheel, holding every distribution
that can be installed there (abi3 wheels from their minimum version on, ``none``-ABI and pure wheels
everywhere). A process whose members are all in a bigger one adds nothing and is dropped.

Two versions of one distribution in a process cannot be installed together: they are alternatives,
compared with the others and never with each other (the analyses key on the canonical name).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from wheelcheck.conflicts.distribution import Distribution
from wheelcheck.wheel.wheel_model import split_platform

__all__ = ["Process", "group_processes", "one_process", "left_out"]

_CPYTHON = re.compile(r"^cp3(\d+)$")
_ABI3 = re.compile(r"^cp3(\d+)$")


@dataclass(frozen=True)
class Process:
    label: str  # "x86_64 glibc, cp311", or the environment read
    arch: str | None
    libc: str | None
    interpreter: str | None
    members: tuple[Distribution, ...]

    @property
    def alternatives(self) -> dict[str, list[Distribution]]:
        """Canonical name -> the versions given, for names given more than once."""
        by_key: dict[str, list[Distribution]] = {}
        for dist in self.members:
            by_key.setdefault(dist.key, []).append(dist)
        return {k: v for k, v in by_key.items() if len(v) > 1}


def _platforms(dist: Distribution) -> set[tuple[str, str]] | None:
    """{(arch, libc)} of its Linux platform tags; None when it runs anywhere (platform 'any', or no tags);
    empty for a wheel of other systems only (macOS, Windows), which shares no process with these."""
    if not dist.tags or any(tag.platform == "any" for tag in dist.tags):
        return None
    out = set()
    for tag in dist.tags:
        split = split_platform(tag.platform)
        if split:
            libc = "musl" if split[0].startswith("musllinux") else "glibc"
            out.add((split[1], libc))
    return out


def _interpreters(dist: Distribution) -> tuple[set[str], int | None, bool]:
    """(exact interpreter keys, lowest CPython 3 minor of an abi3 tag, runs under any interpreter)."""
    exact, abi3_min, anywhere = set(), None, not dist.tags
    for tag in dist.tags:
        if tag.abi == "abi3":
            m = _ABI3.match(tag.interpreter)
            if m:
                minor = int(m.group(1))
                abi3_min = minor if abi3_min is None else min(abi3_min, minor)
            else:
                anywhere = True
        elif tag.abi == "none":
            anywhere = True
        else:
            exact.add(tag.abi[:-1] if re.match(r"^cp3[0-7]m$", tag.abi) else tag.abi)
    return exact, abi3_min, anywhere


def _runs_under(dist: Distribution, interpreter: str | None) -> bool:
    exact, abi3_min, anywhere = _interpreters(dist)
    if anywhere or interpreter is None:
        return True
    if interpreter in exact:
        return True
    m = _CPYTHON.match(interpreter)
    return abi3_min is not None and m is not None and int(m.group(1)) >= abi3_min


def group_processes(dists: Sequence[Distribution]) -> list[Process]:
    """Split wheels into the processes they can share, most members first."""
    platforms = sorted(set().union(*(_platforms(d) or set() for d in dists)))
    if not platforms and any(_platforms(d) is not None for d in dists):
        return []  # only wheels of other systems: nothing here loads on Linux
    interpreters = sorted(set().union(*(_interpreters(d)[0] for d in dists)), key=_interpreter_order)
    candidates = []
    each_platform: list[tuple[str | None, str | None]] = [*platforms] or [(None, None)]
    each_interpreter: list[str | None] = [*interpreters] or [None]
    for arch, libc in each_platform:
        for interpreter in each_interpreter:
            members = tuple(d for d in dists if _on_platform(d, arch, libc) and _runs_under(d, interpreter))
            if members:
                label = ", ".join(p for p in (arch, libc, interpreter or _abi3_label(members)) if p)
                candidates.append(Process(label or "any platform", arch, libc, interpreter, members))
    kept: list[Process] = []
    for proc in sorted(candidates, key=lambda p: -len(p.members)):
        ids = {id(d) for d in proc.members}
        if not any(ids <= {id(d) for d in k.members} for k in kept):
            kept.append(proc)
    return kept


def left_out(dists: Sequence[Distribution], processes: Sequence[Process]) -> list[Distribution]:
    """The distributions no process holds: wheels of other systems (macOS, Windows)."""
    held = {id(d) for p in processes for d in p.members}
    return [d for d in dists if id(d) not in held]


def one_process(dists: Sequence[Distribution], label: str) -> Process:
    """Everything in one process: an installed environment is one by definition."""
    return Process(label, None, None, None, tuple(dists))


def _on_platform(dist: Distribution, arch: str | None, libc: str | None) -> bool:
    platforms = _platforms(dist)
    return platforms is None or arch is None or (arch, libc) in platforms


def _interpreter_order(key: str) -> tuple:
    m = re.match(r"^([a-z]+?)(\d+)", key)
    return (m.group(1), int(m.group(2)), key) if m else (key, 0, key)


def _abi3_label(members: tuple[Distribution, ...]) -> str | None:
    lows = [low for low in (_interpreters(d)[1] for d in members) if low is not None]
    return f"cp3{max(lows)}+ (abi3)" if lows else None
