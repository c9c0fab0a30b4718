"""The x86-64 level an ELF file's code needs, read from its instructions, and whether a CPU check guards it.

The GNU property note says what the compiler was told, when the build emits it (most do not). The instructions say
what the code does: a VEX-encoded instruction (AVX, AVX2, FMA, BMI) needs x86-64-v3, an EVEX-encoded one (AVX-512)
x86-64-v4; SSE3, SSSE3, SSE4.1, SSE4.2, POPCNT and CMPXCHG16B need x86-64-v2 (LZCNT and MOVBE v3). TZCNT is not
counted: on older CPUs it runs as BSF, which compilers rely on.

How it reads them: the executable segments are kept as the file streams past (all of them up to ``CODE_BUDGET``
bytes, beyond that ``SLICES`` evenly spaced slices of that much in all), and walked one function at a time from the
function starts the unwind table lists (``.eh_frame_hdr``, which x86-64 builds emit for every function), so an
instruction found is one the CPU would decode there. Without that table the slices are walked from their start (out
of step at first, in step after a few instructions). What it claims is exact: an instruction found is there; a level
not found was not seen in the bytes scanned, which the result counts.

Guarded: a CPU check in the file (CPUID or XGETBV found, an IFUNC symbol, libgcc's ``__cpu_model`` or
``__cpu_indicator_init`` as ``__builtin_cpu_supports`` uses it) or a function named for its instruction set
(``*_avx2``, ``haswell``, ``.arch_x86_64_v3``): the code dispatches at run time, as numpy, OpenBLAS and torch do.
"""

from __future__ import annotations

import re
import struct
from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from dataclasses import dataclass

from wheelcheck.elf.x86_length import candidates, step

__all__ = ["IsaEvidence", "IsaScan", "GuardScanner", "named_for_isa", "plan_slices", "function_starts", "scan_code", "classify",
           "CODE_BUDGET", "SLICES", "DISPATCH_SYMBOLS"]

CODE_BUDGET = 256 << 10  # bytes of code walked per file: all of it up to this, evenly spaced slices beyond
SLICES = 32
_MAX_TABLE = 32 << 20  # of .eh_frame_hdr read (8 bytes a function: four million functions)
DISPATCH_SYMBOLS = ("__cpu_model", "__cpu_indicator_init", "__cpu_features2", "__get_cpuid_max")
_ISA_NAMED = re.compile(r"(?i)(avx|sse4|ssse3|haswell|skylake|icelake|cannonlake|cooperlake|cascadelake|sapphire|"
                        r"knl|zen[0-9]|x86[-_]64[-_]v[234]|popcnt|fma3?_|bmi2?_|_v[234]\b|\.arch_)")
_LEGACY_PREFIXES = frozenset(b"\x66\xf2\xf3\x26\x2e\x36\x3e\x64\x65\xf0\x67")

# 0F 38 and 0F 3A opcodes of SSSE3 (with or without 66: MMX forms) and SSE4.1/4.2 (66) by name
_SSSE3_38 = {0x00: "pshufb", 0x01: "phaddw", 0x02: "phaddd", 0x03: "phaddsw", 0x04: "pmaddubsw", 0x05: "phsubw",
             0x06: "phsubd", 0x07: "phsubsw", 0x08: "psignb", 0x09: "psignw", 0x0A: "psignd", 0x0B: "pmulhrsw",
             0x1C: "pabsb", 0x1D: "pabsw", 0x1E: "pabsd"}
_SSE4_38 = {0x10: "pblendvb", 0x14: "blendvps", 0x15: "blendvpd", 0x17: "ptest", 0x20: "pmovsxbw", 0x21: "pmovsxbd",
            0x22: "pmovsxbq", 0x23: "pmovsxwd", 0x24: "pmovsxwq", 0x25: "pmovsxdq", 0x28: "pmuldq", 0x29: "pcmpeqq",
            0x2A: "movntdqa", 0x2B: "packusdw", 0x30: "pmovzxbw", 0x31: "pmovzxbd", 0x32: "pmovzxbq", 0x33: "pmovzxwd",
            0x34: "pmovzxwq", 0x35: "pmovzxdq", 0x37: "pcmpgtq", 0x38: "pminsb", 0x39: "pminsd", 0x3A: "pminuw",
            0x3B: "pminud", 0x3C: "pmaxsb", 0x3D: "pmaxsd", 0x3E: "pmaxuw", 0x3F: "pmaxud", 0x40: "pmulld",
            0x41: "phminposuw"}
