"""Affine handlers of pointers, memory ops and structured control flow.

A loop is evaluated twice: a probe pass finds each carried value's uniform step (an induction
variable), the real pass evaluates the body once with the iteration as a variable `t`. Program-uniform
branches narrow the running programs; everything else leaves the fragment (`NotAffine`).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

import numpy as np

from tilelens_lsp.engines.affine.forms import (
    Cond,
    Ctx,
    Form,
    NotAffine,
    Pieces,
    Ptr,
    all_sides,
    blend,
    coeffs,
    data_of,
    make_pieces,
    parts_of,
    uniform_value,
)
from tilelens_lsp.engines.affine.handlers import handles
from tilelens_lsp.engines.values import Opaque
from tilelens_lsp.ttir.reader import Op

if TYPE_CHECKING:
    from tilelens_lsp.engines.affine.summary import AffineGraph


@handles("tt.addptr")
def _addptr(g: AffineGraph, op: Op, env, ctx) -> list[Any]:
    p, off = (g.get(env, o) for o in op.operands[:2])
    if isinstance(p, Opaque):
        return [p]
    if not isinstance(p, Ptr):
        return [Opaque("out-of-vocabulary", "pointer arithmetic on a value the model does not follow", op.loc)]
    if isinstance(off, Opaque):  # named as the enumeration names it, so either refuses it alike
        if off.why == "data":
            return [g.beyond_engines(Opaque("data", f"an offset computed from {off.message or 'loaded data'}", op.loc), off)]
        return [g.beyond_engines(Opaque(off.why, off.message, op.loc), off)]
    if not isinstance(off, (Form, Pieces)):
        return [Opaque("out-of-vocabulary", "a pointer offset the model does not follow", op.loc)]
    shape = op.result_types[0].shape
    if isinstance(off, Pieces) or isinstance(p.off, Pieces):
        parts = []
        for gp, fp in parts_of(p.off):
            for go, fo in parts_of(off):
                moved = Form(fp.c + fo.c * p.pointee, coeffs((fp.k, 1), (fo.k, p.pointee)), shape, 64, all_sides(fp, fo))
                parts.append((gp + go, g.fit(moved, op)))
        return [Ptr(p.arg, make_pieces(parts, shape, 64), p.pointee)]
    moved = Form(p.off.c + off.c * p.pointee, coeffs((p.off.k, 1), (off.k, p.pointee)), shape, 64, all_sides(p, off))
    return [Ptr(p.arg, g.fit(moved, op), p.pointee)]


@handles("tt.load")
def _load(g: AffineGraph, op: Op, env, ctx) -> list[Any]:
    mask = g.get(env, op.operands[1]) if len(op.operands) > 1 else None
    ptr = g.get(env, op.operands[0])
    info = g.m.args.get(getattr(ptr, "arg", ""))
    if info is not None and info.values:
        raise NotAffine("a load of an index with a declared value range (the enumeration bounds it)")
    g.record(op, "load", ptr, mask, ctx)
    # the summary bounds no unknown mask; undeclared data, which the enumeration does not compute either
    out: Opaque[None] = g.beyond_engines(Opaque("data", f"data loaded from {info.name}" if info else "loaded data", op.loc))
    g.loaded_from[id(out)] = (out, ptr, op.operands[1] if len(op.operands) > 1 else None)
    return [out]


@handles("tt.store")
def _store(g: AffineGraph, op: Op, env, ctx) -> list[Any]:
    mask = g.get(env, op.operands[2]) if len(op.operands) > 2 else None
    value = g.get(env, op.operands[1])
    _, source, load_mask = g.loaded_from.get(id(value), (None, None, None))
    if load_mask is not None and (len(op.operands) < 3 or load_mask != op.operands[2]):
        source = None  # lanes the load masked off hold `other`, not the element
    g.record(op, "store", g.get(env, op.operands[0]), mask, ctx, copied=source)
    return []


@handles("tt.atomic_rmw")
def _atomic_rmw(g: AffineGraph, op: Op, env, ctx) -> list[Any]:
    mask = g.get(env, op.operands[2]) if len(op.operands) > 2 else None
    g.record(op, "atomic", g.get(env, op.operands[0]), mask, ctx)
    return [g.beyond_engines(Opaque("data", "an atomic's old value", op.loc))]


@handles("tt.atomic_cas")
def _atomic_cas(g: AffineGraph, op: Op, env, ctx) -> list[Any]:
    g.record(op, "atomic", g.get(env, op.operands[0]), None, ctx)
    return [g.beyond_engines(Opaque("data", "an atomic's old value", op.loc))]


# -- control flow


@handles("scf.for")
def _for(g: AffineGraph, op: Op, env, ctx) -> list[Any]:
    lb, ub, step = (g.get(env, o) for o in op.operands[:3])
    if not all(isinstance(x, Form) and not x.k for x in (lb, ub, step)):
        raise NotAffine("loop bounds outside the affine fragment")
    st = uniform_value(step)
    if st is None or st <= 0:
        raise NotAffine("a loop step that varies or is not positive")
    inits = [g.get(env, o) for o in op.operands[3:]]
    iv, carried = op.for_header.iv, op.for_header.iter_args
    trips = np.where(ctx.pred, np.maximum(0, -((lb.c - ub.c) // st)), 0)
    T = int(trips.max()) if trips.size else 0
    if T == 0:
        g.mark_unreachable(op.regions[0].blocks[0], ctx)  # no program enters the loop
        return inits
    t = f"t{g.loops}"
    g.loops += 1
    g.extent[t] = T
    ivf = g.fit(Form(lb.c, {t: st} if T > 1 else {}, (), lb.bits), op)
    body = op.regions[0].blocks[0]
    steps = _probe_steps(g, body, {**env, iv: ivf}, carried, inits, Ctx(ctx.pred & (trips > 0), ctx.cons, ctx.stack))
    # the real pass: iteration t sees init + t·step
    body_ctx = _trip_ctx(ctx, trips, T, t)
    inner = dict(env)
    inner[iv] = ivf
    for name, v, d in zip(carried, inits, steps):
        inner[name] = _advance(v, d, {t: d} if T > 1 and d is not None else {}, g, op)
    g.eval_block(body, inner, body_ctx)
    return _exits(g, op, inits, steps, trips)


def _trip_ctx(ctx: Ctx, trips: np.ndarray, T: int, t: str) -> Ctx:
    """The body's context: programs with a trip to run, iteration t below their own trip count."""
    running = ctx.pred & (trips > 0)
    return Ctx(running, ctx.cons + (Form(trips - 1, {t: -1}, (), 64),) if T > 1 else ctx.cons, ctx.stack)


