"""Each variant property of a variant wheel (PEP 825) judged against its binaries: it holds, it is false, or the
binaries cannot speak to it (unverified, never passed).

Installers choose a variant wheel by its properties; these are the ones a wheel's files confirm or refute:

- ``x86_64 :: level :: vN``: the level the code needs (isa-instructions, which takes the property as the wheel's
  claim: code beyond it with no CPU check is an error there);
- ``nvidia :: cuda_version_lower_bound`` and ``cuda_version_upper_bound``: the CUDA major version the files need
  (the runtime's soname, libcudart.so.13) and the wheel's ``nvidia-*-cuNN`` requirements name (variant-cuda);
- ``nvidia :: sm_arch :: NN_real`` and ``NN_virtual``: the cubins and PTX of the files' fatbins (variant-gpu-arch);
- ``libc :: name``, ``libc :: glibc_version_lower_bound``, ``libc :: musl_version_lower_bound``: the platform
  verdict (variant-libc).

A property with several values is compatible with a system that supports one of them (PEP 825), so the least
demanding value is what installers hold it to (isa-instructions takes the lowest level); each value is judged
here on its own: ``x86_64 :: level :: v2`` and ``v3`` say the wheel runs on a v2 machine and on a v3 one.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from wheelcheck.audit.check_context import CheckContext, Fact
from wheelcheck.audit.findings import Finding
from wheelcheck.policy.policy_model import glibc_of_tag
from wheelcheck.symbols.cuda_names import cuda_major_of_requirement, cuda_major_of_soname
from wheelcheck.wheel.requires_dist import required_name
from wheelcheck.wheel.variant_metadata import VariantProperty
from wheelcheck.wheel.wheel_model import WheelModel

__all__ = ["check_variant_properties", "variant_isa_claim", "variant_fact", "pure_variant", "Judged"]

_LEVEL = re.compile(r"v([1-4])")
_VERSION = re.compile(r"(\d{1,4})(?:\.(\d{1,4}))?")
_SM = re.compile(r"(\d{1,3})(\d)([af]?)_(real|virtual)")
_GPU_FIX = ("build device code for every architecture the properties name (nvcc -gencode arch=compute_NN,code=sm_NN, "
            "or CMake's CUDA_ARCHITECTURES), or drop the architectures it does not carry from the variant properties")


@dataclass(frozen=True)
class Judged:
    """One property and what the binaries say of it."""

    prop: VariantProperty
    status: str  # holds, false, unverified
    evidence: str

    def to_dict(self) -> dict:
        return {"property": str(self.prop), "namespace": self.prop.namespace, "feature": self.prop.feature,
                "value": self.prop.value, "status": self.status, "evidence": self.evidence}


def variant_isa_claim(model: WheelModel) -> tuple[int, str] | None:
    """The x86-64 level the wheel's ``x86_64 :: level`` property claims, and who claims it; None without one."""
    values = [p for p in model.variant_properties if (p.namespace, p.feature) == ("x86_64", "level")
              and _LEVEL.fullmatch(p.value)]
    if not values:
        return None
    lowest = min(values, key=lambda p: p.value)
    return int(lowest.value[1]), f"the variant property {lowest}"


def variant_fact(model: WheelModel, judged: list[Judged]) -> dict | None:
    """The wheel's ``variant`` in the report: its label, what its metadata says, each property's judgement."""
    if model.variant_label is None:
        return None
    meta = model.variant
    known = meta is not None and meta.readable and meta.properties_of(model.variant_label) is not None
    return {"label": model.variant_label,
            "schema": meta.schema if meta else None,
            "format_version": ".".join(map(str, meta.format_version)) if meta and meta.format_version else None,
            "namespaces": list(meta.namespaces) if meta else [],
            "properties": [j.to_dict() for j in judged] if known else None}


def pure_variant(model: WheelModel) -> tuple[dict | None, list[Finding]]:
    """The ``variant`` of a wheel with no ELF file, and its findings: no binary speaks to any property."""
    judged = [Judged(p, "unverified", "the wheel holds no ELF file") for p in model.variant_properties]
    return variant_fact(model, judged), [_unverified(j) for j in judged]


def _unverified(j: Judged) -> Finding:
    return Finding("variant-unverified", "info", None, f"states {j.prop}, which its binaries cannot confirm or "
                   f"refute ({j.evidence})", "nothing to do: it is the publisher's word",
                   cause="states properties its binaries cannot confirm or refute", subject=str(j.prop))


def check_variant_properties(ctx: CheckContext) -> Iterator[Finding | Fact]:
    judged: list[Judged] = []
    for prop in ctx.model.variant_properties:
        verdict, findings = _JUDGES.get((prop.namespace, prop.feature), _unread)(ctx, prop)
        judged.append(verdict)
        yield from findings
    yield from (_unverified(j) for j in judged if j.status == "unverified")
    fact = variant_fact(ctx.model, judged)
    if fact is not None:
        yield Fact(None, "variant", fact)


# -- x86_64 :: level


