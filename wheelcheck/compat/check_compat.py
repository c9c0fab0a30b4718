"""Judge each distribution that reaches outside its own files against the others given: loads, will fail
(with the loader's first error) or cannot tell (with why).

A distribution is judged (a "subject") when its ELF files load libraries of another given distribution,
bind symbols from one, need a library that no given distribution or system provides, or when it pins a
given distribution to another version than the one given. Its answer names the distributions it loads
from ("hosts").
"""

from __future__ import annotations

import posixpath
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from packaging.utils import canonicalize_name

from wheelcheck.audit.cxxabi import CxxAbi
from wheelcheck.audit.runtime_deps import DriverNames, drivers_of
from wheelcheck.compat.compat_report import CompatFinding, PairResult
from wheelcheck.compat.cxx_boundary import Side, cxx_flag, side_of, tag_glibcxx_limit
from wheelcheck.compat.export_table import ExportCache
from wheelcheck.compat.installed_layout import Layout, Placed
from wheelcheck.compat.load_simulation import LoadTree, dlopen_links, load, preload, roots_of
from wheelcheck.compat.nearest_symbol import KeyIndex
from wheelcheck.compat.requirement_pins import (declared_closure, declared_requirements, marker_environment,
                                                pin_checks)
from wheelcheck.compat.symbol_binding import Binding, bind_symbols
from wheelcheck.compat.system_scope import SystemScope, system_scope
from wheelcheck.conflicts.distribution import Distribution
from wheelcheck.errors import UsageError
from wheelcheck.elf.elf_info import libc_linked
from wheelcheck.policy.policy_model import Policy, PolicySet
from wheelcheck.policy.versions import numeric, split_version_name
from wheelcheck.symbols.demangle import demangle
from wheelcheck.symbols.sonames import unhashed
from wheelcheck.wheel.wheel_model import LEGACY_ALIASES, split_platform

__all__ = ["check_compat", "system_libraries", "SystemLibraries"]

_SHOWN_UNBOUND = 20  # missing symbols reported one by one per file; the rest are counted


class SystemLibraries:
    """Sonames every glibc system has (any bundled manylinux policy's whitelist) or that come with the machine's
    drivers (libcuda.so.1; libnvidia-tileiras.so.615.09, numbered by the driver's release: the audit's
    DriverNames): never looked for among the distributions."""

    def __init__(self, whitelist: frozenset[str], drivers: DriverNames) -> None:
        self._whitelist, self._drivers = whitelist, drivers

    def __contains__(self, soname: object) -> bool:
        return soname in self._whitelist or soname in self._drivers


def system_libraries(policies: PolicySet) -> SystemLibraries:
    glibc = [policy for policy in policies if policy.libc == "glibc"]
    return SystemLibraries(frozenset().union(*(policy.lib_whitelist for policy in glibc)), drivers_of(glibc))


@dataclass
class _Run:
    dists: list[Distribution]
    given: dict[str, Distribution]
    layout: Layout
    system: SystemLibraries
    policies: PolicySet
    environment: dict[str, str]
    exports: ExportCache
    keys: KeyIndex
    abi_cache: dict[int, CxxAbi]
    global_files: list[Placed]
    preloaded: dict[str, Placed]  # what importing every given distribution loads (most required first)
    found_elsewhere: dict = field(default_factory=dict)  # bind_symbols' cache of definitions in other distributions


def check_compat(dists: Sequence[Distribution], policies: PolicySet, *,
                 subjects: Sequence[Distribution] | None = None) -> list[PairResult]:
    """One PairResult per subject (every distribution that reaches outside itself, or those named)."""
    given: dict[str, Distribution] = {}
    for d in dists:
        if d.key in given and given[d.key] is not d:
            raise UsageError(d.source, f"{d.name} is given twice ({given[d.key].version} and {d.version}): "
                                       "give one version at a time")
        given[d.key] = d
    layout = Layout.of(dists)
    arches = Counter(p.elf.arch for p in layout.placed if p.elf.arch)
    exports = ExportCache()
    system = system_libraries(policies)
    required_by = Counter(k for d in dists for k in d.required)
    order = sorted(dists, key=lambda d: -required_by[d.key])  # hosts first: their copy of a name wins
    preloaded = preload(layout, order, system)
    # the global files the imports load first: a definition is looked for there before in files nothing loads
    # (tensorflow's setdlopenflags makes every file global, but its import loads libtensorflow_framework, not
    # _xla_ops.so, which was named)
    loaded = {id(p) for p in preloaded.values()}
    global_files = sorted((p for p in layout.placed if p.elf.path in p.dist.global_paths),
                          key=lambda p: id(p) not in loaded)
    run = _Run(list(dists), given, layout, system, policies,
               marker_environment(dists, arches.most_common(1)[0][0] if arches else None), exports,
               KeyIndex(exports), {}, global_files, preloaded)
    out = []
    for subject in (subjects if subjects is not None else dists):
        pair = _judge(run, subject, named=subjects is not None)
        if pair is not None:
            out.append(pair)
    return out


