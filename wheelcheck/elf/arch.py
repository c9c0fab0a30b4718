"""Which wheel architecture an ELF header describes, and the x86-64 ISA level it needs."""

from __future__ import annotations

import struct

__all__ = ["arch_of", "x86_isa_level", "ARCHES"]

# (e_machine, class, little endian) -> the architecture name used in platform tags
_ARCH = {
    ("EM_386", 32, True): "i686",
    ("EM_X86_64", 64, True): "x86_64",
    ("EM_PPC64", 64, True): "ppc64le",
    ("EM_PPC64", 64, False): "ppc64",
    ("EM_RISCV", 64, True): "riscv64",
    ("EM_AARCH64", 64, True): "aarch64",
    ("EM_S390", 64, False): "s390x",
    ("EM_ARM", 32, True): "armv7l",
    ("EM_LOONGARCH", 64, True): "loongarch64",
}
ARCHES = tuple(sorted({a for a in _ARCH.values()}))

EF_ARM_EABIMASK = 0xFF000000
EF_ARM_EABI_VER5 = 0x05000000
EF_ARM_ABI_FLOAT_HARD = 0x00000400
GNU_PROPERTY_X86_ISA_1_NEEDED = 0xC0008002
NT_GNU_PROPERTY_TYPE_0 = 5


def arch_of(machine: str, elf_class: int, little: bool, flags: int) -> tuple[str | None, str | None]:
    """(arch, None) for a supported platform, else (None, why)."""
    arch = _ARCH.get((machine, elf_class, little))
    if arch is None:
        return None, f"unsupported machine {machine} ({elf_class}-bit, {'little' if little else 'big'}-endian)"
    if arch == "armv7l":
        if flags & EF_ARM_EABIMASK != EF_ARM_EABI_VER5:
            return None, "ARM EABI version is not 5"
        if not flags & EF_ARM_ABI_FLOAT_HARD:
            return None, "ARM code is not hard-float (armv7l wheels must be)"
    return arch, None


def x86_isa_level(notes: list[tuple[bytes, int]], endian: str) -> tuple[int | None, str | None]:
    """The x86-64 level (2, 3, 4) named by GNU_PROPERTY_X86_ISA_1_NEEDED, as auditwheel reads it.

    ``notes`` are (contents, p_align) of the PT_NOTE segments; entries are padded to p_align.
    """
    for blob, align in notes:
        pad = 8 if align == 8 else 4
        pos = 0
        while pos + 12 <= len(blob):
            namesz, descsz, ntype = struct.unpack_from(endian + "III", blob, pos)
            desc_at = pos + _align(12 + namesz, pad)
            name = blob[pos + 12:pos + 12 + namesz].rstrip(b"\0")
            if ntype == NT_GNU_PROPERTY_TYPE_0 and name == b"GNU":
                found = _isa_property(blob[desc_at:desc_at + descsz], endian)
                if found is not None:
                    return found
            pos = desc_at + _align(descsz, pad)
    return None, None


def _isa_property(desc: bytes, endian: str) -> tuple[int | None, str | None] | None:
    pos = 0
    while pos + 8 <= len(desc):
        pr_type, pr_datasz = struct.unpack_from(endian + "II", desc, pos)
        if pr_type == GNU_PROPERTY_X86_ISA_1_NEEDED and pr_datasz == 4:
            (bits,) = struct.unpack_from(endian + "I", desc, pos + 8)
            bits &= ~1  # bit 0 is the baseline
            for level, bit in ((4, 8), (3, 4), (2, 2)):
                if bits & bit:
                    return level, None
            return (None, f"unknown x86-64 ISA bits {bits:#x}") if bits else (None, None)
        pos += 8 + _align(pr_datasz, 8)
    return None


def _align(value: int, to: int) -> int:
    return (value + to - 1) // to * to
