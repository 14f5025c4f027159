"""Refusals: what the model cannot express, named by a stable kind.

A refusal is a value that stages return or raise inside one launch's analysis; the pipeline turns it
into a TL030 diagnostic at its line. It never becomes silence or a false "clean".
"""

from __future__ import annotations


class Refusal(Exception):
    """Refusal(kind, message, loc): raised within a launch's analysis, caught at its edge. The kinds are
    the stable names docs/diagnostics.md lists under TL030 (`indirect-address`, `unvisited`, ...)."""

    def __init__(self, kind: str, message: str, loc: str = "") -> None:
        super().__init__(f"{kind}: {message}")
        self.kind = kind
        self.message = message
        self.loc = loc

