"""Enumeration handlers of structured control flow: loops, branches, while loops, calls, reductions.

Loops run iteration by iteration with a per-program `active` predicate; branches on program-uniform
conditions narrow the running programs, branches on loaded data run both sides as over-approximations.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

import numpy as np

from tilelens_lsp.engines import accounting, ranges
from tilelens_lsp.engines.enumerate import guards, inductions, loopstate, relational
from tilelens_lsp.engines.enumerate.table import HANDLERS, Ctx, blend, blend_may, either, handles, opaque_of
from tilelens_lsp.engines.ranges import PtrSpan, RangeV
from tilelens_lsp.engines.values import (
    IntV,
    Opaque,
    PtrV,
    Value,
    gather_source_extent,
    histogram_lanes,
    same_values,
    wrap,
)
from tilelens_lsp.refusal import Refusal
from tilelens_lsp.ttir.reader import Block, Op

if TYPE_CHECKING:
    from tilelens_lsp.engines.enumerate.graph import AccessGraph


@handles("scf.for")
def _for(g: AccessGraph, op: Op, env, ctx) -> list[Value]:
    bounds = [g.get(env, o) for o in op.operands[:3]]
    if any(isinstance(b, RangeV) for b in bounds[:2]) and isinstance(bounds[2], IntV):
        return _for_ranged(g, op, env, ctx, bounds)
    lb, ub, step = (g.need_int(b, op, "a loop bound") for b in bounds)
    inits = [g.get(env, o) for o in op.operands[3:]]
    iv, carried = op.for_header.iv, op.for_header.iter_args
    P = g.P
    lbv = np.broadcast_to(lb.a, (P,)).astype(np.int64)
    ubv = np.broadcast_to(ub.a, (P,)).astype(np.int64)
    stv = np.broadcast_to(step.a, (P,)).astype(np.int64)
    if (stv[ctx.pred] <= 0).any():
        raise Refusal("control-flow", "a loop with a non-positive step", op.loc)
    trips = np.where(ctx.pred, np.maximum(0, -((lbv - ubv) // stv)), 0)
    values = list(inits)
    body = op.regions[0].blocks[0]
    count = int(trips.max()) if trips.size else 0
    if count == 0:
        g.mark_unreachable(body, ctx)  # no program enters the loop
    outer = env
    if count > 1:  # what no iteration changes, worked out once under the first iteration's context
        outer, body = hoist_invariants(g, op, env, Ctx(trips > 0, ctx.iters + (0,), ctx.exact, ctx.stack))
    uniform = lb.a.shape[0] == 1 and step.a.shape[0] == 1  # the same iv in every program
    cheapest = None
    for t in range(count):
        active = trips > t
        inner = dict(outer)
        inner[iv] = IntV(wrap((lb.a + t * step.a) if uniform else (lbv + t * stv), lb.bits), lb.bits)
        for name, v in zip(carried, values):
            inner[name] = v
        before = g.work
        yielded = g.eval_block(body, inner, Ctx(active, ctx.iters + (t,), ctx.exact, ctx.stack))
        values = [blend(active, new, old, op) for new, old in zip(yielded, values)]
        cheapest = _expect_rest(g, op, g.work - before, cheapest, t, count)
    return values


def _expect_rest(g: AccessGraph, op: Op, spent: int, cheapest: int | None, t: int, count: int, alike: bool = False) -> int:
    """After trip `t` of `count` (it cost `spent`): the cheapest trip so far, once two have run
    checked against what the budget has left for the rest (`AccessGraph.expect`)."""
    cheapest = spent if cheapest is None else min(cheapest, spent)
    if t >= 1:
        g.expect(cheapest, count - t - 1, op, alike)
    return cheapest


def hoist_invariants(g: AccessGraph, op: Op, env, first: Ctx) -> tuple[dict, Block]:
    """`env` with the loop-invariant ops of a loop's body evaluated once, under the first iteration's
    context `first`, and the body without them. Those ops are pure and their operands the same on every
    iteration, so each later iteration would compute the same values (under fewer programs) and find no
    width wrap the first did not: the verdicts are those of following every op on every iteration, at a
    fraction of the work (`mask_y & mask_x` of a loop over a whole tensor). An op that refuses here
    leaves the loop to be followed op by op, so the refusal comes from where it stood."""
    plan = g.loop_plans.get(id(op))
    if plan is None:
        body = op.regions[0].blocks[0]
        header = op.for_header
        inside = inductions.defined_inside([body]) | {a for a in (header.iv, *header.iter_args) if a}
        hoist = [o for o in inductions.invariant_ops(body, inside) if o.results]
        kept = {id(o) for o in hoist}
        rest = Block(body.args, [o for o in body.ops if id(o) not in kept], body.label)
        plan = g.loop_plans[id(op)] = (Block([], hoist), rest)
    before, rest = plan
    if not before.ops:
        return env, op.regions[0].blocks[0]
    outer = dict(env)
    try:
        g.eval_ops(before, outer, first)
    except Refusal:
        return env, op.regions[0].blocks[0]
    return outer, rest


def _for_ranged(g: AccessGraph, op: Op, env, ctx, bounds: list) -> list[Value]:
    """A loop whose bounds are loaded from declared ranges (tokens of this expert, length of this
    sequence): it runs for every trip count the ranges allow. Iteration t runs where some allowed
    bounds give more than t trips; its accesses are bounds (`exact: false`) wherever the trip count
    is not decided, and its induction variable is the interval of starts plus t steps, below the
    highest end."""
    lb, ub, step = bounds
    P = g.P
    for b in (lb, ub):
        if (
            isinstance(b, RangeV)
            and b.undef is not None
            and (np.broadcast_to(b.undef.reshape(b.undef.shape[:1]), (P,)) & ctx.pred).any()
        ):
            raise Refusal(
                "data-dependent-bound",
                "a loop bound loaded by a masked-off lane without `other` (its value is undefined)",
                op.loc,
            )
    lblo, lbhi = (np.broadcast_to(a.reshape(a.shape[:1]), (P,)).astype(np.int64) for a in ranges.bounds(lb))
    ublo, ubhi = (np.broadcast_to(a.reshape(a.shape[:1]), (P,)).astype(np.int64) for a in ranges.bounds(ub))
    stv = np.broadcast_to(step.a.reshape(step.a.shape[:1]), (P,)).astype(np.int64)
    if (stv[ctx.pred] <= 0).any():
        raise Refusal("control-flow", "a loop with a non-positive step", op.loc)
    most = np.where(ctx.pred, np.maximum(0, -((lblo - ubhi) // stv)), 0)
    related = relational.most_trips(g, op, env, stv) if "unsigned" not in op.text else None
    if related is not None:  # `range(lo, tl.minimum(lo + chunk, end))`: at most chunk / step trips
        most = np.minimum(most, related)
    least = np.where(ctx.pred, np.maximum(0, -((lbhi - ublo) // stv)), 0)
    least = np.minimum(least, most)
    iv = op.for_header.iv
    inits = [g.get(env, o) for o in op.operands[3:]]
    values = list(inits)
    if not most.size or int(most.max()) == 0:
        g.mark_unreachable(op.regions[0].blocks[0], ctx)
    trips = _Trips(lblo, lbhi, ubhi, stv, most, least)
    count = int(most.max()) if most.size else 0
    alike = bool(most.size) and bool((most[ctx.pred] == count).all())  # every running program: `count` trips
    cheapest = None
    func = g.index.func_of.get(id(op))
    signed = "unsigned" not in op.text  # scf.for compares its bounds as signed unless it says `unsigned`
    named = iv or ""  # an induction variable the body never reads has no name: nothing to relate
    try:
        for t in range(count):
            if t == FOLLOW_PREFIX and int(most.max()) > FOLLOW_LIMIT:
                g.ranged_trips.pop(named, None)  # the summed trips are no one trip
                summed = _for_summed(g, op, env, ctx, trips, inits, values)
                if summed is not None:
                    return summed
            if func is not None and signed and named:
                g.ranged_trips[named] = relational.Trip(func, op.operands[0], op.operands[1], t * stv)
            values, cheapest = _ranged_trip(g, op, env, ctx, trips, values, t, cheapest, count, alike)
    finally:
        g.ranged_trips.pop(named, None)
    return values


def _ranged_trip(
    g: AccessGraph, op: Op, env, ctx, trips: _Trips, values: list[Value], t: int, cheapest, count: int, alike: bool
) -> tuple[list[Value], int]:
    """Trip `t` of a ranged loop (`_for_ranged`): the values it carries out, and the cheapest trip so far."""
    iv, carried = op.for_header.iv, op.for_header.iter_args
    may, must = trips.most > t, trips.least > t
    inner = dict(env)
    lo, hi = trips.lblo + t * trips.stv, np.minimum(trips.lbhi + t * trips.stv, trips.ubhi - 1)
    bits = g.get(env, op.operands[0]).bits
    inner[iv] = IntV(lo.copy(), bits) if (lo == hi).all() else RangeV(lo, np.maximum(lo, hi), bits, segment=True)
    inner.update(zip(carried, values))
    exact = ctx.exact and bool((may == must).all())
    before = g.work
    yielded = g.eval_block(op.regions[0].blocks[0], inner, Ctx(may, ctx.iters + (t,), exact, ctx.stack))
    values = [blend_may(must, may, new, old, op) for new, old in zip(yielded, values)]
    # past FOLLOW_PREFIX a long loop would have been summed up: the trips left are followed
    return values, _expect_rest(g, op, g.work - before, cheapest, t, count, alike)


FOLLOW_LIMIT = 256  # trip counts of a ranged loop followed one by one; past it the rest is summed up
FOLLOW_PREFIX = 1  # iterations followed one by one before a ranged loop is summed up


@dataclass(frozen=True)
class _Trips:
    """A ranged loop's per-program bounds: starts in [lblo, lbhi], ends below ubhi, step stv, and
    between `least` and `most` trips."""

    lblo: np.ndarray
    lbhi: np.ndarray
    ubhi: np.ndarray
    stv: np.ndarray
    most: np.ndarray
    least: np.ndarray


def _for_summed(
    g: AccessGraph, op: Op, env, ctx, trips: _Trips, inits: list[Value], values: list[Value]
) -> list[Value] | None:
    """Iterations FOLLOW_PREFIX .. most - 1 of a ranged loop, all at once: its body runs once with
    every carried value as its hull over those iterations. An induction (`j += 1`, `p += BLOCK`) is
    `init + step * t`, summed up exactly (`inductions`); a value the body passes through unchanged
    keeps its value; a value that feeds no address (an accumulator of loaded data) becomes unknown,
    which is what the model knows of it anyway. Anything else (a pointer or an address term that is
    not an induction) makes this None, and the loop is followed iteration by iteration. The accesses
    are bounds (`exact: false`)."""
    body = op.regions[0].blocks[0]
    carried = op.for_header.iter_args
    yields = body.ops[-1].operands if body.ops and body.ops[-1].name == "scf.yield" else []
    if len(yields) != len(carried):
        return None
    k0 = FOLLOW_PREFIX
    active = trips.most > k0
    last = np.where(active, trips.most - 1, k0)
    loop_args = [a for a in (op.for_header.iv, *carried) if a is not None]
    inside, env = _invariants(g, [body], loop_args, env, Ctx(active, ctx.iters, False, ctx.stack))
    guess: list[Value] = []
    after: list[Value] = []
    for name, y, init, now in zip(carried, yields, inits, values):
        found = inductions.find(body, name, y, inside)
        if y == name:
            guess.append(now)
            after.append(now)
        elif found is not None:
            step = env.get(found.step)
            h = inductions.hull(init, step, found.sign, np.full_like(last, k0), last)
            end = inductions.hull(init, step, found.sign, np.full_like(last, k0 + 1), last + 1)
            if h is None or end is None:
                return None
            guess.append(h)
            after.append(end)
        elif isinstance(now, Opaque) and now.bound is None:
            guess.append(now)
            after.append(now)
        elif not _feeds_address(g, body, y, now):
            unknown: Opaque = Opaque("data", "a value carried through a loop whose trip count is loaded data", op.loc)
            guess.append(unknown)
            after.append(unknown)
        else:
            return None
    lo = trips.lblo + k0 * trips.stv
    hi = np.where(active, np.minimum(trips.lbhi + last * trips.stv, trips.ubhi - 1), lo)
    inner = dict(env)
    bits = g.get(env, op.operands[0]).bits
    inner[op.for_header.iv] = RangeV(lo, np.maximum(lo, hi), bits, segment=True)
    inner.update(zip(carried, guess))
    # no iteration index: the one evaluation stands for every iteration from k0 on
    func = g.index.func_of.get(id(op))
    iv = op.for_header.iv
    if func is not None and iv and "unsigned" not in op.text:
        g.ranged_trips[iv] = relational.Trip(func, op.operands[0], op.operands[1], k0 * trips.stv, last * trips.stv)
    try:
        g.eval_block(body, inner, Ctx(active, ctx.iters, False, ctx.stack))
    finally:
        if iv:
            g.ranged_trips.pop(iv, None)
    must = trips.least > k0
    return [blend_may(must, active, a, v, op) for a, v in zip(after, values)]


def _invariants(
    g: AccessGraph, blocks: list[Block], args: list[str], env, ctx: Ctx, others: tuple | list = ()
) -> tuple[set[str], dict]:
    """The names a loop's `blocks` (and `others`, its other region; `args`, the names its header binds)
    define that may change from one iteration to the next, and `env` with the loop-invariant values of
    `blocks` (a step `K * H` that the compiler left in the loop) evaluated beside it, so an induction's
    step can be read there."""
    inside = inductions.defined_inside(list(blocks) + list(others)) | {a for a in args if a}
    scratch = dict(env)
    for block in blocks:
        for inv in inductions.invariant_ops(block, inside):
            handler = HANDLERS.get(inv.name)
            if handler is None:
                break
            scratch.update(zip(inv.results, handler(g, inv, scratch, ctx)))
            inside.difference_update(inv.results)
    return inside, scratch


def _feeds_address(g: AccessGraph, body: Block, yielded: str, value: Value) -> bool:
    """Whether a carried value may take part in an address: a pointer, or an integer whose update is
    in the module's address slice (offsets and call arguments)."""
    if not isinstance(value, (IntV, RangeV, Opaque)):
        return True
    op = next((o for o in accounting.block_ops(body) if yielded in o.results), None)
    return op is None or id(op) in g.slice


