"""Affine handlers of integer arithmetic, comparisons, selects, casts and shape ops, and the handler table.

`HANDLERS` maps op names to handlers (this module's and `control`'s). Constants fold with the shared
integer semantics (`values.BINARY_OPS`); sums, products by constants, divisions by constants and
min/max of lane forms stay forms (or pieces); anything else raises `NotAffine`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

import numpy as np

from tilelens_lsp.engines.affine.forms import (
    MAX_QUOTIENTS,
    Cond,
    Ctx,
    Form,
    NotAffine,
    Pieces,
    Ptr,
    all_sides,
    blend,
    coeffs,
    cond_regions,
    const_form,
    data_of,
    make_pieces,
    negate,
    parts_of,
    relabel,
    uniform_value,
)
from tilelens_lsp.engines.values import BINARY_OPS, COMPARISONS, Opaque, elem_bytes, unsigned, widens_i1, wrap
from tilelens_lsp.ttir.reader import Op, Type

if TYPE_CHECKING:
    from tilelens_lsp.engines.affine.summary import AffineGraph

HANDLERS: dict[str, Callable[[AffineGraph, Op, dict, Ctx], list[Any]]] = {}


def handles(*names: str):
    def deco(fn):
        for n in names:
            HANDLERS[n] = fn
        return fn

    return deco


@handles("arith.constant")
def _constant(g: AffineGraph, op: Op, env, ctx) -> list[Any]:
    const = op.int_constant
    if const is None:
        return [Opaque("float", "a floating-point constant", op.loc)]
    if const.elements is not None:
        raise NotAffine("a constant tensor of distinct values")
    if const.bits == 1:
        return [Cond(np.array([bool(const.value)]), (), const.shape)]
    return [Form(wrap(np.array([const.value], dtype=np.int64), const.bits), {}, const.shape, const.bits)]


@handles("tt.get_program_id")
def _program_id(g: AffineGraph, op: Op, env, ctx) -> list[Any]:
    return [g.pids[op.program_axis]]


@handles("tt.get_num_programs")
def _num_programs(g: AffineGraph, op: Op, env, ctx) -> list[Any]:
    return [const_form(g.m.grid[op.program_axis], (), 32)]


@handles("tt.make_range")
def _make_range(g: AffineGraph, op: Op, env, ctx) -> list[Any]:
    start, end = op.range_bounds
    return [Form(np.array([start], dtype=np.int64), {"L0": 1} if end - start > 1 else {}, (end - start,), 32)]


def _concrete(fn, a: Form, b: Form, bits: int, checked: bool, op: Op) -> np.ndarray:
    with np.errstate(all="ignore"):
        exact = fn(a.c, b.c, bits)
    if checked and bits < 64 and exact.size and (exact.min() < -(1 << (bits - 1)) or exact.max() > (1 << (bits - 1)) - 1):
        raise NotAffine(f"{op.name} overflows i{bits}: enumeration reports it")
    return wrap(exact.astype(np.int64), bits)


def _divmod(g: AffineGraph, name: str, a: Form, d: int, bits: int) -> Form:
    """A division or remainder of a form with variables by a positive constant."""
    lo, hi = g.box(a)
    floor_ok = name in ("arith.floordivsi", "arith.shrsi", "arith.ceildivsi")
    if not floor_ok and lo.min() < 0:
        raise NotAffine(f"{name} of a value that may be negative")
    rem = name in ("arith.remsi", "arith.remui")
    if name == "arith.ceildivsi":
        neg = Form(-a.c, {v: -x for v, x in a.k.items()}, a.shape, bits, a.side)
        down = _divmod(g, "arith.floordivsi", neg, d, bits)
        return Form(-down.c, {v: -x for v, x in down.k.items()}, a.shape, bits, down.side)
    if all(x % d == 0 for x in a.k.values()):
        if rem:
            return Form(np.mod(a.c, d), {}, a.shape, bits)
        return Form(np.floor_divide(a.c, d), {v: x // d for v, x in a.k.items()}, a.shape, bits, a.side)
    qlo, qhi = np.floor_divide(lo, d), np.floor_divide(hi, d)
    if (qlo == qhi).all():
        if rem:
            return Form(a.c - qlo * d, dict(a.k), a.shape, bits, a.side, (np.zeros(1, np.int64), np.full(1, d - 1)))
        return Form(qlo, {}, a.shape, bits, a.side)
    buckets = int((qhi - qlo).max()) + 1
    if buckets > MAX_QUOTIENTS:
        raise NotAffine(f"{name} splits a lane or loop range into more than {MAX_QUOTIENTS} pieces")
    # a = d·(qlo + q) + r with 0 <= r < d: r and q are affine in the lanes and a quotient variable q
    q = g.quotient(buckets)
    r = Form(a.c - d * qlo, coeffs((a.k, 1), ({q: -d}, 1)), a.shape, 64)
    side = a.side + (r, Form(d - 1 - r.c, {v: -x for v, x in r.k.items()}, a.shape, 64))
    if rem:
        return Form(r.c, dict(r.k), a.shape, bits, side, (np.zeros(1, np.int64), np.full(1, d - 1)))
    return Form(qlo, {q: 1}, a.shape, bits, side, (qlo, qhi))


_DIVS = {
    "arith.divsi",
    "arith.divui",
    "arith.floordivsi",
    "arith.ceildivsi",
    "arith.remsi",
    "arith.remui",
    "arith.shrsi",
    "arith.shrui",
}


def _binary(name: str, fn, checked: bool):
    def handler(g: AffineGraph, op: Op, env, ctx) -> list[Any]:
        a, b = (g.get(env, o) for o in op.operands[:2])
        ty = op.result_types[0]
        if isinstance(a, Cond) and isinstance(b, Cond):
            return [_bool_op(name, a, b, ty)]
        if isinstance(a, Pieces) or isinstance(b, Pieces):
            if not isinstance(a, (Form, Pieces)) or not isinstance(b, (Form, Pieces)):
                return (
                    [data_of(a, b)]
                    if isinstance(a, Opaque) or isinstance(b, Opaque)
                    else [Opaque("out-of-vocabulary", f"{op.name} of a pointer or mask", op.loc)]
                )
            parts = []
            for ga, fa in parts_of(a):
                for gb, fb in parts_of(b):
                    for gr, fr in parts_of(forms(g, op, ctx, fa, fb)):
                        parts.append((ga + gb + gr, fr))
            return [make_pieces(parts, ty.shape, ty.bits or max(a.bits, b.bits))]
        if not isinstance(a, Form) or not isinstance(b, Form):
            if isinstance(a, (Ptr, Cond)) or isinstance(b, (Ptr, Cond)):
                return [Opaque("out-of-vocabulary", f"{op.name} of a pointer or mask", op.loc)]
            return [data_of(a, b)]
        return [forms(g, op, ctx, a, b)]

    def forms(g: AffineGraph, op: Op, ctx: Ctx, a: Form, b: Form) -> "Form | Pieces":
        ty = op.result_types[0]
        bits = ty.bits or max(a.bits, b.bits)
        shape = ty.shape
        if not a.k and not b.k:
            return g.fit(Form(_concrete(fn, a, b, bits, checked, op), {}, shape, bits), op)
        if name in ("arith.addi", "arith.subi"):
            s = 1 if name == "arith.addi" else -1
            return g.fit(Form(a.c + s * b.c, coeffs((a.k, 1), (b.k, s)), shape, bits, all_sides(a, b)), op)
        if name in ("arith.muli", "arith.shli"):
            if name == "arith.shli":
                shift = uniform_value(b)
                if shift is None or not 0 <= shift < bits:
                    raise NotAffine("a shift by a varying amount")
                return g.fit(Form(a.c << shift, coeffs((a.k, 1 << shift)), shape, bits, a.side), op)
            sa, sb = uniform_value(a), uniform_value(b)
            if sb is not None:
                return g.fit(Form(a.c * sb, coeffs((a.k, sb)), shape, bits, a.side), op)
            if sa is not None:
                return g.fit(Form(b.c * sa, coeffs((b.k, sa)), shape, bits, b.side), op)
            raise NotAffine("a product of two varying values")
        if name in _DIVS:
            d = uniform_value(b)
            if d is None or b.k:
                raise NotAffine("a division by a varying value")
            if name in ("arith.shrsi", "arith.shrui"):
                if not 0 <= d < 63:
                    raise NotAffine("a shift out of range")
                d = 1 << d
            if d <= 0:
                raise NotAffine("a division by a non-positive value")
            return g.fit(_divmod(g, name, a, d, bits), op)
        if name in ("arith.minsi", "arith.maxsi", "arith.minui", "arith.maxui"):
            (alo, ahi), (blo, bhi) = g.box(a), g.box(b)
            if name.endswith("ui") and (alo.min() < 0 or blo.min() < 0):
                raise NotAffine("an unsigned min/max of a value that may be negative")
            a_first = (ahi <= blo).all()
            b_first = (bhi <= alo).all()
            sides = all_sides(a, b)
            if not (a_first or b_first):  # the winner varies: two regions, split at a = b
                if "min" in name:  # a wins where a <= b: b - a >= 0
                    a_wins = Form(b.c - a.c, coeffs((b.k, 1), (a.k, -1)), shape, 64)
                else:  # a wins where a >= b: a - b >= 0
                    a_wins = Form(a.c - b.c, coeffs((a.k, 1), (b.k, -1)), shape, 64)
                b_wins = negate(a_wins)
                return Pieces(
                    (
                        (sides + (a_wins,), Form(a.c, dict(a.k), shape, bits, sides)),
                        (sides + (b_wins,), Form(b.c, dict(b.k), shape, bits, sides)),
                    ),
                    shape,
                    bits,
                )
            smaller, larger = (a, b) if a_first else (b, a)
            pick = smaller if "min" in name else larger
            return Form(pick.c, dict(pick.k), shape, bits, sides)
        raise NotAffine(f"{op.name} of lane or loop values")

    return handler


for _name, (_fn, _checked) in BINARY_OPS.items():
    HANDLERS[_name] = _binary(_name, _fn, _checked)


def _bool_op(name: str, a: Cond, b: Cond, ty: Type) -> Cond:
    if name == "arith.andi":
        return Cond(a.pred & b.pred, a.cons + b.cons, ty.shape, all_sides(a, b))
    if not a.cons and not b.cons:
        fn = {"arith.ori": np.logical_or, "arith.xori": np.logical_xor}.get(name)
        if fn is None:
            raise NotAffine(f"{name} of masks")
        return Cond(fn(a.pred, b.pred), (), ty.shape)
    if name == "arith.xori":
        for x, y in ((a, b), (b, a)):
            if not y.cons and y.pred.all() and x.pred.all() and len(x.cons) == 1:
                f = x.cons[0]  # not (f >= 0)  <=>  -f - 1 >= 0
                return Cond(
                    np.ones(1, dtype=bool), (Form(-f.c - 1, {v: -c for v, c in f.k.items()}, f.shape, 64),), ty.shape, x.side
                )
    if name == "arith.ori":
        for x, y in ((a, b), (b, a)):
            if not y.cons and y.pred.all():
                return Cond(np.ones(1, dtype=bool), (), ty.shape)
            if not y.cons and not y.pred.any():
                return x
    raise NotAffine(f"{name} of masks with lane constraints")


@handles("arith.cmpi")
def _cmpi(g: AffineGraph, op: Op, env, ctx) -> list[Any]:
    pred = op.predicate
    a, b = (g.get(env, o) for o in op.operands[:2])
    shape = op.result_types[0].shape
    if isinstance(a, Ptr) and isinstance(b, Ptr) and a.arg == b.arg:
        a, b = a.off, b.off
    if not isinstance(a, Form) or not isinstance(b, Form):
        if isinstance(a, Opaque) or isinstance(b, Opaque):
            return [data_of(a, b)]
        return [Opaque("out-of-vocabulary", "a comparison the model does not follow", op.loc)]
    if not a.k and not b.k:
        x, y = a.c, b.c
        if pred.startswith("u"):
            x, y = unsigned(x, a.bits), unsigned(y, b.bits)
        return [Cond(COMPARISONS[pred](x, y), (), shape)]
    if pred.startswith("u"):
        if g.box(a)[0].min() < 0 or g.box(b)[0].min() < 0:
            raise NotAffine("an unsigned comparison of a value that may be negative")
        pred = "s" + pred[1:]
    d = Form(a.c - b.c, coeffs((a.k, 1), (b.k, -1)), shape, 64)  # a - b
    neg = Form(-d.c, {v: -c for v, c in d.k.items()}, shape, 64)  # b - a
    one = lambda f: Form(f.c - 1, f.k, shape, 64)  # noqa: E731
    cons = {"slt": (one(neg),), "sle": (neg,), "sgt": (one(d),), "sge": (d,), "eq": (d, neg)}.get(pred)
    if cons is None:
        raise NotAffine(f"a {pred} comparison of lane values")
    return [Cond(np.ones(1, dtype=bool), cons, shape, all_sides(a, b))]


@handles("arith.select")
def _select(g: AffineGraph, op: Op, env, ctx) -> list[Any]:
    c, a, b = (g.get(env, o) for o in op.operands[:3])
    if isinstance(a, Opaque) and isinstance(b, Opaque):
        return [data_of(a, b)]
    if isinstance(c, Opaque):
        return [Opaque("data", "a select on loaded data", op.loc) if c.why == "data" else c]
    if not isinstance(c, Cond):
        raise NotAffine("a select on an unknown condition")
    if c.cons:
        if not isinstance(a, (Form, Pieces)) or not isinstance(b, (Form, Pieces)):
            raise NotAffine("a select on a lane condition between values that are not integers")
        true, falses = cond_regions(c)
        ty = op.result_types[0]
        parts = [(true + ga, fa) for ga, fa in parts_of(a)]
        parts += [(f + gb, fb) for f in falses for gb, fb in parts_of(b)]
        return [make_pieces(parts, ty.shape, ty.bits)]
    if isinstance(a, Pieces) or isinstance(b, Pieces):
        raise NotAffine("a per-program choice between piecewise values")
    return [blend(c.pred, a, b, g.P)]


def _cast(kind: str):
    def handler(g: AffineGraph, op: Op, env, ctx) -> list[Any]:
        v = g.get(env, op.operands[0])
        ty = op.result_types[0]
        if isinstance(v, Opaque):
            if widens_i1(op, ty):  # 0 or 1 whatever it was computed from: the enumeration bounds it
                return [Opaque("data", f"{op.name} of a condition on loaded data", op.loc)]
            return [v]
        if not ty.is_int:
            return [Opaque("float", f"{op.name} to {ty.elem}", op.loc)]
        if isinstance(v, Cond):
            if v.cons:
                raise NotAffine("an integer made from a lane mask")
            a = v.pred.astype(np.int64)
            a = a if kind == "zext" else -a
            if ty.bits == 1:
                return [Cond((a & 1).astype(bool), (), ty.shape)]
            return [Form(wrap(a, ty.bits), {}, ty.shape, ty.bits)]
        if isinstance(v, Pieces):
            parts = []
            for guard, f in v.parts:
                (out,) = handler(g, op, {op.operands[0]: f}, ctx)
                if not isinstance(out, Form):
                    raise NotAffine(f"{op.name} of a piecewise value")
                parts.append((guard, out))
            return [Pieces(tuple(parts), ty.shape, ty.bits)]
        if not isinstance(v, Form):
            return [Opaque("out-of-vocabulary", f"{op.name} of a pointer", op.loc)]
        if not v.k:
            a = v.c
            if kind == "zext":
                a = unsigned(a, v.bits)
            if ty.bits == 1:
                return [Cond((a & 1).astype(bool), (), ty.shape)]
            return [Form(wrap(a, ty.bits), {}, ty.shape, ty.bits)]
        if ty.bits == 1:
            raise NotAffine("a truncation of lane values to i1")
        if kind == "zext" and g.box(v)[0].min() < 0:
            raise NotAffine("a zero extension of a value that may be negative")
        return [g.fit(Form(v.c, dict(v.k), ty.shape, ty.bits, v.side, v.rng), op)]

    return handler


for _name in ("arith.extsi", "arith.trunci", "arith.index_cast"):
    HANDLERS[_name] = _cast("sext")
for _name in ("arith.extui", "arith.index_castui"):
    HANDLERS[_name] = _cast("zext")


@handles("arith.bitcast", "tt.bitcast")
def _bitcast(g: AffineGraph, op: Op, env, ctx) -> list[Any]:
    v = g.get(env, op.operands[0])
    ty = op.result_types[0]
    if isinstance(v, Ptr) and ty.is_ptr:
        return [Ptr(v.arg, v.off, elem_bytes(ty.pointee))]
    if isinstance(v, Form) and ty.is_int and ty.bits == v.bits:
        return [v]
    if isinstance(v, Opaque):
        return [v]
    return [Opaque("float", f"{op.name} to {ty.elem}", op.loc)]


def _reshape_map(src: tuple[int, ...], dst: tuple[int, ...]) -> dict[int, int]:
    """Axis renaming of a reshape that only adds or removes axes of size 1."""
    a = [i for i, s in enumerate(src) if s > 1]
    b = [i for i, s in enumerate(dst) if s > 1]
    if [src[i] for i in a] != [dst[i] for i in b]:
        raise NotAffine("a reshape that mixes lane axes")
    return dict(zip(a, b))


def _shape_op(kind: str):
    def handler(g: AffineGraph, op: Op, env, ctx) -> list[Any]:
        v = g.get(env, op.operands[0])
        ty = op.result_types[0]
        if isinstance(v, Opaque):
            return [v]
        pieces = v if isinstance(v, Pieces) else v.off if isinstance(v, Ptr) else None
        if isinstance(pieces, Pieces):
            parts = []
            for guard, f in pieces.parts:
                # the guard moves with its form: carry it as the form's side constraints
                carrier = Form(f.c, f.k, f.shape, f.bits, tuple(guard) + tuple(f.side), f.rng)
                (moved,) = handler(g, op, {op.operands[0]: carrier}, ctx)
                n = len(guard)
                parts.append((moved.side[:n], Form(moved.c, moved.k, moved.shape, moved.bits, moved.side[n:], moved.rng)))
            out = Pieces(tuple(parts), op.result_types[0].shape, pieces.bits)
            return [Ptr(v.arg, out, v.pointee) if isinstance(v, Ptr) else out]
        if isinstance(v, Ptr):  # a pointer's offset (one form here) moves as that form does
            (moved_off,) = handler(g, op, {op.operands[0]: v.off}, ctx)
            return [Ptr(v.arg, moved_off, v.pointee)]
        src = v.shape
        if kind in ("splat", "broadcast"):
            mapping = {i: i for i in range(len(src))}
        elif kind == "expand_dims":
            axis = op.axis
            mapping = {i: i + (i >= axis) for i in range(len(src))}
        elif kind == "trans":
            order = list(op.order) if op.order is not None else list(range(len(src)))[::-1]
            mapping = {old: new for new, old in enumerate(order)}
        else:
            mapping = _reshape_map(src, ty.shape)

        # a quotient variable is tied to the lanes it was made on: moved lanes need their own copy
        sides = v.side
        moved = any(a != b for a, b in mapping.items())
        fresh = {q: g.quotient(g.extent[q]) for q in sorted({x for f in sides for x in f.k if x[0] == "q"})} if moved else {}

        def move(f: Form, side: tuple[Form, ...] = ()) -> Form:
            k = {fresh.get(x, x): a for x, a in relabel(f.k, mapping).items()}
            return Form(f.c, k, ty.shape, f.bits, side, f.rng)

        side = tuple(move(f) for f in sides)
        if isinstance(v, Form):
            return [move(v, side)]
        if isinstance(v, Cond):
            return [Cond(v.pred, tuple(move(f) for f in v.cons), ty.shape, side)]
        raise NotAffine(f"{op.name} of this value")

    return handler


for _name, _kind in (
    ("tt.splat", "splat"),
    ("tt.broadcast", "broadcast"),
    ("tt.expand_dims", "expand_dims"),
    ("tt.reshape", "reshape"),
    ("tt.trans", "trans"),
):
    HANDLERS[_name] = _shape_op(_kind)
for _name in ("tt.assume", "tt.assert", "tt.print", "gpu.barrier", "ttg.barrier"):
    HANDLERS[_name] = lambda g, op, env, ctx: []