def _isa_level(ctx: CheckContext, prop: VariantProperty) -> tuple[Judged, list[Finding]]:
    if not _LEVEL.fullmatch(prop.value):
        return Judged(prop, "unverified", "a value that names no x86-64 level (v1 to v4)"), []
    level = int(prop.value[1])
    scans = [(e, e.isa_code) for e in ctx.elves if e.isa_code is not None]
    if not getattr(ctx.options, "isa_check", True):
        return Judged(prop, "unverified", "--disable-isa-ext-check: the code is not judged"), []
    if not scans:
        return Judged(prop, "unverified", "no x86-64 code in the wheel"), []
    # isa-instructions holds the code to the lowest level stated and reports each file beyond it, as an error
    over = [(e, s) for e, s in scans if s.level > level and not s.guard]
    if over:
        elf, scan = over[0]
        more = f" (and {len(over) - 1} more)" if len(over) > 1 else ""
        return Judged(prop, "false", f"{elf.path}{more} needs x86-64-v{scan.level} with no CPU check"), []
    needed = max((s.level for _e, s in scans if not s.guard), default=1)
    sampled = [e.path for e, s in scans if not s.complete]
    if sampled:
        return Judged(prop, "unverified", f"the code of {_files(len(sampled))} was sampled, not walked whole "
                                          f"({sampled[0]}); what was walked needs x86-64-v{needed}"), []
    return Judged(prop, "holds", f"the code needs x86-64-v{needed} at most (code behind a CPU check aside)"), []


# -- nvidia :: cuda_version_lower_bound, cuda_version_upper_bound


def _needed_cuda(ctx: CheckContext) -> list[tuple[int, str]]:
    """(CUDA major version, what needs it): the files' versioned CUDA libraries and the nvidia-*-cuNN
    requirements (extras' too: they name the CUDA the wheel is built for)."""
    found = [(major, f"{elf.path} needs {name}") for elf in ctx.elves for name in elf.needed
             if (major := cuda_major_of_soname(name)) is not None]
    for line in ctx.model.requires_dist:
        name = required_name(line)
        major = cuda_major_of_requirement(name) if name else None
        if major is not None:
            found.append((major, f"it requires {name}"))
    return found


def _cuda_bound(ctx: CheckContext, prop: VariantProperty) -> tuple[Judged, list[Finding]]:
    lower = prop.feature == "cuda_version_lower_bound"
    bound = _version(prop.value)
    if bound is None:
        return Judged(prop, "unverified", "a value that is no version"), []
    needed = _needed_cuda(ctx)
    if not needed:
        return Judged(prop, "unverified", "no file needs a CUDA library by a versioned name, and no requirement "
                                          "names a CUDA version"), []
    major, why = max(needed)
    if lower and bound[0] < major:
        message = (f"states {prop}, but {why}: the CUDA {major} runtime needs a driver for CUDA {major}.0 or "
                   f"newer, so installers choose it on machines where it cannot run")
        return Judged(prop, "false", f"{why} (CUDA {major})"), [Finding(
            "variant-cuda", "error", None, message,
            f"state the lower bound the runtime needs ({major}.0 or higher), or build against the CUDA the "
            "property names", cause=f"states a CUDA lower bound below CUDA {major}, which its files need",
            subject=str(prop))]
    if not lower and bound <= (major, 0):
        message = (f"states {prop}, but {why}: installers choose it only where the driver is older than CUDA "
                   f"{_dotted(bound)}, where the CUDA {major} runtime cannot run")
        return Judged(prop, "false", f"{why} (CUDA {major})"), [Finding(
            "variant-cuda", "error", None, message, "raise the upper bound above the CUDA the files need, or drop it",
            cause=f"states a CUDA upper bound at or below CUDA {major}, which its files need", subject=str(prop))]
    if lower:
        return Judged(prop, "holds", f"{why}: CUDA {major}, within the bound"), []
    return Judged(prop, "unverified", f"{why}; an upper bound is the publisher's choice (newer drivers run older "
                                      "runtimes)"), []


# -- nvidia :: sm_arch