_SSE4_3A = {0x08: "roundps", 0x09: "roundpd", 0x0A: "roundss", 0x0B: "roundsd", 0x0C: "blendps", 0x0D: "blendpd",
            0x0E: "pblendw", 0x14: "pextrb", 0x15: "pextrw", 0x16: "pextrd", 0x17: "extractps", 0x20: "pinsrb",
            0x21: "insertps", 0x22: "pinsrd", 0x40: "dpps", 0x41: "dppd", 0x42: "mpsadbw", 0x60: "pcmpestrm",
            0x61: "pcmpestri", 0x62: "pcmpistrm", 0x63: "pcmpistri"}
_SSE3 = {(0xF2, 0x12): "movddup", (0xF3, 0x12): "movsldup", (0xF3, 0x16): "movshdup", (0x66, 0x7C): "haddpd",
         (0xF2, 0x7C): "haddps", (0x66, 0x7D): "hsubpd", (0xF2, 0x7D): "hsubps", (0x66, 0xD0): "addsubpd",
         (0xF2, 0xD0): "addsubps", (0xF2, 0xF0): "lddqu"}
_BMI_38 = {0xF2: "andn", 0xF3: "blsr/blsmsk/blsi", 0xF5: "bzhi/pdep/pext", 0xF6: "mulx", 0xF7: "bextr/shlx/sarx/shrx"}
_FMA_38 = set(range(0x96, 0xA0)) | set(range(0xA6, 0xB0)) | set(range(0xB6, 0xC0))
_MASK_MAP1 = {0x41, 0x42, 0x44, 0x45, 0x46, 0x47, 0x4A, 0x4B, 0x90, 0x91, 0x92, 0x93, 0x98, 0x99}  # AVX-512's k-registers

DISPATCH = 0  # what classify says of CPUID and XGETBV: not a level, the evidence of a run-time check


@dataclass(frozen=True)
class IsaEvidence:
    level: int  # 2, 3, 4
    instruction: str  # what it is: "roundsd (SSE4.1)", "AVX2 256-bit (VEX)"
    encoding: str  # the instruction's bytes, hex
    address: int  # its virtual address
    function: str | None  # the exported function holding it (None: an unnamed one)

    def describe(self) -> str:
        where = f"in {self.function}" if self.function else "in an unnamed function"
        return f"{self.instruction} `{self.encoding}` {where} at {self.address:#x}"

    def to_dict(self) -> dict:
        return {"level": self.level, "instruction": self.instruction, "encoding": self.encoding,
                "address": self.address, "function": self.function}


@dataclass(frozen=True)
class IsaScan:
    level: int  # the highest x86-64 level an instruction found needs (1: nothing beyond the baseline)
    evidence: tuple[IsaEvidence, ...]  # the first instruction found of each level above 1, lowest level first
    guard: str | None  # the CPU check that makes the code dispatch at run time, when one was found
    scanned: int  # bytes of code walked
    code: int  # bytes of executable code in the file
    undecodable: int  # bytes that began no instruction (data among the code)
    by_function: bool  # walked from the unwind table's function starts (else from the slices' starts)

    @property
    def complete(self) -> bool:
        return self.scanned >= self.code

    @property
    def top(self) -> IsaEvidence | None:
        return self.evidence[-1] if self.evidence else None

    def to_dict(self) -> dict:
        return {"level": self.level, "evidence": [e.to_dict() for e in self.evidence], "guard": self.guard,
                "scanned_bytes": self.scanned, "code_bytes": self.code, "complete": self.complete,
                "undecodable_bytes": self.undecodable, "by_function": self.by_function}


class GuardScanner:
    """CPUID and XGETBV anywhere in the executable segments, as the file streams past: a CPU check is one small
    function, which slices would miss. Each place their bytes occur is kept with the ``_LEAD`` bytes before it, so
    the walk can start at the function start (``scan_code`` verifies them: the bytes occur inside other
    instructions too)."""

    _LEAD = 4096
    _MOST = 64

    def __init__(self, spans: Sequence[tuple[int, int]]) -> None:
        self.spans = list(spans)  # (start, end) file offsets
        self.windows: list[tuple[int, bytes]] = []  # (file offset of the bytes, the bytes), the candidate 4 bytes from the end
        self._tail, self._tail_at = b"", 0
        self._seen = 0  # the file bytes before this have been fed: a piece fed again is skipped

    def feed(self, piece: bytes, at: int) -> None:
        if at + len(piece) <= self._seen:
            return
        if at < self._seen:
            piece, at = piece[self._seen - at:], self._seen
        if at != self._seen:  # a gap: what came before is not this piece's lead
            self._tail, self._tail_at = b"", at
        self._seen = at + len(piece)
        if len(self.windows) >= self._MOST or not any(s < at + len(piece) and at < e for s, e in self.spans):
            self._tail, self._tail_at = piece[-self._LEAD:], at + max(len(piece) - self._LEAD, 0)
            return
        text, base = self._tail + piece, self._tail_at  # the lead of a candidate early in the piece is in the tail
        for match in _CPU_CHECK.finditer(text, len(self._tail) - 2 if self._tail else 0):
            where = base + match.start()
            if not any(s <= where < e for s, e in self.spans):
                continue
            lo = max(match.start() - self._LEAD, 0)
            self.windows.append((base + lo, bytes(text[lo:match.start() + 4])))
            if len(self.windows) >= self._MOST:
                break
        self._tail, self._tail_at = text[-self._LEAD:], base + max(len(text) - self._LEAD, 0)


