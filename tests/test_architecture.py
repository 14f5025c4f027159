"""The package's layers, enforced: imports point down the pipeline only, no `_private` name is
imported from another package nor a `_private` attribute used outside the module that defines it,
no import cycle inside `lsp/` (TYPE_CHECKING imports included), and only `lsp/` imports pygls or
lsprotocol (ARCHITECTURE.md)."""

from __future__ import annotations

import ast
import functools
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "tilelens_lsp"

# bottom to top; a module may import its own layer and those below it
LAYERS = [
    {
        "model",
        "diagnostics",
        "dtypes",
        "settings",
        "releases",
        "refusal",
        "paths",
        "cache",
        "claims",
        "suppress",
        "textlines",
        "_warmup",
        "__init__",
    },
    {"launches"},
    {"compile"},
    {"ttir"},
    {"engines"},
    {"clients"},
    {"pipeline"},
    {"suggest"},
    {"worker", "capture"},
    {"api"},
    {"lsp"},
    {"cli"},
    {"pytest_plugin"},
    {"__main__"},
]
RANK = {name: i for i, layer in enumerate(LAYERS) for name in layer}


def _unit(module: str) -> str:
    """`tilelens_lsp.engines.affine.box` -> `engines`; `tilelens_lsp.model` -> `model`."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


@functools.lru_cache(maxsize=1)
def _modules() -> tuple[tuple[str, Path, ast.Module], ...]:
    """(dotted name, path, syntax tree) of every module of the package, parsed once per test session."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE.parent).with_suffix("")
        name = ".".join(rel.parts)
        if name.endswith(".__init__"):
            name = name[: -len(".__init__")]
        found.append((name, path, ast.parse(path.read_text(encoding="utf-8"))))
    return tuple(found)


