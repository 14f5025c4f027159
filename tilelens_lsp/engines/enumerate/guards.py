"""Guards refine values: what a mask, a branch or a select condition says about the values it compares.

`valid = (idx >= 0) & (idx < n); tl.load(t + idx, mask=valid)`: on the lanes where the load runs,
`idx` lies in [0, n), so the address is recomputed from the narrowed `idx` and its bound stays
inside the table. Facts are read off the condition's definition (`arith.andi` of `arith.cmpi`s, a
negation, a splat or broadcast of a scalar condition) and hold only where the condition holds: on
the mask-true lanes of the access, on the edge of the branch, on the side of the select. Each fact
narrows a declared-range value (`ranges.refine`), and the ops from it to the address (or to the
value used after a branch) are replayed with their own handlers on the narrowed value.

Soundness rests on two rules. A fact about a lane holds for that lane only: a narrowed tensor may
reach an address through shape ops (broadcast, expand_dims, trans) only where every lane of the
address reads the very lane of the fact that its own mask lane stands for, which is checked by
pushing the lane indices of the fact through both paths (`origins`). And a fact holds only where
its condition does: the caller scopes the narrowed values to the edge, branch or access (a copy of
the environment), never to what comes after a join.

A pointer (or offset) that a loop advances by a loop-invariant step is, on each iteration, its start
plus an amount known per lane: a fact about what the start was computed from narrows it too (vLLM's
fused MoE: `a_ptrs += BLOCK_K` under `mask=offs_token < num_valid_tokens`).

A running sum (`ends = tl.cumsum(lengths)` read at `ends - 1` under `mask=lengths > 0`) mixes lanes:
lane i is its own term plus the terms before it. A lane's fact narrows its own term only, and the
terms before it stay as declared, so the sum's lane i still stands for the fact's lane i. The narrowed
sum keeps its narrowed operand as its term (`RangeV.term`), so `tl.cumsum(lengths) - lengths` under
the same mask is the exclusive sum again.

Not done here: relations between two unknowns (`offs < end` narrows both sides' intervals, not their
difference), facts through `arith.ori` of true conditions, facts about values a loop changes by
anything else (a loaded step, a pointer set anew).
"""

from __future__ import annotations

import re
from collections import ChainMap
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

import numpy as np

from tilelens_lsp.engines import ranges
from tilelens_lsp.engines.enumerate import inductions
from tilelens_lsp.engines.enumerate.table import HANDLERS, Ctx
from tilelens_lsp.engines.ranges import PtrSpan, RangeV
from tilelens_lsp.engines.values import BINARY_OPS, IntV, Value, same_values
from tilelens_lsp.ttir.reader import Func, Op

if TYPE_CHECKING:
    from tilelens_lsp.engines.enumerate.graph import AccessGraph

SHAPE_OPS = frozenset({"tt.splat", "tt.broadcast", "tt.expand_dims", "tt.reshape", "tt.trans"})
ELEMENTWISE = frozenset(BINARY_OPS) | {
    "arith.cmpi",
    "arith.select",
    "arith.extsi",
    "arith.extui",
    "arith.trunci",
    "arith.index_cast",
    "arith.index_castui",
    "tt.addptr",
    "arith.bitcast",
    "tt.bitcast",
}
REPLAY = ELEMENTWISE | SHAPE_OPS
MAX_DEPTH = 64  # ops between a fact and its use that are replayed
TRUE = "#true"  # a `Fact.other` naming no value: the fact `name eq TRUE` says the i1 `name` is true
MAX_FORWARD = 4096  # values narrowed eagerly at a branch


@dataclass(frozen=True)
class Fact:
    """`name pred other` holds wherever the condition holds. `group` is the cmpi for a lane fact
    (None for a fact about a per-program scalar), `chain` the shape ops from it to the condition."""

    name: str
    pred: str
    other: str
    group: int | None
    chain: tuple[Op, ...]
    shape: tuple[int, ...]


