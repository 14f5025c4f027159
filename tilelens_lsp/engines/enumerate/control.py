"""Enumeration handlers of structured control flow: loops, branches, while loops, calls, reductions.

Loops run iteration by iteration with a per-program `active` predicate; branches on program-uniform
conditions narrow the running programs, branches on loaded data run both sides as over-approximations.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import numpy as np

from tilelens_lsp.engines.enumerate.table import Ctx, blend, handles, opaque_of
from tilelens_lsp.engines.values import IntV, Opaque, Value, wrap
from tilelens_lsp.refusal import Refusal
from tilelens_lsp.ttir.reader import Op

if TYPE_CHECKING:
    from tilelens_lsp.engines.enumerate.graph import AccessGraph


@handles("scf.for")
def _for(g: AccessGraph, op: Op, env, ctx) -> list[Value]:
    lb, ub, step = (g.need_int(g.get(env, o), op, "a loop bound") for o in op.operands[:3])
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
    if not trips.size or int(trips.max()) == 0:
        g.mark_unreachable(body, ctx)       # no program enters the loop
    for t in range(int(trips.max()) if trips.size else 0):
        active = trips > t
        inner = dict(env)
        uniform = lb.a.shape[0] == 1 and step.a.shape[0] == 1   # the same iv in every program
        inner[iv] = IntV(wrap((lb.a + t * step.a) if uniform else (lbv + t * stv), lb.bits), lb.bits)
        for name, v in zip(carried, values):
            inner[name] = v
        yielded = g.eval_block(body, inner, Ctx(active, ctx.iters + (t,), ctx.exact, ctx.stack))
        values = [blend(active, new, old, op) for new, old in zip(yielded, values)]
    return values


@handles("scf.if")
def _if(g: AccessGraph, op: Op, env, ctx) -> list[Value]:
    cond = g.get(env, op.operands[0])
    then_b = op.regions[0].blocks[0]
    else_b = op.regions[1].blocks[0] if len(op.regions) > 1 else None
    if isinstance(cond, IntV):
        c = np.broadcast_to(cond.a.reshape(cond.a.shape[:1]), (g.P,)).astype(bool)
        then_v = g.eval_block(then_b, dict(env), Ctx(ctx.pred & c, ctx.iters, ctx.exact, ctx.stack))
        else_v = (g.eval_block(else_b, dict(env), Ctx(ctx.pred & ~c, ctx.iters, ctx.exact, ctx.stack))
                  if else_b else [])
        return [blend(c, t, e, op) for t, e in zip(then_v, else_v)]
    if isinstance(cond, Opaque):
        # a condition the model does not compute (loaded data, a float argument): both branches may
        # run, so their accesses become over-approximations
        then_v = g.eval_block(then_b, dict(env), Ctx(ctx.pred, ctx.iters, False, ctx.stack))
        else_v = g.eval_block(else_b, dict(env), Ctx(ctx.pred, ctx.iters, False, ctx.stack)) if else_b else []
        return [t if isinstance(t, Opaque) else Opaque("data", "a value chosen by loaded data", op.loc)
                for t, _ in zip(then_v, else_v)]
    raise Refusal("control-flow" if not isinstance(cond, Opaque) or cond.why == "float" else cond.why,
                  "a branch condition the model does not compute", op.loc)


WHILE_LIMIT = 1 << 16   # iterations of one while loop before it is refused as non-terminating


@handles("scf.while")
def _while(g: AccessGraph, op: Op, env, ctx) -> list[Value]:
    """Iterate a while loop per program while its condition is computable (grid-stride loops);
    when the condition depends on loaded data (spin locks, searches), fall back to `_while_opaque`."""
    before = op.regions[0].blocks[0]
    after = op.regions[1].blocks[0]
    names = [a.split("=")[0].strip() for a in re.findall(r"(%[\w$.\-]+\s*=\s*%[\w$.\-#]+)",
                                                          op.text.split(":")[0])]
    carried = [g.get(env, o) for o in op.operands]
    active = ctx.pred.copy()
    final: list[Value] | None = None
    for t in range(WHILE_LIMIT):
        inner = dict(env)
        inner.update(zip(names, carried))
        out = g.eval_block(before, inner, Ctx(active, ctx.iters + (t,), ctx.exact, ctx.stack))
        cond, forwarded = out[0], out[1:]
        if not isinstance(cond, IntV):
            if t == 0:
                return _while_opaque(g, op, env, ctx)
            raise Refusal("data-dependent-bound", "a while condition that depends on loaded data", op.loc)
        c = np.broadcast_to(cond.a.reshape(cond.a.shape[:1]), (g.P,)).astype(bool) & active
        leaving = active & ~c
        final = forwarded if final is None else [blend(leaving, f, old, op) for f, old in zip(forwarded, final)]
        if not c.any():
            if t == 0:
                g.mark_unreachable(after, ctx)   # the do-region never runs
            return final
        inner = dict(env)
        inner.update(zip(after.args, forwarded))
        yielded = g.eval_block(after, inner, Ctx(c, ctx.iters + (t,), ctx.exact, ctx.stack))
        carried = [blend(c, new, old, op) for new, old in zip(yielded, carried)]
        active = c
    raise Refusal("control-flow", f"a while loop still running after {WHILE_LIMIT} iterations", op.loc)


def _while_opaque(g: AccessGraph, op: Op, env, ctx) -> list[Value]:
    """A data-dependent while loop runs its before-region at least once: accesses whose addresses do
    not depend on the carried values are recorded (the do-region's as an over-approximation, since it
    may run zero times); accesses that do depend on them are refused."""
    carried = Opaque("control-flow", "a value carried by a while loop", op.loc)
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


@handles("tt.scan")
def _scan(g: AccessGraph, op: Op, env, ctx) -> list[Value]:
    vals = [g.get(env, o) for o in op.operands]
    return [opaque_of(*vals) if any(isinstance(v, Opaque) for v in vals)
            else Opaque("out-of-vocabulary", "a scan is not modelled", op.loc)] * len(op.results)


@handles("tt.reduce")
def _reduce(g: AccessGraph, op: Op, env, ctx) -> list[Value]:
    vals = [g.get(env, o) for o in op.operands]
    body = op.regions[0].blocks[0].ops if op.regions else []
    combine = [o.name for o in body if o.name != "tt.reduce.return"]
    axis_m = re.search(r"axis = (\d+)", op.text + " " + op.tail)
    fns = {"arith.addi": np.sum, "arith.maxsi": np.max, "arith.minsi": np.min, "arith.ori": np.any,
           "arith.andi": np.all}
    if (len(vals) == 1 and isinstance(vals[0], IntV) and len(combine) == 1 and combine[0] in fns and axis_m):
        v = vals[0]
        full = np.broadcast_to(v.a, (g.P,) + v.a.shape[1:])
        out = fns[combine[0]](full, axis=int(axis_m.group(1)) + 1)
        return [IntV(wrap(out.astype(np.int64), v.bits) if v.bits > 1 else out.astype(bool), v.bits)]
    return [opaque_of(*vals) if any(isinstance(v, Opaque) for v in vals)
            else Opaque("out-of-vocabulary", "this reduction is not modelled", op.loc)] * len(op.results)