@handles("scf.if")
def _if(g: AccessGraph, op: Op, env, ctx) -> list[Value]:
    cond = g.get(env, op.operands[0])
    then_b = op.regions[0].blocks[0]
    else_b = op.regions[1].blocks[0] if len(op.regions) > 1 else None
    if isinstance(cond, IntV):
        c = np.broadcast_to(cond.a.reshape(cond.a.shape[:1]), (g.P,)).astype(bool)
        then_v = g.eval_block(then_b, dict(env), Ctx(ctx.pred & c, ctx.iters, ctx.exact, ctx.stack))
        else_v = g.eval_block(else_b, dict(env), Ctx(ctx.pred & ~c, ctx.iters, ctx.exact, ctx.stack)) if else_b else []
        return [blend(c, t, e, op) for t, e in zip(then_v, else_v)]
    if isinstance(cond, Opaque):
        # a condition the model does not compute (loaded data, a float argument): both branches may
        # run, so their accesses become over-approximations; each side sees the values its condition
        # narrows (`if y != ignore_index:` leaves y without -100 inside, and only inside)
        sides = []
        for polarity, block in ((True, then_b), (False, else_b)):
            if block is None:
                continue
            inner = dict(env)
            if cond.why == "data":
                inner.update(guards.branch_env(g, op, op.operands[0], polarity, env, ctx))
            sides.append(g.eval_block(block, inner, Ctx(ctx.pred, ctx.iters, False, ctx.stack)))
        if len(sides) < 2:
            return []
        return [either(t, e, op) for t, e in zip(*sides)]
    raise Refusal(
        "control-flow" if not isinstance(cond, Opaque) or cond.why == "float" else cond.why,
        "a branch condition the model does not compute",
        op.loc,
    )


