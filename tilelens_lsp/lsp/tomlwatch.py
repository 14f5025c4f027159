"""The workspace's launch tomls as the server follows them: the toml's own problems as diagnostics on
the toml document, which open documents a change affects, and a poll for clients that cannot watch.

A toml's problems (invalid toml, a bad target, a table naming a module or file that cannot be found,
a `let`/`launch` string that does not evaluate) are found here by reading the toml alone; nothing is
imported. What only an import can tell (a kernel the module does not define) stays on the kernel file.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from lsprotocol import types

from tilelens_lsp.model import code_url

CONFIG_NAMES = ("tilelens.toml", "pyproject.toml")
POLL_SECONDS = 2.0


def origin_of(path: Path) -> str:
    return "tilelens.toml" if path.name == "tilelens.toml" else "pyproject"


def _declares_launches(path: Path) -> bool:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    return path.name == "tilelens.toml" or "tilelens" in text


@dataclass(frozen=True)
class Problem:
    code: str  # TL010: names nothing that can be imported; TL020: a table or string that is wrong
    line: int  # 1-based
    column: int
    message: str


def problems(path: Path, python: str | None) -> list[Problem]:
    """Every problem of the toml at `path` that reading it alone can find, once each."""
    from tilelens_lsp.launches.toml import config_errors, launches_by_table  # lazy: the toml reader loads directives

    if not path.is_file() or not _declares_launches(path):
        return []
    origin = origin_of(path)
    found = list(config_errors(path, origin, python))
    try:
        for _, launches in launches_by_table(path, origin):
            found += launches.errors
    except Exception:  # noqa: BLE001 - an unreadable toml was reported by config_errors already
        pass
    out: dict[tuple[int, str], Problem] = {}
    for e in found:
        unresolved = ("`module`" in e.message and "no module named" in e.message) or (
            "`file`" in e.message and "does not exist" in e.message
        )
        out.setdefault((e.line, e.message), Problem("TL010" if unresolved else "TL020", e.line, e.column, e.message))
    return sorted(out.values(), key=lambda p: (p.line, p.column, p.message))


def to_lsp(found: list[Problem], text: str) -> list[types.Diagnostic]:
    """Each problem over the rest of its toml line (columns in characters: toml lines are ASCII in practice)."""
    lines = text.split("\n")
    out = []
    for p in found:
        line = max(p.line, 1) - 1
        width = len(lines[line].rstrip("\r")) if line < len(lines) else 0
        start = min(max(p.column, 1) - 1, width)
        out.append(
            types.Diagnostic(
                range=types.Range(
                    start=types.Position(line=line, character=start),
                    end=types.Position(line=line, character=max(width, start)),
                ),
                message=p.message + ("; the launch is not checked" if p.code == "TL010" else ""),
                severity=types.DiagnosticSeverity.Error,
                code=p.code,
                code_description=types.CodeDescription(href=code_url(p.code)),
                source="tilelens",
            )
        )
    return out


def affects(toml: Path, doc_path: Path, named: set[Path]) -> bool:
    """Whether a change of `toml` can change the launches of the document at `doc_path`: it lies in
    the toml's folder tree, or a table names it (`module =` of an installed package, `file = ../x`)."""
    real, base = os.path.realpath(doc_path), os.path.realpath(toml.parent)
    return real == base or real.startswith(base + os.sep) or Path(real) in named


def may_declare(path: Path, root: Path) -> bool:
    """Whether the launch toml the worker reads for the file at `path` (the workspace's
    `tilelens.toml`, else the nearest `pyproject.toml` with a `[tool.tilelens]` table) could launch
    it. A module that only re-exports a kernel (`from .impl import add_kernel as fill`) names
    neither Triton nor tilelens, and a table may launch it all the same."""
    from tilelens_lsp.launches.toml import may_launch

    try:
        return may_launch(path, root)
    except OSError:
        return True  # cannot tell: the worker reads the toml, as for any kernel file


def named_files(toml: Path, python: str | None) -> set[Path]:
    from tilelens_lsp.launches.toml import ConfigError, files_in_config

    try:
        return {Path(os.path.realpath(f)) for f in files_in_config(toml, python)}
    except (ConfigError, OSError):
        return set()


def workspace_tomls(folders: list[Path], doc_paths: list[Path]) -> list[Path]:
    """The tomls that can declare launches of these documents: each folder's, and each toml between a
    document and its folder (a project's `tilelens.toml`, `pyproject.toml`)."""
    out: list[Path] = []
    for folder in folders:
        for name in CONFIG_NAMES:
            candidate = folder / name
            if candidate.is_file() and candidate not in out:
                out.append(candidate)
    for doc in doc_paths:
        for parent in doc.parents:
            if not any(parent == f or f in parent.parents for f in folders):
                break
            for name in CONFIG_NAMES:  # a project's own tilelens.toml inside the folder too
                candidate = parent / name
                if candidate.is_file() and candidate not in out:
                    out.append(candidate)
    return out


def mtimes(paths: list[Path]) -> dict[Path, float | None]:
    out: dict[Path, float | None] = {}
    for p in paths:
        try:
            out[p] = p.stat().st_mtime_ns
        except OSError:
            out[p] = None
    return out
