"""Unsafe loading and linking: executable stacks, text relocations, RPATH/RUNPATH that leave the wheel."""

from __future__ import annotations

from collections.abc import Iterator

from wheelcheck.audit.check_context import CheckContext
from wheelcheck.wheel.wheel_model import WheelModel
from wheelcheck.wheel.library_resolution import at_prefix, environment_directory, expand_origin, inside_install_roots
from wheelcheck.wheel.requires_dist import installed_requirements
from wheelcheck.elf.elf_info import ElfInfo
from wheelcheck.audit.findings import Finding

__all__ = ["check_loading", "WORLD_WRITABLE", "NOEXEC_STACK_BY_DEFAULT"]

# Directories any local user can write to: a library search path there lets them inject code.
WORLD_WRITABLE = ("/tmp", "/var/tmp", "/dev/shm", "/run/shm", "/var/crash")
# Architectures whose glibc assumes a non-executable stack when PT_GNU_STACK is missing
# (DEFAULT_STACK_PERMS is PF_R|PF_W in sysdeps/{aarch64,riscv,loongarch}/stackinfo.h).
NOEXEC_STACK_BY_DEFAULT = frozenset({"aarch64", "riscv64", "loongarch64"})
_STACK_FIX = ("find the object without a .note.GNU-stack section (assembly sources: add "
              "`.section .note.GNU-stack,\"\",@progbits`) or drop -z execstack; link with -Wl,-z,noexecstack")


def check_loading(ctx: CheckContext) -> Iterator[Finding]:
    musl = ctx.libc == "musl"  # the libc of the files judged: musl ignores what PT_GNU_STACK asks
    for elf in ctx.elves:
        yield from _stack(elf, musl)
        if elf.textrel:
            yield _text_relocations(elf)
        yield from _search_paths(ctx.model, elf)


def _text_relocations(elf: ElfInfo) -> Finding:
    # the flag is the linker's doing: lld sets it whenever -z notext is passed (catboost 1.2), old RISC-V GNU ld
    # kept it after relaxation had turned the code's relocations into R_RISCV_NONE placeholders (sccache 0.16)
    if elf.text_relocations == 0:
        return Finding(
            "text-relocations", "warning", elf.path,
            "has DT_TEXTREL set, though no relocation patches its read-only segments (R_*_NONE placeholders "
            "aside)",
            "the objects need no change: drop -z notext from the link (lld sets the flag whenever it is given), or "
            "relink with a newer binutils (old RISC-V ld leaves it after relaxation); -Wl,-z,text keeps it out",
            cause="has text relocations (DT_TEXTREL)")
    count = "" if elf.text_relocations is None else f" ({elf.text_relocations} relocation" \
        f"{' patches' if elf.text_relocations == 1 else 's patch'} its read-only segments)"
    return Finding(
        "text-relocations", "warning", elf.path,
        f"has text relocations (DT_TEXTREL){count}",
        "compile every object with -fPIC (look for assembly or objects built without it: "
        "`readelf -r` lists the relocations against .text), and link with -Wl,-z,text to catch it",
        cause="has text relocations (DT_TEXTREL)")


def _stack(elf: ElfInfo, musl: bool) -> Iterator[Finding]:
    if not elf.exec_stack or elf.elf_type not in ("ET_DYN", "ET_EXEC"):
        return
    if not elf.gnu_stack and elf.arch in NOEXEC_STACK_BY_DEFAULT:
        return
    why = "PT_GNU_STACK asks for an executable stack" if elf.gnu_stack else "it has no PT_GNU_STACK header"
    library = elf.elf_type == "ET_DYN" and not elf.is_program
    if library and musl:
        yield Finding(
            "executable-stack", "warning", elf.path, f"asks for an executable stack ({why})",
            _STACK_FIX,
            cause="needs an executable stack",
            explanation="musl's loader ignores the request (it reads only PT_GNU_STACK's size), so the library "
                        "loads, but code that really runs on the stack (GCC trampolines) would crash; the same "
                        "build fails to load under glibc 2.41 and later.")
        return
    yield Finding(
        "executable-stack", "error" if library else "warning", elf.path,
        f"needs an executable stack ({why})",
        _STACK_FIX,
        cause="needs an executable stack",
        explanation="Since glibc 2.41 dlopen refuses to load it ('cannot enable executable stack'), and older "
                    "glibc makes the whole process's stack executable." if library
        else "Every stack of the program is executable, which turns memory bugs into code execution.")


def _search_paths(model: WheelModel, elf: ElfInfo) -> Iterator[Finding]:
    for tag, entries in (("RPATH", elf.rpath), ("RUNPATH", elf.runpath)):
        for entry in dict.fromkeys(entries):  # an entry listed twice (a build system adding it again) is one finding
            finding = _judge_entry(model, elf, tag, entry)
            if finding is not None:
                yield finding
    for tag, value in elf.empty_search_entries:
        yield Finding(
            "rpath-relative", "warning", elf.path,
            # quoted: the ':' at either end is the point, and would read as punctuation
            f"{tag} '{value}' has an empty entry, which the loader reads as the process's working directory",
            "drop the stray ':' (an empty -rpath argument, or a list joined with an empty item)",
            subject=f"{tag} {value}")


def _judge_entry(model: WheelModel, elf: ElfInfo, tag: str, entry: str) -> Finding | None:
    expanded = expand_origin(model, elf, entry)
    if expanded is not None:
        if inside_install_roots(expanded):
            return None
        inside = environment_directory(model, elf.path, entry)
        if inside is not None and installed_requirements(model.requires_dist):  # where their data files may go
            return Finding(
                "rpath-escapes-wheel", "warning", elf.path,
                f"{tag} {entry} leaves the wheel's install tree for the environment's {at_prefix(inside)}, where "
                f"whatever else is installed puts its files",
                "keep it only if a distribution the wheel requires installs the libraries it needs there, as data "
                "files (mkl installs libmkl_rt.so.3 into <prefix>/lib for mkl_fft; where site-packages is under "
                "lib64, as in Fedora's system Python, the entry leads to lib64 instead); otherwise point it at a "
                "directory of the wheel ($ORIGIN/../<pkg>.libs), or drop it", subject=entry)
        return Finding(
            "rpath-escapes-wheel", "warning", elf.path,
            f"{tag} {entry} leaves the wheel's install tree",
            "point it at a directory of the wheel ($ORIGIN/../<pkg>.libs), or drop it", subject=entry)
    if not entry.startswith("/"):
        return Finding(
            "rpath-relative", "warning", elf.path,
            f"{tag} {entry} is relative to the process's working directory",
            "use $ORIGIN-relative entries ($ORIGIN/../lib), or drop it (repair drops it only from the files it "
            "patches to vendor libraries)", subject=entry)
    if any(entry == d or entry.startswith(d + "/") for d in WORLD_WRITABLE):
        return Finding(
            "rpath-world-writable", "warning", elf.path,
            f"{tag} {entry} is in a world-writable place",
            "drop the entry (it is a build directory); use $ORIGIN-relative entries for the wheel's own libraries",
            subject=entry)
    return Finding(
        "rpath-absolute", "warning", elf.path,
        f"{tag} {entry} is an absolute path outside the wheel, searched on every machine that installs it",
        "drop it at link time (no -Wl,-rpath to build trees), or with `patchelf --remove-rpath` (`wheelcheck repair` "
        "drops such entries only from the files it patches to vendor libraries)",
        subject=entry)
