"""x86-64 instruction lengths as regular expressions: code walked at the regex engine's speed, no disassembler.

An instruction is prefixes, an optional REX byte, an opcode (one byte, 0F xx, 0F 38 xx, 0F 3A xx) and what the
opcode takes: a ModRM byte (with a SIB byte and a displacement as mod and rm say), an immediate of a size the opcode
and the 66 prefix decide. VEX (C4, C5) and EVEX (62) instructions are matched on their own, as in 64-bit mode those
bytes begin nothing else. ``step()`` walks plain instructions without a Python step each and stops at the next one a
caller wants to see: VEX, EVEX, one of ``_NOTABLE`` (the opcode escapes where SSE3, SSSE3, SSE4, POPCNT, LZCNT,
MOVBE, CMPXCHG16B, CPUID and XGETBV live), or a byte that begins no instruction (data, or code read out of step).

What the expressions cannot tell: the lengths are those of every instruction a compiler emits for x86-64 (the
tests compare them with capstone's on gcc-built code); AMD's XOP and 3DNow! and opcodes invalid in 64-bit mode begin
no instruction here.
"""

from __future__ import annotations

import functools
import re

__all__ = ["one", "step", "candidates", "instruction_lengths"]


def _set(*spans: int | tuple[int, int]) -> set[int]:
    out: set[int] = set()
    for span in spans:
        out.update(range(span[0], span[1] + 1) if isinstance(span, tuple) else (span,))
    return out


def _cls(values) -> str:
    return "[" + "".join(f"\\x{b:02x}" for b in sorted(values)) + "]"


_ANY = "[\\x00-\\xff]"
_SIB_NO_BASE = _cls({s for s in range(256) if s & 7 == 5})
_SIB = _cls({s for s in range(256) if s & 7 != 5})


def _modrm(regs=range(8)) -> str:
    """A ModRM byte whose reg field is one of ``regs``, with the SIB byte and displacement it calls for."""
    tails: dict[str, set[int]] = {}
    for mod in range(4):
        for rm in range(8):
            values = {(mod << 6) | (reg << 3) | rm for reg in regs}
            if mod == 3:
                tail = ""
            elif rm == 4:  # a SIB byte follows; with mod 0 a SIB base of 5 means a 32-bit displacement
                tail = {0: f"(?:{_SIB_NO_BASE}{_ANY}{{4}}|{_SIB})", 1: f"{_ANY}{_ANY}", 2: f"{_ANY}{_ANY}{{4}}"}[mod]
            elif mod == 0:
                tail = f"{_ANY}{{4}}" if rm == 5 else ""  # rm 5: RIP-relative, a 32-bit displacement
            else:
                tail = _ANY if mod == 1 else f"{_ANY}{{4}}"
            tails.setdefault(tail, set()).update(values)
    return "(?:" + "|".join(_cls(values) + tail for tail, values in tails.items()) + ")"


_M = _modrm()
_I8, _I16, _I32 = _ANY, f"{_ANY}{{2}}", f"{_ANY}{{4}}"

# The one-byte opcode map of 64-bit mode, by what follows the opcode
_NO_OPERAND = _set((0x50, 0x5F), (0x90, 0x9F), (0xA4, 0xA7), (0xAA, 0xAF), 0xC3, 0xC9, 0xCB, 0xCC, 0xCF, 0xD7,
                   (0xEC, 0xEF), 0xF1, 0xF4, 0xF5, (0xF8, 0xFD), (0x6C, 0x6F))
_MODRM_ONLY = _set((0x00, 0x03), (0x08, 0x0B), (0x10, 0x13), (0x18, 0x1B), (0x20, 0x23), (0x28, 0x2B), (0x30, 0x33),
                   (0x38, 0x3B), 0x63, (0x84, 0x8E), (0xD0, 0xD3), (0xD8, 0xDF), 0xFE, 0xFF)
_IMM8 = _set(0x04, 0x0C, 0x14, 0x1C, 0x24, 0x2C, 0x34, 0x3C, 0x6A, (0x70, 0x7F), 0xA8, (0xB0, 0xB7), 0xCD,
             (0xE0, 0xE7), 0xEB)
_IMMZ = _set(0x05, 0x0D, 0x15, 0x1D, 0x25, 0x2D, 0x35, 0x3D, 0x68, 0xA9)  # 16 or 32 bits, as the 66 prefix says
_MODRM_IMM8 = _set(0x6B, 0x80, 0x83, 0xC0, 0xC1, 0xC6)
_MODRM_IMMZ = _set(0x69, 0x81, 0xC7)

