"""Which of a distribution's libraries its Python code puts in the global scope (RTLD_GLOBAL), read from the code.

A name anywhere is not enough (counted so, any environment with torch and numpy fails `conflicts`). torch's
``_load_global_deps()`` loads ``libtorch_global_deps.so`` alone with RTLD_GLOBAL; its ``sys.setdlopenflags`` branch
runs only when an environment variable asks, and ``torch/_ops.py`` sets the flag around libraries its users load.
So each use of RTLD_GLOBAL is read with ``ast`` and counts only when the import runs it:

- it is in module-level code, or in a function that module-level code of the distribution calls (tensorflow's
  ``set_dlopen_flags()``, called by ``pywrap_tensorflow.py`` before it imports its extension);
- and not in the branch of an ``if`` that an environment variable opens (``if os.getenv("TORCH_USE_RTLD_GLOBAL")``).

A use that counts is ``ctypes.CDLL(path, RTLD_GLOBAL)`` (or ``PyDLL``, ``LoadLibrary``): the library loaded is named
by the string constants the path is made of (``f"libtorch_global_deps{ext}"``, followed through the variables it is
assigned to); or ``sys.setdlopenflags(... RTLD_GLOBAL)``, or a use read no further: every library of the
distribution may be loaded with it. A file that does not parse (Python 2) counts whole, as before.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

__all__ = ["GlobalLoading", "global_loading", "names_rtld_global"]

_LOADERS = frozenset({"CDLL", "PyDLL", "LoadLibrary"})
_FOLLOW = 3  # assignments followed from a loader's path argument back to its string constants
_FRAGMENT = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.+\-]{4,}")  # a name a library's file name may start with


def names_rtld_global(source: bytes) -> bool:
    """Does Python code (not a comment) name RTLD_GLOBAL? The cheap test before reading it."""
    if b"RTLD_GLOBAL" not in source:
        return False
    return any(b"RTLD_GLOBAL" in line and not line.lstrip().startswith(b"#") for line in source.splitlines())


@dataclass(frozen=True)
class GlobalLoading:
    loaders: tuple[str, ...] = ()  # Python files whose use of RTLD_GLOBAL the import runs
    libraries: tuple[str, ...] | None = None  # what those uses load: file-name starts; None: any of its libraries
    dormant: tuple[str, ...] = ()  # files naming it only where the import does not go (a user's call, an env var)


@dataclass
class _Use:
    path: str
    function: str | None  # the innermost function it is in, None at module level
    guarded: bool  # in a branch an environment variable opens
    names: tuple[str, ...] | None  # ctypes: the fragments of the path; None: any library (flags, unread)


@dataclass
class _Module:
    uses: list[_Use] = field(default_factory=list)
    called: set[str] = field(default_factory=set)  # functions its module-level code calls (unguarded)


def global_loading(sources: dict[str, bytes], others: Callable[[], Iterable[tuple[str, bytes]]]) -> GlobalLoading:
    """What a distribution loads with RTLD_GLOBAL. ``sources``: its Python files that name RTLD_GLOBAL (path ->
    bytes); ``others()``: its other Python files, read only when a use is in a function that none of ``sources``
    calls at module level."""
    if not sources:
        return GlobalLoading()
    modules: dict[str, _Module] = {}
    whole: list[str] = []
    for path, source in sorted(sources.items()):
        module = _read(path, source)
        if module is None:
            whole.append(path)  # not Python 3: counted whole, as the name alone counted before
        else:
            modules[path] = module
    called = set().union(*(m.called for m in modules.values()))
    wanted = {u.function for m in modules.values() for u in m.uses if u.function and u.function not in called}
    if wanted:
        called |= _called_elsewhere(others(), wanted)
    counted = [u for m in modules.values() for u in m.uses if not u.guarded and (u.function is None or
                                                                                 u.function in called)]
    loaders = tuple(sorted({u.path for u in counted} | set(whole)))
    libraries: tuple[str, ...] | None = None
    if not whole and all(u.names is not None for u in counted):
        libraries = tuple(sorted({n for u in counted for n in u.names or ()}))
    dormant = tuple(sorted(set(sources) - set(loaders)))
    return GlobalLoading(loaders, libraries, dormant)


def _read(path: str, source: bytes) -> _Module | None:
    try:
        tree = ast.parse(source, filename=path)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    parents: dict[ast.AST, ast.AST] = {}
    for node in ast.walk(tree):
        for child in ast.iter_child_nodes(node):
            parents[child] = node
    module = _Module()
    assigned = _assignments(tree)
    for node in ast.walk(tree):
        if _is_rtld_global(node):
            module.uses.append(_use(path, node, parents, assigned))
        elif isinstance(node, ast.Call) and _function_of(node, parents) is None and not _guarded(node, parents):
            name = _callee(node)
            if name:
                module.called.add(name)
    return module


def _use(path: str, node: ast.AST, parents: dict, assigned: dict[str, list[ast.AST]]) -> _Use:
    call = _enclosing_call(node, parents)
    names: tuple[str, ...] | None = None
    if call is not None and _callee(call) in _LOADERS and call.args:
        # no constant to read (a path passed in): any of its libraries, as for the flags
        names = tuple(sorted(set(_fragments(call.args[0], assigned, _FOLLOW, set())))) or None
    return _Use(path, _function_of(node, parents), _guarded(node, parents), names)


def _is_rtld_global(node: ast.AST) -> bool:
    return (isinstance(node, ast.Attribute) and node.attr == "RTLD_GLOBAL") or \
        (isinstance(node, ast.Name) and node.id == "RTLD_GLOBAL")


def _callee(call: ast.Call) -> str | None:
    func = call.func
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None


def _enclosing_call(node: ast.AST, parents: dict) -> ast.Call | None:
    """The call RTLD_GLOBAL is an argument of (``CDLL(path, mode=RTLD_GLOBAL)``, ``setdlopenflags(x | RTLD_GLOBAL)``)."""
    while node in parents:
        parent = parents[node]
        if isinstance(parent, ast.Call) and node is not parent.func:
            return parent
        if isinstance(parent, ast.stmt):
            return None
        node = parent
    return None


def _function_of(node: ast.AST, parents: dict) -> str | None:
    while node in parents:
        node = parents[node]
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return node.name
        if isinstance(node, (ast.Lambda, ast.ClassDef)):
            return "<nested>"  # run when something calls it: not by the import
    return None


def _guarded(node: ast.AST, parents: dict) -> bool:
    """Is ``node`` in the branch of an ``if`` whose test reads the environment (``os.getenv``, ``os.environ``)?"""
    while node in parents:
        parent = parents[node]
        if isinstance(parent, (ast.If, ast.IfExp)) and node is not parent.test and _in_body(node, parent) \
                and _reads_environment(parent.test):
            return True
        node = parent
    return False


def _in_body(node: ast.AST, branch: ast.If | ast.IfExp) -> bool:
    body = branch.body
    return node is body if isinstance(body, ast.AST) else any(node is stmt for stmt in body)


def _reads_environment(test: ast.AST) -> bool:
    return any((isinstance(n, ast.Attribute) and n.attr in ("getenv", "environ")) or
               (isinstance(n, ast.Name) and n.id in ("getenv", "environ")) for n in ast.walk(test))


def _assignments(tree: ast.AST) -> dict[str, list[ast.AST]]:
    out: dict[str, list[ast.AST]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    out.setdefault(target.id, []).append(node.value)
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign)) and isinstance(node.target, ast.Name) and node.value:
            out.setdefault(node.target.id, []).append(node.value)
    return out


def _fragments(expr: ast.AST, assigned: dict[str, list[ast.AST]], depth: int, followed: set[str]) -> Iterator[str]:
    """The string constants ``expr`` is made of that could start a library's file name, following variables (each
    once: code that assigns a name a thousand times from itself costs a thousand steps, not a thousand cubed)."""
    for node in ast.walk(expr):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            yield from (m.group() for m in _FRAGMENT.finditer(node.value.rsplit("/", 1)[-1]) if m.start() == 0)
        elif isinstance(node, ast.Name) and depth > 0 and node.id not in followed:
            followed.add(node.id)
            for value in assigned.get(node.id, ()):
                yield from _fragments(value, assigned, depth - 1, followed)


def _called_elsewhere(sources: Iterable[tuple[str, bytes]], wanted: set[str]) -> set[str]:
    """Which of ``wanted`` (function names) module-level code of ``sources`` calls, outside environment branches."""
    found: set[str] = set()
    needles = [name.encode() for name in wanted]
    for path, source in sources:
        if not any(n in source for n in needles):
            continue
        module = _read(path, source)
        if module is not None:
            found |= module.called & wanted
    return found
