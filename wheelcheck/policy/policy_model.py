"""What a policy promises: symbol versions, libraries and C++ ABIs a wheel may rely on, per arch."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, fields, replace
from types import MappingProxyType

from wheelcheck.errors import UsageError
from wheelcheck.policy.versions import numeric
from wheelcheck.wheel.wheel_model import LEGACY_ALIASES, split_platform

__all__ = ["Policy", "PolicySet", "LINUX", "musl_libc_soname", "musl_answers_itself", "glibc_of_tag"]

_MUSL_ARCH = {"i686": "x86", "armv7l": "armv7"}
_PEP600 = re.compile(r"manylinux_(\d+)_(\d+)")  # manylinux_2_30: runs on glibc 2.30 and later
_PEP656 = re.compile(r"musllinux_(\d+)_(\d+)")


def glibc_of_tag(tag: str) -> tuple[int, int] | None:
    """(2, 30) for a PEP 600 tag or policy name (manylinux_2_30_x86_64, manylinux_2_30); None for any other."""
    found = _PEP600.match(tag)
    return (int(found.group(1)), int(found.group(2))) if found else None


# The needed names musl's loader answers with itself, without looking for a file: "lib" + one of these stems
# + "." (ldso/dynlink.c, load_library's "reserved" list). A musl library built by a toolchain other than
# Alpine's (zig, as maturin --zig uses; a cross gcc) needs "libc.so"; a glibc-minded build may need
# "libm.so.6" or "libpthread.so.0". musl's dlopen goes through the same path.
_MUSL_SELF = re.compile(r"lib(?:c|pthread|rt|m|dl|util|xnet)\.")


def musl_libc_soname(arch: str) -> str:
    """The soname of musl's libc on ``arch`` (policies say "libc.so"; the loader is named per arch)."""
    return f"libc.musl-{_MUSL_ARCH.get(arch, arch)}.so.1"


def musl_answers_itself(soname: str) -> bool:
    """Does musl's loader resolve a need (or a dlopen) of ``soname`` to itself, by the name alone?"""
    return _MUSL_SELF.match(soname) is not None


@dataclass(frozen=True)
class Policy:
    """One platform policy (manylinux_2_17, musllinux_1_2, ...). Immutable; compared by priority."""

    name: str
    priority: float  # an int in every policy file; one made for a claim sits halfway between two rungs
    libc: str  # glibc or musl
    libc_version: str
    aliases: tuple[str, ...] = ()
    cxx_abi: frozenset[str] = frozenset({"old", "new"})
    symbol_versions: MappingProxyType = field(default_factory=lambda: MappingProxyType({}))
    lib_whitelist: frozenset[str] = frozenset()
    blacklist: MappingProxyType = field(default_factory=lambda: MappingProxyType({}))
    drivers: frozenset[str] = frozenset()  # system driver libraries (libcuda.so.1 ...) beyond the built-in list
    exposure: MappingProxyType = field(default_factory=lambda: MappingProxyType({}))  # thresholds, by family
    rules: MappingProxyType = field(default_factory=lambda: MappingProxyType({}))  # rule id -> severity or "off"
    source: str | None = None
    origin: str = "bundled"  # where it was loaded from
    document: MappingProxyType = field(default_factory=lambda: MappingProxyType({}), repr=False, compare=False)
    # made for a claimed tag no policy is named after (PolicySet.claimed): between two rungs of the ladder, so a
    # wheel is held to its rules one by one, not by where its verdict stands
    made_for_claim: bool = False

    @property
    def is_linux(self) -> bool:
        return self.priority == 0

    def supports(self, arch: str) -> bool:
        return self.is_linux or arch in self.symbol_versions

    def tag(self, arch: str) -> str:
        return f"{self.name}_{arch}"

    def tags(self, arch: str) -> list[str]:
        """The policy's tag and its aliases' tags: manylinux_2_17_x86_64, manylinux2014_x86_64."""
        return [self.tag(arch)] + [f"{alias}_{arch}" for alias in self.aliases]

    def versions(self, arch: str) -> dict[str, frozenset[str]]:
        return dict(self.symbol_versions.get(arch, {}))

    def whitelist(self, arch: str) -> frozenset[str]:
        if self.libc != "musl" or "libc.so" not in self.lib_whitelist:
            return self.lib_whitelist
        return (self.lib_whitelist - {"libc.so"}) | {musl_libc_soname(arch)}

    def provides(self, soname: str, arch: str) -> bool:
        """May a wheel of this policy need ``soname`` from the system: whitelisted, or, on musl, a name the
        loader answers with itself (``musl_answers_itself``: "libc.so", "libm.so.6"), when the policy lets the
        system provide musl's libc at all."""
        if soname in self.whitelist(arch):
            return True
        return self.libc == "musl" and "libc.so" in self.lib_whitelist and musl_answers_itself(soname)

    def meets(self, target: Policy) -> bool:
        """Does a wheel that deserves this policy meet ``target``: the same libc, at least as compatible?

        Every wheel meets plain linux. Any musllinux policy meets any other: musl has no symbol versions, so
        nothing in a wheel tells which musl release it needs (auditwheel cannot tell either).
        """
        if target.is_linux:
            return True
        if self.libc != target.libc:
            return False
        return self.libc == "musl" or self.priority >= target.priority

    def __reduce__(self):
        # mapping proxies do not pickle: a policy goes to a worker process (audit of several wheels) as plain
        # dicts, and is frozen again there
        return _policy_from_state, (tuple((f.name, _thawed(getattr(self, f.name))) for f in fields(self)),)


