"""The enumeration's handler table and the helpers its handler modules share.

Each handler module (`arith`, `memory`, `control`) registers its ops here with `@handles`; the
evaluator (`graph.AccessGraph`) looks every op up in `HANDLERS`. The helpers combine values the way
several handlers need: masks with unknown parts, per-program blends, pointer choices.
"""

from __future__ import annotations

from collections.abc import MutableMapping
from typing import TYPE_CHECKING, Callable

import numpy as np

from tilelens_lsp.engines import ranges
from tilelens_lsp.engines.ranges import PtrSpan, RangeV
from tilelens_lsp.engines.values import IntV, Opaque, PtrChoice, PtrV, Value
from tilelens_lsp.ttir.reader import Op

if TYPE_CHECKING:
    from tilelens_lsp.engines.enumerate.graph import AccessGraph


class Ctx:
    """Where code runs: for which programs, in which loop iterations, exactly or not, under which calls."""

    def __init__(self, pred: np.ndarray, iters: tuple[int, ...], exact: bool, stack: tuple[str, ...]):
        self.pred = pred  # (P,) bool: programs for which this code runs
        self.iters = iters
        self.exact = exact
        self.stack = stack  # call-site locs, innermost last


# a handler's environment: the graph's dict, or a ChainMap of narrowed values over it (guards.py)
HANDLERS: dict[str, Callable[[AccessGraph, Op, MutableMapping[str, Value], Ctx], list[Value]]] = {}


def handles(*names: str):
    def deco(fn):
        for n in names:
            HANDLERS[n] = fn
        return fn

    return deco


def mask_and(a: Value, b: Value) -> Value:
    """Conjunction of masks; with an unknown side, the known side still bounds the result."""
    if isinstance(a, IntV) and isinstance(b, IntV):
        return IntV(a.a & b.a, 1)
    unknown = a if isinstance(a, Opaque) else b
    bounds = [v for v in (a, b) if isinstance(v, IntV)]
    bounds += [v.bound for v in (a, b) if isinstance(v, Opaque) and v.bound is not None]
    bound = None
    for v in bounds:
        bound = v if bound is None else IntV(bound.a & v.a, 1)
    return Opaque(unknown.why, unknown.message, unknown.loc, bound)


def mask_or(a: Value, b: Value) -> Value:
    """Disjunction of masks, one side unknown: bounded where both sides are."""
    unknown = a if isinstance(a, Opaque) else b
    ba = a if isinstance(a, IntV) else a.bound
    bb = b if isinstance(b, IntV) else b.bound
    bound = IntV(ba.a | bb.a, 1) if ba is not None and bb is not None else None
    return Opaque(unknown.why, unknown.message, unknown.loc, bound)


def opaque_of(*values: Value) -> Opaque:
    """The unknown result of an op on unknown operands, named by the first of them that is data.

    An operand's `bound` (the lanes where that mask may be true) says nothing of a value computed from
    it: a sum, a reduction or a negated comparison has other lanes and another shape. It is dropped
    (no bound: any lane), which is sound; only shape ops and mask and/or (`mask_and`, `mask_or`) carry
    a bound over."""
    for v in values:
        if isinstance(v, Opaque) and v.why == "data":
            return _unbounded(v)
        if isinstance(v, (RangeV, PtrSpan)):
            name = f" loaded from {v.src[2]}" if v.src is not None else ""
            return Opaque("data", f"a value computed from a declared-range index{name}")
    for v in values:
        if isinstance(v, Opaque):
            return _unbounded(v)
    return Opaque("out-of-vocabulary", "an unmodelled operand")


def _unbounded(v: Opaque) -> Opaque:
    return v if v.bound is None else Opaque(v.why, v.message, v.loc)