_CPU_CHECK = re.compile(rb"\x0f\xa2|\x0f\x01\xd0")


def named_for_isa(name: str) -> bool:
    """Is ``name`` (a function's, a file's) named for an instruction set (``*_avx2``, ``haswell``, ``.arch_x86_64_v3``):
    code that a dispatcher picks for the CPU?"""
    return bool(_ISA_NAMED.search(name))


def plan_slices(segments: Sequence[tuple[int, int]], budget: int = CODE_BUDGET,
                slices: int = SLICES) -> list[tuple[int, int]]:
    """The file ranges of executable code to keep: every segment (offset, size) whole when they hold at most
    ``budget`` bytes, else ``slices`` evenly spaced ranges of ``budget`` bytes in all."""
    total = sum(size for _offset, size in segments)
    if total <= budget:
        return [(offset, offset + size) for offset, size in segments if size]
    piece = budget // slices
    out = []
    for k in range(slices):
        position = k * total // slices  # into the concatenated segments
        for offset, size in segments:
            if position < size:
                out.append((offset + position, offset + min(size, position + piece)))
                break
            position -= size
    return out


def function_starts(table: bytes, table_vaddr: int) -> list[int]:
    """The sorted function start addresses of an ``.eh_frame_hdr`` at ``table_vaddr``; [] when its encoding is not
    the one linkers write (a 4-byte count and a table of 4-byte offsets from the section: DW_EH_PE_datarel|sdata4)."""
    if len(table) < 12 or table[0] != 1 or table[2] != 0x03 or table[3] != 0x3B:
        return []
    pointer_size = {0x03: 4, 0x0B: 4, 0x1B: 4, 0x04: 8, 0x0C: 8, 0x1C: 8}.get(table[1])
    if pointer_size is None:
        return []
    at = 4 + pointer_size
    (count,) = struct.unpack_from("<I", table, at)
    at += 4
    count = min(count, (len(table) - at) // 8, _MAX_TABLE // 8)
    pairs = struct.unpack_from(f"<{2 * count}i", table, at)
    return sorted({table_vaddr + pairs[i] for i in range(0, 2 * count, 2)})


def classify(ins: bytes, kind: str) -> tuple[int, str] | None:
    """(level, what it is) of one instruction the walk stopped at (``kind``: evex, vex or notable); DISPATCH for
    CPUID and XGETBV; None for one no level adds."""
    i = 0
    while i < len(ins) and ins[i] in _LEGACY_PREFIXES:
        i += 1
    if kind == "evex":
        size = {0: "128", 1: "256", 2: "512"}.get((ins[i + 3] >> 5) & 3, "")
        return 4, f"AVX-512 {size}-bit (EVEX)" if size else "AVX-512 (EVEX)"
    if kind == "vex":
        if ins[i] == 0xC5:
            mapping, wide, pp, opcode = 1, ins[i + 1] & 4, ins[i + 1] & 3, ins[i + 2]
        else:
            mapping, wide, pp, opcode = ins[i + 1] & 0x1F, ins[i + 2] & 4, ins[i + 2] & 3, ins[i + 3]
        if mapping == 1 and 0xD1 <= opcode <= 0xFE and opcode not in (0xE6, 0xF0) and pp != 1:
            return None  # the integer SIMD opcodes take VEX only with 66 (their bare forms are MMX): data, not code
        if mapping == 1 and opcode in _MASK_MAP1:
            return 4, "AVX-512 mask instruction (VEX)"
        if mapping == 2 and opcode in _BMI_38:
            return 3, f"{_BMI_38[opcode]} (BMI, VEX)"
        if mapping == 3 and opcode == 0xF0:
            return 3, "rorx (BMI2, VEX)"
        if mapping == 2 and opcode in _FMA_38:
            return 3, "FMA (VEX)"
        return 3, "AVX2 256-bit (VEX)" if wide else "AVX (VEX)"
    prefixes = set(ins[:i])
    rex_w = 0x48 <= ins[i] <= 0x4F
    if 0x40 <= ins[i] <= 0x4F:
        i += 1
    if i + 1 >= len(ins) or ins[i] != 0x0F:
        return None
    op = ins[i + 1]
    mandatory = 0xF2 if 0xF2 in prefixes else 0xF3 if 0xF3 in prefixes else 0x66 if 0x66 in prefixes else None
    if op == 0x38:
        third = ins[i + 2]
        if third in (0xF0, 0xF1):
            return (2, "crc32 (SSE4.2)") if mandatory == 0xF2 else (3, "movbe") if mandatory in (None, 0x66) else None
        if third in _SSSE3_38 and mandatory in (None, 0x66):
            return 2, f"{_SSSE3_38[third]} (SSSE3)"
        if third in _SSE4_38 and mandatory == 0x66:
            return 2, f"{_SSE4_38[third]} ({'SSE4.2' if third == 0x37 else 'SSE4.1'})"
        return None  # AES, SHA, ADX...: no level adds them
    if op == 0x3A:
        third = ins[i + 2]
        if third == 0x0F and mandatory in (None, 0x66):
            return 2, "palignr (SSSE3)"
        if third in _SSE4_3A and mandatory == 0x66:
            return 2, f"{_SSE4_3A[third]} ({'SSE4.2' if third >= 0x60 else 'SSE4.1'})"
        return None
    if op == 0xB8 and mandatory == 0xF3:
        return 2, "popcnt"
    if op == 0xBD and mandatory == 0xF3:
        return 3, "lzcnt"
    if op == 0xA2:
        return DISPATCH, "cpuid"
    if op == 0x01 and ins[i + 2] == 0xD0:
        return DISPATCH, "xgetbv"
    if op == 0xC7 and rex_w and (ins[i + 2] >> 3) & 7 == 1:
        return 2, "cmpxchg16b"
    sse3 = _SSE3.get((mandatory or 0, op))
    if sse3 is not None:
        return 2, f"{sse3} (SSE3)"
    return None


def scan_code(kept: Sequence[tuple[int, bytes]], vaddr_of: Sequence[tuple[int, int, int]], code_bytes: int,
              starts: Sequence[int], functions: Sequence[tuple[int, int, str]], symbol_guard: str | None,
              guard_windows: Sequence[tuple[int, bytes]] = ()) -> IsaScan:
    """Walk the kept code: ``kept`` (file offset, bytes) slices; ``vaddr_of`` (file offset, vaddr, size) of the
    executable segments; ``starts`` the sorted function starts (vaddr; empty: walk the slices whole);
    ``functions`` sorted (vaddr, end, name) of the named functions; ``symbol_guard`` a CPU check the symbols show.

    An instruction counts once the walk has gone ``_SETTLED`` bytes past it without meeting a byte that begins no
    instruction: data among the code (GHC's info tables, V8's constant pools) decodes as instructions for a while,
    then as nothing."""
    found: dict[int, IsaEvidence] = {}
    guard = symbol_guard
    walk, near = step(), candidates()
    scanned = undecodable = 0
    for offset, data in kept:
        base = _vaddr(vaddr_of, offset)
        if base is None:
            continue
        ranges = _function_ranges(starts, base, base + len(data)) if starts else [(base, base + len(data))]
        scanned += len(data)
        # a function holding none of the bytes such instructions begin with holds none of them: not walked
        marks = [m.start() for m in near.finditer(data)]
        for first, last in ranges:
            pos, end = first - base, last - base
            i = bisect_left(marks, pos)
            if i == len(marks) or marks[i] >= end:
                continue
            pending: list[tuple[int, int, str, bytes]] = []  # (offset, level, what, bytes) not yet settled
            for match in walk.finditer(data, pos, end):
                kind = match.lastgroup
                if kind is None:
                    continue
                at = match.start(kind)
                guard = _settle(pending, at - _SETTLED, found, guard, base, functions)
                if kind == "bad":
                    if at >= end - 15 and end == len(data):  # an instruction cut off where the slice ends
                        guard = _settle(pending, end, found, guard, base, functions)
                        break
                    undecodable += 1
                    pending.clear()  # what came just before decoded out of step, or was data
                    if starts:  # out of step with the function's instructions: nothing after is trusted
                        break
                    continue
                if kind in ("vex", "evex") and len(found) == 3 and guard is not None:
                    continue  # nothing more to learn from another one
                what = classify(match.group(kind), kind)
                if what is not None:
                    pending.append((at, what[0], what[1], match.group(kind)))
            else:
                guard = _settle(pending, end, found, guard, base, functions)
    if guard is None:
        guard = _verified_cpu_check(guard_windows, vaddr_of, starts, functions)
    evidence = tuple(found[level] for level in sorted(found))
    top = evidence[-1] if evidence else None
    if guard is None and top is not None and top.function and _ISA_NAMED.search(top.function):
        guard = f"{top.function} is named for its instruction set (a dispatcher calls it)"
    return IsaScan(max(found, default=1), evidence, guard, min(scanned, code_bytes), code_bytes, undecodable,
                   bool(starts))


_SETTLED = 256


def _settle(pending: list[tuple[int, int, str, bytes]], before: int, found: dict[int, IsaEvidence],
            guard: str | None, base: int, functions: Sequence[tuple[int, int, str]]) -> str | None:
    """Count the pending instructions that lie before ``before``; return the guard, the first CPU check counted."""
    while pending and pending[0][0] < before:
        at, level, what, raw = pending.pop(0)
        address = base + at
        if level == DISPATCH:
            guard = guard or f"{what} at {address:#x}" + _in(functions, address)
        elif level not in found or (found[level].instruction.endswith("(SSE3)") and not what.endswith("(SSE3)")):
            # SSE3 is the oldest part of x86-64-v2: a level's other instructions say more
            found[level] = IsaEvidence(level, what, raw.hex(" "), address, _function(functions, address))
    return guard


def _verified_cpu_check(windows: Sequence[tuple[int, bytes]], vaddr_of: Sequence[tuple[int, int, int]],
                        starts: Sequence[int], functions: Sequence[tuple[int, int, str]]) -> str | None:
    """The first kept CPUID or XGETBV that is an instruction: walked from the start of its function, when that start
    is among the bytes kept before it."""
    walk = step()
    for offset, data in windows:
        base = _vaddr(vaddr_of, offset)
        if base is None:
            continue
        target = base + len(data) - 4  # where the candidate's bytes begin
        i = bisect_right(starts, target) - 1
        if starts and (i < 0 or starts[i] < base):
            continue
        # from the function's start; without the unwind table, from the kept lead (the walk falls in step with the
        # instructions within a few of them, so a CPUID it lands on is one)
        for match in walk.finditer(data, starts[i] - base if starts else 0, len(data)):
            kind = match.lastgroup
            if kind == "notable":
                at = base + match.start(kind)
                what = classify(match.group(kind), kind)
                if what is not None and what[0] == DISPATCH and at <= target < at + len(match.group(kind)):
                    return f"{what[1]} at {at:#x}" + _in(functions, at)
            if kind in (None, "bad") or base + match.end() > target:
                break
    return None


def symbol_guard(names: Sequence[str], infos: bytes, defined: bytes) -> str | None:
    """A CPU check the dynamic symbols show: an IFUNC symbol defined, or libgcc's CPU model referenced."""
    for i, name in enumerate(names):
        if defined[i] and infos[i] & 0xF == 10:  # STT_GNU_IFUNC
            return f"{name} is an IFUNC (its resolver picks an implementation for the CPU)"
        if name in DISPATCH_SYMBOLS:
            return f"{name} (__builtin_cpu_supports) is used"
    return None


def _vaddr(vaddr_of: Sequence[tuple[int, int, int]], offset: int) -> int | None:
    for file_offset, vaddr, size in vaddr_of:
        if file_offset <= offset < file_offset + size:
            return vaddr + offset - file_offset
    return None


def _function_ranges(starts: Sequence[int], lo: int, hi: int) -> list[tuple[int, int]]:
    """(start, end) of the functions that start in [lo, hi), each ending at the next start or at ``hi``."""
    i = bisect_left(starts, lo)
    out = []
    while i < len(starts) and starts[i] < hi:
        end = starts[i + 1] if i + 1 < len(starts) and starts[i + 1] < hi else hi
        out.append((starts[i], end))
        i += 1
    return out


def _function(functions: Sequence[tuple[int, int, str]], address: int) -> str | None:
    i = bisect_right(functions, (address, 1 << 64)) - 1
    return functions[i][2] if i >= 0 and address < functions[i][1] else None


def _in(functions: Sequence[tuple[int, int, str]], address: int) -> str:
    name = _function(functions, address)
    return f" in {name}" if name else ""