def _imports(module: str, tree: ast.AST):
    """(imported module, names) for every import in the file, relative ones resolved."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, []
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = module.split(".")[: len(module.split(".")) - node.level + (1 if module.endswith("__init__") else 0)]
                base = ".".join(anchor + ([base] if base else []))
            yield base, [a.name for a in node.names]


def test_every_module_of_the_package_has_a_layer():
    units = {_unit(name) for name, _, _ in _modules() if name != "tilelens_lsp"}
    assert units <= set(RANK), f"modules with no layer in this test: {sorted(units - set(RANK))}"


def test_imports_point_down_the_pipeline_only():
    upward = []
    for name, _, tree in _modules():
        own = RANK[_unit(name)] if name != "tilelens_lsp" else 0
        for target, names in _imports(name, tree):
            if not target.startswith("tilelens_lsp"):
                continue
            for sub in names or [""]:
                full = f"{target}.{sub}" if target == "tilelens_lsp" and sub else target
                unit = _unit(full)
                if unit in RANK and RANK[unit] > own:
                    upward.append(f"{name} imports {full}")
    # the command line starts the server (and only that): the one sanctioned upward edge
    upward = [u for u in upward if not u.startswith("tilelens_lsp.cli.main imports tilelens_lsp.lsp")]
    # the package re-exports the public API (`tilelens_lsp.check_launch`), imported on first use
    upward = [u for u in upward if u != "tilelens_lsp imports tilelens_lsp.api"]
    assert not upward, upward


def test_no_private_name_crosses_a_package():
    crossing = []
    for name, _, tree in _modules():
        for target, names in _imports(name, tree):
            if not target.startswith("tilelens_lsp"):
                continue
            for sub in names:
                if sub.startswith("_") and not sub.startswith("__") and _unit(target) != _unit(name):
                    crossing.append(f"{name} imports {target}.{sub}")
                if sub.startswith("_") and target == "tilelens_lsp" and sub not in ("__version__",) and _unit(name) != sub:
                    crossing.append(f"{name} imports tilelens_lsp.{sub}")
    allowed = {"tilelens_lsp.worker.main imports tilelens_lsp._warmup"}  # the worker's warm-up kernel
    assert set(crossing) <= allowed, sorted(set(crossing) - allowed)


def test_only_the_lsp_package_imports_pygls_and_lsprotocol():
    outside = [
        f"{name} imports {target}"
        for name, _, tree in _modules()
        if _unit(name) != "lsp"
        for target, _ in _imports(name, tree)
        if target.split(".")[0] in ("pygls", "lsprotocol")
    ]
    assert not outside, outside


# ---------------------------------------------------------------- private attributes
#
# The rule: a `_name` attribute belongs to the module that defines it (as `self._name = ...` or
# `cls._name = ...`, or as a `_name` assignment or `def _name` in a class body). Any other module of
# the package that reads or writes `<expr>._name` (not through `self` or `cls`) is using another
# module's private member, as is `module._name` through an imported module of the package. Private
# names of other libraries (`sys._getframe`, Triton's `_C`) are not this rule's business.
#
# Violations allowed, each with its reason (none today; an entry that no longer occurs fails the
# test, so the list only shrinks):
PRIVATE_ATTRIBUTE_ALLOWED: set[str] = set()


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _own_private_attributes(tree: ast.AST) -> set[str]:
    owned: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            for stmt in node.body:
                if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    owned.add(stmt.name)
                targets = (
                    stmt.targets
                    if isinstance(stmt, ast.Assign)
                    else [stmt.target]
                    if isinstance(stmt, ast.AnnAssign)
                    else []
                )
                owned.update(t.id for t in targets if isinstance(t, ast.Name))
        elif (
            isinstance(node, ast.Attribute)
            and isinstance(node.ctx, ast.Store)
            and isinstance(node.value, ast.Name)
            and node.value.id in ("self", "cls")
        ):
            owned.add(node.attr)
    return {name for name in owned if _private(name)}


def _module_aliases(module: str, tree: ast.AST, modules: set[str]) -> dict[str, str]:
    """Local names bound to a module of the package by an import (`from tilelens_lsp import pipeline`)."""
    aliases = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            aliases.update({a.asname: a.name for a in node.names if a.asname and a.name in modules})
        elif isinstance(node, ast.ImportFrom):
            for target, names in _imports(module, node):
                aliases.update({name: f"{target}.{name}" for name in names if f"{target}.{name}" in modules})
    return aliases


def private_attribute_uses() -> set[str]:
    parsed = list(_modules())
    modules = {name for name, _, _ in parsed}
    owned = {name: _own_private_attributes(tree) for name, _, tree in parsed}
    uses = set()
    for name, _, tree in parsed:
        aliases = _module_aliases(name, tree, modules)
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Attribute) and _private(node.attr)):
                continue
            receiver = node.value
            if isinstance(receiver, ast.Name) and receiver.id in ("self", "cls"):
                continue
            if isinstance(receiver, ast.Name) and receiver.id in aliases:
                uses.add(f"{name} uses {aliases[receiver.id]}.{node.attr}")
            elif node.attr not in owned[name]:
                uses.update(
                    f"{name} uses {node.attr} of {other}"
                    for other, attrs in owned.items()
                    if other != name and node.attr in attrs
                )
    return uses


def test_no_private_attribute_is_used_across_modules():
    uses = private_attribute_uses()
    assert uses - PRIVATE_ATTRIBUTE_ALLOWED == set(), "new uses of another module's private members"
    assert PRIVATE_ATTRIBUTE_ALLOWED - uses == set(), "fixed: remove these from PRIVATE_ATTRIBUTE_ALLOWED"


def test_the_private_attribute_rule_sees_what_it_should():
    tree = ast.parse(
        "class A:\n    _k = 1\n    def __init__(self):\n        self._x = 0\n    def _f(self):\n        return self._x\n"
    )
    assert _own_private_attributes(tree) == {"_k", "_x", "_f"}
    tree = ast.parse("from tilelens_lsp import pipeline\nimport tilelens_lsp.model as m\n")
    assert _module_aliases("tilelens_lsp.x", tree, {"tilelens_lsp.pipeline", "tilelens_lsp.model"}) == {
        "pipeline": "tilelens_lsp.pipeline",
        "m": "tilelens_lsp.model",
    }


# ---------------------------------------------------------------- import cycles inside lsp/
#
# Module-level imports count, those behind `if TYPE_CHECKING:` included (a cycle there is still a
# cycle for a reader: the parts of the server get their collaborators in their constructors, so none
# needs to name the object that builds it); imports inside functions do not. None is allowed.


def _module_level_imports(stmts: list[ast.stmt]):
    for stmt in stmts:
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            yield stmt
        elif isinstance(stmt, ast.If):
            yield from _module_level_imports(stmt.body + stmt.orelse)
        elif isinstance(stmt, ast.Try):
            yield from _module_level_imports(
                stmt.body + stmt.orelse + stmt.finalbody + [s for h in stmt.handlers for s in h.body]
            )


def lsp_import_graph() -> dict[str, set[str]]:
    parsed = list(_modules())
    modules = {name for name, _, _ in parsed}
    graph: dict[str, set[str]] = {}
    for name, _, tree in parsed:
        if not name.startswith("tilelens_lsp.lsp."):
            continue
        deps = set()
        for stmt in _module_level_imports(tree.body):
            for target, names in _imports(name, stmt):
                for sub in names or [""]:
                    full = f"{target}.{sub}" if f"{target}.{sub}" in modules else target
                    if full.startswith("tilelens_lsp.lsp.") and full != name:
                        deps.add(full)
        graph[name] = deps
    return graph


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of `graph` (its modules in order), or None."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for dep in sorted(graph.get(node, ())):
            if state.get(dep) == 1:
                return stack[stack.index(dep) :] + [dep]
            if dep not in state and (found := visit(dep)):
                return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return None


def test_no_import_cycle_inside_lsp():
    assert _cycle(lsp_import_graph()) is None


def test_the_cycle_finder_finds_cycles():
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": set()}) is None
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]


def test_type_checking_imports_are_edges_of_the_graph():
    tree = ast.parse(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
        "    from tilelens_lsp.lsp.session import Session\n"
        "def f():\n    from tilelens_lsp.lsp import editor\n"
    )
    found = [(t, n) for stmt in _module_level_imports(tree.body) for t, n in _imports("tilelens_lsp.lsp.x", stmt)]
    assert ("tilelens_lsp.lsp.session", ["Session"]) in found
    assert all(t != "tilelens_lsp.lsp" for t, _ in found)  # a function's import is not module-level
    graph = lsp_import_graph()
    assert "tilelens_lsp.lsp.session" in graph["tilelens_lsp.lsp.sync"]  # sync names Session only for typing
