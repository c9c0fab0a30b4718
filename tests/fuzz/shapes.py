"""The named hostile shapes: each is one way a wheel or an ELF file can lie, and each has a name that says how.

``zip_shapes()`` are ``(name, make)`` pairs where ``make(base)`` turns a valid wheel ``Archive`` into the
bytes of a hostile one; ``elf_shapes()`` are ``(name, apply)`` pairs where ``apply(layout, out)`` rewrites
a copy of a real ELF file in place (False when the file lacks what the shape needs). Between them they
cover what broke wheelcheck once: encrypted members, odd methods and versions, declared sizes, zip64
offsets, names that are not UTF-8 or hold newlines, RECORD rows csv cannot read, shared version chains,
strings without end, runs of "liblib", floods of program headers, and mangled names with non-ASCII digits
or thousands of them.
"""
from __future__ import annotations

import base64
import bz2
import csv
import hashlib
import io
import lzma
import struct
import zlib
from collections.abc import Callable, Iterator
from dataclasses import replace

from tests.fuzz.elfcraft import DT, ElfLayout
from tests.fuzz.zipcraft import Archive, RawMember, assemble, deflated_member, stored_member

__all__ = ["EXT", "DIST", "base_wheel", "wheel_bytes", "wheel_name", "zip_shapes", "elf_shapes", "HOSTILE_NAMES",
           "DANGEROUS_INTS", "MANGLED"]

DIST = "fuzz-1.0.dist-info"
EXT = "fuzz/_ext.so"
WHEEL_NAME = "fuzz-1.0-cp311-cp311-linux_x86_64.whl"
DANGEROUS_INTS = (0, 1, 2, 3, 4, 7, 8, 15, 16, 0x7F, 0x80, 0xFF, 0x100, 0x7FFF, 0x8000, 0xFFFF, 0x10000,
                  0x7FFFFFFF, 0x80000000, 0xFFFFFFFE, 0xFFFFFFFF, 1 << 32, (1 << 63) - 1, 1 << 63, (1 << 64) - 1)
# Names a member (or a string table) may hold that must still come out as one line, or at all
HOSTILE_NAMES = ("a\nb", "a\rb", "a\r\nb", "\x1b[31mred", "a\u2028b", "a\u2029b", "a\x85b", "a\x0bb", "a\x0cb",
                 "a\x1cb", "a\tb", "\u202egnp.so", "caf\u00e9", "\ud7ff", "x" * 300, "a\\Rb", "a\\g<0>b", "a\\1b")
# Mangled names that are input too: non-ASCII digits, lengths of thousands of digits, unbalanced templates
MANGLED = ("_Z\u00b2Ss", "_Z\u0663Ss", "_ZN\u00b9\u00b2foo3barEv", "_Z" + "9" * 4301, "_Z" + "1" * 4301 + "Ss",
           "_ZN" + "9" * 5000 + "E", "_ZNSt" + "7" * 4400, "_ZN3fooIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIII",
           "_ZB" + "9" * 4400, "_ZTVN" + "8" * 4400, "_ZZN" + "5" * 5000, "_Z1", "_ZN", "_Z", "_ZSt", "_ZNK",
           "_ZN4llvm" + "I" * 2000, "_ZS" + "_" * 3000, "_ZT" + "9" * 4400, "_ZC\u0663", "_ZD\u00b2",
           "_ZNSs\u00b2", "_ZA" + "9" * 4400 + "_", "_ZLl" + "9" * 4400 + "E", "_Z3foo" + "S" * 3000)


def wheel_name(project: str = "fuzz") -> str:
    return WHEEL_NAME.replace("fuzz", project)


