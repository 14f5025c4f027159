"""The client interface and the per-launch analysis every client reads."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from tilelens_lsp.engines.values import ArgInfo, Obligation, SiteResult
from tilelens_lsp.model import Access, Diagnostic, Frame, TensorSpec


@dataclass
class LaunchAnalysis:
    """One launch's evaluated access graph, with what clients need to speak in source terms."""

    sites: list[SiteResult]
    obligations: list[Obligation]
    args: dict[str, ArgInfo]
    views: dict[str, TensorSpec]
    stack_of: Callable[[str, tuple[str, ...]], tuple[Frame, ...]]  # (loc, call stack) → frames
    grid: tuple[int, int, int] = (1, 1, 1)
    locked: bool = False  # the kernel takes a lock (atomic_cas): programs are ordered by it

    def program(self, index: int) -> tuple[int, int, int]:
        """The program id (x, y, z) of a linear program index."""
        gx, gy, _ = self.grid
        return (index % gx, (index // gx) % gy, index // (gx * gy))


@dataclass
class ClientOutput:
    accesses: list[Access] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # what a client could not decide, for the hover


class IRClient:
    name: str = ""

    def run(self, analysis: LaunchAnalysis) -> ClientOutput:
        raise NotImplementedError


def frame_fields(stack: tuple[Frame, ...]) -> dict[str, Any]:
    """Line, column and path of the innermost frame (1-based), or line 1 when unknown."""
    if not stack:
        return {"line": 1, "column": 1, "path": ""}
    return {"line": stack[0].line, "column": stack[0].column, "path": stack[0].path}
