"""The checks of the libstdc++ string ABI (cxxabi.py reads it): a file mixing both ABIs, a file whose ABI the
policy (or --cxx-abi) forbids, and a C++ symbol one file needs that another exports only in the other ABI."""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Iterator

from wheelcheck.audit.check_context import CheckContext, Fact
from wheelcheck.audit.cxxabi import EXAMPLES as _EXAMPLES, CxxAbi, is_libstdcxx, wheel_abi
from wheelcheck.audit.findings import Finding
from wheelcheck.symbols.demangle import abi_free
from wheelcheck.symbols.mangling import abi_neutral, has_new_abi, has_old_abi, lead, short_name

__all__ = ["check_cxx_abi"]


def check_cxx_abi(ctx: CheckContext) -> Iterator[Finding | Fact]:
    per_file = {elf.path: ctx.analyses[elf.path].cxx_abi for elf in ctx.elves}
    for path, result in per_file.items():
        yield Fact(path, "cxx_abi", result.to_fact())
    yield Fact(None, "cxx_abi", wheel_abi(per_file, ctx.elves))
    forced = getattr(ctx.options, "cxx_abi", None)
    allowed = frozenset({forced}) if forced else ctx.policy.cxx_abi
    source = f"--cxx-abi {forced}" if forced else f"the policy {ctx.policy.name}"
    for elf in ctx.elves:
        result = per_file[elf.path]
        if is_libstdcxx(elf) or result.abi == "none":
            continue
        if result.abi == "mixed":
            yield Finding(
                "cxx-abi-mixed", "warning", elf.path,
                f"uses both libstdc++ string ABIs: old ({_examples(result.old)}) and new ({_examples(result.new)})",
                "build every object file of it with the same -D_GLIBCXX_USE_CXX11_ABI (and the same for "
                "the static libraries it links)",
                symbols=result.old[:_EXAMPLES] + result.new[:_EXAMPLES], cause="uses both libstdc++ string ABIs")
        forbidden = sorted(result.uses - allowed)
        if forbidden:
            evidence = result.old if "old" in forbidden else result.new
            yield Finding(
                "cxx-abi-policy", "error", elf.path,
                f"uses the {' and '.join(forbidden)} libstdc++ string ABI ({_examples(evidence)}), but "
                f"{source} allows only {' or '.join(sorted(allowed)) or 'none'}",
                f"rebuild with -D_GLIBCXX_USE_CXX11_ABI={1 if 'new' in allowed else 0} (and the libraries it "
                f"links: torch >= 2.7 uses the new ABI)",
                symbols=evidence[:_EXAMPLES],
                cause=f"uses the {' and '.join(forbidden)} libstdc++ string ABI, but {source} allows only "
                      f"{' or '.join(sorted(allowed)) or 'none'}")
    yield from _mismatches(ctx, per_file)


def _mismatches(ctx: CheckContext, per_file: dict[str, CxxAbi]) -> Iterator[Finding]:
    """Undefined C++ symbols that the wheel defines only in the other ABI's mangling."""
    tagged_files = [elf for elf in ctx.elves if per_file[elf.path].abi != "none"]
    if len(tagged_files) < 2:
        return
    tagged = {elf.path: ctx.analyses[elf.path].abi_imports for elf in tagged_files}
    wanted_anywhere = set().union(*tagged.values())
    if not wanted_anywhere:
        return
    # a wanted name is ABI-tagged, so an export equal to it is among the ABI-tagged exports the analysis kept
    defined = set().union(*(wanted_anywhere.intersection(ctx.analyses[elf.path].abi_exports) for elf in tagged_files))
    undefined = [(path, wanted, abi) for path, wanted_here in tagged.items() for wanted in wanted_here
                 if wanted not in defined
                 and (abi := "new" if has_new_abi(wanted) else "old" if has_old_abi(wanted) else None)]
    if not undefined:
        return
    sorted_exports = {elf.path: sorted(ctx.analyses[elf.path].abi_exports) for elf in tagged_files}
    for path, wanted, wanted_abi in undefined:
        for other, exports in sorted_exports.items():
            if other == path:
                continue
            found = _counterpart(wanted, exports, has_old_abi if wanted_abi == "new" else has_new_abi)
            if found is None:
                continue
            together = set(ctx.resolution.loaded_from.get(path, ())) & set(
                ctx.resolution.loaded_from.get(other, ()))
            other_abi = "old" if wanted_abi == "new" else "new"
            yield Finding(
                "cxx-abi-mismatch", "error" if together else "warning", path,
                f"needs {short_name(wanted)} in the {wanted_abi} string ABI ({wanted}), but {other} exports "
                f"it only in the {other_abi} ABI ({found})",
                f"build both with the same -D_GLIBCXX_USE_CXX11_ABI (the {other_abi} ABI to match {other})",
                symbols=(wanted, found),
                explanation="Importing it fails with 'undefined symbol'." if together
                else "The two are not loaded together here, so another library may provide it.")
            break


def _counterpart(wanted: str, sorted_exports: list[str], in_other_abi: Callable[[str], bool]) -> str | None:
    """The first of ``sorted_exports`` that mangles what ``wanted`` does in the other ABI.

    The key equates every substitution reference with the old std::string abbreviation (the ABIs number
    substitutions differently), so A::f(A, std::string) keys like A::f(std::string, std::string): a candidate
    must also be in the other ABI and, demangled with the ABI erased, be the same function, or an overload
    would pass for the counterpart (a mismatch claimed where the function is simply missing)."""
    prefix = lead(wanted)
    if prefix is None:
        return None
    key = abi_neutral(wanted)
    i = bisect_left(sorted_exports, prefix)
    while i < len(sorted_exports) and sorted_exports[i].startswith(prefix):
        candidate = sorted_exports[i]
        if candidate != wanted and abi_neutral(candidate) == key and in_other_abi(candidate) \
                and _same_function(wanted, candidate):
            return candidate
        i += 1
    return None


def _same_function(wanted: str, candidate: str) -> bool:
    """Do the two manglings name one function in the two ABIs? When either cannot be demangled (too long,
    too costly), the mangled key's word stands."""
    a, b = abi_free(wanted), abi_free(candidate)
    return a is None or b is None or a == b


def _examples(symbols: tuple[str, ...]) -> str:
    """A few of ``symbols`` as a person reads them (the mangled names are the finding's ``symbols``)."""
    shown = ", ".join(dict.fromkeys(short_name(s) for s in symbols[:_EXAMPLES]))
    return shown + (f" and {len(symbols) - _EXAMPLES} more" if len(symbols) > _EXAMPLES else "")
