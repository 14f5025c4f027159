"""Enumeration handlers of integer arithmetic, comparisons, selects, casts and shape ops.

Each integer op is evaluated exactly on int64 arrays and wrapped to its width (`values.BINARY_OPS`);
an op in the address slice records its width obligation. Declared-range values (`ranges.RangeV`) go
through interval arithmetic; anything built from loaded data stays opaque.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable

import numpy as np

from tilelens_lsp.engines import ranges
from tilelens_lsp.engines.enumerate import guards
from tilelens_lsp.engines.enumerate.table import HANDLERS, Ctx, choose, handles, mask_and, mask_or, opaque_of
from tilelens_lsp.engines.ranges import PtrSpan, RangeV
from tilelens_lsp.engines.values import (
    BINARY_OPS,
    COMPARISONS,
    IntV,
    Opaque,
    PtrChoice,
    PtrV,
    Value,
    elem_bytes,
    unsigned,
    widens_i1,
    wrap,
)
from tilelens_lsp.ttir.reader import Op, Type

if TYPE_CHECKING:
    from tilelens_lsp.engines.enumerate.graph import AccessGraph


@handles("arith.constant")
def _constant(g: AccessGraph, op: Op, env, ctx) -> list[Value]:
    const = op.int_constant
    if const is None:
        return [Opaque("float", "a floating-point constant", op.loc)]
    if const.elements is not None:
        vals = np.array(const.elements, dtype=np.int64).reshape((1,) + const.shape)
    else:
        vals = np.full((1,) + const.shape, const.value, dtype=np.int64)
    if const.bits == 1:
        return [IntV(vals.astype(bool), 1)]
    return [IntV(wrap(vals, const.bits), const.bits)]


@handles("tt.get_program_id")
def _program_id(g: AccessGraph, op: Op, env, ctx) -> list[Value]:
    return [IntV(g.pid(op.program_axis).copy(), 32)]


@handles("tt.get_num_programs")
def _num_programs(g: AccessGraph, op: Op, env, ctx) -> list[Value]:
    return [IntV(np.full((1,), g.m.grid[op.program_axis], dtype=np.int64), 32)]


@handles("tt.make_range")
def _make_range(g: AccessGraph, op: Op, env, ctx) -> list[Value]:
    start, end = op.range_bounds
    return [IntV(np.arange(start, end, dtype=np.int64)[None], 32)]


def _binary(fn: Callable[[np.ndarray, np.ndarray, int], np.ndarray], checked: bool = False):
    def handler(g: AccessGraph, op: Op, env, ctx) -> list[Value]:
        a, b = (g.get(env, o) for o in op.operands[:2])
        ty = op.result_types[0]
        if isinstance(a, PtrV) or isinstance(b, PtrV):
            return [Opaque("out-of-vocabulary", f"{op.name} on pointers", op.loc)]
        if (isinstance(a, RangeV) or isinstance(b, RangeV)) and all(isinstance(v, (IntV, RangeV)) for v in (a, b)):
            return [_range_binary(g, op, ctx, a, b, ty.bits or max(a.bits, b.bits), checked)]
        if not isinstance(a, IntV) or not isinstance(b, IntV):
            if ty.bits == 1 and op.name in ("arith.andi", "arith.ori") and _is_mask(a) and _is_mask(b):
                return [mask_and(a, b) if op.name == "arith.andi" else mask_or(a, b)]
            return [opaque_of(a, b, op)]
        bits = ty.bits or max(a.bits, b.bits)
        with np.errstate(all="ignore"):
            exact = fn(a.a.astype(np.int64) if a.bits != 1 else a.a, b.a.astype(np.int64) if b.bits != 1 else b.a, bits)
        if bits == 1:
            return [IntV(exact.astype(bool), 1)]
        if checked:
            return [IntV(g.check_width(op, ctx, exact, bits), bits)]
        return [IntV(wrap(exact, bits), bits)]

    return handler


def _range_binary(g: AccessGraph, op: Op, ctx: Ctx, a: Value, b: Value, bits: int, checked: bool) -> Value:
    """Interval arithmetic on a declared-range value; a bound that may wrap is no bound."""
    with np.errstate(all="ignore"):
        r = ranges.binary(op.name, a, b, bits) if bits > 1 else None
    if r is None:
        return Opaque("data", f"{op.name} of a declared-range index{_source(a, b)}", op.loc)
    if checked:  # a declared value at the end of its range overflows: a real TL003, naming that value
        g.check_width(op, ctx, r.lo, bits, None if r.src is None else (r.src[2], r.src[0]))
        g.check_width(op, ctx, r.hi, bits, None if r.src is None else (r.src[2], r.src[1]))
    if not ranges.fits(r, bits):
        return Opaque("data", f"{op.name} of a declared-range index{_source(a, b)} may wrap", op.loc)
    return r


def _source(*vals: Value) -> str:
    for v in vals:
        if isinstance(v, RangeV) and v.src is not None:
            return f" loaded from {v.src[2]}"
    return ""


def _is_mask(v: Value) -> bool:
    # an unknown mask, whatever made it unknown, only means "may be true": a sound over-approximation
    return (isinstance(v, IntV) and v.bits == 1) or isinstance(v, Opaque)


for _name, (_fn, _checked) in BINARY_OPS.items():
    HANDLERS[_name] = _binary(_fn, _checked)


@handles("math.absi")
def _absi(g: AccessGraph, op: Op, env, ctx) -> list[Value]:
    """`tl.abs` of integers (reflection padding folds an index with it): exact, and like the
    hardware's it wraps, so the smallest value stays itself."""
    (a,) = (g.get(env, o) for o in op.operands[:1])
    if isinstance(a, IntV) and a.bits > 1:
        return [IntV(wrap(np.abs(a.a.astype(np.int64)), a.bits), a.bits)]
    if isinstance(a, PtrV):
        return [Opaque("out-of-vocabulary", f"{op.name} on pointers", op.loc)]
    return [opaque_of(a)]