WHILE_LIMIT = 1 << 16  # iterations of one while loop before it is refused as non-terminating
WRAP_GRACE = 256  # iterations a while loop is still followed after its condition's counter wrapped
WHILE_CHECKS = True  # wrap and repeated-state checks of followed while loops (a benchmark turns them off)
SETTLE_LIMIT = 512  # iterations of a data-dependent while loop before it is refused as unsettled
WIDEN_INDUCTIONS = True  # start a data-dependent while loop's inductions from their hull (tests turn it off)


@handles("scf.while")
def _while(g: AccessGraph, op: Op, env, ctx) -> list[Value]:
    """Iterate a while loop per program while its condition is computable (grid-stride loops); once
    it depends on loaded data (a binary search over `cu_seqlens`), run it over every trip count
    (`_while_settled`); a loop that carries no value (a spin lock) runs once (`_while_opaque`).

    A loop followed iteration by iteration is watched (`_Watch`): its carried values coming back to
    a state they were in prove it never ends, and an int32 wrap on its condition's path leaves it
    `WRAP_GRACE` more iterations to end. Either refusal, and the one at `WHILE_LIMIT`, keeps what was
    found before it (each access was evaluated concretely, before the loop went wrong)."""
    names = [a.split("=")[0].strip() for a in re.findall(r"(%[\w$.\-]+\s*=\s*%[\w$.\-#]+)", op.text.split(":")[0])]
    watch = _Watch(g, op, names, len(ctx.iters)) if WHILE_CHECKS else None
    try:
        return _while_followed(g, op, env, ctx, names, watch)
    finally:
        if watch is not None:
            watch.close()