def _record_hash(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def _record(rows) -> bytes:
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows(rows)
    return buf.getvalue().encode()


METADATA = b"Metadata-Version: 2.1\nName: fuzz\nVersion: 1.0\nRequires-Dist: numpy>=1.0\n"
WHEEL = b"Wheel-Version: 1.0\nGenerator: fuzz\nRoot-Is-Purelib: false\nTag: cp311-cp311-linux_x86_64\n"


def base_wheel(ext: bytes, *, extra: dict[str, bytes] | None = None, metadata: bytes = METADATA,
               wheel: bytes = WHEEL, record: bytes | None = None, stored: bool = False,
               project: str = "fuzz", ext_name: str | None = None) -> Archive:
    """A valid wheel holding ``ext`` as ``fuzz/_ext.so`` (or ``ext_name``; plus ``extra`` members), RECORD right.

    ``project`` renames the distribution (and the package directory): a second wheel for ``conflicts``."""
    dist, ext_name = DIST.replace("fuzz", project), ext_name or EXT.replace("fuzz", project)
    metadata = metadata.replace(b"Name: fuzz", f"Name: {project}".encode())
    files = {ext_name: ext, **(extra or {}), f"{dist}/METADATA": metadata, f"{dist}/WHEEL": wheel}
    rows = [(name, _record_hash(data), len(data)) for name, data in files.items()] + [(f"{dist}/RECORD", "", "")]
    files[f"{dist}/RECORD"] = _record(rows) if record is None else record
    make = stored_member if stored else deflated_member
    members = []
    for name, data in files.items():
        mode = 0o100755 if data[:4] == b"\x7fELF" else 0o100644
        members.append(make(name, data, external_attr=mode << 16))
    return Archive(members)


def wheel_bytes(ext: bytes, **kw) -> bytes:
    return assemble(base_wheel(ext, **kw))


# -- zip shapes ---------------------------------------------------------------------------------------------

ZipShape = tuple[str, Callable[[Archive], bytes]]
TARGETS = {"ext": EXT, "metadata": "METADATA", "wheel": "WHEEL", "record": "RECORD"}


def _on(target: str, change: Callable[[RawMember, Archive], None]) -> Callable[[Archive], bytes]:
    def make(base: Archive) -> bytes:
        archive = base.copy()
        change(archive.member(TARGETS[target]), archive)
        return assemble(archive)
    return make


def _whole(change: Callable[[Archive], None]) -> Callable[[Archive], bytes]:
    def make(base: Archive) -> bytes:
        archive = base.copy()
        change(archive)
        return assemble(archive)
    return make


def _raw(data: bytes, method: int) -> tuple[bytes, int]:
    if method == 12:
        return bz2.compress(data), method
    if method == 14:  # zipfile's LZMA: version, properties size, properties, then a raw LZMA1 stream
        filters = [{"id": lzma.FILTER_LZMA1}]
        props = lzma._encode_filter_properties(filters[0])
        body = lzma.compress(data, format=lzma.FORMAT_RAW, filters=filters)
        return struct.pack("<BBH", 9, 4, len(props)) + props + body, method
    if method == 8:
        squeeze = zlib.compressobj(6, zlib.DEFLATED, -15)
        return squeeze.compress(data) + squeeze.flush(), method
    return data, 0


def _inflated(member: RawMember) -> bytes:
    if member.method == 0:
        return member.payload
    return zlib.decompressobj(-15).decompress(member.payload)


def _set(**fields) -> Callable[[RawMember, Archive], None]:
    def change(m: RawMember, _a: Archive) -> None:
        for key, value in fields.items():
            if key.startswith("local_"):
                m.local[key[len("local_"):]] = value
            else:
                setattr(m, key, value)
    return change


def _recompress(method: int, *, corrupt: bool = False, lzma_dict: int | None = None):
    def change(m: RawMember, _a: Archive) -> None:
        data = _inflated(m)
        payload, m.method = _raw(data, method)
        if method not in (0, 8, 12, 14):
            m.method = method  # an odd method over deflate bytes
            payload = m.payload
        if lzma_dict is not None and method == 14:  # claim a dictionary of lzma_dict bytes
            payload = payload[:5] + struct.pack("<I", lzma_dict) + payload[9:]
        if corrupt:  # the stream's own header (LZMA properties, bzip2 magic) intact, its data not
            middle = len(payload) // 2
            payload = payload[:16] + bytes(b ^ 0x5A for b in payload[16:middle + 16]) + payload[middle + 16:]
        m.payload = payload
        m.crc = zlib.crc32(data)
        m.version_needed = {12: 46, 14: 63}.get(method, 20)
    return change


def _declare(size: int, *, honest_ratio: bool):
    def change(m: RawMember, _a: Archive) -> None:
        m.file_size = size
        if honest_ratio:  # pad the stored bytes' claim so the ratio check passes: the lie is in the size
            m.compress_size = max(m.stored_size, size // 900)
    return change


def _rename(name: bytes, *, flags: int | None = None, local_only: bool = False, central_only: bool = False):
    def change(m: RawMember, _a: Archive) -> None:
        if not central_only:
            m.local["name"] = name
        if not local_only:
            m.name = name
        if flags is not None:
            m.flags |= flags
            if not central_only:
                m.local["flags"] = m.flags
    return change


def _replace_content(data: bytes, *, fix_record: bool = True):
    """The member holds ``data`` (RECORD updated to match unless told otherwise)."""
    def change(m: RawMember, archive: Archive) -> None:
        squeeze = zlib.compressobj(6, zlib.DEFLATED, -15)
        m.payload, m.method = squeeze.compress(data) + squeeze.flush(), 8
        m.crc, m.file_size, m.compress_size = zlib.crc32(data), len(data), None
        if fix_record and not m.name.endswith(b"RECORD"):
            record = archive.member("RECORD")
            rows = [r for r in csv.reader(io.StringIO(_inflated(record).decode())) if r]
            rows = [[r[0], _record_hash(data), len(data)] if r[0] == m.name.decode("utf-8", "replace") else r
                    for r in rows]
            _replace_content(_record(rows), fix_record=False)(record, archive)
    return change


def _member_shapes() -> Iterator[ZipShape]:
    for target in TARGETS:
        yield f"{target}:encrypted", _on(target, _set(flags=0x1, local_flags=0x1))
        yield f"{target}:encrypted-central-only", _on(target, _set(flags=0x1))
        yield f"{target}:encrypted-local-only", _on(target, _set(local_flags=0x1))
        yield f"{target}:patched-data-flag", _on(target, _set(flags=0x20, local_flags=0x20))
        yield f"{target}:strong-encryption-flag", _on(target, _set(flags=0x41, local_flags=0x41))
        yield f"{target}:data-descriptor-zero-local-sizes", _on(target, _set(
            flags=0x8, local_flags=0x8, local_crc=0, local_compress_size=0, local_file_size=0))
        for method in (1, 2, 3, 4, 5, 6, 7, 9, 10, 11, 13, 16, 18, 19, 20, 93, 95, 96, 97, 98, 99, 0xFFFF):
            yield f"{target}:method-{method}", _on(target, _recompress(method))
        for method in (12, 14):
            yield f"{target}:method-{method}-valid", _on(target, _recompress(method))
            yield f"{target}:method-{method}-corrupt", _on(target, _recompress(method, corrupt=True))
        yield f"{target}:lzma-4GiB-dictionary", _on(target, _recompress(14, lzma_dict=0xFFFFFFFF))
        yield f"{target}:stored-claims-deflate-bytes", _on(target, _set(method=0))
        for version in (45, 62, 63, 64, 99, 255, 0xFFFF):
            yield f"{target}:version-needed-{version}", _on(target, _set(version_needed=version))
            yield f"{target}:local-version-needed-{version}", _on(target, _set(local_version_needed=version))
        for size in (0, 1, 1 << 20, (16 << 20) + 1, 1 << 30, 3 << 30, 8 << 30, (8 << 30) + 1, 1 << 40, 1 << 63,
                     (1 << 64) - 1):
            yield f"{target}:declares-{size}-bytes", _on(target, _declare(size, honest_ratio=False))
            yield f"{target}:declares-{size}-bytes-ratio-ok", _on(target, _declare(size, honest_ratio=True))
        for size in (0, 1, 0xFFFFFFFE, 1 << 40, (1 << 64) - 1):
            yield f"{target}:compress-size-{size}", _on(target, _set(compress_size=size))
            yield f"{target}:local-compress-size-{size}", _on(target, _set(local_compress_size=size))
        yield f"{target}:crc-wrong", _on(target, lambda m, a: setattr(m, "crc", m.crc ^ 1))
        yield f"{target}:crc-wrong-local", _on(target, _set(local_crc=0xDEADBEEF))
        for offset in (0, 1, 29, 0xFFFFFFFE, 1 << 32, (1 << 63) - 1, 1 << 63, (1 << 64) - 1):
            yield f"{target}:header-offset-{offset}", _on(target, _set(header_offset=offset))
        yield f"{target}:zip64-extras-when-small", _on(target, _set(zip64=True))
        yield f"{target}:extra-runs-past-end", _on(target, _set(extra=b"\x01\x00\xff\x00abc"))
        yield f"{target}:zip64-extra-too-short", _on(target, _set(extra=b"\x01\x00\x02\x00ab", file_size=0xFFFFFFFF))
        yield f"{target}:local-extra-runs-past-end", _on(target, _set(local_extra=b"\x01\x00\xff\x00"))
        yield f"{target}:many-extra-blocks", _on(target, _set(extra=b"\x99\x99\x00\x00" * 16000))
        yield f"{target}:local-name-differs", _on(target, lambda m, a: m.local.update(name=m.name + b"x"))
        yield f"{target}:utf8-flag-bad-bytes", _on(target, _rename(b"fuzz/\xff\xfe.so", flags=0x800))
        yield f"{target}:utf8-flag-bad-bytes-local-only", _on(target, lambda m, a: m.local.update(
            name=m.name[:-1] + b"\xff", flags=m.flags | 0x800))
        yield f"{target}:surrogate-utf8", _on(target, _rename(b"fuzz/\xed\xa0\x80.so", flags=0x800))
        yield f"{target}:symlink-mode", _on(target, _set(external_attr=0o120777 << 16))
        yield f"{target}:directory-mode", _on(target, _set(external_attr=0o040755 << 16))
        yield f"{target}:dos-date-garbage", _on(target, _set(dos_date=0xFFFF, dos_time=0xFFFF))
        yield f"{target}:made-by-msdos", _on(target, _set(version_made=20))


def _name_shapes() -> Iterator[ZipShape]:
    for i, name in enumerate(HOSTILE_NAMES):
        encoded = name.encode("utf-8", "surrogatepass")
        yield f"ext-named-{i}:{name[:12]!r}", _on("ext", _rename(b"fuzz/" + encoded + b".so", flags=0x800))
        yield f"dist-info-named-{i}:{name[:12]!r}", _whole(lambda a, e=encoded: [
            _rename(m.name.replace(DIST.encode(), b"fuzz-1.0" + e + b".dist-info"), flags=0x800)(m, a)
            for m in a.members if m.name.startswith(DIST.encode())])
        yield f"ext-dir-named-{i}:{name[:12]!r}", _on("ext", _rename(b"fuzz/" + encoded + b"/_ext.so", flags=0x800))
        yield f"extra-member-named-{i}:{name[:12]!r}", _whole(
            lambda a, e=encoded: a.members.insert(0, stored_member(b"fuzz/" + e, b"x", flags=0x800)))
    for bad in (b"../evil.so", b"/etc/evil.so", b"C:evil.so", b"fuzz\\..\\..\\evil.so", b"fuzz/\x00.so",
                b"fuzz/" + b"a" * 65000 + b".so", b"", b"/", b"fuzz//_ext.so", b"./fuzz/_ext.so"):
        yield f"ext-named-{bad[:16]!r}", _on("ext", _rename(bad))
    yield "duplicate-ext", _whole(lambda a: a.members.insert(1, replace(a.member(EXT), local={})))
    yield "duplicate-case-variant", _whole(lambda a: a.members.insert(1, stored_member(b"FUZZ/_EXT.SO", b"\x7fELF")))
    yield "two-dist-info", _whole(lambda a: a.members.append(stored_member(b"other-2.0.dist-info/WHEEL", WHEEL)))
    yield "no-dist-info", _whole(lambda a: a.members.__setitem__(
        slice(None), [m for m in a.members if not m.name.startswith(DIST.encode())]))
    yield "no-record", _whole(lambda a: a.members.remove(a.member("RECORD")))
    yield "no-metadata", _whole(lambda a: a.members.remove(a.member("METADATA")))
    yield "directory-with-data", _whole(lambda a: a.members.insert(0, stored_member(b"fuzz/", b"data")))
    yield "many-empty-members", _whole(lambda a: a.members.extend(
        stored_member(f"fuzz/m{i}".encode(), b"") for i in range(3000)))


def _archive_shapes() -> Iterator[ZipShape]:
    def eocd(**fields):
        return _whole(lambda a: a.eocd.update(fields))
    for entries in (0, 1, 2, 0xFFFF, 1 << 20):
        yield f"eocd-entries-{entries}", eocd(entries=entries)
    for delta in (-1, 1, 46, 1 << 20):
        yield f"eocd-cd-size-off-by-{delta}", _whole(lambda a, d=delta: a.eocd.update(cd_size_delta=d))
    for offset in (0, 1, 0xFFFFFFFE, (1 << 63) - 1, (1 << 64) - 1):
        yield f"eocd-cd-offset-{offset}", eocd(cd_offset=offset)
    yield "eocd-multi-disk", eocd(disk=1, cd_disk=1)
    yield "zip64-eocd-when-small", _whole(lambda a: setattr(a, "zip64_eocd", True))
    yield "zip64-eocd-huge-cd", _whole(lambda a: (setattr(a, "zip64_eocd", True), a.eocd.update(cd_size=1 << 62)))
    yield "comment-65535", _whole(lambda a: setattr(a, "comment", b"c" * 65535))
    yield "self-extractor-prefix", _whole(lambda a: setattr(a, "prefix", b"#!/bin/sh\nexit 0\n" * 100))
    yield "garbage-between", _whole(lambda a: setattr(a, "between", b"PK\x01\x02" * 50))
    yield "empty-archive", _whole(lambda a: a.members.clear())

    def truncated(keep: float):
        return lambda base: assemble(base.copy())[: int(len(assemble(base)) * keep)]
    for keep in (0.0, 0.1, 0.5, 0.9, 0.99):
        yield f"truncated-to-{keep}", truncated(keep)
    yield "trailing-garbage", lambda base: assemble(base) + b"\0" * 4096
    yield "not-a-zip", lambda base: b"\x7fELF" + bytes(200)


def _content_shapes() -> Iterator[ZipShape]:
    records = {
        "bare-cr": f"{EXT},sha256=x,1\rfuzz/other,,\n".encode(),
        "field-over-csv-limit": (EXT + "," + "a" * 200_000 + ",1\n").encode(),
        "nul-byte": b"fuzz/_ext.so,sha256=\x00,1\n",
        "not-utf8": b"fuzz/_ext.so,\xff\xfe,1\n",
        "unbalanced-quote": b'"fuzz/_ext.so,sha256=x,1\n',
        "one-field-rows": b"fuzz/_ext.so\n\n\n",
        "many-fields": b"fuzz/_ext.so," + b",".join([b"x"] * 5000) + b"\n",
        "absurd-size": b"fuzz/_ext.so,sha256=abc,99999999999999999999999999999\n",
        "negative-size": b"fuzz/_ext.so,sha256=abc,-1\n",
        "empty-hash": b"fuzz/_ext.so,sha256=,1\n",
        "md5": b"fuzz/_ext.so,md5=abc,1\n",
        "unknown-algo": b"fuzz/_ext.so,blake99=abc,1\n",
        "many-rows": b"".join(b"fuzz/f%d,sha256=x,1\n" % i for i in range(50_000)),
        "newline-in-quoted-name": b'"fuzz/a\nb.so",sha256=x,1\n',
        "crlf": f"{EXT},sha256=x,1\r\n".encode(),
        "empty": b"",
    }
    for name, text in records.items():
        yield f"record:{name}", _on("record", _replace_content(text, fix_record=False))
    metadata = {
        "not-utf8": b"Metadata-Version: 2.1\nName: \xff\xfe\n",
        "nul": b"Metadata-Version: 2.1\nName: fu\x00zz\n",
        "huge-header": b"Metadata-Version: 2.1\nSummary: " + b"x" * 3_000_000 + b"\n",
        "many-headers": b"".join(b"Requires-Dist: p%d\n" % i for i in range(20_000)),
        "bad-requires": b"Metadata-Version: 2.1\nRequires-Dist: numpy (>=\nRequires-Dist: ;;;\nRequires-Dist: a[\n",
        "bad-marker": b"Requires-Dist: a; python_version > \"\xc3\xa9\"\nRequires-Dist: b; os_name ==\n",
        "nested-parens": b"Requires-Dist: a" + b"(" * 5000 + b"\n",
        "deep-marker": b"Requires-Dist: a; " + b"(" * 3000 + b"python_version>'3'" + b")" * 3000 + b"\n",
        "encoded-word": b"Name: =?utf-8?q?=E2=80=A8?=\nRequires-Dist: =?utf-8?b?/w==?=\n",
        "continuation-flood": b"Requires-Dist: a\n" + b" \n" * 100_000,
        "line-separators": "Requires-Dist: a\u2028b\nName: x\u0085y\n".encode(),
        "no-newline-at-all": b"Requires-Dist: " + b"a" * 100_000,
    }
    for name, text in metadata.items():
        yield f"metadata:{name}", _on("metadata", _replace_content(text))
    wheel_files = {
        "purelib-true": WHEEL.replace(b"false", b"true"),
        "purelib-garbage": WHEEL.replace(b"false", b"\xff\x00maybe"),
        "no-tags": b"Wheel-Version: 1.0\n",
        "tag-garbage": "Wheel-Version: 1.0\nTag: \x00-\n-\nTag: cp311-cp311-linux_\u2028\n".encode(),
        "version-99": b"Wheel-Version: 99.0\nRoot-Is-Purelib: false\n",
        "version-garbage": b"Wheel-Version: a.b.c\n",
        "not-utf8": b"Wheel-Version: 1.0\nGenerator: \xff\n",
        "empty": b"",
    }
    for name, text in wheel_files.items():
        yield f"wheel:{name}", _on("wheel", _replace_content(text))


def zip_shapes() -> list[ZipShape]:
    """Every named zip shape (several hundred), in a fixed order."""
    return [*_member_shapes(), *_name_shapes(), *_archive_shapes(), *_content_shapes()]


# -- ELF shapes ---------------------------------------------------------------------------------------------

ElfShape = tuple[str, Callable[[ElfLayout, bytearray], bool]]


def _canvas(layout: ElfLayout):
    if layout.canvas is None:
        return None
    offset, vaddr, size = layout.canvas
    return offset, vaddr, size - size % 16


def _shared_verneed(layout: ElfLayout, out: bytearray) -> bool:
    """Half the canvas holds version-need records that all point at one chain filling the other half."""
    canvas, first_aux = _canvas(layout), next((f for f in layout.fields if f.name == "vernaux[0.0].vna_name"), None)
    file_field = next((f for f in layout.fields if f.name == "verneed[0].vn_file"), None)
    if canvas is None or first_aux is None or file_field is None:
        return False
    offset, vaddr, size = canvas
    (name_index,) = struct.unpack_from(layout.endian + "I", out, first_aux.offset)
    (file_index,) = struct.unpack_from(layout.endian + "I", out, file_field.offset)
    records = size // 32
    chain = offset + 16 * records
    for i in range(records):
        at = offset + 16 * i
        struct.pack_into(layout.endian + "HHIII", out, at, 1, min(records, 0xFFFF), file_index, chain - at,
                         16 if i + 1 < records else 0)
        struct.pack_into(layout.endian + "IHHII", out, chain + 16 * i, 0, 0, 2 + i % 3, name_index,
                         16 if i + 1 < records else 0)
    return layout.set_dyn(out, DT["VERNEED"], vaddr) and layout.set_dyn(out, DT["VERNEEDNUM"], records)


def _shared_verdef(layout: ElfLayout, out: bytearray) -> bool:
    canvas = _canvas(layout)
    name_field = next((f for f in layout.fields if f.name.startswith("verdaux[0]")), None)
    if canvas is None or name_field is None:
        return False
    offset, vaddr, size = canvas
    (name_index,) = struct.unpack_from(layout.endian + "I", out, name_field.offset)
    records = (size - 8) // 20
    aux = offset + 20 * records
    struct.pack_into(layout.endian + "II", out, aux, name_index, 0)
    for i in range(records):
        at = offset + 20 * i
        struct.pack_into(layout.endian + "HHHHIII", out, at, 1, 0, 2 + i, 1, 0, aux - at, 20 if i + 1 < records else 0)
    return layout.set_dyn(out, DT["VERDEF"], vaddr) and layout.set_dyn(out, DT["VERDEFNUM"], records)


def _endless_gnu_hash(layout: ElfLayout, out: bytearray) -> bool:
    """One bucket naming the first symbol, and a chain of even words to the end of the canvas."""
    canvas = _canvas(layout)
    if canvas is None:
        return False
    offset, vaddr, size = canvas
    out[offset:offset + size] = bytes(size)
    struct.pack_into(layout.endian + "IIII", out, offset, 1, 1, 1, 6)
    struct.pack_into(layout.endian + "I", out, offset + 16 + layout.word, 1)
    return _point_gnu_hash(layout, out, vaddr)


def _point_gnu_hash(layout: ElfLayout, out: bytearray, vaddr: int) -> bool:
    """DT_GNU_HASH at ``vaddr``: the file's own entry, else its DT_HASH entry turned into one."""
    return layout.set_dyn(out, DT["GNU_HASH"], vaddr) or layout.set_dyn(out, DT["GNU_HASH"], vaddr,
                                                                        replacing=DT["HASH"])


def _huge_gnu_buckets(layout: ElfLayout, out: bytearray) -> bool:
    canvas = _canvas(layout)
    if canvas is None:
        return False
    offset, vaddr, size = canvas
    nbuckets = (size - 32) // 4
    struct.pack_into(layout.endian + "IIII", out, offset, nbuckets, 0, 1, 6)
    struct.pack_into(f"{layout.endian}{nbuckets}I", out, offset + 16 + layout.word, *range(nbuckets))
    return _point_gnu_hash(layout, out, vaddr)


def _overlapping_names(layout: ElfLayout, out: bytearray) -> bool:
    """A symbol table whose every name starts one byte into the same string as long as half the canvas."""
    canvas = _canvas(layout)
    if canvas is None:
        return False
    offset, vaddr, size = canvas
    half = size // 2
    entsize = 24 if layout.elf_class == 64 else 16
    count = half // entsize
    out[offset + half:offset + size] = b"A" * (size - half - 1) + b"\0"
    for i in range(count):
        at = offset + i * entsize
        out[at:at + entsize] = bytes(entsize)
        layout.put(out, at, 4, i)
        layout.put(out, at + (4 if entsize == 24 else 12), 1, 0x12)  # STB_GLOBAL, STT_FUNC
        layout.put(out, at + (6 if entsize == 24 else 14), 2, 1)  # defined
    hash_at = offset + count * entsize
    ok = layout.set_dyn(out, DT["STRTAB"], vaddr + half) and layout.set_dyn(out, DT["STRSZ"], size - half)
    ok = ok and layout.set_dyn(out, DT["SYMTAB"], vaddr)
    # a SysV hash table just before the strings claims the count
    if hash_at + 8 > offset + half:
        return False
    layout.put(out, hash_at, 4, 1)
    layout.put(out, hash_at + 4, 4, count)
    hashes = [pos for pos, tag, _v in layout.dynamic if tag in (DT["HASH"], DT["GNU_HASH"])]
    for pos in hashes:  # every hash table entry becomes the SysV one that claims ``count``
        layout.put(out, pos, layout.word, DT["HASH"])
        layout.put(out, pos + layout.word, layout.word, vaddr + count * entsize)
    replaced = bool(hashes)
    for tag in (DT["VERSYM"], DT["VERNEED"], DT["VERDEF"]):
        pos = layout.dyn_entry(tag)
        if pos is not None:
            layout.put(out, pos, layout.word, 0x6FFFFF00)  # an unknown tag: ignored
    return ok and replaced


def _needed_flood(layout: ElfLayout, out: bytearray) -> bool:
    """The dynamic segment moved into the canvas: the original entries, then DT_NEEDED after DT_NEEDED."""
    canvas = _canvas(layout)
    phdr = next((f for f in layout.fields if f.name.endswith(".p_offset(PT_DYNAMIC)")), None)
    if canvas is None or phdr is None or not layout.dynamic:
        return False
    offset, _vaddr, size = canvas
    step = 2 * layout.word
    entries = [(t, v) for _p, t, v in layout.dynamic if t != 0]
    count = size // step - len(entries) - 1
    strsz = layout.dyn_value(DT["STRSZ"]) or 1
    entries += [(DT["NEEDED"], i % strsz) for i in range(count)] + [(0, 0)]
    fmt = layout.endian + ("qQ" if layout.elf_class == 64 else "iI")
    for i, (tag, value) in enumerate(entries):
        struct.pack_into(fmt, out, offset + i * step, tag, value)
    filesz = next(f for f in layout.fields if f.name.endswith(".p_filesz(PT_DYNAMIC)"))
    layout.put(out, phdr.offset, phdr.size, offset)
    layout.put(out, filesz.offset, filesz.size, len(entries) * step)
    return True


def _fill(pattern: bytes, *, nul_end: bool = True):
    def apply(layout: ElfLayout, out: bytearray) -> bool:
        canvas = _canvas(layout)
        if canvas is None:
            return False
        offset, _vaddr, size = canvas
        body = (pattern * (size // len(pattern) + 1))[: size - (1 if nul_end else 0)]
        out[offset:offset + size] = body + (b"\0" if nul_end else b"")
        return True
    return apply


def _phdr_flood(kind: int):
    """The program header table moved into the canvas and padded with ``kind`` headers over the whole file."""
    def apply(layout: ElfLayout, out: bytearray) -> bool:
        canvas = _canvas(layout)
        if canvas is None:
            return False
        offset, _vaddr, size = canvas
        ent = layout.e_phentsize
        original = bytes(out[layout.e_phoff:layout.e_phoff + ent * layout.e_phnum])
        count = min(0xFFFF, size // ent)
        out[offset:offset + len(original)] = original
        if layout.elf_class == 64:
            header = struct.pack(layout.endian + "IIQQQQQQ", kind, 4, 0, 0, 0, len(out), len(out), 8)
        else:
            header = struct.pack(layout.endian + "IIIIIIII", kind, 0, 0, 0, len(out), len(out), 4, 4)
        for i in range(layout.e_phnum, count):
            out[offset + i * ent:offset + i * ent + len(header)] = header
        e_phoff = next(f for f in layout.fields if f.name == "e_phoff")
        e_phnum = next(f for f in layout.fields if f.name == "e_phnum")
        layout.put(out, e_phoff.offset, e_phoff.size, offset)
        layout.put(out, e_phnum.offset, e_phnum.size, count)
        return True
    return apply


def _hostile_strings(names: tuple[str, ...]):
    """The string table copied into the canvas with ``names`` appended; exported symbols renamed to them."""
    def apply(layout: ElfLayout, out: bytearray) -> bool:
        canvas = _canvas(layout)
        strtab = layout.sections.get(".dynstr")
        if canvas is None or strtab is None:
            return False
        offset, vaddr, size = canvas
        table = bytearray(out[strtab[0]:strtab[0] + strtab[1]])
        starts = []
        for name in names:
            starts.append(len(table))
            table += name.encode("utf-8", "surrogatepass") + b"\0"
        if len(table) > size:
            return False
        out[offset:offset + len(table)] = table
        renamed = [f for f in layout.fields if f.name.endswith(".st_name")]
        for field, start in zip(renamed, starts):
            layout.put(out, field.offset, 4, start)
        return layout.set_dyn(out, DT["STRTAB"], vaddr) and layout.set_dyn(out, DT["STRSZ"], len(table))
    return apply


def _unterminated_strtab(layout: ElfLayout, out: bytearray) -> bool:
    strtab = layout.sections.get(".dynstr")
    if strtab is None:
        return False
    out[strtab[0]:strtab[0] + strtab[1]] = b"x" * strtab[1]
    return True


def elf_shapes() -> list[ElfShape]:
    """Every named ELF shape, in a fixed order."""
    shapes: list[ElfShape] = [
        ("verneed-shared-chain", _shared_verneed),
        ("verdef-shared-aux", _shared_verdef),
        ("gnu-hash-endless-chain", _endless_gnu_hash),
        ("gnu-hash-huge-buckets", _huge_gnu_buckets),
        ("names-overlap-one-long-string", _overlapping_names),
        ("needed-flood", _needed_flood),
        ("rodata-liblib-run", _fill(b"lib")),
        ("rodata-liblib-run-unterminated", _fill(b"lib", nul_end=False)),
        ("rodata-lib-dot-run", _fill(b"lib.")),
        ("rodata-so-digits-run", _fill(b".so.1")),
        ("rodata-identifier-run", _fill(b"a")),
        ("rodata-identifiers-200", _fill(b"\0" + b"a" * 200)),
        ("rodata-sonames", _fill(b"libx.so.1\0")),
        ("phdr-flood-note", _phdr_flood(4)),
        ("phdr-flood-load", _phdr_flood(1)),
        ("phdr-flood-interp", _phdr_flood(3)),
        ("phdr-flood-dynamic", _phdr_flood(2)),
        ("mangled-hostile-names", _hostile_strings(MANGLED)),
        ("hostile-line-names", _hostile_strings(HOSTILE_NAMES)),
        ("dynstr-unterminated", _unterminated_strtab),
    ]
    return shapes