class FuncIndex:
    """Definitions and uses of the SSA names of every function (names are unique per function)."""

    def __init__(self, funcs: dict[str, Func]) -> None:
        self.defs: dict[str, dict[str, Op]] = {}
        self.uses: dict[str, dict[str, list[Op]]] = {}
        self.func_of: dict[int, str] = {}
        # an `scf.for` iter_arg: its loop and its place among the loop's carried values
        self.carried: dict[str, dict[str, tuple[Op, int]]] = {}
        self._advances: dict[tuple[int, int], bool] = {}
        for fname, func in funcs.items():
            defs: dict[str, Op] = {}
            uses: dict[str, list[Op]] = {}
            carried: dict[str, tuple[Op, int]] = {}
            stack = [b for b in func.body.blocks]
            while stack:
                block = stack.pop()
                for op in block.ops:
                    self.func_of[id(op)] = fname
                    for r in op.results:
                        defs[r] = op
                    if op.name == "scf.for":
                        carried.update((a, (op, k)) for k, a in enumerate(op.for_header.iter_args))
                    for o in op.operands:
                        uses.setdefault(o, []).append(op)
                    for region in op.regions:
                        stack.extend(region.blocks)
            self.defs[fname], self.uses[fname], self.carried[fname] = defs, uses, carried

    def advances(self, loop: Op, k: int) -> bool:
        """`_advances`, worked out once per loop and carried value."""
        key = (id(loop), k)
        if key not in self._advances:
            self._advances[key] = _advances(loop, k)
        return self._advances[key]


def collect(
    defs: dict[str, Op],
    env,
    name: str,
    polarity: bool,
    chain: tuple[Op, ...] = (),
    depth: int = 0,
    truths: Callable[[str], bool] | None = None,
) -> list[Fact]:
    """The facts that hold wherever the i1 value `name` is `polarity`. An i1 conjunct of a condition
    that holds, for which `truths` says so, is also a fact about itself (`c eq TRUE`): where the
    condition holds, `c.to(tl.int32)` is 1 (a compaction's `tl.cumsum(keep)` under `mask=keep` is at
    least 1)."""
    op = defs.get(name)
    if op is None or depth > 16:
        return []
    if op.name == "arith.andi" and polarity or op.name == "arith.ori" and not polarity:
        return [f for o in op.operands[:2] for f in collect(defs, env, o, polarity, chain, depth + 1, truths)]
    if op.name == "arith.xori":
        for mine, other in ((0, 1), (1, 0)):
            v = env.get(op.operands[other])
            if isinstance(v, IntV) and v.bits == 1 and v.a.all():
                return collect(defs, env, op.operands[mine], not polarity, chain, depth + 1, truths)
        return []
    if op.name in SHAPE_OPS:
        return collect(defs, env, op.operands[0], polarity, (op,) + chain, depth + 1, truths)
    shape = tuple(op.result_types[0].shape) if op.result_types else ()
    group = id(op) if shape else None
    itself = [Fact(name, "eq", TRUE, group, chain, shape)] if truths is not None and polarity and truths(name) else []
    if op.name == "arith.cmpi":
        pred = op.predicate if polarity else ranges.NEGATE[op.predicate]
        x, y = op.operands[:2]
        return [Fact(x, pred, y, group, chain, shape), Fact(y, ranges.FLIP[pred], x, group, chain, shape), *itself]
    return itself


MAX_EXTREME_SIDES = 8  # values a nest of minimums (maximums) gives one side of a comparison


def extreme_operands(defs: dict[str, Op], name: str, op_name: str) -> list[tuple[str, tuple[Op, ...]]]:
    """The values a comparison's side `name` stands below (`op_name` "arith.minsi") or above
    ("arith.maxsi") when it is a minimum (maximum) of them, splat or broadcast to its lanes or not,
    nested ones included: each with the shape ops that take it to the side's lanes, innermost first.
    `x < min(a, b)` is `x < a` and `x < b`; both engines' relational bounds read each one."""
    out: list[tuple[str, tuple[Op, ...]]] = []
    todo: list[tuple[str, tuple[Op, ...]]] = [(name, ())]
    while todo and len(out) < MAX_EXTREME_SIDES:
        at, shape = todo.pop()
        op = defs.get(at)
        while op is not None and op.name in SHAPE_OPS and len(shape) < MAX_DEPTH:
            shape = (op, *shape)
            op = defs.get(op.operands[0])
        if op is None or op.name != op_name:
            continue
        for o in op.operands[:2]:
            out.append((o, shape))
            todo.append((o, shape))
    return out