@handles("arith.cmpi")
def _cmpi(g: AccessGraph, op: Op, env, ctx) -> list[Value]:
    pred = op.predicate
    a, b = (g.get(env, o) for o in op.operands[:2])
    if isinstance(a, PtrV) and isinstance(b, PtrV) and a.arg == b.arg:
        return [IntV(COMPARISONS[pred](a.boff, b.boff), 1)]
    if (isinstance(a, RangeV) or isinstance(b, RangeV)) and all(isinstance(v, (IntV, RangeV)) for v in (a, b)):
        # decided where the declared range decides it (`y == ignore_index`, `idx < n`)
        always, never = ranges.compare(pred, a, b)
        if (always | never).all():
            return [IntV(always, 1)]
        return [Opaque("data", "a comparison of a loaded index", op.loc, IntV(~never, 1))]
    if not isinstance(a, IntV) or not isinstance(b, IntV):
        return [opaque_of(a, b, op)]
    x, y = a.a, b.a
    if pred.startswith("u"):
        x, y = unsigned(x, a.bits), unsigned(y, b.bits)
    return [IntV(COMPARISONS[pred](x, y), 1)]


@handles("arith.select")
def _select(g: AccessGraph, op: Op, env, ctx) -> list[Value]:
    c, a, b = (g.get(env, o) for o in op.operands[:3])
    if isinstance(c, IntV) and isinstance(a, IntV) and isinstance(b, IntV):
        return [IntV(np.where(c.a, a.a, b.a), a.bits)]
    if isinstance(c, IntV) and isinstance(a, (IntV, RangeV)) and isinstance(b, (IntV, RangeV)):
        return [ranges.choose(c.a, a, b, a.bits)]
    if isinstance(c, IntV) and isinstance(a, PtrV) and isinstance(b, PtrV) and a.arg == b.arg:
        return [PtrV(a.arg, np.where(c.a, a.boff, b.boff), a.pointee)]
    if isinstance(a, (PtrV, PtrChoice)) and isinstance(b, (PtrV, PtrChoice)):
        if isinstance(c, IntV):
            return [choose(c.a, a, b)]
        if isinstance(c, Opaque) and c.why == "data":
            return [choose(None, a, b)]
    if isinstance(c, Opaque) and c.why == "data":
        if isinstance(a, (IntV, RangeV)) and isinstance(b, (IntV, RangeV)) and a.bits > 1:
            narrowed = guards.select(g, op, env, ctx)  # each side where the condition allows it
            if narrowed is not None:
                return [narrowed]
        return [Opaque("data", "a select on loaded data", op.loc)]
    return [opaque_of(c, a, b)]


