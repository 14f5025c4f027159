"""Which files `tilelens-lsp check` analyses: folders walked, files that declare no launch left out.

A file is analysed when a comment or a toml launch table declares a launch in it; a file over
MAX_FILE_BYTES is never read (TL010). Nothing here starts a worker or prints.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from tilelens_lsp.model import Diagnostic, FileResult
from tilelens_lsp.paths import find_root
from tilelens_lsp.settings import MAX_FILE_BYTES


def has_launch(path: Path) -> bool:
    try:
        with open(path, "rb") as f:
            return b"tilelens:" in f.read(MAX_FILE_BYTES + 1)
    except OSError:
        return False


def declared_in_toml(path: Path, root: Path, tables: dict[Path, set[Path]]) -> bool:
    """Whether the toml that applies to `path` (tilelens.toml at `root`, else the nearest pyproject.toml
    with [tool.tilelens]) has a launch table naming it; `tables` caches each toml's files."""
    from tilelens_lsp.launches.toml import ConfigError, files_in_config, find_config  # lazy: see declared_only below

    found = find_config(path, root)
    if found is None:
        return False
    if found[0] not in tables:
        try:
            tables[found[0]] = set(files_in_config(found[0]))
        except ConfigError:
            tables[found[0]] = set()
    return path.resolve() in tables[found[0]]


def _inside(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def _regular(path: Path) -> os.stat_result | None:
    """The stat of the regular file `path` names (after symlinks), else None (FIFO, device, folder, dangling)."""
    try:
        st = path.stat()
    except (OSError, RuntimeError):
        return None
    return st if stat.S_ISREG(st.st_mode) else None


def _walk(top: Path) -> list[Path]:
    """The `.py` files under `top`: hidden folders, node_modules and __pycache__ left out, symlinked
    folders not entered, symlinked files only when they point inside `top`."""
    real_top = top.resolve()
    found: list[Path] = []
    for folder, dirs, names in os.walk(top):  # followlinks=False
        dirs[:] = [d for d in dirs if not d.startswith(".") and d not in ("node_modules", "__pycache__")]
        for name in names:
            if not name.endswith(".py") or name.startswith("."):
                continue
            f = Path(folder) / name
            if f.is_symlink():
                try:
                    if not _inside(f.resolve(), real_top):
                        continue
                except (OSError, RuntimeError):
                    continue
            found.append(f)
    return sorted(found)


def collect_files(paths: list[str], config_files: list[Path]) -> tuple[list[Path], list[str]]:
    """The files to analyse (regular files only), and usage errors."""
    files: list[Path] = []
    errors: list[str] = []
    tables: dict[Path, set[Path]] = {}
    for raw in paths:
        p = Path(raw)
        if p.is_dir():
            root = find_root(p)
            for f in _walk(p):
                st = _regular(f)
                if st is None:
                    continue
                if st.st_size > MAX_FILE_BYTES or has_launch(f) or declared_in_toml(f, root, tables):
                    files.append(f.resolve())
        elif _regular(p) is not None:
            files.append(p.resolve())
        elif p.exists():
            errors.append(f"not a regular file: {raw}")
        else:
            errors.append(f"no such file or folder: {raw}")
    files.extend(config_files)
    unique: list[Path] = []
    for f in files:
        if f not in unique:
            unique.append(f)
    return unique, errors


def too_large(path: Path, root: Path) -> FileResult | None:
    """A TL010 for a file over MAX_FILE_BYTES (or no longer a regular file), which is not read."""
    st = _regular(path)
    if st is not None and st.st_size <= MAX_FILE_BYTES:
        return None
    why = (
        "it is no longer a regular file"
        if st is None
        else f"it is {st.st_size / 2**20:.1f} MiB, above the {MAX_FILE_BYTES // 2**20} MiB limit"
    )
    return FileResult(str(path), (), (Diagnostic("TL010", f"cannot read this file: {why}; not analysed", 1, 1),))


def declared_only(files: list[Path], config: Path | None) -> list[Path]:
    """The files that declare a launch (a comment, or a table of the toml that applies to them)."""
    # lazy, here and in cli/main.py: the toml reader loads directives, ~80 ms more on every server start
    from tilelens_lsp.launches.toml import files_in_config

    in_config = {Path(f).resolve() for f in files_in_config(config)} if config else set()
    tables: dict[Path, set[Path]] = {}
    return [f for f in files if has_launch(f) or f in in_config or declared_in_toml(f, find_root(f.parent), tables)]


def _jit_text(path: Path) -> str | None:
    """The text of a `.py` file that may define a `@triton.jit` kernel (cheap byte test first)."""
    try:
        with open(path, "rb") as f:
            data = f.read(MAX_FILE_BYTES + 1)
    except OSError:
        return None
    if len(data) > MAX_FILE_BYTES or b"jit" not in data:
        return None
    return data.decode("utf-8", errors="replace")


def _called_in_jit(text: str) -> set[str]:
    """Names a `@jit` function of `text` calls (`helper(...)` or `module.helper(...)`)."""
    import ast

    from tilelens_lsp.launches.kernels import is_jit, parse_file

    tree = parse_file(text)
    out: set[str] = set()
    for fn in ast.walk(tree) if tree is not None else ():
        if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) and is_jit(fn):
            for n in ast.walk(fn):
                if isinstance(n, ast.Call) and n.func is not fn:
                    name = getattr(n.func, "id", None) or getattr(n.func, "attr", None)
                    if name and name != fn.name:
                        out.add(name)
    return out


def unlaunched_files(paths: list[str], checked: list[Path]) -> list[tuple[Path, list[tuple[str, int, int]]]]:
    """Files under the given folders that declare no launch but define kernels: (file, [(kernel, line,
    column)]). A `@jit` function that a `@jit` function of any file there calls is a helper, not listed."""
    from tilelens_lsp.launches.kernels import find_kernels  # lazy: see declared_only

    if not any(Path(raw).is_dir() for raw in paths):
        return []  # only the checked files themselves: none of them is unlaunched (no need to parse them)
    done = set(checked)
    texts: dict[Path, str] = {}
    for raw in paths:
        p = Path(raw)
        if not p.is_dir():
            continue
        for f in _walk(p):
            real = f.resolve()
            if real in texts or _regular(real) is None:
                continue
            text = _jit_text(real)
            if text is not None:
                texts[real] = text
    for f in done:
        if f not in texts and (text := _jit_text(f)) is not None:
            texts[f] = text
    called: set[str] = set()
    for text in texts.values():
        called |= _called_in_jit(text)
    out = []
    for f, text in texts.items():
        if f in done:
            continue
        kernels = [(k.name, k.line, k.column) for k in find_kernels(text) if not k.is_helper and k.name not in called]
        if kernels:
            out.append((f, kernels))
    return sorted(out)