def widened_in(uses: dict[str, list[Op]]) -> Callable[[str], bool]:
    """`collect`'s `truths` for a masked access: an i1 that is made an integer somewhere (a fact
    about itself narrows that integer; about any other i1 it would narrow nothing)."""
    return lambda name: any(u.name in ("arith.extui", "arith.extsi") for u in uses.get(name, ()))


def _apply_chain(chain: tuple[Op, ...], a: np.ndarray) -> np.ndarray:
    from tilelens_lsp.engines.enumerate.arith import SHAPE_FNS

    for op in chain:
        a = SHAPE_FNS[op.name](a, op, op.result_types[0])
    return a


class Refiner:
    """Values of one function's environment narrowed by facts; replays the ops that use them (with the
    handlers of the engine whose environment it is: `handlers`)."""

    handlers: dict = HANDLERS

    def __init__(self, g: AccessGraph, func: str, env, ctx: Ctx, index: FuncIndex | None = None) -> None:
        self.g = g
        index = index if index is not None else g.index
        self.defs = index.defs[func]
        self.uses = index.uses[func]
        self.index = index
        self.carried = index.carried[func]
        self.env = env
        self.ctx = ctx
        self.over: dict[str, tuple[Value, dict[int, np.ndarray]]] = {}
        self.empty: list[tuple[Fact, np.ndarray]] = []  # lanes where a fact cannot hold
        self.facts: dict[int, Fact] = {}
        self._memo: dict[str, tuple[Value, dict[int, np.ndarray]] | None] = {}

    def assume(self, facts: list[Fact], lanes: bool = True) -> bool:
        """Narrow the values the facts compare; False when none is narrowed."""
        changed = False
        for f in facts:
            if f.group is not None and not lanes:
                continue
            x = self.over[f.name][0] if f.name in self.over else self.env.get(f.name)
            y = self.over[f.other][0] if f.other in self.over else self.env.get(f.other)
            got = self.refine(f, x, y)
            if got is None:
                continue
            nx, empty = got
            origins = {}
            if f.group is not None:
                self.facts[f.group] = f
                n = int(np.prod(f.shape, dtype=np.int64))
                origins = {f.group: np.arange(n, dtype=np.int64).reshape((1,) + f.shape)}
            prev = self.over.get(f.name)
            if prev is not None:
                origins = {**prev[1], **origins}
            self.over[f.name] = (nx, origins)
            if empty is not None and empty.any():
                self.empty.append((f, empty))
            changed = True
        self._memo.clear()
        return changed

    def refine(self, f: Fact, x: Value | None, y: Value | None) -> tuple[Value, np.ndarray | None] | None:
        """`x` narrowed by the fact `x f.pred y`, with the lanes where no value of it can hold the
        fact (None: not known); None where this model does not narrow such values."""
        if f.other == TRUE:  # the i1 is true wherever the condition holds
            return IntV(np.ones((1, *f.shape), dtype=bool), 1), None
        if not isinstance(x, RangeV) or not isinstance(y, (IntV, RangeV)):
            return None
        with np.errstate(all="ignore"):
            return ranges.refine(x, f.pred, y)

    def value(self, name: str, depth: int = 0) -> tuple[Value, dict[int, np.ndarray]] | None:
        """The narrowed value of `name` with its lane origins, None where it is not narrowed."""
        if name in self.over:
            return self.over[name]
        if name in self._memo:
            return self._memo[name]
        self._memo[name] = None  # cycles (block arguments) and depth: not narrowed
        if name in self.carried and depth <= MAX_DEPTH:
            self._memo[name] = out = self._advanced(name, depth)
            return out
        op = self.defs.get(name)
        if op is not None and op.name == "tt.scan" and name in self.env and depth <= MAX_DEPTH:
            self._memo[name] = out = self._summed(op, depth)
            return out
        if op is None or op.name not in REPLAY or op.name not in self.handlers or op.regions or depth > MAX_DEPTH:
            return None
        if name not in self.env:
            return None
        got = [self.value(o, depth + 1) if o in self.env else None for o in op.operands]
        if all(v is None for v in got):
            return None
        origins: dict[int, np.ndarray] = {}
        if op.name in SHAPE_OPS:
            for key, a in (got[0][1] if got[0] is not None else {}).items():
                from tilelens_lsp.engines.enumerate.arith import SHAPE_FNS

                origins[key] = SHAPE_FNS[op.name](a, op, op.result_types[0])
        else:
            for v in got:
                if v is None:
                    continue
                for key, a in v[1].items():
                    if key in origins and not _same(origins[key], a):
                        return None  # two lanes of one fact meet: the fact does not follow
                    origins[key] = a
        local = {o: v[0] for o, v in zip(op.operands, got) if v is not None}
        with np.errstate(all="ignore"):
            results = self.handlers[op.name](self.g, op, ChainMap(local, self.env), self.ctx)
        out = (results[op.results.index(name)], origins)
        self._memo[name] = out
        return out

    def _summed(self, op: Op, depth: int) -> tuple[Value, dict[int, np.ndarray]] | None:
        """A running sum (`tl.cumsum`) of a narrowed vector (`ends = tl.cumsum(lengths)` under `mask=lengths >
        0`): each lane is its own term plus the terms before it, and a lane's fact narrows its own term
        only. Lane i of the sum stands for lane i of the vector, so the facts' lane origins carry over."""
        body = op.regions[0].blocks[0].ops if op.regions and op.regions[0].blocks else []
        combine = [o.name for o in body if o.name != "tt.scan.return"]
        axis_m = re.search(r"axis = (\d+)", op.text + " " + op.tail)
        if len(op.operands) != 1 or len(op.results) != 1 or combine != ["arith.addi"] or axis_m is None:
            return None
        if op.operands[0] not in self.env:
            return None
        got = self.value(op.operands[0], depth + 1)
        if got is None:
            return None
        lanes = tuple(op.result_types[0].shape) if op.result_types else ()
        reverse = "reverse = true" in op.text + " " + op.tail
        out = self.running_sum(self.env[op.operands[0]], got[0], lanes, int(axis_m.group(1)), reverse)
        return None if out is None else (out, got[1])

    def running_sum(self, x: Value, narrowed: Value, lanes: tuple[int, ...], axis: int, reverse: bool) -> Value | None:
        """The running sum along lane axis `axis` of `x`, a vector of `lanes`, whose own terms are
        `narrowed`; None where this model does not bound it."""
        if isinstance(narrowed, IntV) and narrowed.bits > 1:  # one value a lane (a condition known true, widened)
            narrowed = RangeV(narrowed.a, narrowed.a, narrowed.bits)
        if not isinstance(x, (IntV, RangeV)) or not isinstance(narrowed, RangeV) or x.bits <= 1:
            return None
        if narrowed.undef is not None and narrowed.undef.any():
            return None  # a lane loaded without `other`: the sum of it is no value
        total = x.total if isinstance(x, RangeV) else None
        own = ranges.bounds(narrowed)
        got = ranges.running_sum_narrowed(ranges.bounds(x), own, lanes, axis + 1, reverse, x.bits, total)
        if got is None:
            return None
        return RangeV(got.lo, got.hi, x.bits, term=(narrowed, got.before_lo, got.before_hi))

    def _advanced(self, name: str, depth: int) -> tuple[Value, dict[int, np.ndarray]] | None:
        """A loop-carried pointer or offset that its loop advances by a loop-invariant step (`a_ptrs +=
        BLOCK_K * stride_ak`), narrowed: on this iteration it is its start plus an amount known for each
        lane, so it is its start narrowed plus that amount. The amount is what the environment holds
        less the start it held before the loop, and it counts only where it is one number per lane (a
        step of loaded data, or a hull over iterations, leaves it a range: not narrowed)."""
        loop, k = self.carried[name]
        start_name = loop.operands[3 + k] if len(loop.operands) > 3 + k else None
        if start_name is None or start_name not in self.env or name not in self.env or not self.index.advances(loop, k):
            return None
        got = self.value(start_name, depth + 1)
        if got is None:
            return None
        moved = self.moved(name, start_name, got[0])
        return None if moved is None else (moved, got[1])

    def moved(self, name: str, start_name: str, narrowed: Value) -> Value | None:
        """The carried value `name` on this iteration, from its start narrowed: that plus what the
        environment holds less the start, where that is one number per lane."""
        delta = _known_offset(self.env[start_name], self.env[name])
        if delta is None:
            return None
        if isinstance(narrowed, PtrSpan):
            now = self.env[name]
            assert isinstance(now, PtrSpan)
            return PtrSpan(
                now.arg, narrowed.lo + delta, narrowed.hi + delta, now.pointee, now.undef, narrowed.src, now.segment
            )
        if isinstance(narrowed, RangeV):
            now_r = self.env[name]
            assert isinstance(now_r, RangeV)
            return RangeV(narrowed.lo + delta, narrowed.hi + delta, now_r.bits, now_r.undef, None, None, now_r.segment)
        return None

    def usable(self, origins: dict[int, np.ndarray], shape: tuple[int, ...]) -> bool:
        """Every lane fact reaches the use through the lanes its condition stands for."""
        for key, a in origins.items():
            f = self.facts[key]
            want = _apply_chain(
                f.chain, np.arange(int(np.prod(f.shape, dtype=np.int64)), dtype=np.int64).reshape((1,) + f.shape)
            )
            if not _same(want, a, shape):
                return False
        return True

    def impossible(self, shape: tuple[int, ...]) -> np.ndarray | None:
        """Lanes (P or 1, *shape) where some fact cannot hold: the condition is false there."""
        out = None
        for f, empty in self.empty:
            if f.group is None:
                e = empty.reshape(empty.shape[:1] + (1,) * len(shape))
            else:
                try:
                    e = _apply_chain(f.chain, empty)
                    e = np.broadcast_to(e, e.shape[:1] + shape)
                except ValueError:
                    continue
            out = e if out is None else out | e
        return out

    def forward(self) -> dict[str, Value]:
        """Every value in the environment computed from a narrowed one, narrowed (for a branch)."""
        seen = set(self.over)
        work = list(self.over)
        while work and len(seen) < MAX_FORWARD:
            name = work.pop()
            for op in self.uses.get(name, ()):
                if op.name not in REPLAY:
                    continue
                for r in op.results:
                    if r not in seen and r in self.env:
                        seen.add(r)
                        work.append(r)
        out = {}
        for name in seen:
            v = self.value(name)
            if v is not None and not v[1]:
                out[name] = v[0]
        return out