# The 0F map
_TWO_NONE = _set(0x05, 0x06, 0x07, 0x08, 0x09, 0x0B, 0x0E, (0x30, 0x35), 0x37, 0x77, 0xA0, 0xA1, 0xA2, 0xA8, 0xA9, 0xAA,
                 (0xC8, 0xCF))
_TWO_MODRM = _set((0x00, 0x03), 0x0D, (0x10, 0x1F), (0x20, 0x23), (0x28, 0x2F), (0x40, 0x4F), (0x50, 0x6F), (0x74, 0x76),
                  (0x78, 0x7F), (0x90, 0x9F), 0xA3, 0xA5, 0xAB, 0xAD, 0xAE, 0xAF, (0xB0, 0xB9), (0xBB, 0xBF), 0xC0,
                  0xC1, 0xC3, 0xC7, (0xD0, 0xFF))
_TWO_MODRM_IMM8 = _set((0x70, 0x73), 0xA4, 0xAC, 0xBA, 0xC2, (0xC4, 0xC6))
_TWO = (f"\\x0f(?:{_cls(_TWO_NONE)}|{_cls(_TWO_MODRM)}{_M}|{_cls(_TWO_MODRM_IMM8)}{_M}{_I8}|[\\x80-\\x8f]{_I32}"
        f"|\\x38{_ANY}{_M}|\\x3a{_ANY}{_M}{_I8})")

_PREFIX = "[\\x26\\x2e\\x36\\x3e\\x64\\x65\\xf0\\xf2\\xf3\\x67]"  # every legacy prefix but 66
_REX_W, _REX_NO_W = "[\\x48-\\x4f]", "[\\x40-\\x47]"


def _plain(operand16: bool) -> str:
    """One opcode and its operands; ``operand16``: a 66 prefix came, so 16/32-bit immediates are 16 bits."""
    immz = _I16 if operand16 else _I32
    return "(?:" + "|".join((
        _cls(_NO_OPERAND),
        _cls(_MODRM_ONLY) + _M,
        _cls(_IMM8) + _I8,
        f"[\\xe8\\xe9]{_I32}",  # call, jmp rel32: 32 bits whatever the prefix says in 64-bit mode
        _cls(_IMMZ) + immz,
        _cls(_MODRM_IMM8) + _M + _I8,
        _cls(_MODRM_IMMZ) + _M + immz,
        "\\x8f" + _modrm([0]),  # pop r/m: the other reg values begin XOP
        f"\\xf6(?:{_modrm([0, 1])}{_I8}|{_modrm(range(2, 8))})",  # test r/m8, imm8 only for reg 0 and 1
        f"\\xf7(?:{_modrm([0, 1])}{immz}|{_modrm(range(2, 8))})",
        f"[\\xc2\\xca]{_I16}",
        f"\\xc8{_I16}{_I8}",
        f"[\\xa0-\\xa3]{_ANY}{{8}}",  # mov to or from a 64-bit absolute address
        _TWO,
    )) + ")"


_LEGACY = (f"(?:{_PREFIX}*\\x66[\\x66{_PREFIX[1:]}*(?:{_REX_W}(?:[\\xb8-\\xbf]{_ANY}{{8}}|{_plain(False)})"
           f"|{_REX_NO_W}?(?:[\\xb8-\\xbf]{_I16}|{_plain(True)}))"
           f"|{_PREFIX}*(?:{_REX_W}(?:[\\xb8-\\xbf]{_ANY}{{8}}|{_plain(False)})"
           f"|{_REX_NO_W}?(?:[\\xb8-\\xbf]{_I32}|{_plain(False)})))")

# VEX and EVEX: no 66, F2, F3, F0 or REX may come before them
_VEX_IMM8 = _set((0x70, 0x73), 0xC2, (0xC4, 0xC6))  # map 1 opcodes with an immediate byte
# the map 1 opcodes a VEX prefix may take (the others raise #UD): what follows C4/C5 in data is told from code
_VEX_MAP1 = _set((0x10, 0x17), (0x28, 0x2F), 0x41, 0x42, (0x44, 0x47), 0x4A, 0x4B, (0x50, 0x7F), (0x90, 0x93), 0x98,
                 0x99, 0xAE, 0xC2, (0xC4, 0xC6), (0xD0, 0xFE))