def _shown(placed: Placed) -> str:
    return placed.path[4:] if placed.path.startswith("/sp/") else placed.path


def _dist(d: Distribution) -> dict[str, str]:
    return {"name": d.name, "version": d.version, "source": d.source}


def _judge(run: _Run, subject: Distribution, named: bool) -> PairResult | None:
    declared = declared_requirements(subject, run.environment)
    closure = declared_closure(subject, run.given, run.environment)
    by_others = {name: p for name, p in run.preloaded.items() if p.dist is not subject}

    def preloaded(root: Placed) -> dict[str, Placed]:
        return run.preloaded if _plugin(root) else by_others

    # imported first for sure: what it requires unconditionally (xgboost declares scikit-learn only under the extra
    # [scikit-learn], so its own libgomp serves it where scikit-learn's is not already loaded)
    trusted = frozenset(id(d) for key, d in run.given.items() if key in closure and closure[key] is None)
    trees = [load(root, run.layout, preloaded(root), run.system, trusted) for root in roots_of(run.layout, subject)]
    if not trees and not named:
        return None
    findings: list[CompatFinding] = []
    hosts: dict[int, Distribution] = {}
    seen: set[tuple] = set()
    not_given = [d.line for d in declared if d.extra is None and d.key not in run.given]
    files = []
    bindings: list[tuple[LoadTree, Binding]] = []
    reaches = False
    for tree in trees:
        links = []
        for link in tree.links + dlopen_links(tree, run.layout, preloaded(tree.root), run.system):
            if link.how == "system" or (link.how == "own" and not link.dlopen):
                continue
            if link.how in ("missing", "unreached") and link.dlopen:
                continue  # a name in read-only data need not be a library it loads; nothing to say
            links.append(_link_dict(link))
            if link.how == "own":
                continue
            reaches = True
            if link.found is not None:
                hosts[id(link.found.dist)] = link.found.dist
            key = ("link", link.needer.path, link.name, link.how)
            if key in seen:
                continue
            seen.add(key)
            finding = _link_finding(run, subject, link, closure, not_given)
            if finding is not None:
                findings.append(finding)
        scope = _system_scope(run, subject, tree)
        binding = bind_symbols(tree, [p for p in tree.order if p.dist is subject], run.layout.placed,
                               run.global_files, run.exports, run.keys, scope, run.found_elsewhere)
        bindings.append((tree, binding))
        for provider in binding.providers.values():
            if provider.dist is not subject:
                hosts[id(provider.dist)] = provider.dist
                reaches = True
        reaches = reaches or bool(binding.unbound or binding.through_global or binding.bad_versions)
        unknown_libs = list(dict.fromkeys(scope.unseen))
        findings.extend(_binding_findings(run, subject, binding, seen, unknown_libs, scope))
        files.append({"path": _shown(tree.root), "links": links,
                      "symbols": {"checked": binding.checked, "unbound": len(binding.unbound),
                                  "through_rtld_global": len(binding.through_global),
                                  "system": binding.system, "system_libraries": binding.system_libraries,
                                  "unseen_libraries": unknown_libs}})
    findings.extend(_undeclared(subject, [link for tree in trees for link in tree.links], closure))
    pins = pin_checks(subject, declared, run.given)
    for pin in pins:  # a broken pin on a given distribution is worth an answer even if nothing binds to it
        if not pin.satisfied and pin.extra is None:
            hosts.setdefault(id(run.given[canonicalize_name(pin.name)]), run.given[canonicalize_name(pin.name)])
            reaches = True
    if not reaches and not named:
        return None
    for pin in pins:
        if not pin.satisfied:
            findings.insert(0, CompatFinding(
                "compat-requirement", "warning", pin.message(subject),
                f"install the {pin.name} that {subject.name} requires, or a build of {subject.name} made for "
                f"{pin.name} {pin.given}"))
    for line in not_given:
        findings.append(CompatFinding(
            "compat-requirement", "info", f"{subject.label} requires {line}, which was not given: what it would "
                                          "provide is not checked", "give it too (a wheel, a manifest or --env)"))
    cxx, cxx_findings = _cxx(run, subject, bindings)
    findings.extend(cxx_findings)
    verdict, reason = _verdict(findings, bindings, hosts, subject)
    order = {"fails": 0, "unknown": 1, None: 2}
    findings.sort(key=lambda f: (f.rule != "compat-requirement" or f.severity == "info", order[f.effect]))
    return PairResult(_dist(subject), [_dist(d) for d in hosts.values() if d is not subject], verdict, reason,
                      [{"line": p.line, "name": p.name, "given": p.given, "satisfied": p.satisfied,
                        "extra": p.extra} for p in pins], findings, files, cxx, others_given=len(run.given) > 1)