def _gpu_arch(ctx: CheckContext, prop: VariantProperty) -> tuple[Judged, list[Finding]]:
    found = _SM.fullmatch(prop.value)
    if found is None:
        return Judged(prop, "unverified", "a value that names no GPU architecture (NN_real, NN_virtual)"), []
    major, minor, kind = int(found.group(1)), int(found.group(2)), found.group(4)  # 90a_real: the GPU is 9.0
    gpu = f"{major}.{minor}"
    devices = [e for e in ctx.elves if e.gpu_code is not None]
    if not devices:
        return Judged(prop, "unverified", "no file carries CUDA device code in a fatbin"), []
    findings = []
    for elf in devices:
        assert elf.gpu_code is not None
        runs = [i for i in elf.gpu_code.images if i.runs_on(major, minor)]
        sass = [i for i in runs if i.kind == "sass"]
        ptx = [i for i in runs if i.kind == "ptx"]
        carried = ", ".join(str(i) for i in elf.gpu_code.images)
        if not runs:
            findings.append(Finding(
                "variant-gpu-arch", "error", elf.path,
                f"carries no device code a GPU of compute capability {gpu} runs ({carried}), yet the wheel states "
                f"{prop}", _GPU_FIX, cause=f"carries no device code for {gpu}, which {prop} claims", subject=str(prop),
                explanation="Its kernels fail on such a GPU ('no kernel image is available for execution on the "
                            "device'), and installers choose the wheel there by the property."))
        elif kind == "real" and not sass:
            findings.append(Finding(
                "variant-gpu-arch", "warning", elf.path,
                f"runs on compute capability {gpu} only by JIT-compiling PTX ({', '.join(map(str, ptx))}): the wheel "
                f"states {prop}, real code for it", _GPU_FIX, cause=f"has PTX but no SASS for {gpu}, which {prop} "
                f"claims", subject=str(prop),
                explanation="The driver compiles the PTX at first use: it works, slowly at start, and the property "
                            "promises code built for that GPU."))
        elif kind == "virtual" and not ptx:
            findings.append(Finding(
                "variant-gpu-arch", "warning", elf.path,
                f"carries no PTX that compute capability {gpu} can JIT-compile ({carried}): the wheel states {prop}",
                _GPU_FIX, cause=f"has no PTX for {gpu}, which {prop} claims", subject=str(prop),
                explanation="Its SASS runs on that GPU, but without PTX no later GPU of the family the property "
                            "admits can compile the code."))
    if not findings:
        return Judged(prop, "holds", f"every file with device code ({len(devices)}) carries code for {gpu}"), []
    worst = [f for f in findings if f.severity == "error"] or findings
    more = f" (and {len(findings) - 1} more)" if len(findings) > 1 else ""
    return Judged(prop, "false", f"{worst[0].file}{more} carries no code for {gpu}" if worst[0].severity == "error"
                  else f"{worst[0].file}{more} lacks {'SASS' if kind == 'real' else 'PTX'} for {gpu}"), findings


# -- libc


def _libc_name(ctx: CheckContext, prop: VariantProperty) -> tuple[Judged, list[Finding]]:
    if prop.value not in ("glibc", "musl"):
        return Judged(prop, "unverified", "names a C library other than glibc and musl"), []
    if ctx.libc == prop.value:
        return Judged(prop, "holds", f"its files are judged for {ctx.libc}, as its platform tags say"), []
    return Judged(prop, "false", f"its files are for {ctx.libc}"), [Finding(
        "variant-libc", "error", None, f"states {prop}, but its files are for {ctx.libc}",
        "state the C library the wheel is built for", cause=f"states {prop.value}, but is for {ctx.libc}",
        subject=str(prop))]


def _libc_version(ctx: CheckContext, prop: VariantProperty) -> tuple[Judged, list[Finding]]:
    family = "glibc" if prop.feature.startswith("glibc") else "musl"
    bound = _version(prop.value)
    if bound is None:
        return Judged(prop, "unverified", "a value that is no version"), []
    if ctx.libc != family:
        return Judged(prop, "false", f"its files are for {ctx.libc}"), [Finding(
            "variant-libc", "error", None, f"states {prop}, but its files are for {ctx.libc}",
            "state the C library the wheel is built for", cause=f"states a {family} bound, but is for {ctx.libc}",
            subject=str(prop))]
    needed = _libc_needed(ctx.verdict.name, family)
    if needed is None:
        return Judged(prop, "unverified", f"it deserves {ctx.verdict.name}, which names no {family} version"), []
    if bound < needed:
        return Judged(prop, "false", f"it deserves {ctx.verdict.name}"), [Finding(
            "variant-libc", "error", None,
            f"states {prop}, but its files need {family} {_dotted(needed)} (it deserves {ctx.verdict.name})",
            f"state {_dotted(needed)} or higher, or build against an older {family}",
            cause=f"states a {family} lower bound below what its files need", subject=str(prop))]
    return Judged(prop, "holds", f"it deserves {ctx.verdict.name}: {family} {_dotted(needed)} is enough"), []


def _libc_needed(policy: str, family: str) -> tuple[int, int] | None:
    if family == "glibc":
        return glibc_of_tag(policy)
    found = re.fullmatch(r"musllinux_(\d+)_(\d+)", policy)
    return (int(found.group(1)), int(found.group(2))) if found else None


def _unread(ctx: CheckContext, prop: VariantProperty) -> tuple[Judged, list[Finding]]:
    return Judged(prop, "unverified", "nothing in the binaries speaks to it"), []


_JUDGES = {
    ("x86_64", "level"): _isa_level,
    ("nvidia", "cuda_version_lower_bound"): _cuda_bound,
    ("nvidia", "cuda_version_upper_bound"): _cuda_bound,
    ("nvidia", "sm_arch"): _gpu_arch,
    ("libc", "name"): _libc_name,
    ("libc", "glibc_version_lower_bound"): _libc_version,
    ("libc", "musl_version_lower_bound"): _libc_version,
}


def _version(text: str) -> tuple[int, int] | None:
    found = _VERSION.fullmatch(text)
    return (int(found.group(1)), int(found.group(2) or 0)) if found else None


def _dotted(version: tuple[int, int]) -> str:
    return f"{version[0]}.{version[1]}"


def _files(count: int) -> str:
    return f"{count} file{'s' if count != 1 else ''}"
