"""The package's layers, enforced: imports point down the pipeline only, no `_private` name is
imported from another package, and only `lsp/` imports pygls or lsprotocol (ARCHITECTURE.md)."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "tilelens_lsp"

# bottom to top; a module may import its own layer and those below it
LAYERS = [
    {"model", "settings", "releases", "refusal", "paths", "cache", "suppress", "_warmup", "__init__"},
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


def _modules():
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE.parent).with_suffix("")
        name = ".".join(rel.parts)
        if name.endswith(".__init__"):
            name = name[: -len(".__init__")]
        yield name, path, ast.parse(path.read_text(encoding="utf-8"))


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
                if sub.startswith("_") and target == "tilelens_lsp" and sub not in ("__version__",) \
                        and _unit(name) != sub:
                    crossing.append(f"{name} imports tilelens_lsp.{sub}")
    allowed = {"tilelens_lsp.worker.main imports tilelens_lsp._warmup"}   # the worker's warm-up kernel
    assert set(crossing) <= allowed, sorted(set(crossing) - allowed)


def test_only_the_lsp_package_imports_pygls_and_lsprotocol():
    outside = [f"{name} imports {target}" for name, _, tree in _modules() if _unit(name) != "lsp"
               for target, _ in _imports(name, tree) if target.split(".")[0] in ("pygls", "lsprotocol")]
    assert not outside, outside