def _system_scope(run: _Run, subject: Distribution, tree: LoadTree) -> SystemScope:
    """The system libraries of this load and those out of sight: what could not be found (missing, or
    shipped where the search does not look), and the system libraries the export lists do not hold."""
    unseen = [link.name for link in tree.links if link.how in ("missing", "unreached")]
    system = [link.name for link in tree.links if link.how == "system"]
    libc = libc_linked(tree.root.elf)
    musl = libc == "musl" or (libc is None and subject.musl)
    return system_scope(system, unseen, tree.root.elf.arch, musl, _claimed_policy(run.policies, subject.tags))


def _claimed_policy(policies: PolicySet, tags) -> Policy | None:
    """The most compatible glibc policy the distribution's platform tags claim (None: no such tag, as for an
    installed distribution: the newest systems are judged)."""
    best = None
    for tag in tags:
        split = split_platform(tag.platform)
        if not split or split[0].startswith("musllinux"):
            continue
        policy = policies.find(LEGACY_ALIASES.get(split[0], split[0]))
        if policy is not None and not policy.is_linux and policy.libc == "glibc" \
                and (best is None or policy.priority > best.priority):
            best = policy
    return best


def _plugin(root: Placed) -> bool:
    """A library in site-packages that nothing needs and that is no extension module or program: the package
    opens it by path once imported, so what importing the package itself loaded is in the process then (the
    audit's preloaded-library: triton's plugins find its extension module libtriton.so this way). An extension
    module is imported on its own, in an order nothing says, so it gets only what importing the others loads."""
    return not root.elf.is_extension and root.path.startswith("/sp/")  # Layout holds no programs


def _link_dict(link) -> dict:
    found = link.found
    return {"name": link.name, "needed_by": _shown(link.needer), "how": link.how, "dlopen": link.dlopen,
            "distribution": found.dist.name if found else None, "file": _shown(found) if found else None,
            "via": link.via, "elsewhere": [f"{p.dist.name}: {_shown(p)}" for p in link.elsewhere]}


