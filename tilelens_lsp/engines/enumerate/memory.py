"""Enumeration handlers of pointer arithmetic and memory ops: addresses are built here, recorded by `recording`.

A load of an argument with a declared value range yields a `ranges.RangeV` (what an index may be);
every other load or atomic yields opaque data.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from tilelens_lsp.engines import ranges
from tilelens_lsp.engines.enumerate import guards, lanevalues, relational
from tilelens_lsp.engines.enumerate.table import handles
from tilelens_lsp.engines.ranges import PtrSpan, RangeV
from tilelens_lsp.engines.values import IntV, Opaque, PtrChoice, PtrV, Value
from tilelens_lsp.ttir.reader import Op

if TYPE_CHECKING:
    from tilelens_lsp.engines.enumerate.graph import AccessGraph


@handles("tt.addptr")
def _addptr(g: AccessGraph, op: Op, env, ctx) -> list[Value]:
    p, off = (g.get(env, o) for o in op.operands[:2])
    if isinstance(p, Opaque):
        return [p]
    if isinstance(off, RangeV) and isinstance(p, (PtrV, PtrSpan)):
        # an address from a declared-range index: per lane, the hull of what it may touch
        lo, hi = off.lo * p.pointee, off.hi * p.pointee
        if isinstance(p, PtrV):
            return [PtrSpan(p.arg, p.boff + lo, p.boff + hi, p.pointee, off.undef, off.src, off.segment)]
        return [p.plus(lo, hi, off.undef, keep_src=False, segment=off.segment)]
    if isinstance(p, PtrSpan) and isinstance(off, IntV):
        shift = off.a.astype(np.int64, copy=False) * p.pointee
        return [p.plus(shift, shift)]
    if not isinstance(p, (PtrV, PtrChoice)):
        if isinstance(p, PtrSpan):
            return [Opaque("data", "an address computed from loaded data", op.loc)]
        return [Opaque("out-of-vocabulary", "pointer arithmetic on a value the model does not follow", op.loc)]
    if isinstance(off, Opaque):
        why = "data" if off.why == "data" else off.why
        if why == "data":
            return [Opaque(why, f"an offset computed from {off.message or 'loaded data'}", op.loc)]
        return [Opaque(why, off.message, op.loc)]
    if not isinstance(off, IntV):
        return [Opaque("out-of-vocabulary", "a pointer offset the model does not follow", op.loc)]
    if isinstance(p, PtrChoice):
        return [PtrChoice(tuple((c.plus(off.a.astype(np.int64, copy=False) * c.pointee), w) for c, w in p.options))]
    return [p.plus(off.a.astype(np.int64, copy=False) * p.pointee)]


@handles("tt.int_to_ptr", "tt.ptr_to_int")
def _int_ptr(g: AccessGraph, op: Op, env, ctx) -> list[Value]:
    return [Opaque("pointer-provenance", f"{op.name} loses the pointer's provenance", op.loc)]


def _guarded(g: AccessGraph, op: Op, env, ctx, mask_at: int) -> tuple[Value, Value]:
    """The access's pointer and mask, the pointer narrowed by what its mask says about loaded indices."""
    ptr = g.get(env, op.operands[0])
    mask = g.get(env, op.operands[mask_at]) if len(op.operands) > mask_at else None
    if (
        isinstance(mask, Opaque)
        and mask.why == "data"
        and (isinstance(ptr, PtrSpan) or isinstance(ptr, Opaque) and ptr.why == "data")
    ):
        ptr, mask = guards.access(g, op, op.operands[0], op.operands[mask_at], ptr, mask, env, ctx)
    if isinstance(ptr, PtrSpan) and (mask is not None or g.ranged_trips):
        mask_name = op.operands[mask_at] if mask is not None else None
        ptr, mask = relational.tighten(g, op, op.operands[0], mask_name, ptr, mask, env, ctx)
    return ptr, mask


@handles("tt.load")
def _load(g: AccessGraph, op: Op, env, ctx) -> list[Value]:
    ptr, mask = _guarded(g, op, env, ctx, 1)
    g.record(op, "load", ptr, mask, ctx)
    ty = op.result_types[0] if op.result_types else None
    info = g.m.args.get(getattr(ptr, "arg", ""))
    if (
        info is not None
        and info.values
        and ty is not None
        and ty.is_int
        and ty.bits > 1
        and isinstance(ptr, (PtrV, PtrSpan))
        and (mask is None or isinstance(mask, IntV))
    ):
        other = g.get(env, op.operands[2]) if len(op.operands) > 2 else None
        if other is None or isinstance(other, IntV):
            shape = np.broadcast_shapes(
                ptr.shape() if isinstance(ptr, PtrV) else ptr.lo.shape, *([mask.a.shape] if mask is not None else [])
            )
            return [
                ranges.loaded(
                    info.values,
                    shape,
                    ty.bits,
                    info.name,
                    None if mask is None else mask.a,
                    None if other is None else other.a,
                )
            ]
    if info is not None and info.values and ty is not None and ty.is_int and ty.bits > 1:
        hulled = _masked_by_data(g, op, env, ptr, mask, info.values, ty.bits)
        if hulled is not None:
            return [hulled]
    if info is not None:
        return [Opaque("data", f"data loaded from {info.name}", op.loc)]
    return [Opaque("data", "loaded data", op.loc)]


def _masked_by_data(g: AccessGraph, op: Op, env, ptr: Value, mask: Value, values, bits: int) -> RangeV | None:
    """A load of a tensor with declared values under a mask that loaded data decides (`offs_b <
    num_blocks` with the block count loaded): each lane holds a declared value or `other`, so their
    hull; None without a known `other` (a masked-off lane's value is then undefined)."""
    if not (isinstance(mask, Opaque) and mask.why == "data" and isinstance(ptr, (PtrV, PtrSpan))):
        return None
    other = g.get(env, op.operands[2]) if len(op.operands) > 2 else None
    if not isinstance(other, IntV):
        return None
    shape = np.broadcast_shapes(ptr.shape() if isinstance(ptr, PtrV) else ptr.lo.shape, other.a.shape)
    declared = ranges.loaded(values, shape, bits, "", None, None)
    return ranges.hull(declared, other, bits)


@handles("tt.store")
def _store(g: AccessGraph, op: Op, env, ctx) -> list[Value]:
    ptr, mask = _guarded(g, op, env, ctx, 2)
    g.record(op, "store", ptr, mask, ctx)
    g.check_lanes(op, ptr, mask, ctx, lambda: lanevalues.stored(g, op, env))
    return []


@handles("tt.atomic_rmw")
def _atomic_rmw(g: AccessGraph, op: Op, env, ctx) -> list[Value]:
    ptr, mask = _guarded(g, op, env, ctx, 2)
    g.record(op, "atomic", ptr, mask, ctx)
    return [Opaque("data", "an atomic's old value", op.loc)]


@handles("tt.atomic_cas")
def _atomic_cas(g: AccessGraph, op: Op, env, ctx) -> list[Value]:
    g.record(op, "atomic", g.get(env, op.operands[0]), None, ctx)
    return [Opaque("data", "an atomic's old value", op.loc)]
