"""The import direction of docs/architecture.md, enforced: a room imports only from itself and rooms below it.

Every ``import`` in the package is read with ``ast`` (those inside functions too: a lazy import is still a
dependency), so a new module that reaches upward fails here with the line that does it.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "wheelcheck"

# Lowest first. A room may import its own modules and those of any room on an earlier line.
LAYERS: list[set[str]] = [
    {"_version", "errors", "data"},
    {"elf"},
    {"wheel"},
    {"symbols"},
    {"policy"},
    {"host"},
    {"audit"},
    {"sbom"},
    {"conflicts", "repair"},
    {"compat"},
    {"report"},
    {"api"},
    {"census"},
    {"config"},
    {"cli"},
    {"__init__", "__main__"},
]
LEVEL = {room: level for level, rooms in enumerate(LAYERS) for room in rooms}


def room_of(module: str) -> str:
    """'wheelcheck.audit.verdict' -> 'audit'; 'wheelcheck' -> '__init__'."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def imports_of(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(), str(path))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names if alias.name.startswith("wheelcheck")]
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("wheelcheck"):
            if node.module == "wheelcheck":  # `from wheelcheck import x`: x is the room
                found += [(node.lineno, f"wheelcheck.{alias.name}") for alias in node.names]
            else:
                found.append((node.lineno, node.module))
    return found


MODULES = sorted(p for p in PACKAGE.rglob("*.py"))


def test_every_room_is_placed():
    rooms = {p.relative_to(PACKAGE).parts[0].removesuffix(".py") for p in MODULES}
    assert rooms <= set(LEVEL), f"rooms missing from LAYERS (and docs/architecture.md): {rooms - set(LEVEL)}"


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_imports_go_down(path: Path):
    own = path.relative_to(PACKAGE).parts[0].removesuffix(".py")
    upward = [f"line {line}: {module} ({room_of(module)} is not below {own})"
              for line, module in imports_of(path)
              if room_of(module) != own and LEVEL[room_of(module)] >= LEVEL[own]]
    assert not upward, "\n".join(upward)


def test_elf_never_reads_policy():
    """The ELF reader knows bytes, not what a policy allows (DESIGN.md)."""
    for path in (PACKAGE / "elf").glob("*.py"):
        assert not [m for _, m in imports_of(path) if room_of(m) == "policy"], path


def test_checker_sees_a_violation(tmp_path):
    """The rule itself works: an upward import is found."""
    bad = tmp_path / "bad.py"
    bad.write_text("def f():\n    from wheelcheck.audit.verdict import judge\n")
    assert imports_of(bad) == [(2, "wheelcheck.audit.verdict")]
    assert LEVEL[room_of("wheelcheck.audit.verdict")] > LEVEL["elf"]


# Library code reports bad input with the project's own errors (wheelcheck/errors.py), one line each; the CLI
# alone exits. A built-in exception raised on purpose would escape that hierarchy (and look like a bug).
ALLOWED_RAISES = {f"cli/{name}.py": {"typer.Exit", "KeyboardInterrupt"}
                  for name in ("common", "audit_command", "repair_commands", "inspect_commands",
                               "environment_commands", "census_command", "policy_commands", "entry")}


def raised_names(path: Path) -> list[tuple[int, str]]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Raise) and node.exc is not None:
            target = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
            found.append((node.lineno, ast.unparse(target)))
    return found


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_library_code_raises_only_its_own_errors(path: Path):
    import builtins

    allowed = ALLOWED_RAISES.get(str(path.relative_to(PACKAGE)), set())
    builtin = [f"line {line}: raise {name}" for line, name in raised_names(path)
               if name not in allowed and isinstance(getattr(builtins, name, None), type)]
    assert not builtin, "\n".join(builtin)


def test_error_checker_sees_a_builtin(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("def f(x):\n    if x:\n        raise ValueError('no')\n    raise\n")
    assert raised_names(bad) == [(3, "ValueError")]


def test_every_package_ships():
    """A room that is a package must be listed in pyproject.toml, or the built wheel lacks it (an editable
    install hides the omission; an installed wheel fails at import)."""
    import tomllib

    listed = set(tomllib.loads((PACKAGE.parent / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    packages = {".".join(("wheelcheck", *p.parent.relative_to(PACKAGE).parts)).rstrip(".")
                for p in PACKAGE.rglob("__init__.py")}
    assert packages - listed == set()


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph() -> dict[str, set[str]]:
    """module -> the package modules it imports: every import, lazy or only for type checking, counts (a module
    that needs another's names for its types depends on it as much)."""
    known = {module_name(p) for p in MODULES}
    graph: dict[str, set[str]] = {}
    for path in MODULES:
        edges = graph.setdefault(module_name(path), set())
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                edges.update(a.name for a in node.names if a.name in known)
            elif isinstance(node, ast.ImportFrom) and node.module in known:
                for alias in node.names:  # `from wheelcheck.audit import findings` names a module
                    sub = f"{node.module}.{alias.name}"
                    edges.add(sub if sub in known else node.module)
        edges.discard(module_name(path))
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_no_import_cycles():
    """Modules import one another in one direction: a cycle means two modules that are really one, or a third
    that both should import (docs/architecture.md)."""
    assert cycles(import_graph()) == []


def test_cycle_checker_sees_a_cycle():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert cycles(graph) == [["a", "b", "c"]]
