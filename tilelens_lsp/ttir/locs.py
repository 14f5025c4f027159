"""TTIR `loc` attributes → portable call stacks.

A stack is innermost first. Paths leave the worker portable: workspace files by relative path,
Triton's own sources as `triton/<path in the package>`, an installed package's file by the path it is
imported by (`liger_kernel/ops/cross_entropy.py`, relative to its `sys.path` folder), anything else by
bare file name.
"""

from __future__ import annotations

import functools
import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

from tilelens_lsp.model import Frame
from tilelens_lsp.paths import relative_posix
from tilelens_lsp.ttir.types import split_top

_LOC_DEF = re.compile(r"^(#loc\d*) = loc\((.*)\)\s*$")
_FILE_LOC = re.compile(r'^"((?:[^"\\]|\\.)*)":(\d+):(\d+)(?:\s+to\s+(?:\d+:)?\d+)?$')
_NAMED = re.compile(r'^"((?:[^"\\]|\\.)*)"\((.*)\)$')
_CALLSITE = re.compile(r"^callsite\((.*)\)$")
_FUSED = re.compile(r"^fused(?:<[^>]*>)?\[(.*)\]$")


@dataclass(frozen=True)
class PathMapper:
    """Makes absolute paths portable, relative to the workspace root and Triton's package dir."""

    workspace_root: str | None
    triton_root: str | None
    import_roots: tuple[str, ...] = ()  # sys.path folders of installed code, deepest first
    # each path's answer, for the life of this mapper (one analysis: a new mapper sees moved links)
    _known: dict[str, str] = field(default_factory=dict, repr=False, compare=False, hash=False)

    def portable(self, path: str) -> str:
        """`path` as results carry it (see the module docstring); every frame of every stack of an
        analysis asks, mostly for the one kernel file, and each answer costs a `realpath` (a stat per
        folder of the path), so each path is resolved once per mapper."""
        known = self._known.get(path)
        if known is None:
            known = self._known[path] = self._portable(path)
        return known

    def _portable(self, path: str) -> str:
        if not os.path.isabs(path):
            return path.replace(os.sep, "/")
        real = os.path.realpath(path)
        for root, prefix in ((self.triton_root, "triton/"), (self.workspace_root, "")):
            if not root:
                continue
            rel = relative_posix(real, _real_root(root), resolved=True)
            if rel is not None:
                return prefix + rel
        for root in self.import_roots:
            rel = relative_posix(real, _real_root(root), resolved=True)
            if rel is not None and rel != ".":
                return rel
        return os.path.basename(path)

    def absolute(self, portable: str) -> str | None:
        """The existing file a portable path names, looked up as `portable` made it (None: not found)."""
        if os.path.isabs(portable):
            return portable if os.path.isfile(portable) else None
        bases = [(self.workspace_root, "")] + ([(self.triton_root, "triton/")] if self.triton_root else [])
        bases += [(root, "") for root in self.import_roots]
        for root, prefix in bases:
            if root and portable.startswith(prefix):
                candidate = os.path.join(root, portable[len(prefix) :])
                if os.path.isfile(candidate):
                    return os.path.realpath(candidate)
        return None


@functools.lru_cache(maxsize=64)
def _real_root(root: str) -> str:
    """The resolved workspace or Triton folder (resolved once per worker: roots do not move)."""
    return os.path.realpath(root)


def default_mapper(workspace_root: str | os.PathLike | None) -> PathMapper:
    triton_root = None
    try:
        import triton

        triton_root = str(Path(triton.__file__).parent)
    except ImportError:  # pragma: no cover - the worker always has triton
        pass
    return PathMapper(str(workspace_root) if workspace_root else None, triton_root, installed_roots())


def installed_roots() -> tuple[str, ...]:
    """This interpreter's `sys.path` folders of installed code (site-packages, the standard library),
    deepest first, so a file is named by the path `import` finds it by.

    Asked on every analysis with the same `sys.path`: the answer is kept for that `sys.path` (a
    dozen `realpath`s and `isdir`s a save, a tenth of a millisecond, otherwise)."""
    return _installed_roots(tuple(sys.path))


@functools.lru_cache(maxsize=1)  # one sys.path at a time: a worker's never changes between analyses
def _installed_roots(path: tuple[str, ...]) -> tuple[str, ...]:
    real = {os.path.realpath(p) for p in path if p and os.path.isabs(p) and os.path.isdir(p) and not p.endswith(".zip")}
    return tuple(sorted(real, key=lambda r: (-r.count(os.sep), r)))


class LocTable:
    """Resolves `#locN` aliases and inline `loc(...)` bodies to raw (abs path, line, col) stacks."""

    def __init__(self, ttir_text: str) -> None:
        self.aliases: dict[str, str] = {}
        for line in ttir_text.splitlines():
            line = line.strip()
            if not line.startswith("#loc"):
                continue  # an op's line: only alias definitions start with `#loc`
            m = _LOC_DEF.match(line)
            if m:
                self.aliases[m.group(1)] = m.group(2)
        self._memo: dict[str, tuple[tuple[str, int, int], ...]] = {}

    def resolve(self, body: str) -> tuple[tuple[str, int, int], ...]:
        """Stack of (path, line, col), innermost first; () for unknown locations."""
        body = body.strip()
        if body in self._memo:
            return self._memo[body]
        self._memo[body] = ()  # guards against alias cycles
        result = self._resolve(body)
        self._memo[body] = result
        return result

    def _resolve(self, body: str) -> tuple[tuple[str, int, int], ...]:
        if body.startswith("#loc"):
            alias = self.aliases.get(body)
            return self.resolve(alias) if alias is not None else ()
        if body.startswith("loc(") and body.endswith(")"):
            return self.resolve(body[4:-1])
        m = _FILE_LOC.match(body)
        if m:
            return ((m.group(1).encode().decode("unicode_escape"), int(m.group(2)), int(m.group(3))),)
        m = _CALLSITE.match(body)
        if m:
            parts = split_top(m.group(1), " at ")
            if len(parts) == 2:
                return self.resolve(parts[0]) + self.resolve(parts[1])
            return ()
        m = _NAMED.match(body)
        if m:
            return self.resolve(m.group(2))
        m = _FUSED.match(body)
        if m:
            for part in split_top(m.group(1), ","):
                stack = self.resolve(part)
                if stack:
                    return stack
        return ()


def portable_stack(raw: tuple[tuple[str, int, int], ...], mapper: PathMapper) -> tuple[Frame, ...]:
    return tuple(Frame(mapper.portable(p), line, col) for p, line, col in raw)


def portable_ttir(ttir_text: str, mapper: PathMapper) -> str:
    """The TTIR text with every quoted file path in a loc made portable (for goldens)."""

    def repl(m: re.Match[str]) -> str:
        return f'loc("{mapper.portable(m.group(1))}":{m.group(2)}'

    return re.sub(r'loc\("((?:[^"\\]|\\.)*)":(\d+)', repl, ttir_text)