def _advances(loop: Op, k: int) -> bool:
    """Whether the loop's body yields its k-th carried value unchanged or advanced by a step that is the
    same on every iteration (`inductions.find`), so that on any iteration it is its start plus a sum of
    such steps."""
    body = loop.regions[0].blocks[0] if loop.regions and loop.regions[0].blocks else None
    if body is None or not body.ops or body.ops[-1].name != "scf.yield" or len(body.ops[-1].operands) <= k:
        return False
    arg, yielded = loop.for_header.iter_args[k], body.ops[-1].operands[k]
    if yielded == arg:
        return True
    header = loop.for_header
    inside = inductions.defined_inside([body]) | {a for a in (header.iv, *header.iter_args) if a}
    for op in inductions.invariant_ops(body, inside):
        inside.difference_update(op.results)
    return inductions.find(body, arg, yielded, inside) is not None


def _known_offset(start: Value, now: Value) -> np.ndarray | None:
    """`now - start` where it is one number per lane (both ends moved alike), else None."""
    spans = isinstance(start, PtrSpan) and isinstance(now, PtrSpan) and (start.arg, start.pointee) == (now.arg, now.pointee)
    if not (spans or isinstance(start, RangeV) and isinstance(now, RangeV)):
        return None
    try:
        low, high = np.broadcast_arrays(now.lo - start.lo, now.hi - start.hi)
    except ValueError:
        return None
    return low if np.array_equal(low, high) else None


