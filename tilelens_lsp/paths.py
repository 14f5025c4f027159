"""Where things are: the workspace root a file belongs to, a path relative to it, and where the standard
library ends on sys.path.

Below both faces and the worker, so the CLI and the server never import each other for a root, and
the pipeline never imports the worker for a sys.path position. Pure stdlib; nothing here imports Triton.
"""

from __future__ import annotations

import functools
import os
import sys
from pathlib import Path

ROOT_MARKERS = ("tilelens.toml", "pyproject.toml", ".git")


def find_root(start: Path) -> Path:
    """The nearest folder at or above `start` holding a root marker, else `start`."""
    start = start.resolve()
    for folder in [start, *start.parents]:
        if any((folder / m).exists() for m in ROOT_MARKERS):
            return folder
    return start


def relative_posix(path: str | os.PathLike, root: str | os.PathLike, *, resolved: bool = False) -> str | None:
    """`path` relative to the folder `root` with `/` separators (`.` for the root itself), symlinks of
    both resolved first unless the caller already did (`resolved`); None when `path` lies outside `root`.
    The one way a path becomes portable: the worker's locs, the CLI's results and the server's files."""
    real = os.fspath(path) if resolved else os.path.realpath(path)
    base = os.fspath(root) if resolved else os.path.realpath(root)
    if real == base:
        return "."
    base = base.rstrip(os.sep)
    if not real.startswith(base + os.sep):
        return None
    return real[len(base) + 1 :].replace(os.sep, "/")


@functools.lru_cache(maxsize=8)
def resolved_prefixes(prefixes: tuple[str, ...]) -> frozenset[str]:
    """The interpreter's install folders named (`sys.prefix` and the like), resolved: once per
    process, since they are the running interpreter's own, rather than on every save."""
    return frozenset(os.path.realpath(p) for p in prefixes)


def stdlib_end(entries: list[str]) -> int:
    """The index just past the standard library's folders in `entries`: the user's folders go there,
    so a file of theirs named like a stdlib module (`traceback.py`) never shadows it."""
    return _stdlib_end(tuple(entries), os.getcwd() if "" in entries or os.curdir in entries else "")


@functools.lru_cache(maxsize=32)
def _stdlib_end(entries: tuple[str, ...], cwd: str) -> int:
    """`stdlib_end` of one sys.path (and working folder, where an entry names it): a save asks several
    times for the same one, and resolving each entry is a few stat calls per folder of its path."""
    prefixes = resolved_prefixes((sys.base_prefix, sys.base_exec_prefix, sys.prefix, sys.exec_prefix))
    end = 0
    for i, entry in enumerate(entries):
        real = os.path.realpath(entry or os.curdir)
        if "site-packages" in real or "dist-packages" in real:
            continue
        if any(real == p or real.startswith(p + os.sep) for p in prefixes):
            end = i + 1
    return end
