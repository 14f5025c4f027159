"""Paths as `tilelens-lsp check` prints them: ones a user can open, and commands that work when pasted.

The worker's results name files by portable path (workspace-relative, `triton/...`, or an installed
package's importable path). Here a workspace file becomes a path relative to the working folder, an
installed one keeps its importable path (`liger_kernel/ops/cross_entropy.py`, never a bare basename)
and the JSON also gets its absolute path. Nothing here starts a worker or prints.
"""

from __future__ import annotations

import os
import shlex
from dataclasses import dataclass, replace
from pathlib import Path

from tilelens_lsp.model import Diagnostic, FileResult, Frame, LaunchResult


def installed(path: Path) -> bool:
    """A file of an installed distribution (under site-packages or dist-packages)."""
    return any(part in ("site-packages", "dist-packages") for part in Path(path).parts)


@dataclass(frozen=True)
class Display:
    """How one run prints paths: `root` is the workspace the worker made paths portable against."""

    root: Path
    cwd: Path
    flags: tuple[str, ...] = ()  # the check's options a pasted `suggest` needs too (--python P, --target T)

    def suggest_command(self, pasteable: str) -> str:
        """`tilelens-lsp suggest` for a file, with the flags the check ran with, so that pasted it runs
        in the interpreter that imported the file."""
        return " ".join(["tilelens-lsp suggest", *map(shlex.quote, self.flags), pasteable])

    def absolute(self, portable: str, result: FileResult) -> Path | None:
        if not portable:
            return None
        if os.path.isabs(portable):
            return Path(portable)
        if portable in result.absolute_paths:
            return Path(result.absolute_paths[portable])
        candidate = self.root / portable
        return candidate if candidate.exists() else None

    def shown(self, portable: str, result: FileResult) -> str:
        """A workspace file relative to the working folder (`../k.py` when above it); an installed
        file by its importable path; what cannot be found, as the worker named it."""
        where = self.absolute(portable, result)
        if where is None or (portable in result.absolute_paths and not os.path.isabs(portable)):
            return portable
        return self.relative(where)

    def relative(self, where: Path) -> str:
        """`where` relative to the working folder when it lies in it or in the workspace, else absolute."""
        where = Path(os.path.abspath(where))
        inside = [p for p in (self.cwd, self.root) if where == p or p in where.parents]
        if not inside:
            return where.as_posix()
        return Path(os.path.relpath(where, self.cwd)).as_posix()

    def pasteable(self, portable: str, result: FileResult) -> str:
        """A path for a printed command: relative for workspace files, absolute for installed ones."""
        where = self.absolute(portable, result)
        if where is None:
            return shlex.quote(portable)
        shown = self.relative(where) if not installed(where) else where.as_posix()
        return shlex.quote(shown)


def rebase(result: FileResult, display: Display) -> FileResult:
    """`result` with every path as `display` prints it (and the messages that name a path or a command)."""

    def path(p: str) -> str:
        return display.shown(p, result) if p else p

    def frame(f: Frame) -> Frame:
        return replace(f, path=path(f.path))

    def diag(d: Diagnostic) -> Diagnostic:
        message = d.message
        for f in d.stack[:1]:
            old = f"{f.path}:{f.line}:"
            if message.startswith(old):  # a toml table's diagnostic names where it is
                message = f"{path(f.path)}:{f.line}:" + message[len(old) :]
        old_cmd = f"tilelens-lsp suggest {result.path}`"
        if old_cmd in message:
            message = message.replace(old_cmd, display.suggest_command(display.pasteable(result.path, result)) + "`")
        return replace(d, message=message, stack=tuple(frame(f) for f in d.stack))

    def launch(r: LaunchResult) -> LaunchResult:
        return replace(
            r,
            diagnostics=tuple(diag(d) for d in r.diagnostics),
            accesses=tuple(replace(a, path=path(a.path)) for a in r.accesses),
            origin=frame(r.origin) if r.origin is not None else None,
        )

    return FileResult(
        path(result.path),
        tuple(launch(r) for r in result.launches),
        tuple(diag(d) for d in result.diagnostics),
        {path(k): v for k, v in result.absolute_paths.items()},
    )