def _same(a: np.ndarray, b: np.ndarray, shape: tuple[int, ...] | None = None) -> bool:
    try:
        if shape is not None:
            a = np.broadcast_to(a, (1,) + shape)
            b = np.broadcast_to(b, (1,) + shape)
        return a.shape == b.shape and bool(np.array_equal(a, b)) or same_values(a, b)
    except ValueError:
        return False


def branch_env(g: AccessGraph, op: Op, cond_name: str, polarity: bool, env, ctx: Ctx) -> dict[str, Value]:
    """Narrowed values for the side of a branch on `cond_name` taken when it is `polarity`: only facts
    about per-program scalars (a branch runs for a whole program)."""
    func = g.index.func_of.get(id(op))
    if func is None:
        return {}
    facts = [f for f in collect(g.index.defs[func], env, cond_name, polarity) if f.group is None]
    if not facts:
        return {}
    r = Refiner(g, func, env, ctx)
    if not r.assume(facts, lanes=False):
        return {}
    return r.forward()


def access(
    g: AccessGraph, op: Op, ptr_name: str, mask_name: str, ptr: Value, mask: Value, env, ctx: Ctx
) -> tuple[Value, Value]:
    """The address of a masked access narrowed by its mask, and the mask without the lanes where a
    fact cannot hold; unchanged where nothing narrows."""
    func = g.index.func_of.get(id(op))
    if func is None:
        return ptr, mask
    facts = collect(g.index.defs[func], env, mask_name, True, truths=widened_in(g.index.uses[func]))
    if not facts:
        return ptr, mask
    r = Refiner(g, func, env, ctx)
    if not r.assume(facts):
        return ptr, mask
    got = r.value(ptr_name)
    if got is None or not isinstance(got[0], (PtrSpan,) + (type(ptr),)):
        return ptr, mask
    shape = (
        tuple(op.result_types[0].shape)
        if op.result_types and op.name == "tt.load"
        else tuple(np.broadcast_shapes(*(t.shape for t in _lane_arrays(got[0])))[1:])
    )
    if not r.usable(got[1], shape):
        return ptr, mask
    return got[0], _without(mask, r.impossible(shape))


