"""Tensor-descriptor loads and stores, as the TMA engine performs them, for targets whose TTIR keeps them.

A descriptor is a base pointer with a shape and strides (`tt.make_tensor_descriptor`, or a host-side
TensorDescriptor argument). `tt.descriptor_load %d[i, j]` moves the block at those coordinates: each
element at coordinates `c` lies at `base + sum(c_k * stride_k)` and is read only when every `c_k` lies in
`[0, shape_k)` (the engine zero-fills the rest; a store drops it). So an access is recorded exactly as the
pointer arithmetic that Triton writes for targets without TMA (cuda:89), with the in-bounds mask. What
is not modelled (gathers, scatters, reductions through a descriptor; a descriptor whose base, shape or
strides the model does not compute) is refused by name, `tensor-descriptor`, by the graph's `unknown`.
The hardware computes TMA addresses in 64 bits: there is no width obligation here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from tilelens_lsp.engines.enumerate.table import handles
from tilelens_lsp.engines.values import IntV, Opaque, PtrV, Value
from tilelens_lsp.ttir.reader import Op

if TYPE_CHECKING:
    from tilelens_lsp.engines.enumerate.graph import AccessGraph

_BLOCK = re.compile(r"desc<(?:tensor<)?((?:\d+x)+)")


@dataclass(frozen=True)
class DescV:
    """A tensor descriptor: its base pointer, and per dimension its size and stride (in elements)."""

    base: PtrV
    shape: tuple[IntV, ...]
    strides: tuple[IntV, ...]


@handles("tt.make_tensor_descriptor")
def _make(g: AccessGraph, op: Op, env, ctx) -> list[Value]:
    vals = [g.get(env, o) for o in op.operands]
    rank = (len(vals) - 1) // 2
    base, shape, strides = vals[0], tuple(vals[1 : 1 + rank]), tuple(vals[1 + rank : 1 + 2 * rank])
    ints = [v for v in shape + strides if isinstance(v, IntV)]
    if isinstance(base, PtrV) and rank and len(ints) == 2 * rank:
        return [DescV(base, tuple(ints[:rank]), tuple(ints[rank:]))]
    return [Opaque("tensor-descriptor", "a descriptor whose base, shape or strides the model does not follow", op.loc)]


def _block(op: Op) -> tuple[int, ...] | None:
    m = _BLOCK.search(op.text + " " + op.tail)
    return tuple(int(d) for d in m.group(1).rstrip("x").split("x")) if m else None


def _access(g: AccessGraph, op: Op, env, ctx, kind: str) -> bool:
    """Record the access; False when the model cannot follow it (the caller refuses it by name)."""
    desc = g.get(env, op.operands[0])
    block = _block(op)
    if not isinstance(desc, DescV) or block is None or len(block) != len(desc.shape):
        return False
    rank = len(block)
    index = [g.get(env, o) for o in op.operands[1 : 1 + rank]]
    if len(index) != rank or not all(isinstance(v, IntV) for v in index):
        return False
    lead = (-1,) + (1,) * rank
    inside = np.ones((1,) + (1,) * rank, dtype=bool)
    offset = np.zeros((1,) + (1,) * rank, dtype=np.int64)
    for k in range(rank):
        along = [1] * (rank + 1)
        along[k + 1] = block[k]
        coord = index[k].a.astype(np.int64).reshape(lead) + np.arange(block[k], dtype=np.int64).reshape(along)
        size = desc.shape[k].a.astype(np.int64).reshape(lead)
        inside = inside & (coord >= 0) & (coord < size)
        offset = offset + coord * desc.strides[k].a.astype(np.int64).reshape(lead)
    base = desc.base  # a scalar pointer: its terms gain the block's axes, as tt.splat gives them
    base = PtrV(base.arg, pointee=base.pointee, terms=tuple(t.reshape(t.shape[:1] + (1,) * rank) for t in base.terms))
    ptr = base.plus(offset * base.pointee)
    g.record(op, kind, ptr, IntV(inside, 1), ctx)
    return True


@handles("tt.descriptor_load")
def _load(g: AccessGraph, op: Op, env, ctx) -> list[Value]:
    if not _access(g, op, env, ctx, "load"):
        return g.unknown(op, env, ctx)
    return [Opaque("data", "a value loaded through a tensor descriptor", op.loc)]


@handles("tt.descriptor_store")
def _store(g: AccessGraph, op: Op, env, ctx) -> list[Value]:
    if not _access(g, op, env, ctx, "store"):
        return g.unknown(op, env, ctx)
    return []
