"""Refusals: what the model cannot express, named by a stable kind (DESIGN §3).

A refusal is a value that stages return or raise inside one launch's analysis; the pipeline turns it
into a TL030 diagnostic at its line. It never becomes silence or a false "clean".
"""

from __future__ import annotations

KINDS = (
    "indirect-address",       # an address depends on loaded data
    "data-dependent-bound",   # a loop bound or branch condition depends on loaded data
    "control-flow",           # while loops and other control flow the model does not follow
    "call",                   # a call the model cannot follow
    "inline-asm",             # inline assembly feeding an address or mask
    "out-of-vocabulary",      # an op the model does not know feeds an address or mask
    "reader-misalignment",    # the text reader and the MLIR bindings disagree
    "launch-too-large",       # enumeration would exceed the budget
    "pointer-provenance",     # a pointer that may come from more than one argument
    "tensor-descriptor",      # a tensor-descriptor (TMA) load or store, on a target whose TTIR keeps them
)


class Refusal(Exception):
    """UnsupportedTTIR(kind, message, loc): raised within a launch's analysis, caught at its edge."""

    def __init__(self, kind: str, message: str, loc: str = "") -> None:
        super().__init__(f"{kind}: {message}")
        self.kind = kind
        self.message = message
        self.loc = loc


UnsupportedTTIR = Refusal