def _link_finding(run: _Run, subject: Distribution, link, closure: dict, not_given: list[str]) -> CompatFinding | None:
    needer = _shown(link.needer)
    if link.how == "missing":
        # a directory no given distribution installs into: what would fill it was not given. One a given
        # distribution occupies (PySide6's RPATH $ORIGIN/../shiboken6/) was searched and lacks the name: an
        # ordinary system library then (libxkbcommon.so.0), as for a file with no RPATH
        given_tops = set().union(*(run.layout.own_tops(d) for d in run.dists))
        foreign = [d for d in link.searched if "/".join(d.split("/")[:3]) not in given_tops]
        loader = f"{link.name}: cannot open shared object file: No such file or directory"
        family = _family_member(run, subject, link)
        if family is not None:
            sibling, dist = family
            return CompatFinding(
                "compat-missing-library", "error",
                f"{needer} needs {link.name}, which {dist.label} does not ship though it ships {sibling} of the "
                f"same family: {subject.name} was built against another build or release of {dist.name}",
                f"pair it with the build of {dist.name} it was built against, or rebuild it against {dist.label}",
                needer, "fails", loader, library=link.name)
        if not_given:
            return CompatFinding(
                "compat-missing-library", "warning",
                f"{needer} needs {link.name}, which none of the given distributions ships; {subject.label} "
                f"requires {', '.join(not_given)}, which {'was' if len(not_given) == 1 else 'were'} not given",
                "give its requirements too",
                needer, "unknown", library=link.name)
        if foreign:
            return CompatFinding(
                "compat-missing-library", "error",
                f"{needer} needs {link.name} from {', '.join(d[4:] if d.startswith('/sp/') else d for d in foreign)} "
                f"(its {'RUNPATH' if link.needer.elf.runpath else 'RPATH'} points there), which none of the given "
                f"distributions installs, and {subject.name} does not require one that does",
                f"declare the distribution that ships {link.name} in Requires-Dist (pip installs it then), or "
                "vendor the library", needer, "fails", loader, library=link.name)
        return CompatFinding(
            "compat-missing-library", "warning",
            f"{needer} needs {link.name}, which no given distribution ships and not every system has",
            "give the distribution that ships it, or check that the target systems have it", needer, "unknown",
            library=link.name)
    if link.how == "unreached":
        where = ", ".join(f"{p.dist.label} ({_shown(p)})" for p in link.elsewhere[:3])
        verb = "may dlopen" if link.dlopen else "needs"
        return CompatFinding(
            "compat-unreached-library", "warning" if not link.dlopen else "info",
            f"{needer} {verb} {link.name}: {where} ships it, but not where {needer} looks "
            f"(no RPATH/RUNPATH to it), and importing the others does not load it: it loads only if something "
            "loads that file first", "add an RPATH such as $ORIGIN/<relative path> to its directory",
            needer, None if link.dlopen else "unknown", library=link.name)
    provider = link.found.dist
    declared = closure.get(provider.key, False)
    if declared is None:
        if link.dlopen:
            return CompatFinding("compat-dlopen", "info",
                                 f"{needer} may dlopen {link.name}: found in {provider.label} ({_shown(link.found)})"
                                 + (f" through {link.via}" if link.how == "path" else ", already loaded"),
                                 file=needer, library=link.name)
        return None
    return None  # an undeclared provider: one finding per distribution, from _undeclared


def _undeclared(subject: Distribution, trees_links, closure: dict) -> list[CompatFinding]:
    """One warning per given distribution the subject loads from without declaring it (or only with an
    extra): pip will not install it for the user."""
    by_provider: dict[int, tuple[Distribution, dict[str, None], dict[str, None]]] = {}
    for link in trees_links:
        if link.found is None or link.how not in ("path", "loaded") or link.found.dist is subject:
            continue
        provider = link.found.dist
        if closure.get(provider.key, False) is None:
            continue
        _, libs, files = by_provider.setdefault(id(provider), (provider, {}, {}))
        libs[link.name] = None
        files[_shown(link.needer)] = None
    out = []
    for provider, libs, files in by_provider.values():
        extra = closure.get(provider.key, False)
        text = (f"does not declare {provider.name} in Requires-Dist" if extra is False
                else f"declares {provider.name} only with the extra [{extra}]")
        out.append(CompatFinding(
            "compat-requirement", "warning",
            f"{subject.name} loads {', '.join(libs)} from {provider.label} ({len(files)} file"
            f"{'s' if len(files) != 1 else ''}), but {text}: pip will not install it for you",
            f"add {provider.name} to Requires-Dist", next(iter(files)), library=next(iter(libs))))
    return out


def _stem(name: str) -> str:
    """libc10_cuda.so -> c10, libtorch_cpu.so -> torch, libcudart.so.12 -> cudart."""
    return re.split(r"[_.\-]", name.removeprefix("lib"), maxsplit=1)[0]


def _family_member(run: _Run, subject: Distribution, link) -> tuple[str, Distribution] | None:
    """A missing library of the family of one that a given distribution ships and the subject loads from
    (libc10_cuda.so beside torch's libc10.so): that distribution is another build than the one the
    subject was built against. None otherwise."""
    stem = _stem(link.name)
    if len(stem) < 3:
        return None
    used = {id(p): p for p in run.layout.placed if p.dist is not subject and _stem(p.name) == stem}
    for placed in used.values():
        if any(placed is other for other in _loaded_from(link.needer, run)):
            return placed.name, placed.dist
    return None