_WHILE_ARG = re.compile(r"(%[\w$.\-]+)\s*=\s*%[\w$.\-#]+")


def _counted_while(g: AffineGraph, op: Op, env) -> tuple[int, Form, int]:
    """A while loop counted like a for loop: its before-region is one `iv < bound` (or `<=`) of a
    carried value against a program-uniform value from outside the loop, forwarding the carried
    values unchanged. Returns (the carried index of iv, the bound, 1 for `<=` else 0); NotAffine
    for any other shape."""
    before = op.regions[0].blocks[0]
    names = _WHILE_ARG.findall(op.text.split(":")[0])
    if len(before.ops) != 2 or len(names) != len(op.operands):
        raise NotAffine("a while loop whose condition is not one comparison")
    cmp, term = before.ops
    if cmp.name != "arith.cmpi" or cmp.predicate not in ("slt", "sle") or term.name != "scf.condition":
        raise NotAffine("a while loop whose condition is not a signed iv < bound")
    if term.operands[:1] != cmp.results[:1] or list(term.operands[1:]) != names:
        raise NotAffine("a while loop whose condition changes the carried values")
    a, b = cmp.operands[:2]
    if a not in names or b in names or b not in env:
        raise NotAffine("a while loop whose bound is carried or not program-uniform")
    bound = env[b]
    if not isinstance(bound, Form) or bound.k or bound.shape:
        raise NotAffine("a while loop whose bound is not program-uniform")
    return names.index(a), bound, 1 if cmp.predicate == "sle" else 0


