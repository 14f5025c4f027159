"""Closed forms of loop inductions, so that a loop over a wide range of trip counts runs once for all.

An induction is a loop-carried value that its loop advances by the same loop-invariant amount on every
iteration (`j += 1`, `p += BLOCK`, the `i += 1` of `while i < n`): at iteration t it is
`start + step * t`, so its hull over every iteration in [first, last] is one interval, computed in one
step. This module finds such values in the TTIR (the value the body yields is `arith.addi` or
`arith.subi` of the carried value and a value defined outside the loop, or `tt.addptr` of the carried
pointer and such a value, at the body's top level; a step the body computes from values defined outside
it, `K * H` and its splat, counts as defined outside) and builds those hulls; for a while loop it also
reads the limit its condition (`i < n`, `i <= n`, `n > i`, ...) puts on the induction.

It does not decide whether a loop may be summed up this way (the loop handlers in `control` do), and
it does not recognise steps computed inside the loop, updates under a branch, or unsigned conditions.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tilelens_lsp.engines import ranges
from tilelens_lsp.engines.ranges import PtrSpan, RangeV
from tilelens_lsp.engines.values import IntV, PtrV, Value
from tilelens_lsp.ttir.reader import Block, Op


@dataclass(frozen=True)
class Induction:
    """The carried value advances by `sign * step` per iteration; `step` is an SSA name defined outside
    the loop."""

    step: str
    sign: int


def defined_inside(blocks: list[Block]) -> set[str]:
    """Every SSA name the blocks (and the regions nested in them) define, their arguments included."""
    names: set[str] = set()
    stack = list(blocks)
    while stack:
        block = stack.pop()
        names.update(block.args)
        for op in block.ops:
            names.update(op.results)
            for region in op.regions:
                stack.extend(region.blocks)
    return names


_PURE = (
    "tt.splat",
    "tt.broadcast",
    "tt.expand_dims",
    "tt.reshape",
    "tt.make_range",
    "tt.get_program_id",
    "tt.get_num_programs",
)


def invariant_ops(block: Block, inside: set[str]) -> list[Op]:
    """The ops at `block`'s top level, in order, that compute the same value on every iteration: pure
    integer arithmetic and shape ops (a step `K * H` the compiler left in the loop, its splat) whose
    operands are defined outside the loop or by such ops. `inside`: the names the loop defines."""
    out: list[Op] = []
    names: set[str] = set()
    for op in block.ops:
        pure = (op.name.startswith("arith.") or op.name in _PURE) and not op.regions
        if pure and all(o not in inside or o in names for o in op.operands):
            out.append(op)
            names.update(op.results)
    return out


def find(block: Block, arg: str, yielded: str, inside: set[str]) -> Induction | None:
    """The induction by which `block` turns its argument `arg` into the value `yielded`, if it is one.
    `inside`: the names whose values may change from one iteration to the next (the loop's own names,
    less those of `invariant_ops`)."""
    op = next((o for o in block.ops if yielded in o.results), None)
    if op is None or len(op.operands) < 2:
        return None
    a, b = op.operands[:2]
    step, sign = None, 1
    if op.name in ("arith.addi", "tt.addptr") and a == arg:
        step = b
    elif op.name == "arith.addi" and b == arg:
        step = a
    elif op.name == "arith.subi" and a == arg:
        step, sign = b, -1
    if step is None or step in inside:
        return None
    return Induction(step, sign)


def step_bounds(step: Value, sign: int) -> tuple[np.ndarray, np.ndarray] | None:
    """(lowest, highest) amount added per iteration: a known integer, or a loaded one in its declared
    range (`i += tl.load(stride_ptr)` before the loop), times `sign`. None for anything else."""
    if isinstance(step, IntV) and step.bits > 1:
        lo = hi = step.a.astype(np.int64)
    elif isinstance(step, RangeV) and step.undef is None:
        lo, hi = step.lo.astype(np.int64), step.hi.astype(np.int64)
    else:
        return None
    return (lo, hi) if sign > 0 else (-hi, -lo)


def hull(start: Value, step: Value, sign: int, first: np.ndarray, last: np.ndarray) -> Value | None:
    """`start + sign * step * t` over every t in [first, last] ((P,) arrays, 0 <= first <= last), per
    program and lane: an interval (a `RangeV`, or a `PtrSpan` for a pointer). None when the step is not
    a known or ranged integer, the start is not a value this sums up, or an integer hull leaves its
    width (the loop is then followed iteration by iteration, which checks the wraparound exactly)."""
    steps = step_bounds(step, sign)
    if steps is None or _undefined(start):
        return None
    if isinstance(start, (IntV, RangeV)):
        lo, hi = ranges.bounds(start)
    elif isinstance(start, PtrV):
        lo = hi = start.boff
    elif isinstance(start, PtrSpan):
        lo, hi = start.lo, start.hi
    else:
        return None
    nd = max(np.ndim(lo), steps[0].ndim, 1)
    f = first.astype(np.int64).reshape(first.shape + (1,) * (nd - 1))
    t = last.astype(np.int64).reshape(last.shape + (1,) * (nd - 1))
    corners = [s * n for s in steps for n in (f, t)]  # the extremes of s * n lie at the corners
    dlo, dhi = np.minimum.reduce(np.broadcast_arrays(*corners)), np.maximum.reduce(np.broadcast_arrays(*corners))
    if isinstance(start, (IntV, RangeV)):
        out = RangeV(lo + dlo, hi + dhi, start.bits)
        return out if ranges.fits(out, start.bits) else None
    pointee = start.pointee
    return PtrSpan(start.arg, lo + dlo * pointee, hi + dhi * pointee, pointee)


def while_limit(before: Block, name: str, rising: bool, env) -> IntV | None:
    """The bound a while loop's condition puts on its induction `name` wherever the do-region runs:
    `i < n` and `i <= n` bound a rising `i` from above (by the highest n, less one for `<`), `i > n`
    and `i >= n` a falling one from below (either operand order). None when the condition is not such
    a comparison with a value defined outside the loop."""
    term = before.ops[-1] if before.ops else None
    if term is None or term.name != "scf.condition" or not term.operands:
        return None
    cmp = next((o for o in before.ops if term.operands[0] in o.results), None)
    if cmp is None or cmp.name != "arith.cmpi" or len(cmp.operands) < 2:
        return None
    pred, (x, y) = cmp.predicate, cmp.operands[:2]
    if y == name:
        pred, (x, y) = ranges.FLIP[pred], (y, x)
    if x != name or y not in env:
        return None
    other = env[y]
    if not isinstance(other, (IntV, RangeV)) or other.bits == 1 or _undefined(other):
        return None
    lo, hi = ranges.bounds(other)
    if rising and pred in ("slt", "sle"):
        return IntV(hi.astype(np.int64) - (pred == "slt"), other.bits)
    if not rising and pred in ("sgt", "sge"):
        return IntV(lo.astype(np.int64) + (pred == "sgt"), other.bits)
    return None


def while_hull(current: Value, steps: tuple[np.ndarray, np.ndarray], limit: IntV) -> RangeV | None:
    """Every value a while loop's induction takes at the loop's head, from its value `current` on:
    advancing by an amount in `steps` (`step_bounds`, all of one sign) while the condition holds, it
    never passes the condition's `limit` (`while_limit`) by more than one step. None where that leaves
    its width."""
    if not isinstance(current, (IntV, RangeV)) or current.bits == 1 or _undefined(current):
        return None
    lo, hi = ranges.bounds(current)
    b = limit.a.reshape(limit.a.shape + (1,) * max(0, np.ndim(lo) - limit.a.ndim))
    if (steps[0] > 0).all():
        lo, hi = np.broadcast_arrays(lo, np.maximum(hi, b + steps[1]))
    elif (steps[1] < 0).all():
        lo, hi = np.broadcast_arrays(np.minimum(lo, b + steps[0]), hi)
    else:
        return None
    out = RangeV(np.array(lo), np.array(hi), current.bits)
    return out if ranges.fits(out, current.bits) else None


def while_trips(current: Value, steps: tuple[np.ndarray, np.ndarray], limit: IntV) -> np.ndarray | None:
    """The most times a while loop's do-region can still run, per program ((P or 1,)): its induction,
    at `current` now, moves by at least the smallest step each time, and the do-region runs only while
    it is within the condition's `limit` (`while_limit`). None where the steps have no one sign."""
    if not isinstance(current, (IntV, RangeV)) or current.bits == 1 or _undefined(current):
        return None
    lo, hi = ranges.bounds(current)
    b = limit.a.astype(np.int64).reshape(limit.a.shape + (1,) * max(0, np.ndim(lo) - limit.a.ndim))
    if (steps[0] > 0).all():
        gap, per = b - lo, steps[0]
    elif (steps[1] < 0).all():
        gap, per = hi - b, -steps[1]
    else:
        return None
    gap, per = np.broadcast_arrays(gap, per)
    runs = np.where(gap >= 0, gap // per + 1, 0)
    return runs.reshape(runs.shape[0], -1).max(axis=1)


def _undefined(v: Value) -> bool:
    """Whether some lane of `v` was loaded by a masked-off lane without `other`: its value is any."""
    undef = getattr(v, "undef", None)
    return undef is not None and bool(np.any(undef))