def _while_followed(g: AccessGraph, op: Op, env, ctx, names: list[str], watch: _Watch | None) -> list[Value]:
    before = op.regions[0].blocks[0]
    after = op.regions[1].blocks[0]
    carried = [g.get(env, o) for o in op.operands]
    active = ctx.pred.copy()
    final: list[Value] | None = None
    for t in range(WHILE_LIMIT):
        inner = dict(env)
        inner.update(zip(names, carried))
        out = g.eval_block(before, inner, Ctx(active, ctx.iters + (t,), ctx.exact, ctx.stack))
        cond, forwarded = out[0], out[1:]
        if not isinstance(cond, IntV):
            if t == 0 and not op.operands:
                return _while_opaque(g, op, env, ctx)
            return _while_settled(g, op, env, ctx, names, inner, out, active, final, t)
        c = np.broadcast_to(cond.a.reshape(cond.a.shape[:1]), (g.P,)).astype(bool) & active
        leaving = active & ~c
        final = forwarded if final is None else [blend(leaving, f, old, op) for f, old in zip(forwarded, final)]
        if not c.any():
            if t == 0:
                g.mark_unreachable(after, ctx)  # the do-region never runs
            return final
        if watch is not None:
            watch.check(t, active, carried)
        inner = dict(env)
        inner.update(zip(after.args, forwarded))
        yielded = g.eval_block(after, inner, Ctx(c, ctx.iters + (t,), ctx.exact, ctx.stack))
        carried = [blend(c, new, old, op) for new, old in zip(yielded, carried)]
        active = c
    wrapped = f"; {watch.wrapped_note()}" if watch is not None and watch.wrapped is not None else ""
    raise Refusal(
        "control-flow", f"a while loop still running after {WHILE_LIMIT} iterations{wrapped}", op.loc, keeps_findings=True
    )