@handles("scf.while")
def _while(g: AffineGraph, op: Op, env, ctx) -> list[Any]:
    """A grid-stride while loop (`while iv < bound: ...; iv += step`), with a program-uniform bound
    and every carried value an induction: summarized like a for loop, its trip count in closed form.
    The step of iv must be positive; iv + step past its width leaves the fragment (`fit`), so the
    enumeration decides a loop that may wrap. Any other while loop leaves the fragment."""
    j, bound, inclusive = _counted_while(g, op, env)
    after = op.regions[1].blocks[0]
    inits = [g.get(env, o) for o in op.operands]
    start = inits[j]
    if not isinstance(start, Form) or start.k or start.shape:
        raise NotAffine("a while loop whose induction does not start program-uniform")
    if len(after.args) != len(inits):
        raise NotAffine("a while loop whose do-region takes other values than it carries")
    t = f"t{g.loops}"
    g.loops += 1
    live = ctx.pred & (start.c < bound.c + inclusive)
    steps = _probe_steps(g, after, dict(env), after.args, inits, Ctx(live, ctx.cons, ctx.stack))
    st = steps[j]
    if st is None or st <= 0:
        raise NotAffine("a while loop whose induction does not advance by a positive step")
    span = bound.c.astype(np.int64) + inclusive - start.c.astype(np.int64)
    trips = np.where(ctx.pred, np.maximum(0, -(-span // st)), 0)
    T = int(trips.max()) if trips.size else 0
    if T == 0:
        g.mark_unreachable(after, ctx)  # no program enters the loop
        return inits
    g.extent[t] = T
    body_ctx = _trip_ctx(ctx, trips, T, t)
    inner = dict(env)
    for name, v, d in zip(after.args, inits, steps):
        inner[name] = _advance(v, d, {t: d} if T > 1 and d is not None else {}, g, op)
    g.eval_block(after, inner, body_ctx)
    return _exits(g, op, inits, steps, trips)


def _probe_steps(g: AffineGraph, body, inner: dict, names, inits: list[Any], ctx: Ctx) -> list[int | None]:
    """The probe pass: the body evaluated once with each carried value as init + s (s an unknown);
    an induction variable yields s + (a uniform step). Returns each carried value's step (None for
    data). Nothing is recorded while `g.probing` is set."""
    probes = []
    for i, (name, v) in enumerate(zip(names, inits)):
        s = f"s{g.loops}_{i}"
        pv = _probe_value(v, s)
        probes.append((s, pv))
        inner[name] = pv
    g.probing += 1
    try:
        yielded = g.eval_block(body, inner, ctx)
    finally:
        g.probing -= 1
    return [_induction(pv, y, s) for (s, pv), y in zip(probes, yielded)]


def _probe_value(v: Any, s: str) -> Any:
    """A carried value as init + s, s the probe's unknown step."""
    if isinstance(v, Pieces) or (isinstance(v, Ptr) and isinstance(v.off, Pieces)):
        raise NotAffine("a loop-carried piecewise value")
    if isinstance(v, Form):
        return Form(v.c, coeffs((v.k, 1), ({s: 1}, 1)), v.shape, v.bits, v.side)
    if isinstance(v, Ptr) and isinstance(v.off, Form):
        return Ptr(v.arg, Form(v.off.c, coeffs((v.off.k, 1), ({s: 1}, 1)), v.off.shape, 64, v.off.side), v.pointee)
    if isinstance(v, Opaque):
        return v
    raise NotAffine("a loop-carried mask")


def _exits(g: AffineGraph, op: Op, inits: list[Any], steps: list[int | None], trips: np.ndarray) -> list[Any]:
    """The carried values when each program leaves the loop: init + trips·step."""
    outs: list[Any] = []
    for v, d in zip(inits, steps):
        if d is None:
            outs.append(Opaque("data", "a value carried by a loop", op.loc) if not isinstance(v, Opaque) else v)
        elif isinstance(v, Form):
            outs.append(g.fit(Form(v.c + trips * d, dict(v.k), v.shape, v.bits, v.side), op))
        else:
            outs.append(
                Ptr(v.arg, g.fit(Form(v.off.c + trips * d, dict(v.off.k), v.off.shape, 64, v.off.side), op), v.pointee)
            )
    return outs


def _induction(pv: Any, y: Any, s: str) -> int | None:
    """The uniform step by which a carried value advances each iteration; None for a value that is
    data (an accumulator); NotAffine for anything else."""
    if isinstance(pv, Opaque):
        return None
    if isinstance(y, Opaque):
        return None
    if isinstance(pv, Ptr):
        if not isinstance(y, Ptr) or y.arg != pv.arg or y.pointee != pv.pointee:
            raise NotAffine("a loop-carried pointer that changes argument")
        pv, y = pv.off, y.off
    if not isinstance(y, Form):
        raise NotAffine("a loop-carried value of changing kind")
    diff = coeffs((y.k, 1), (pv.k, -1))
    if diff or [id(f) for f in y.side] != [id(f) for f in pv.side]:
        raise NotAffine("a loop-carried value that is not an induction variable")
    d = y.c - pv.c
    if not (d == d.reshape(-1)[0]).all():
        raise NotAffine("a loop-carried step that differs between programs")
    return int(d.reshape(-1)[0])


def _advance(v: Any, d: int | None, k: dict[str, int], g: AffineGraph, op: Op) -> Any:
    if d is None:
        return v if isinstance(v, Opaque) else Opaque("data", "a value carried by a loop", op.loc)
    if isinstance(v, Form):
        return g.fit(Form(v.c, coeffs((v.k, 1), (k, 1)), v.shape, v.bits, v.side), op)
    return Ptr(v.arg, g.fit(Form(v.off.c, coeffs((v.off.k, 1), (k, 1)), v.off.shape, 64, v.off.side), op), v.pointee)


@handles("scf.if")
def _if(g: AffineGraph, op: Op, env, ctx) -> list[Any]:
    cond = g.get(env, op.operands[0])
    if not isinstance(cond, Cond) or cond.cons:
        raise NotAffine("a branch condition outside the affine fragment")
    c = np.broadcast_to(cond.pred, (g.P,))
    then_b = op.regions[0].blocks[0]
    else_b = op.regions[1].blocks[0] if len(op.regions) > 1 else None
    then_v = g.eval_block(then_b, dict(env), Ctx(ctx.pred & c, ctx.cons, ctx.stack))
    else_v = g.eval_block(else_b, dict(env), Ctx(ctx.pred & ~c, ctx.cons, ctx.stack)) if else_b else []
    return [blend(c, t, e, g.P) for t, e in zip(then_v, else_v)]


@handles("tt.reduce", "tt.scan")
def _reduce(g: AffineGraph, op: Op, env, ctx) -> list[Any]:
    vals = [g.get(env, o) for o in op.operands]
    if all(isinstance(v, Opaque) for v in vals):
        return [data_of(*vals)] * len(op.results)
    raise NotAffine("a reduction of lane values")


@handles("tt.call")
def _call(g: AffineGraph, op: Op, env, ctx) -> list[Any]:
    func = g.m.module.funcs.get(op.callee)
    if func is None or len(ctx.stack) > 32:
        raise NotAffine("a call the summary does not follow")
    inner = {name: g.get(env, o) for (name, _), o in zip(func.args, op.operands)}
    return g.eval_body(func.body, inner, Ctx(ctx.pred, ctx.cons, ctx.stack + (op.loc,)))
