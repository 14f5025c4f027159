"""Refusals: what the model cannot express, named by a stable kind.

A refusal is a value that stages return or raise inside one launch's analysis; the pipeline turns it
into a TL030 diagnostic at its line. It never becomes silence or a false "clean".
"""

from __future__ import annotations


class Refusal(Exception):
    """Refusal(kind, message, loc): raised within a launch's analysis, caught at its edge. The kinds are
    the stable names docs/diagnostics.md lists under TL030 (`indirect-address`, `unvisited`, ...).
    `keeps_findings`: what the analysis found before it stopped here was evaluated concretely and
    stays reported beside the refusal (a budget spent, a while loop that never ends)."""

    def __init__(self, kind: str, message: str, loc: str = "", keeps_findings: bool = False) -> None:
        super().__init__(f"{kind}: {message}")
        self.kind = kind
        self.message = message
        self.loc = loc
        self.keeps_findings = keeps_findings or kind == "launch-too-large"


def fix_for(kind: str, message: str, unranged: list[tuple[str, str, tuple[int, ...]]]) -> str:
    """What a user can do about a refusal of `kind`, as a sentence: the declaration that would decide
    it, or the setting that would let it finish, or (for what the model does not follow) that no
    declaration does. `unranged`: (parameter, dtype, shape) of the launch's integer tensors that declare
    no value range: the ones whose loaded values an indirect address or a data-dependent bound may use.
    Empty when the message already says what to do."""
    if kind in ("indirect-address", "data-dependent-bound"):
        if "without `other`" in message:
            return ""  # the index tensor has a range; the message names the missing `other=`
        if not unranged:  # every integer tensor declares its range: declaring cannot decide it
            return (
                "No declaration decides this: the launch's integer tensors all declare value ranges "
                "and the model does not follow this use of loaded values"
            )
        forms = [f"`{name}={dtype}[{', '.join(map(str, shape))}].values(LO, HI)`" for name, dtype, shape in unranged]
        which = "the integer tensor it loads" if len(forms) == 1 else "the integer tensor it loads, one of"
        return f"Fix: declare the value range of {which} in the launch: {' or '.join(forms)} (every element in [LO, HI))"
    if kind == "launch-too-large":
        if "budget" in message:
            return (
                "Fix: declare a smaller launch (fewer programs or smaller sizes), or raise the budget: "
                "TILELENS_ENUMERATION_BUDGET=N for the CLI, the enumerationBudget setting in the editor"
            )
        return "Fix: declare a launch with fewer programs (a smaller grid) to check it"
    if kind in ("control-flow", "call", "inline-asm", "out-of-vocabulary", "pointer-provenance", "unvisited"):
        return (
            "No declaration decides this: the model does not follow it; the rest of the launch was "
            "examined as far as it could be (`# tilelens: ignore[TL030]` on this line accepts it)"
        )
    if kind == "non-terminating":
        return (
            "This is a bug of the kernel for this launch: on a GPU the loop never ends; check its step "
            "(a step of 0) and its bound (a counter that wraps int32 and cycles below it)"
        )
    if kind == "wrapped-loop":
        return (
            "This is a bug of the kernel for this launch: on a GPU the loop runs on with wrapped int32 "
            "values; compute its counter in 64 bits (`.to(tl.int64)`) or check its step and bound"
        )
    if kind == "reader-misalignment":
        return "No declaration decides this: it is a tilelens bug on this Triton version; please report it"
    return ""