class _Watch:
    """The checks on one while loop followed iteration by iteration: its condition's slice
    (`loopstate.condition_slice`) is watched for int32 wraps while it runs (`AccessGraph.check_width`
    records them), and the state that slice decides (the carried values on it, the programs still
    running) is fed to a cycle detector when the slice is pure integer arithmetic."""

    def __init__(self, g: AccessGraph, op: Op, names: list[str], depth: int) -> None:
        self.g, self.op, self.depth = g, op, depth  # depth: this loop's index among a witness's iterations
        self.slice = loopstate.condition_slice(op, names)
        self.ops = self.slice.ops if self.slice.signed else frozenset()
        self.saved = g.watch
        g.watch = g.watch | self.ops
        for i in self.ops:  # a wrap of an earlier run of this loop (another chunk, an outer iteration)
            g.wraps.pop(i, None)
        self.cycle = loopstate.Cycle() if self.slice.pure else None
        self.wrapped: tuple[int, dict, str] | None = None  # iteration, witness, the op's loc
        self.deadline = WHILE_LIMIT

    def close(self) -> None:
        self.g.watch = self.saved

    def check(self, t: int, active: np.ndarray, carried: list[Value]) -> None:
        """Before the do-region of iteration `t` runs (`active`: programs whose condition held up to
        here, `carried`: the values its before-region saw): refuse the loop if this state was seen
        before, or if its counter wrapped `WRAP_GRACE` iterations ago."""
        if self.wrapped is None:
            hit = next((i for i in self.ops if i in self.g.wraps), None)
            if hit is not None:
                op = next(o for r in self.op.regions for o in accounting.region_ops(r) if id(o) == hit)
                w = self.g.wraps[hit]
                its = w["iteration"] or ()
                self.wrapped = (its[self.depth] if len(its) > self.depth else t, w, op.loc)
                self.deadline = t + WRAP_GRACE
        if self.cycle is not None:
            values = [carried[k] for k in self.slice.carried]
            if all(isinstance(v, IntV) for v in values):
                state = (np.asarray(active), *(np.asarray(v.a) for v in values))  # type: ignore[union-attr]
                earlier = self.cycle.seen(state, t)
                if earlier is not None:
                    raise Refusal(
                        "non-terminating",
                        f"a while loop that never ends: at iteration {t} the values its condition depends on "
                        f"repeat those of iteration {earlier}, in the programs still running"
                        + (f"; {self.wrapped_note()}" if self.wrapped is not None else ""),
                        self.op.loc,
                        keeps_findings=True,
                    )
            else:
                self.cycle = None  # not every value on the path is concrete: no proof from here on
        if t >= self.deadline and self.wrapped is not None:
            raise Refusal(
                "wrapped-loop",
                f"{self.wrapped_note()}, and the loop is still running {WRAP_GRACE} iterations later; "
                "the iterations after those are not followed",
                self.wrapped[2],
                keeps_findings=True,
            )

    def wrapped_note(self) -> str:
        assert self.wrapped is not None
        t, w, _ = self.wrapped
        return (
            f"the integer arithmetic a while loop's condition depends on wraps at iteration {t} "
            f"(exact value {w['value']:,} in program {list(w['pid'])})"
        )


def _while_settled(
    g: AccessGraph,
    op: Op,
    env,
    ctx,
    names: list[str],
    inner: dict,
    out: list[Value],
    active: np.ndarray,
    final: list[Value] | None,
    t0: int,
) -> list[Value]:
    """A while loop whose condition reads loaded data, from iteration `t0` on (its before-region just
    evaluated into `inner`, giving `out`): every program still running may stop or go on, so the
    carried values become the hull of every iteration's values, and the loop is followed until they
    stop changing; from then on every further iteration repeats what was recorded. The do-region sees
    the values its condition narrows. Accesses are bounds (`exact: false`)."""
    before = op.regions[0].blocks[0]
    after = op.regions[1].blocks[0]
    term = before.ops[-1]
    carried = [inner[n] for n in names]
    widened, inbody = _while_inductions(g, op, env, ctx, names, carried) if WIDEN_INDUCTIONS else ({}, {})

    def at(t: int) -> tuple[int, ...]:  # a widened iteration stands for all of them: no index
        return ctx.iters if widened else ctx.iters + (t,)

    if widened:  # start from the hull of every value the inductions take
        carried = [widened.get(k, v) for k, v in enumerate(carried)]
        inner = dict(env)
        inner.update(zip(names, carried))
        out = g.eval_block(before, inner, Ctx(active, at(t0), False, ctx.stack))
    for t in range(t0, t0 + SETTLE_LIMIT):
        cond, forwarded = out[0], out[1:]
        if isinstance(cond, IntV):
            go = np.broadcast_to(cond.a.reshape(cond.a.shape[:1]), (g.P,)).astype(bool) & active
            stop = active & ~go
        else:
            bound = cond.bound if isinstance(cond, Opaque) and cond.bound is not None else None
            go = (
                active.copy()
                if bound is None
                else np.broadcast_to(bound.a.reshape(bound.a.shape[:1]), (g.P,)).astype(bool) & active
            )
            stop = active.copy()
        if final is None:
            final = list(forwarded)
        elif t == t0:  # the programs still running had no final value yet
            final = [blend(stop, f, old, op) for f, old in zip(forwarded, final)]
        else:
            final = [blend(stop, either(f, old, op), old, op) for f, old in zip(forwarded, final)]
        if not go.any():
            return final
        body = dict(env)
        narrowed = dict(inner)
        if isinstance(cond, Opaque) and cond.why == "data":
            narrowed.update(guards.branch_env(g, term, term.operands[0], True, inner, ctx))
        body.update(zip(after.args, (narrowed[o] if o in narrowed else v for o, v in zip(term.operands[1:], forwarded))))
        for arg, v in inbody.items():  # a closed form bounds the do-region's value with the condition
            body[arg] = _meet(body.get(arg), v)
        yielded = g.eval_block(after, body, Ctx(go, at(t), False, ctx.stack))
        grown = [blend(go, either(new, old, op), old, op) for new, old in zip(yielded, carried)]
        grown = [widened.get(k, v) for k, v in enumerate(grown)]  # an induction's hull holds throughout
        if all(_same_value(a, b) for a, b in zip(grown, carried)) and (go == active).all():
            return final  # settled: every further iteration is one already followed
        carried, active = grown, go
        inner = dict(env)
        inner.update(zip(names, carried))
        out = g.eval_block(before, inner, Ctx(active, at(t + 1), False, ctx.stack))
    reads = _data_source(out[0])
    # what a declaration could do is said by the refusal's fix (the tensors without a range, or that
    # no declaration decides it): a range the launch already declares is never asked for again
    raise Refusal(
        "data-dependent-bound",
        f"a while loop whose condition depends on {reads} still changes its carried values after "
        f"{SETTLE_LIMIT} iterations, and they are not inductions (a step by a loop-invariant amount "
        "toward a bound its condition reads) that the model sums up in one step",
        op.loc,
    )