def _lane_arrays(v: Value) -> list[np.ndarray]:
    if isinstance(v, PtrSpan):
        return [v.lo]
    return [getattr(v, "boff", np.zeros((1,)))]


def _without(mask: Value, impossible: np.ndarray | None) -> Value:
    from tilelens_lsp.engines.enumerate.table import mask_and

    if impossible is None or not impossible.any():
        return mask
    return mask_and(mask, IntV(~impossible, 1))


def select(g: AccessGraph, op: Op, env, ctx: Ctx) -> Value | None:
    """`tl.where(c, a, b)` on loaded data: per lane the hull of `a` where `c` may hold (narrowed by c)
    and `b` where it may not (narrowed by not c); None where neither side is an integer range."""
    func = g.index.func_of.get(id(op))
    if func is None:
        return None
    c_name, a_name, b_name = op.operands[:3]
    shape = tuple(op.result_types[0].shape) if op.result_types else ()
    sides = []
    for polarity, name in ((True, a_name), (False, b_name)):
        value, empty = env.get(name), None
        r = Refiner(g, func, env, ctx)
        if r.assume(collect(g.index.defs[func], env, c_name, polarity)):
            got = r.value(name)
            if got is not None and r.usable(got[1], shape):
                value = got[0]
                empty = r.impossible(shape)
        sides.append((value, empty))
    (a, ea), (b, eb) = sides
    if not all(isinstance(v, (IntV, RangeV)) for v in (a, b)):
        return None
    bits = a.bits
    both = ranges.hull(a, b, bits)
    out = both
    if ea is not None:  # c cannot hold there: only b
        out = ranges.choose(ea, b, out, bits)
    if eb is not None:  # c must hold there: only a
        out = ranges.choose(eb, a, out, bits)
    return out
