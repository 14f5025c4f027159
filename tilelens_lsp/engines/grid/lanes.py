"""What an access's mask says about the lanes of a loaded vector, for the grid engine.

vLLM's fused MoE GEMM loads a block of sorted token ids padded with `num_valid_tokens` and reads the
tokens' rows under `mask=offs_token[:, None] < num_valid_tokens`; the grid engine keeps the loaded
vector as a per-lane interval over every program (`Itv`), which the padding id takes past the rows.
Here the enumeration's reading of a mask (`guards.Refiner`: the mask's lane facts, the ops from the
narrowed vector to the address replayed, every lane of the address reading the very lane its mask
lane stands for) runs on the grid engine's values with its own handlers. A pointer its loop
advances by a uniform step is its start narrowed, advanced as the loop advances it (`_for` keeps the
step). Only the address is narrowed; the mask is what it was. A `tl.where` of loaded data reads its
condition the same way, each side on the lanes the condition gives it (`select_sides`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

import numpy as np

from tilelens_lsp.engines import ranges
from tilelens_lsp.engines.enumerate import guards
from tilelens_lsp.engines.grid import handlers
from tilelens_lsp.engines.grid.forms import GPtr, Itv, Lin, Msk
from tilelens_lsp.engines.ranges import RangeV
from tilelens_lsp.engines.values import IntV
from tilelens_lsp.ttir.reader import Op

if TYPE_CHECKING:
    from tilelens_lsp.engines.grid.graph import GCtx, GridGraph


class LaneRefiner(guards.Refiner):
    """`guards.Refiner` over the grid engine's values: lane facts about a loaded vector (an `Itv`)."""

    handlers = handlers.HANDLERS

    def refine(self, f: guards.Fact, x: Any, y: Any) -> tuple[Any, np.ndarray | None] | None:
        """A lane fact about a loaded vector (an `Itv`) narrows it, lane by lane; a per-program scalar
        is a variable, narrowed by the mask's atoms and by branches instead. An i1 known true (`guards.TRUE`)
        is a mask true on every lane."""
        if f.other == guards.TRUE:
            every = np.ones((1,) * len(f.shape), dtype=bool)
            return Msk(every, every, (), f.shape), None
        xr, yr = _as_range(x), _as_range(y)
        if f.group is None or not isinstance(x, Itv) or not isinstance(xr, RangeV) or yr is None:
            return None
        with np.errstate(all="ignore"):
            nx, _ = ranges.refine(xr, f.pred, yr)
        lo, hi = np.broadcast_arrays(nx.lo[0], nx.hi[0])
        return Itv(lo.copy(), hi.copy(), x.shape, x.bits), None

    def running_sum(self, x: Any, narrowed: Any, lanes: tuple[int, ...], axis: int, reverse: bool) -> Any:
        """The running sum of a loaded vector whose own terms a fact narrowed (`guards.Refiner._summed`),
        bounded over every program as the vector is."""
        xr, nr = _as_range(x), _as_range(narrowed)
        if xr is None or not isinstance(nr, RangeV) or not isinstance(narrowed, Itv):
            return None
        total = x.total if isinstance(x, Itv) else None
        own = ranges.bounds(nr)
        got = ranges.running_sum_narrowed(ranges.bounds(xr), own, lanes, axis + 1, reverse, narrowed.bits, total)
        if got is None:
            return None
        return Itv(got.lo[0], got.hi[0], narrowed.shape, narrowed.bits, (narrowed, got.before_lo[0], got.before_hi[0]))

    def moved(self, name: str, start_name: str, narrowed: Any) -> Any:
        """The loop advances `name` by the uniform step its probe found: the narrowed start, advanced."""
        g = cast("GridGraph", self.g)  # this refiner is built over a grid engine's environment (`access`)
        step = g.steps.get(name)
        if step is None:
            return None
        d, t, trips, loop = step
        return handlers.advance(g, narrowed, d, t, trips, loop)


def _as_range(v: Any) -> RangeV | IntV | None:
    """A grid value as the enumeration's: an interval per lane (a leading program axis of one), or a
    known integer; None for anything else (a form in grid variables is not one number per lane)."""
    if isinstance(v, Itv) and v.bits > 1 and v.lo.dtype != object and v.hi.dtype != object:
        return RangeV(np.asarray(v.lo, dtype=np.int64)[None], np.asarray(v.hi, dtype=np.int64)[None], v.bits)
    if isinstance(v, Lin) and not v.k and v.bits > 1:
        return IntV(np.asarray(v.c, dtype=np.int64)[None], v.bits)
    return None


def _narrowed(
    g: GridGraph,
    op: Op,
    cond: str,
    polarity: bool,
    name: str,
    shape: tuple[int, ...],
    env: dict[str, Any],
    ctx: GCtx,
    truths: bool = False,
) -> Any:
    """`name` narrowed by the lane facts of the i1 `cond` being `polarity`, where every lane of it reads
    the very lane its condition stands for (with `truths`, as `guards.access` reads a mask: a widened
    i1 conjunct is a fact about itself); None where nothing narrows it."""
    index = g.index()
    func = index.func_of.get(id(op))
    if g.probing or func is None:
        return None
    said = guards.widened_in(index.uses[func]) if truths else None
    facts = [f for f in guards.collect(index.defs[func], env, cond, polarity, truths=said) if f.group is not None]
    # the refiner is typed for the enumeration's graph and context; here they are the grid engine's,
    # which its handlers take (`LaneRefiner.handlers`)
    r = LaneRefiner(cast(Any, g), func, env, cast(Any, ctx), index)
    if not facts or not r.assume(facts):
        return None
    got = r.value(name)
    if got is None or not r.usable(got[1], shape):
        return None
    return got[0]


def access(g: GridGraph, op: Op, ptr: Any, env: dict[str, Any], ctx: GCtx) -> Any:
    """The pointer of a masked load or store narrowed by its mask's lane facts; `ptr` where nothing
    narrows it."""
    mask_at = 1 if op.name == "tt.load" else 2
    if len(op.operands) <= mask_at or not isinstance(ptr, GPtr) or not isinstance(ptr.off, Itv):
        return ptr
    got = _narrowed(g, op, op.operands[mask_at], True, op.operands[0], tuple(ptr.off.shape), env, ctx, truths=True)
    if not isinstance(got, GPtr) or got.arg != ptr.arg or not isinstance(got.off, Itv):
        return ptr
    return got


def select_sides(g: GridGraph, op: Op, env: dict[str, Any], ctx: GCtx) -> tuple[Any, Any]:
    """`tl.where(c, a, b)` on loaded data: `a` narrowed by what `c` says of the lanes where it holds,
    `b` by what its negation says; each side as it is where nothing narrows it."""
    shape = tuple(op.result_types[0].shape) if op.result_types else ()
    sides = []
    for name, polarity in ((op.operands[1], True), (op.operands[2], False)):
        got = _narrowed(g, op, op.operands[0], polarity, name, shape, env, ctx)
        sides.append(got if isinstance(got, (Itv, Lin)) else env.get(name))
    return sides[0], sides[1]