def _while_inductions(
    g: AccessGraph, op: Op, env, ctx, names: list[str], carried: list[Value]
) -> tuple[dict[int, Value], dict[str, Value]]:
    """The hull of every value each induction of a data-dependent while loop takes at the loop's head,
    by position among the carried values, from their values now: an induction that the condition
    bounds (`i += c` while `i < n`, n loaded from a declared range) runs from its value now to one step
    past the condition's limit, and that limit bounds how many more times the do-region runs, so every
    other induction (`j += 2` beside it) runs from its value now over that many steps. These are closed
    forms, not guesses: the settling loop keeps them as they are. Also the hulls the do-region sees of
    every induction (one step fewer), by the name of its argument, which bound it beside what the
    condition narrows. Empty when the condition bounds no induction."""
    before, after = op.regions[0].blocks[0], op.regions[1].blocks[0]
    term, yields = before.ops[-1], after.ops[-1].operands if after.ops else []
    if term.name != "scf.condition" or len(yields) != len(names):
        return {}, {}
    inside, env = _invariants(g, [after], names, env, Ctx(ctx.pred, ctx.iters, False, ctx.stack), [before])
    found: dict[int, tuple[inductions.Induction, tuple[np.ndarray, np.ndarray], str]] = {}
    for k, name in enumerate(names):
        # the do-region receives the condition's forwarded values: find the one that is this value
        j = next((j for j, o in enumerate(term.operands[1:]) if o == name), None)
        if j is None or j >= len(after.args):
            continue
        ind = inductions.find(after, after.args[j], yields[k], inside)
        steps = inductions.step_bounds(env.get(ind.step), ind.sign) if ind is not None else None
        if ind is not None and steps is not None:
            found[k] = (ind, steps, after.args[j])
    hulls: dict[int, Value] = {}
    runs: np.ndarray | None = None  # the most further runs of the do-region, per program
    for k, (_, steps, _) in found.items():
        rising = bool((steps[0] > 0).all())
        if not rising and not (steps[1] < 0).all():
            continue
        limit = inductions.while_limit(before, names[k], rising, env)
        if limit is None:
            continue
        grown = inductions.while_hull(carried[k], steps, limit)
        most = inductions.while_trips(carried[k], steps, limit)
        if grown is None or most is None:
            continue
        hulls[k] = either(carried[k], grown, op)
        runs = most if runs is None else np.minimum(runs, most)
    if runs is None:
        return {}, {}
    last = np.broadcast_to(runs, (g.P,)).astype(np.int64)
    first = np.zeros_like(last)
    inbody: dict[str, Value] = {}
    for k, (ind, _, arg) in found.items():
        h = hulls[k] if k in hulls else inductions.hull(carried[k], env.get(ind.step), ind.sign, first, last)
        b = inductions.hull(carried[k], env.get(ind.step), ind.sign, first, np.maximum(last - 1, 0))
        if h is not None and b is not None:
            hulls[k], inbody[arg] = h, b
    return hulls, inbody


def _meet(a: Value | None, b: Value) -> Value:
    """The values both bounds allow (`a`: what the condition narrowed, `b`: a closed form); where they
    leave nothing (no program runs there) or `a` is no integer bound, `b`."""
    if not isinstance(a, (IntV, RangeV)) or not isinstance(b, RangeV) or a.bits != b.bits:
        return b
    (alo, ahi), (blo, bhi) = ranges.bounds(a), ranges.bounds(b)
    lo, hi = np.maximum(alo, blo), np.minimum(ahi, bhi)
    empty = lo > hi
    lo, hi = np.where(empty, np.broadcast_to(blo, lo.shape), lo), np.where(empty, np.broadcast_to(bhi, hi.shape), hi)
    return RangeV(lo, hi, b.bits, getattr(a, "undef", None), segment=getattr(a, "segment", False))


def _data_source(v: Value) -> str:
    if isinstance(v, Opaque) and v.message:
        return v.message
    return "loaded data"