def _thawed(value):
    if isinstance(value, MappingProxyType):
        return _Thawed({key: _thawed(item) for key, item in value.items()})
    return value


class _Thawed(dict):
    """A mapping proxy's contents on their way through pickle."""


def _frozen(value):
    if isinstance(value, _Thawed):
        return MappingProxyType({key: _frozen(item) for key, item in value.items()})
    return value


def _policy_from_state(state: tuple) -> Policy:
    return Policy(**{name: _frozen(value) for name, value in state})


LINUX = Policy(name="linux", priority=0, libc="any", libc_version="")


def _within(version: str, wanted: tuple[int, ...]) -> bool:
    """A glibc version a claim of glibc ``wanted`` keeps: a number no newer; anything else is never cut."""
    number = numeric(version)
    return number is None or number <= wanted


class PolicySet:
    """The policies a wheel is judged against, most compatible (highest priority) first."""

    def __init__(self, policies: Iterable[Policy]) -> None:
        self._policies = sorted(policies, key=lambda p: -p.priority)

    def __iter__(self) -> Iterator[Policy]:
        return iter(self._policies)

    def __len__(self) -> int:
        return len(self._policies)

    def for_platform(self, libc: str, arch: str) -> list[Policy]:
        """Policies of ``libc`` that cover ``arch``, most compatible first, ending with linux.

        musl has no symbol versions, so nothing in a wheel tells one musl release from another:
        like auditwheel (on a host whose musl it cannot read), only the newest musl policy is judged.
        """
        found = [p for p in self._policies if p.libc == libc and p.supports(arch) and not p.is_linux]
        if libc == "musl" and found:
            found = [min(found, key=lambda p: p.priority)]
        return found + [LINUX]

    def find(self, name: str) -> Policy | None:
        """A policy by its name or an alias (manylinux1, manylinux2010 and manylinux2014 stand for their
        PEP 600 names even in a policy file that does not list them); LINUX for ``linux``."""
        for candidate in (name, LEGACY_ALIASES.get(name)):
            for p in self._policies:
                if candidate == p.name or candidate in p.aliases:
                    return p
        return LINUX if name == "linux" else None

    def names(self) -> list[str]:
        return [p.name for p in self._policies]

    def named(self, name: str, arch: str, libc: str) -> Policy | None:
        """The policy a claimed platform (``manylinux2014``, without its arch) stands for on a wheel of
        ``arch`` and ``libc``; None when no such policy covers that wheel."""
        policy = self.find(name)
        if policy is None or policy.is_linux or policy.libc != libc or not policy.supports(arch):
            return None
        return policy

    def claimed(self, name: str, arch: str, libc: str) -> Policy | None:
        """The policy a claimed platform holds a wheel of ``arch`` and ``libc`` to: ``named``'s, or for a PEP 600
        or PEP 656 tag no policy is named after, one made for it (``made_for_claim``). manylinux_2_30 promises
        glibc 2.30: the next newer glibc policy (manylinux_2_31) with its glibc versions cut at 2.30 (the other
        libraries' limits are that policy's: no tag fixes them). A musllinux tag is the newest musl policy's
        (nothing tells musl releases apart). Made only from the set's own manylinux_X_Y / musllinux_X_Y policies
        (a team's policy file of other names holds a wheel to those alone). None for a glibc newer than every
        policy's, or another name."""
        policy = self.named(name, arch, libc)
        if policy is not None or self.find(name) is not None:
            return policy
        glibc, musl = _PEP600.fullmatch(name), _PEP656.fullmatch(name)
        # the PEP 600 / 656 policies of this set: a policy file of a team's own names (team_2_31) makes none
        pattern = _PEP600 if glibc else _PEP656
        ladder = [p for p in self._policies if p.supports(arch) and not p.is_linux and pattern.fullmatch(p.name)
                  and p.libc == ("glibc" if glibc else "musl")]
        if musl and libc == "musl" and ladder:
            return replace(min(ladder, key=lambda p: p.priority), name=name, aliases=(), made_for_claim=True)
        if not glibc or libc != "glibc":
            return None
        wanted = (int(glibc.group(1)), int(glibc.group(2)))
        newer = [p for p in ladder if (numeric(p.libc_version) or ()) > wanted]
        if not newer:
            return None
        upper = min(newer, key=lambda p: numeric(p.libc_version) or ())
        kept = {arch_: MappingProxyType({ns: frozenset(v for v in found if ns != "GLIBC" or _within(v, wanted))
                                         for ns, found in by_ns.items()})
                for arch_, by_ns in upper.symbol_versions.items()}
        return replace(upper, name=name, aliases=(), libc_version=f"{wanted[0]}.{wanted[1]}",
                       priority=upper.priority + 0.5,  # more compatible than upper, less than the rung below
                       symbol_versions=MappingProxyType(kept), made_for_claim=True)

    def resolve(self, plat: str | Policy | None, arch: str, libc: str) -> Policy | None:
        """The policy ``--plat`` (or ``plat =``, or ``$AUDITWHEEL_PLAT``) asks of a wheel of ``arch`` and ``libc``.

        The one place a --plat value becomes a policy, for audit and repair alike. It may be a tag
        (``manylinux_2_17_x86_64``, ``musllinux_1_1_aarch64``, a policy file's ``acme_2_28_x86_64``) or a
        policy name or alias without the arch (``manylinux2014``, ``musllinux_1_2``), which applies to each
        wheel with that wheel's arch. None means nothing is asked: no value, ``auto``, or an arch-less name
        of the other libc's policy (a ``dist/`` of glibc and musl wheels shares one setting). Any other
        mismatch is a UsageError (path ``--plat``): a tag for another arch or libc, a policy that does not
        cover the wheel's arch, a name no policy has.
        """
        if isinstance(plat, Policy):
            return plat  # already resolved (repair judges its plan against the policy it aimed at)
        if plat is None or plat in ("", "auto"):
            return None
        name, plat_arch = self._split(plat)
        if plat_arch is not None and plat_arch != arch:
            raise UsageError("--plat", f"{plat!r} is a tag for {plat_arch}, but the wheel is {arch}")
        policy = self.find(name)
        if policy is None and (_PEP600.fullmatch(name) or _PEP656.fullmatch(name)):
            # a tag between two policies (manylinux_2_30): judged as a wheel claiming it is
            wanted = "glibc" if _PEP600.fullmatch(name) else "musl"
            if wanted != libc:
                if plat_arch is None:
                    return None
                raise UsageError("--plat", f"{plat!r} is a {wanted} tag, but the wheel is for {libc}")
            policy = self.claimed(name, arch, libc)
        if policy is None or policy.is_linux:
            known = ", ".join(p.name for p in self._policies if p.supports(arch) and not p.is_linux) or "none"
            raise UsageError("--plat", f"{plat!r}: no policy is named so (known for {arch}: {known})")
        if policy.libc != libc:
            if plat_arch is None:
                return None
            raise UsageError("--plat", f"{plat!r} is a {policy.libc} tag, but the wheel is for {libc}")
        if not policy.supports(arch):
            covering = ", ".join(p.name for p in self._policies if p.libc == libc and p.supports(arch)) or "none"
            raise UsageError("--plat", f"{plat!r}: {policy.name} does not cover {arch} (the {libc} policies "
                                       f"that do: {covering})")
        return policy

    def _split(self, plat: str) -> tuple[str, str | None]:
        """(policy name or alias, arch or None) of a --plat value: the longest known name it starts with."""
        names = {n for p in self._policies for n in (p.name, *p.aliases)} | set(LEGACY_ALIASES)
        if plat in names:
            return plat, None
        prefix = max((n for n in names if plat.startswith(n + "_")), key=len, default=None)
        if prefix is not None:
            return prefix, plat[len(prefix) + 1:]
        return split_platform(plat) or (plat, None)
