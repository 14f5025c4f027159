"""The analysis pipeline for one file, run inside a worker: launches → compile → engines → clients.

`analyze_path` analyses a file (all its launches, or some), `plan_path` names and weighs its launches
without importing anything. The parts: `directives.py` (what the text declares, parsed once per
text), `imports.py` (the user's module, imported under scope), `launch.py` (one launch: configs,
engine, clients), `keys.py` (the result cache's key), `warm.py` (`WarmState`, what a warm worker
keeps, owned by the worker and passed in). Every failure is confined to the launch (or client) it
belongs to and becomes a diagnostic; nothing here knows about LSP.
"""

from tilelens_lsp.pipeline.directives import Directives, config_counts, declared_launches, unlaunched
from tilelens_lsp.pipeline.file import absolute_paths, analyze_path, launch_origin, plan_path, toml_path
from tilelens_lsp.pipeline.imports import (
    ImportFailure,
    Imports,
    file_scope,
    import_module,
    import_roots,
    is_user_module,
    load_module,
)
from tilelens_lsp.pipeline.keys import ResultKey, dependency_values
from tilelens_lsp.pipeline.launch import analyze_launch, triton_version, with_origin
from tilelens_lsp.pipeline.warm import Stats, WarmState

__all__ = [
    "Directives",
    "ImportFailure",
    "Imports",
    "ResultKey",
    "Stats",
    "WarmState",
    "absolute_paths",
    "analyze_launch",
    "analyze_path",
    "config_counts",
    "declared_launches",
    "dependency_values",
    "file_scope",
    "import_module",
    "import_roots",
    "is_user_module",
    "launch_origin",
    "load_module",
    "plan_path",
    "toml_path",
    "triton_version",
    "unlaunched",
    "with_origin",
]