def blend(cond: np.ndarray, new: Value, old: Value, op: Op) -> Value:
    """Per-program select between a loop's (or branch's) new and old value."""
    if cond.all() and type(new) is type(old) and not isinstance(new, Opaque):
        if not isinstance(new, PtrV) or new.arg == old.arg:
            return new
    if isinstance(new, IntV) and isinstance(old, IntV):
        c = cond.reshape(cond.shape + (1,) * (max(new.a.ndim, old.a.ndim) - 1))
        return IntV(np.where(c, new.a, old.a), new.bits)
    if isinstance(new, (IntV, RangeV)) and isinstance(old, (IntV, RangeV)):
        nd = max(ranges.bounds(new)[0].ndim, ranges.bounds(old)[0].ndim)
        return ranges.choose(cond.reshape(cond.shape + (1,) * (nd - 1)), new, old, new.bits)
    if (
        isinstance(new, (PtrV, PtrChoice))
        and isinstance(old, (PtrV, PtrChoice))
        and not (isinstance(new, PtrV) and isinstance(old, PtrV) and new.arg == old.arg)
    ):
        return choose(cond, new, old)
    if (
        isinstance(new, (PtrV, PtrSpan))
        and isinstance(old, (PtrV, PtrSpan))
        and new.arg == old.arg
        and (isinstance(new, PtrSpan) or isinstance(old, PtrSpan))
    ):
        nlo, nhi = (new.boff, new.boff) if isinstance(new, PtrV) else (new.lo, new.hi)
        olo, ohi = (old.boff, old.boff) if isinstance(old, PtrV) else (old.lo, old.hi)
        c = cond.reshape(cond.shape + (1,) * (max(nlo.ndim, olo.ndim) - 1))
        nu, ou = getattr(new, "undef", None), getattr(old, "undef", None)
        undef = None if nu is None and ou is None else np.where(c, False if nu is None else nu, False if ou is None else ou)
        return PtrSpan(
            new.arg,
            np.where(c, nlo, olo),
            np.where(c, nhi, ohi),
            new.pointee,
            undef,
            segment=getattr(new, "segment", False) or getattr(old, "segment", False),
        )
    if isinstance(new, PtrV) and isinstance(old, PtrV):
        c = cond.reshape(cond.shape + (1,) * (max(new.boff.ndim, old.boff.ndim) - 1))
        return PtrV(new.arg, np.where(c, new.boff, old.boff), new.pointee)
    if isinstance(new, Opaque):
        return new
    if isinstance(old, Opaque):
        return old
    return Opaque("out-of-vocabulary", "a loop-carried value of changing kind", op.loc)


def choose(cond: np.ndarray | None, a: "PtrV | PtrChoice", b: "PtrV | PtrChoice") -> PtrChoice:
    """`cond ? a : b` between pointers of different arguments: both stay candidates, each with the
    programs/lanes that pick it (`cond` is (P or 1, *lanes) or (P,); None: loaded data decides)."""
    out: list[tuple[PtrV, np.ndarray | None]] = []
    for side, pick in ((a, True), (b, False)):
        for cand, when in side.options if isinstance(side, PtrChoice) else ((side, None),):
            if cond is None or (when is None and isinstance(side, PtrChoice)):
                out.append((cand, None))  # chosen by loaded data: it may be any lane's
                continue
            ndim = len(cand.shape())
            c = cond.astype(bool).reshape(cond.shape + (1,) * (ndim - cond.ndim))
            c = c if pick else ~c
            out.append((cand, c if when is None else when & c))
    return PtrChoice(tuple(out))


def either(a: Value, b: Value, op: Op) -> Value:
    """A value that is `a` or `b` (two paths joined where loaded data chose): integers as their hull,
    pointers into one argument as the hull of their addresses; anything else is loaded data."""
    if a is b:
        return a
    if isinstance(a, IntV) and isinstance(b, IntV) and a.bits > 1:
        if a.a.shape == b.a.shape and np.array_equal(a.a, b.a):
            return a
        return ranges.hull(a, b, a.bits)
    if isinstance(a, (IntV, RangeV)) and isinstance(b, (IntV, RangeV)) and a.bits > 1:
        return ranges.hull(a, b, a.bits)
    if isinstance(a, IntV) and isinstance(b, IntV):  # masks: true where either may be
        return Opaque("data", "a mask chosen by loaded data", op.loc, IntV(a.a | b.a, 1))
    if isinstance(a, (PtrV, PtrSpan)) and isinstance(b, (PtrV, PtrSpan)) and a.arg == b.arg and a.pointee == b.pointee:
        if (
            isinstance(a, PtrV)
            and isinstance(b, PtrV)
            and len(a.terms) == len(b.terms)
            and all(x is y for x, y in zip(a.terms, b.terms))
        ):
            return a
        alo, ahi = (a.boff, a.boff) if isinstance(a, PtrV) else (a.lo, a.hi)
        blo, bhi = (b.boff, b.boff) if isinstance(b, PtrV) else (b.lo, b.hi)
        undef = ranges.join_undef(getattr(a, "undef", None), getattr(b, "undef", None))
        return PtrSpan(
            a.arg,
            np.minimum(alo, blo),
            np.maximum(ahi, bhi),
            a.pointee,
            undef,
            segment=getattr(a, "segment", False) or getattr(b, "segment", False),
        )
    if isinstance(a, Opaque):
        return a
    if isinstance(b, Opaque):
        return b
    return Opaque("data", "a value chosen by loaded data", op.loc)


def blend_may(must: np.ndarray, may: np.ndarray, new: Value, old: Value, op: Op) -> Value:
    """Per program: `new` where the iteration surely ran, `old` where it did not, either where loaded
    data decides (a trip count in a declared range)."""
    if (must == may).all():
        return blend(must, new, old, op)
    return blend(must, new, blend(may, either(new, old, op), old, op), op)