def _same_value(a: Value, b: Value) -> bool:
    if a is b:
        return True
    if type(a) is not type(b):
        return False
    if isinstance(a, IntV):
        return a.bits == b.bits and same_values(a.a, b.a)
    if isinstance(a, RangeV):
        return same_values(a.lo, b.lo) and same_values(a.hi, b.hi)
    if isinstance(a, PtrSpan):
        return a.arg == b.arg and same_values(a.lo, b.lo) and same_values(a.hi, b.hi)
    if isinstance(a, PtrV):
        return a.arg == b.arg and same_values(a.boff, b.boff)
    return isinstance(a, Opaque)


def _while_opaque(g: AccessGraph, op: Op, env, ctx) -> list[Value]:
    """A data-dependent while loop runs its before-region at least once: accesses whose addresses do
    not depend on the carried values are recorded (the do-region's as an over-approximation, since it
    may run zero times); accesses that do depend on them are refused."""
    carried: Opaque[IntV] = Opaque("control-flow", "a value carried by a while loop", op.loc)
    before = op.regions[0].blocks[0] if op.regions else None
    after = op.regions[1].blocks[0] if len(op.regions) > 1 else None
    names = [a.split("=")[0].strip() for a in re.findall(r"(%[\w$.\-]+\s*=\s*%[\w$.\-#]+)", op.text)]
    for block, exact in ((before, ctx.exact), (after, False)):
        if block is None:
            continue
        inner = dict(env)
        for name in names + block.args:
            inner[name] = carried
        g.eval_block(block, inner, Ctx(ctx.pred, ctx.iters, exact, ctx.stack))
    return [carried] * len(op.results)


@handles("tt.call")
def _call(g: AccessGraph, op: Op, env, ctx) -> list[Value]:
    func = g.m.module.funcs.get(op.callee)
    if func is None:
        raise Refusal("call", f"call of @{op.callee}, which the module does not define", op.loc)
    if len(ctx.stack) > 32:
        raise Refusal("call", "calls nested more than 32 deep", op.loc)
    inner = {name: g.get(env, o) for (name, _), o in zip(func.args, op.operands)}
    return g.eval_body(func.body, inner, Ctx(ctx.pred, ctx.iters, ctx.exact, ctx.stack + (op.loc,)))


@handles("tt.histogram")
def _histogram(g: AccessGraph, op: Op, env, ctx) -> list[Value]:
    """`tl.histogram`: each bin counts lanes, so it lies in [0, lanes] whatever the values are, loaded
    or not; exact where every value is a known bin and no mask takes lanes out (Triton leaves values
    outside the bins undefined, so only those are counted exactly)."""
    ty = op.result_types[0]
    bins = ty.shape[-1] if ty.shape else 0
    n = histogram_lanes(op.text + " " + op.tail)
    if n is None or not bins:
        return [Opaque("out-of-vocabulary", "a histogram whose input size the IR does not give", op.loc)]
    x = g.get(env, op.operands[0])
    if isinstance(x, RangeV) and x.undef is None and np.array_equal(x.lo, x.hi):
        x = IntV(x.lo, x.bits)  # one value per lane (a declared tensor pinned to one value): counted exactly
    if len(op.operands) == 1 and isinstance(x, IntV) and x.a.size and ((x.a >= 0) & (x.a < bins)).all():
        full = np.broadcast_to(x.a, (x.a.shape[0], n)) if x.a.ndim == 2 else x.a.reshape(x.a.shape[0], -1)
        if full.shape[1] == n:
            rows = full.shape[0]
            flat = (full + (np.arange(rows, dtype=np.int64) * bins)[:, None]).reshape(-1)
            return [IntV(np.bincount(flat, minlength=rows * bins).reshape(rows, bins).astype(np.int64), ty.bits)]
    zeros = np.zeros((1, bins), dtype=np.int64)
    return [RangeV(zeros, zeros + n, ty.bits, total=n if len(ty.shape) == 1 else None)]


@handles("tt.gather")
def _gather(g: AccessGraph, op: Op, env, ctx) -> list[Value]:
    """`tl.gather(src, index, axis)`: each lane takes a lane of `src` along `axis`. Exact where both
    are values; a declared-range source gives the hull of its lanes along that axis. An index that
    may leave the source reads what Triton leaves undefined: not modelled."""
    src, index = (g.get(env, o) for o in op.operands[:2])
    axis_m = re.search(r"axis = (\d+)", op.text)
    ty = op.result_types[0]
    n = gather_source_extent(op.text, int(axis_m.group(1))) if axis_m else None
    if any(isinstance(v, Opaque) for v in (src, index)):
        return [opaque_of(src, index)]
    if n is None or not isinstance(index, (IntV, RangeV)) or not isinstance(src, (IntV, RangeV)) or ty.bits <= 1:
        return [Opaque("out-of-vocabulary", "a gather the model does not follow", op.loc)]
    axis = int(axis_m.group(1)) + 1  # type: ignore[union-attr]
    ilo, ihi = ranges.bounds(index)
    if (ilo < 0).any() or (ihi >= n).any() or getattr(index, "undef", None) is not None:
        return [Opaque("data", "a gather whose index may leave its source", op.loc)]
    if isinstance(src, IntV) and isinstance(index, IntV):
        rows = max(src.a.shape[0], index.a.shape[0])
        s = np.broadcast_to(src.a, (rows, *src.a.shape[1:]))
        i = np.broadcast_to(index.a, (rows, *ty.shape))
        s = np.broadcast_to(s, tuple(n if d == axis else i.shape[d] for d in range(i.ndim)))
        return [IntV(np.take_along_axis(s, i, axis), src.bits)]
    if isinstance(src, RangeV) and src.undef is not None:
        return [Opaque("data", "a gather of lanes loaded without `other`", op.loc)]
    slo, shi = ranges.bounds(src)
    lo, hi = slo.min(axis=axis, keepdims=True), shi.max(axis=axis, keepdims=True)
    return [RangeV(lo, hi, src.bits)]