def _cast(kind: str):
    def handler(g: AccessGraph, op: Op, env, ctx) -> list[Value]:
        v = g.get(env, op.operands[0])
        ty = op.result_types[0]
        if isinstance(v, RangeV):
            if not ty.is_int or ty.bits < 2 or (kind == "zext" and (v.lo < 0).any()) or not ranges.fits(v, ty.bits):
                return [Opaque("data", f"{op.name} of a loaded index", op.loc)]
            return [RangeV(v.lo, v.hi, ty.bits, v.undef, v.src, v.decl, v.segment)]
        widened = _widened_condition(v, op, ty, kind, ctx.exact)
        if widened is not None:
            return [widened]
        if not isinstance(v, IntV):
            return [v if isinstance(v, Opaque) else Opaque("out-of-vocabulary", f"{op.name} of a pointer", op.loc)]
        if not ty.is_int:
            return [Opaque("float", f"{op.name} to {ty.elem}", op.loc)]
        a = v.a.astype(np.int64)
        if kind == "zext":
            a = unsigned(a, v.bits) if v.bits > 1 else a
        elif v.bits == 1:
            a = -a  # sign-extending an i1 true gives all ones
        if ty.bits == 1:
            return [IntV((a & 1).astype(bool), 1)]
        return [IntV(wrap(a, ty.bits), ty.bits)]

    return handler


def _widened_condition(v: Value, op: Op, ty: Type, kind: str, exact: bool) -> RangeV | None:
    """An unknown i1 widened to an integer (`(ends <= pid).to(tl.int32)`, counted with `tl.sum` to
    find a segment; `(x > 0).to(tl.int32)`, summed with `tl.cumsum` to compact): 0 or 1 (-1 or 0
    sign-extended) whatever it was computed from, and 0 on lanes where a condition on loaded data is
    known not to hold (its `bound`). That bound only where the lanes are exact (`exact`): inside a
    loop run as the hull of its iterations, a count would be bounded by every iteration's lanes at
    once, looser than any one iteration's."""
    if not isinstance(v, Opaque) or not widens_i1(op, ty):
        return None
    bounded = exact and v.why == "data" and isinstance(v.bound, IntV) and v.bound.bits == 1
    # every lane's own bound (never one standing for all: a reduction sums the lanes it is given)
    may = v.bound.a.astype(np.int64) if bounded else np.ones((1, *ty.shape), dtype=np.int64)  # type: ignore[union-attr]
    zero = np.zeros_like(may)
    return RangeV(zero, may, ty.bits) if kind == "zext" else RangeV(-may, zero, ty.bits)


for _name in ("arith.extsi", "arith.trunci", "arith.index_cast"):
    HANDLERS[_name] = _cast("sext")
for _name in ("arith.extui", "arith.index_castui"):
    HANDLERS[_name] = _cast("zext")


@handles("arith.bitcast", "tt.bitcast")
def _bitcast(g: AccessGraph, op: Op, env, ctx) -> list[Value]:
    v = g.get(env, op.operands[0])
    ty = op.result_types[0]
    if isinstance(v, (PtrV, PtrChoice, PtrSpan)) and ty.is_ptr:
        return [v.map(lambda t: t, elem_bytes(ty.pointee))]
    if isinstance(v, IntV) and ty.is_int and ty.bits == v.bits:
        return [v]
    if isinstance(v, Opaque):
        return [v]
    return [Opaque("float", f"{op.name} to {ty.elem}", op.loc)]