def _loaded_from(needer: Placed, run: _Run) -> list[Placed]:
    """The given files the needer's own NEEDED names resolve to (by SONAME among all given files)."""
    out: list[Placed] = []
    for name in needer.elf.needed:
        out.extend(p for p in run.layout.by_name.get(name, ()) if p.dist is not needer.dist)
    return out


def _binding_findings(run: _Run, subject: Distribution, binding: Binding, seen: set,
                      unknown_libs: list[str], scope: SystemScope) -> list[CompatFinding]:
    out = []
    key: tuple[str | None, ...]
    for bad in binding.bad_versions:
        key = ("version", bad.file.path, bad.library.path, bad.version)
        if key in seen:
            continue
        seen.add(key)
        out.append(CompatFinding(
            "compat-missing-version", "error",
            f"{_shown(bad.file)} needs version {bad.version} of {bad.library.name}, which {bad.library.dist.label} "
            f"({_shown(bad.library)}) does not define (it defines {', '.join(bad.library.elf.version_defs[-3:])})",
            f"build against the {bad.library.dist.name} you pair it with", _shown(bad.file), "fails",
            f"{_shown(bad.library)}: version `{bad.version}' not found (required by {_shown(bad.file)})",
            version=bad.version, library=bad.library.name))
    by_file: dict[int, int] = {}
    hidden_effects: dict[int, tuple[Placed, set[str]]] = {}  # file -> (the file, effects of the names not shown)
    for u in binding.unbound:
        key = ("symbol", u.file.path, u.name, u.version)
        if key in seen:
            continue
        seen.add(key)
        by_file[id(u.file)] = by_file.get(id(u.file), 0) + 1
        if by_file[id(u.file)] > _SHOWN_UNBOUND:
            hidden_effects.setdefault(id(u.file), (u.file, set()))[1].add(_unbound_effect(subject, u, unknown_libs))
            continue
        out.append(_unbound_finding(subject, u, unknown_libs, scope))
    for placed, name, definer in binding.through_global:
        key = ("global", placed.path, name)
        if key in seen:
            continue
        seen.add(key)
        out.append(CompatFinding(
            "compat-global-symbol", "warning",
            f"{_shown(placed)} binds {demangle(name)} to {definer.dist.name}'s copy in {_shown(definer)}, which "
            f"{definer.dist.name} loads with RTLD_GLOBAL ({', '.join(definer.dist.global_loaders[:2])}): it comes "
            f"before any library {_shown(placed)} links, and it links none of {definer.dist.name}'s",
            f"link the library it means to use (DT_NEEDED: {definer.name}, if it relies on {definer.dist.name}'s "
            "copy); a global copy still comes first for the names it exports", _shown(placed),
            symbol=name, demangled=demangle(name), library=definer.name))
    for file_id, (placed, effects) in hidden_effects.items():
        # as severe as the worst of the names it stands for (PyQt's are all 'may come from a system library')
        fails = "fails" in effects
        out.append(CompatFinding("compat-missing-symbol", "error" if fails else "warning",
                                 f"{_shown(placed)}: and {by_file[file_id] - _SHOWN_UNBOUND} more undefined symbols "
                                 f"(see the JSON report's files)", file=_shown(placed),
                                 effect="fails" if fails else "unknown"))
    return out


def _unbound_effect(subject: Distribution, u, unknown_libs: list[str]) -> str:
    """What an unbound name does to the import: "fails" when no library out of sight could define it (none is
    loaded, or it is needed at a version of a given library), else "unknown"."""
    if u.newer_system is not None:
        return "unknown"
    if u.out_of_scope is not None and subject.global_loaders:
        return "unknown"
    return "unknown" if unknown_libs and not u.versioned else "fails"


def _copy_of_unseen(definer: Placed, unseen: list[str]) -> str | None:
    """The library out of sight (missing, or the system's) that ``definer`` is a grafted copy of: opencv-python's
    libdrm-b0291a67.so.2.4.0 for the libdrm.so.2 a Qt plugin needs. The plugin's names may come from it."""
    names = {unhashed(definer.name), unhashed(posixpath.basename(definer.path))}
    return next((need for need in unseen if any(n == need or n.startswith(need + ".") for n in names)), None)