@handles("tt.scan")
def _scan(g: AccessGraph, op: Op, env, ctx) -> list[Value]:
    """`tl.cumsum` of integers (exact) or of declared-range values (the running sums of each end)."""
    vals = [g.get(env, o) for o in op.operands]
    body = op.regions[0].blocks[0].ops if op.regions else []
    combine = [o.name for o in body if o.name != "tt.scan.return"]
    axis_m = re.search(r"axis = (\d+)", op.text + " " + op.tail)
    if len(vals) == 1 and isinstance(vals[0], (IntV, RangeV)) and combine == ["arith.addi"] and axis_m and vals[0].bits > 1:
        axis = int(axis_m.group(1)) + 1
        reverse = "reverse = true" in op.text + " " + op.tail
        v = vals[0]
        lanes = tuple(op.result_types[0].shape) if op.result_types else np.shape(ranges.bounds(v)[0])[1:]
        if isinstance(v, IntV):
            full = np.broadcast_to(v.a, (g.P, *lanes)).astype(np.int64)  # wraps as the machine's sum does
            sums = np.flip(np.cumsum(np.flip(full, axis), axis=axis), axis) if reverse else np.cumsum(full, axis=axis)
            return [IntV(wrap(sums, v.bits), v.bits)]
        if v.undef is not None and v.undef.any():
            return [Opaque("data", "a cumulative sum over lanes loaded without `other`", op.loc)]
        rows = max(v.lo.shape[0], v.hi.shape[0])  # the programs' bounds differ only where v's do
        bounded = ranges.running_sums(ranges.bounds(v), (rows, *lanes), axis, reverse, v.total)
        if not bounded.within(v.bits):
            return [Opaque("data", "a cumulative sum of a loaded index may wrap", op.loc)]
        got = bounded.as_int64()  # each lane is its own term plus the terms before it
        return [RangeV(got.lo, got.hi, v.bits, term=(v, got.before_lo, got.before_hi))]
    return [
        opaque_of(*vals)
        if any(isinstance(v, Opaque) for v in vals)
        else Opaque("out-of-vocabulary", "a scan is not modelled", op.loc)
    ] * len(op.results)


def _reduced(v: RangeV, fn, op: Op, what: str) -> Value:
    """A reduction of a declared-range value, taken end by end (sums, maxima and minima are monotone)."""
    if v.undef is not None and v.undef.any():
        return Opaque("data", f"{what} over lanes loaded without `other`", op.loc)
    out = RangeV(fn(v.lo), fn(v.hi), v.bits)
    if not ranges.fits(out, v.bits):
        return Opaque("data", f"{what} of a loaded index may wrap", op.loc)
    return out


@handles("tt.reduce")
def _reduce(g: AccessGraph, op: Op, env, ctx) -> list[Value]:
    vals = [g.get(env, o) for o in op.operands]
    body = op.regions[0].blocks[0].ops if op.regions else []
    combine = [o.name for o in body if o.name != "tt.reduce.return"]
    axis_m = re.search(r"axis = (\d+)", op.text + " " + op.tail)
    fns: dict[str, Callable[..., np.ndarray]] = {
        "arith.addi": np.sum,
        "arith.maxsi": np.max,
        "arith.minsi": np.min,
        "arith.ori": np.any,
        "arith.andi": np.all,
    }
    if len(vals) == 1 and isinstance(vals[0], IntV) and len(combine) == 1 and combine[0] in fns and axis_m:
        v = vals[0]
        full = np.broadcast_to(v.a, (g.P,) + v.a.shape[1:])
        out = fns[combine[0]](full, axis=int(axis_m.group(1)) + 1)
        return [IntV(wrap(out.astype(np.int64), v.bits) if v.bits > 1 else out.astype(bool), v.bits)]
    if (
        len(vals) == 1
        and isinstance(vals[0], RangeV)
        and len(combine) == 1
        and axis_m
        and combine[0] in ("arith.addi", "arith.maxsi", "arith.minsi")
    ):
        fn, axis = fns[combine[0]], int(axis_m.group(1)) + 1

        def run(a: np.ndarray) -> np.ndarray:
            return fn(np.broadcast_to(a, (g.P,) + a.shape[1:]).astype(np.int64), axis=axis)

        return [_reduced(vals[0], run, op, "a reduction")]
    return [
        opaque_of(*vals)
        if any(isinstance(v, Opaque) for v in vals)
        else Opaque("out-of-vocabulary", "this reduction is not modelled", op.loc)
    ] * len(op.results)