def _shape_op(fn: Callable[[np.ndarray, Op, Type], np.ndarray]):
    def handler(g: AccessGraph, op: Op, env, ctx) -> list[Value]:
        v = g.get(env, op.operands[0])
        ty = op.result_types[0]
        if isinstance(v, IntV):
            return [IntV(fn(v.a, op, ty), v.bits)]
        if isinstance(v, (PtrV, PtrChoice, PtrSpan, RangeV)):
            return [v.map(lambda t: fn(t, op, ty))]
        if isinstance(v, Opaque) and v.bound is not None:
            return [Opaque(v.why, v.message, v.loc, IntV(fn(v.bound.a, op, ty), 1))]
        return [v if isinstance(v, Opaque) else Opaque("out-of-vocabulary", f"{op.name} of this value", op.loc)]

    return handler


def _splat(a: np.ndarray, op: Op, ty: Type) -> np.ndarray:
    return np.broadcast_to(a.reshape(a.shape[:1] + (1,) * len(ty.shape)), a.shape[:1] + ty.shape)


def _broadcast(a: np.ndarray, op: Op, ty: Type) -> np.ndarray:
    return np.broadcast_to(a, a.shape[:1] + ty.shape)


def _expand_dims(a: np.ndarray, op: Op, ty: Type) -> np.ndarray:
    return np.expand_dims(a, op.axis + 1)


def _reshape(a: np.ndarray, op: Op, ty: Type) -> np.ndarray:
    return np.ascontiguousarray(a).reshape(a.shape[:1] + ty.shape)


def _trans(a: np.ndarray, op: Op, ty: Type) -> np.ndarray:
    order = list(op.order) if op.order is not None else list(range(a.ndim - 1))[::-1]
    return np.transpose(a, [0] + [o + 1 for o in order])


SHAPE_FNS = {
    "tt.splat": _splat,
    "tt.broadcast": _broadcast,
    "tt.expand_dims": _expand_dims,
    "tt.reshape": _reshape,
    "tt.trans": _trans,
}  # the lane maps of shape ops (guards replay them)

HANDLERS["tt.splat"] = _shape_op(_splat)
HANDLERS["tt.broadcast"] = _shape_op(_broadcast)
HANDLERS["tt.expand_dims"] = _shape_op(_expand_dims)
HANDLERS["tt.reshape"] = _shape_op(_reshape)
HANDLERS["tt.trans"] = _shape_op(_trans)
HANDLERS["tt.assume"] = lambda g, op, env, ctx: []
HANDLERS["tt.assert"] = lambda g, op, env, ctx: []
HANDLERS["tt.print"] = lambda g, op, env, ctx: []
HANDLERS["gpu.barrier"] = lambda g, op, env, ctx: []
HANDLERS["ttg.barrier"] = lambda g, op, env, ctx: []
HANDLERS["ub.poison"] = lambda g, op, env, ctx: [Opaque("float", "poison", op.loc)] * len(op.results)


@handles("tt.join")
def _join(g: AccessGraph, op: Op, env, ctx) -> list[Value]:
    a, b = (g.get(env, o) for o in op.operands[:2])
    if isinstance(a, IntV) and isinstance(b, IntV):
        ty = op.result_types[0]
        full = (g.P if a.a.shape[0] == g.P or b.a.shape[0] == g.P else 1,) + ty.shape[:-1]
        return [IntV(np.stack([np.broadcast_to(a.a, full), np.broadcast_to(b.a, full)], axis=-1), a.bits)]
    if isinstance(a, PtrV) and isinstance(b, PtrV) and a.arg == b.arg:
        ty = op.result_types[0]
        full = (g.P if a.boff.shape[0] == g.P or b.boff.shape[0] == g.P else 1,) + ty.shape[:-1]
        return [PtrV(a.arg, np.stack([np.broadcast_to(a.boff, full), np.broadcast_to(b.boff, full)], axis=-1), a.pointee)]
    return [opaque_of(a, b)]


@handles("tt.split")
def _split(g: AccessGraph, op: Op, env, ctx) -> list[Value]:
    v = g.get(env, op.operands[0])
    if isinstance(v, IntV):
        return [IntV(v.a[..., 0], v.bits), IntV(v.a[..., 1], v.bits)]
    if isinstance(v, PtrV):
        return [PtrV(v.arg, v.boff[..., 0], v.pointee), PtrV(v.arg, v.boff[..., 1], v.pointee)]
    return [v, v]