_MAP1_BODY = f"(?:{_cls(_VEX_IMM8)}{_M}{_I8}|\\x77|{_cls(_VEX_MAP1 - _VEX_IMM8 - {0x77})}{_M})"
_VEX2 = f"\\xc5{_ANY}{_MAP1_BODY}"
_VEX3 = (f"\\xc4(?:{_cls({b for b in range(256) if b & 0x1F == 1})}{_ANY}{_MAP1_BODY}"
         f"|{_cls({b for b in range(256) if b & 0x1F == 2})}{_ANY}{_ANY}{_M}"
         f"|{_cls({b for b in range(256) if b & 0x1F == 3})}{_ANY}{_ANY}{_M}{_I8})")
_P1 = _cls({b for b in range(256) if b & 4})  # EVEX's second payload byte has bit 2 set


def _p0(*maps: int) -> str:
    return _cls({b for b in range(256) if b & 0x0C == 0 and b & 7 in maps})


_EVEX = (f"\\x62(?:{_p0(1)}{_P1}{_ANY}(?:{_cls(_VEX_IMM8)}{_M}{_I8}|{_cls(set(range(256)) - _VEX_IMM8)}{_M})"
         f"|{_p0(2, 5, 6)}{_P1}{_ANY}{_ANY}{_M}|{_p0(3)}{_P1}{_ANY}{_ANY}{_M}{_I8})")
_BEFORE_VEX = "[\\x26\\x2e\\x36\\x3e\\x64\\x65\\x67]*"

# Where the instructions a level adds live among the plain ones (a superset: isa_scan.classify decides): the 0F 38 and
# 0F 3A maps, CPUID (0F A2), XGETBV (0F 01 D0), CMPXCHG8B/16B (0F C7), BSR/LZCNT (0F BD), POPCNT (F3 0F B8) and SSE3's
# F2/F3/66-prefixed 0F 12, 16, 7C, 7D, D0, F0
_NOTABLE = ("[\\x66\\xf2\\xf3\\x26\\x2e\\x36\\x3e\\x64\\x65\\xf0\\x67]*[\\x40-\\x4f]?\\x0f"
            "(?:[\\x38\\x3a\\xa2\\xc7\\xbd\\xb8\\x12\\x16\\x7c\\x7d\\xd0\\xf0]|\\x01\\xd0)")

@functools.cache
def candidates() -> re.Pattern[bytes]:
    """The byte sequences every instruction ``step()`` stops at contains (and much else): code without one of them
    holds no such instruction, and need not be walked."""
    return re.compile((f"\\x0f(?:[\\x38\\x3a\\xa2\\xc7\\xbd\\xb8\\x12\\x16\\x7c\\x7d\\xd0\\xf0]|\\x01\\xd0)"
                       f"|\\xc4{_cls({b for b in range(256) if b & 0x1F in (1, 2, 3)})}"
                       f"|\\xc5{_ANY}{_cls(_VEX_MAP1)}|\\x62{_p0(1, 2, 3, 5, 6)}{_P1}").encode("latin-1"), re.S)


@functools.cache
def one() -> re.Pattern[bytes]:
    """One instruction, whatever it is. Compiled on first use (a fifth of a second): most runs see no x86-64 code."""
    return re.compile(f"(?:{_BEFORE_VEX}(?:{_EVEX}|{_VEX3}|{_VEX2})|{_LEGACY})".encode("latin-1"), re.S)


@functools.cache
def step() -> re.Pattern[bytes]:
    """Plain instructions walked at the engine's speed up to the next one a caller wants to see (named groups evex,
    vex, notable, bad), or to the end."""
    return re.compile((f"(?>(?!{_NOTABLE}){_LEGACY})*+(?:(?P<evex>{_BEFORE_VEX}{_EVEX})"
                       f"|(?P<vex>{_BEFORE_VEX}(?:{_VEX3}|{_VEX2}))|(?P<notable>{_LEGACY})|(?P<bad>{_ANY}))?")
                      .encode("latin-1"), re.S)


def instruction_lengths(code: bytes, start: int = 0, end: int | None = None) -> list[int]:
    """The length of each instruction from ``start``, one regex match each (for tests and short spans); a byte that
    begins no instruction is a length of 0 and the walk goes on after it."""
    end = len(code) if end is None else end
    pattern, out, pos = one(), [], start
    while pos < end:
        match = pattern.match(code, pos, end)
        if match is None:
            out.append(0)
            pos += 1
        else:
            out.append(match.end() - pos)
            pos = match.end()
    return out