def _unbound_finding(subject: Distribution, u, unknown_libs: list[str], scope: SystemScope) -> CompatFinding:
    shown = _shown(u.file)
    readable = demangle(u.name)
    loader = f"{shown}: undefined symbol: {u.name}" + (f", version {u.version}" if u.version else "")
    wanted = f"{readable} ({u.name}{'@' + u.version if u.version else ''})" if readable != u.name else \
        f"{u.name}{'@' + u.version if u.version else ''}"
    copy_of = _copy_of_unseen(u.out_of_scope, unknown_libs) if u.out_of_scope is not None else None
    if copy_of is not None:
        return CompatFinding(
            "compat-missing-symbol", "warning",
            f"{shown} needs {wanted}, which may come from {copy_of}, a library it needs that wheelcheck cannot see; "
            f"{u.out_of_scope.dist.label} ships a copy of it ({_shown(u.out_of_scope)}), which it does not link",
            f"check that the target systems have {copy_of}, or give the distribution that ships it", shown, "unknown",
            None, u.name, u.version, readable, copy_of)
    effect = _unbound_effect(subject, u, unknown_libs)
    if u.newer_system is not None:
        policy = scope.policy.name if scope.policy is not None else "its platform tag"
        return CompatFinding(
            "compat-missing-symbol", "warning",
            f"{shown} needs {wanted}, which {u.newer_system} defines only on systems newer than {policy}: "
            "whether it loads depends on the system's release", "build it on the oldest system its tag names",
            shown, "unknown", None, u.name, u.version, readable, u.newer_system)
    if u.out_of_scope is not None:
        return CompatFinding(
            "compat-missing-symbol", "error" if effect == "fails" else "warning",
            f"{shown} needs {wanted}, which {u.out_of_scope.dist.label} defines in {_shown(u.out_of_scope)}, but "
            f"{shown} does not link that library and Python imports extensions with RTLD_LOCAL",
            f"link {u.out_of_scope.name} (DT_NEEDED)", shown, effect, loader if effect == "fails" else None,
            u.name, u.version, readable, u.out_of_scope.name)
    nearest = None
    if effect == "unknown":
        text = (f"{shown} needs {wanted}, which no library it loads that wheelcheck can see defines; it may come from "
                f"{', '.join(dict.fromkeys(unknown_libs))}, which wheelcheck cannot see")
    else:  # the given files and the system libraries of the load, all of them seen
        text = f"{shown} needs {wanted}, which nothing it loads defines"
    hint = "build against the release of its host you pair it with"
    if u.nearest is not None:
        n = u.nearest
        nearest = {"name": n.name, "version": n.version, "demangled": demangle(n.name),
                   "distribution": n.where.dist.name, "distribution_version": n.where.dist.version,
                   "file": _shown(n.where), "difference": n.difference}
        shown_nearest = demangle(n.name) + (f" ({n.name})" if demangle(n.name) != n.name else "")
        if n.version and n.difference == "other version":
            shown_nearest = f"{n.name}@{n.version}"
        text += (f"; nearest: {shown_nearest} in {n.where.dist.label} ({_shown(n.where)}), {n.difference}"
                 + (f": built against another {'build' if 'ABI' in n.difference else 'release'} of "
                    f"{n.where.dist.name}" if effect == "fails" else ""))
        if n.difference == "other libstdc++ string ABI":
            hint = f"rebuild it with {cxx_flag('new' if 'cxx11' in n.name else 'old')} to match {n.where.dist.name}"
        else:
            hint = f"build it against {n.where.dist.label}, or pair it with the release it was built against"
    if effect == "unknown":
        return CompatFinding("compat-missing-symbol", "warning", text, "give the distributions that ship "
                             "those libraries, or check that the target systems have them", shown, "unknown", None,
                             u.name, u.version, readable, nearest=nearest)
    return CompatFinding("compat-missing-symbol", "error", text, hint, shown, "fails", loader, u.name, u.version,
                         readable, nearest=nearest)


def _cxx(run: _Run, subject: Distribution, bindings) -> tuple[dict, list[CompatFinding]]:
    mine = {id(p): p for tree, _ in bindings for p in tree.order if p.dist is subject}
    theirs = {id(p): p for _, b in bindings for p in b.providers.values() if p.dist is not subject}
    theirs.update({id(u.nearest.where): u.nearest.where for _, b in bindings for u in b.unbound if u.nearest})
    if not mine or not theirs:
        return {}, []
    me, them = side_of(mine.values(), run.abi_cache), side_of(theirs.values(), run.abi_cache)
    host = Counter(p.dist.name for p in theirs.values()).most_common(1)[0][0]
    host_dist = next(p.dist for p in theirs.values() if p.dist.name == host)
    cxx = {"subject_abi": me.abi, "host_abi": them.abi, "subject_floor": me.floor, "host_floor": them.floor,
           "host": host_dist.name}
    out = []
    mine_uses, their_uses = _uses(me), _uses(them)
    if mine_uses and their_uses and not mine_uses & their_uses:
        twins = sum(1 for _, b in bindings for u in b.unbound
                    if u.nearest and u.nearest.difference == "other libstdc++ string ABI")
        a, b = me.abi, them.abi
        out.append(CompatFinding(
            "compat-cxx-abi", "error" if twins else "warning",
            f"{subject.name} uses the {a} libstdc++ string ABI ({cxx_flag(a)}), {host_dist.label} the {b} one"
            + (f": {twins} symbol{'s' if twins != 1 else ''} it needs exist only in the other ABI's mangling" if twins
               else ": no std::string crosses between them in a symbol name, but passing one (or a std::list) "
                    "across is undefined behaviour"),
            f"rebuild {subject.name} with {cxx_flag(b)} (the ABI of {host_dist.name})",
            _shown(next(iter(mine.values()))), None,
            symbol=next((u.name for _, b in bindings for u in b.unbound if u.nearest
                         and u.nearest.difference == "other libstdc++ string ABI"), (me.examples or (None,))[0])))
    floor_me, floor_them = _number(me.floor), _number(them.floor) or ()
    if floor_me and floor_me > floor_them:
        limit = tag_glibcxx_limit(host_dist.tags, run.policies)
        beyond = limit is not None and floor_me > (_number(limit[1]) or ())
        cxx["host_tag_limit"] = limit[1] if limit else None
        out.append(CompatFinding(
            "compat-libstdcxx-floor", "warning" if beyond else "info",
            f"{subject.name} needs libstdc++ {me.floor}, {host_dist.name} "
            + (f"only {them.floor}" if them.floor else "no GLIBCXX_ version")
            + (f": on the older systems {host_dist.name}'s tag {limit[0]} promises (libstdc++ up to {limit[1]}), "
               f"importing {subject.name} fails with \"version `{me.floor}' not found\"" if beyond and limit else ""),
            f"build {subject.name} on the oldest system {host_dist.name} supports (its manylinux image)"
            if beyond else "", symbol=None, version=me.floor))
    return cxx, out


def _uses(side: Side) -> set[str]:
    return {"old", "new"} if side.abi == "mixed" else ({side.abi} - {"none"})


def _number(version: str | None) -> tuple[int, ...] | None:
    split = split_version_name(version) if version else None
    return numeric(split[1]) if split else None


def _verdict(findings: list[CompatFinding], bindings, hosts: dict, subject: Distribution) -> tuple[str, str]:
    fails = [f for f in findings if f.effect == "fails" and f.loader_message]
    if fails:
        # the loader maps every library first, then checks versions, then binds symbols
        order = {"compat-missing-library": 0, "compat-missing-version": 1, "compat-missing-symbol": 2}
        first = min(fails, key=lambda f: order.get(f.rule, 3))
        return "will-fail", first.loader_message or ""
    unknown = [f for f in findings if f.effect == "unknown"]
    if unknown:
        return "cannot-tell", unknown[0].message
    checked = sum(b.checked for _, b in bindings)
    theirs = sum(n for _, b in bindings for i, n in b.bound.items() if b.providers[i].dist is not subject)
    names = ", ".join(d.name for d in hosts.values() if d is not subject)
    if not names:
        return "loads", (f"every library found, every symbol bound: {checked} checked, none from other distributions"
                         if checked else "every library found, in its own files and the system; no symbol to bind")
    return "loads", (f"every library found, every symbol bound: {checked} checked, {theirs} of them from {names}"
                     if checked else f"every library found ({names}); it takes no symbol from them")
