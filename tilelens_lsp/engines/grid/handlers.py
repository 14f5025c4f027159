"""The grid engine's op handlers: integer arithmetic, comparisons, selects, casts, shapes, pointers,
memory ops and structured control flow, on the values of `forms`.

Each handler keeps a value affine where the op is affine (a division or remainder by a constant
splits a variable into quotient and remainder; a program-uniform value the forms cannot follow
becomes a fresh variable over its range) and falls back to per-lane intervals otherwise. An integer
result that may leave its width becomes the whole width, and, in address arithmetic, an obligation
the witness pass confirms or not.
"""

from __future__ import annotations

import dataclasses
import re
from typing import TYPE_CHECKING, Any, Callable

import numpy as np

from tilelens_lsp.engines import ranges
from tilelens_lsp.engines.enumerate import guards
from tilelens_lsp.engines.grid.forms import (
    MAX_DISJUNCTS,
    GChoice,
    GPtr,
    Itv,
    Lin,
    Msk,
    NotGrid,
    arr,
    both,
    coefs,
    const,
    disjuncts,
    limits,
    map_lanes,
    top,
    uniform,
)
from tilelens_lsp.engines.values import Opaque, elem_bytes, gather_source_extent, histogram_lanes, widens_i1
from tilelens_lsp.ttir.reader import Op

if TYPE_CHECKING:
    from tilelens_lsp.engines.grid.graph import GCtx, GridGraph

HANDLERS: dict[str, Callable[..., list[Any]]] = {}


def handles(*names: str):
    def deco(fn):
        for n in names:
            HANDLERS[n] = fn
        return fn

    return deco


INT = (Lin, Itv)
LIMIT = 1 << 62


def _ints(*vals) -> bool:
    return all(isinstance(v, INT) for v in vals)


def _opaque(*vals) -> Opaque:
    for v in vals:
        if isinstance(v, Opaque) and v.why == "data":
            return v
    for v in vals:
        if isinstance(v, Opaque):
            return v
    return Opaque("out-of-vocabulary", "an unmodelled operand")


def _itv(g: GridGraph, v, shape, bits) -> Itv:
    lo, hi = g.bounds(v)
    return Itv(lo, hi, shape, bits)


def _hull(g: GridGraph, a, b, shape, bits) -> Itv:
    alo, ahi = g.bounds(a)
    blo, bhi = g.bounds(b)
    return Itv(np.minimum(alo, blo), np.maximum(ahi, bhi), shape, bits)


# ---------------------------------------------------------------- leaves


@handles("arith.constant")
def _constant(g: GridGraph, op: Op, env, ctx) -> list[Any]:
    c = op.int_constant
    if c is None:
        return [Opaque("float", "a floating-point constant", op.loc)]
    if c.elements is not None:
        vals = np.array(c.elements, dtype=np.int64).reshape(c.shape)
    else:
        vals = np.full((1,) * len(c.shape), c.value, dtype=np.int64)
    if c.bits == 1:
        b = vals.astype(bool)
        return [Msk(b, b, (), c.shape, True)]
    lo, hi = limits(c.bits)
    vals = ((vals - lo) % (1 << c.bits)) + lo if c.bits < 64 else vals
    return [Lin(vals, (), c.shape, c.bits)]


@handles("tt.get_program_id")
def _pid(g: GridGraph, op: Op, env, ctx) -> list[Any]:
    return [g.pids[op.program_axis]]


@handles("tt.get_num_programs")
def _num_programs(g: GridGraph, op: Op, env, ctx) -> list[Any]:
    return [const(g.m.grid[op.program_axis], (), 32)]


@handles("tt.make_range")
def _make_range(g: GridGraph, op: Op, env, ctx) -> list[Any]:
    start, end = op.range_bounds
    return [Lin(np.arange(start, end, dtype=np.int64), (), (end - start,), 32)]


# ---------------------------------------------------------------- arithmetic


def _scale(v: Lin, s: int, bits: int) -> Lin:
    return Lin(v.c * s, coefs((v.k, s)), v.shape, bits)


def _add(a: Lin, b: Lin, sign: int, shape, bits) -> Lin:
    return Lin(a.c + sign * b.c, coefs((a.k, 1), (b.k, sign)), shape, bits)


def _mul(g: GridGraph, a, b, shape, bits):
    ua, ub = uniform(a), uniform(b)
    # an affine form times a constant stays affine while it fits int64 (else the bounds below, exact)
    if isinstance(a, Lin) and ub is not None and g.magnitude(a) * abs(ub) < 2.0**62:
        return _scale(a, ub, bits)
    if isinstance(b, Lin) and ua is not None and g.magnitude(b) * abs(ua) < 2.0**62:
        return _scale(b, ua, bits)
    alo, ahi = g.bounds(a)
    blo, bhi = g.bounds(b)
    with np.errstate(all="ignore"):
        corners = [alo.astype(object) * blo, alo.astype(object) * bhi, ahi.astype(object) * blo, ahi.astype(object) * bhi]
    lo = np.minimum(np.minimum(corners[0], corners[1]), np.minimum(corners[2], corners[3]))
    hi = np.maximum(np.maximum(corners[0], corners[1]), np.maximum(corners[2], corners[3]))
    return _from_object(lo, hi, shape, bits)


def _from_object(lo, hi, shape, bits) -> Itv:
    big = 1 << 62
    lo_a, hi_a = np.asarray(lo), np.asarray(hi)
    if lo_a.dtype == object and (np.any(lo_a < -big) or np.any(hi_a > big)):
        return Itv(lo_a, hi_a, shape, bits)  # past int64: `checked` turns it into the width
    return Itv(lo_a.astype(np.int64), hi_a.astype(np.int64), shape, bits)


def _divmod_const(g: GridGraph, a: Lin, d: int, want: str):
    """(a // d) or (a % d) for a >= 0 and a constant d > 0, kept affine where it splits exactly."""
    a = g.norm(a)
    if uniform(Lin(a.c, (), a.shape, a.bits)) is None:
        return None
    c0 = int(a.c.reshape(-1)[0])
    exact = [(x, k) for x, k in a.k if k % d == 0]
    rest = [(x, k) for x, k in a.k if k % d != 0]
    if c0 % d:
        if rest:
            return None
        rest_c = c0
    else:
        rest_c = 0
    quotient_k = tuple((x, k // d) for x, k in exact)
    if not rest:
        if want == "div":
            return Lin(arr(c0 // d, len(a.shape)), quotient_k, a.shape, a.bits)
        return Lin(arr(rest_c % d, len(a.shape)), (), a.shape, a.bits)
    if len(rest) != 1 or rest_c:
        return None
    x, k = rest[0]
    if k < 0 or d % k:
        return None
    m = d // k
    lo, hi = g.vars[x]
    if lo != 0:  # a split needs x = q·m + r from 0 on; bounds answer the rest
        return None
    base = c0 // d
    if hi < m:  # x // m == 0 and x % m == x
        if want == "div":
            return Lin(arr(base, len(a.shape)), quotient_k, a.shape, a.bits)
        return Lin(np.zeros((1,) * len(a.shape), np.int64), ((x, k),), a.shape, a.bits)
    if g.probing:
        return None
    q, r = g.split(x, m)
    if want == "div":
        return Lin(arr(base, len(a.shape)), coefs((quotient_k, 1), (((q, 1),), 1)), a.shape, a.bits)
    return Lin(np.zeros((1,) * len(a.shape), np.int64), ((r, k),), a.shape, a.bits)


def _divmod(g: GridGraph, op: Op, a, b, shape, bits, want: str):
    d = uniform(b)
    alo, ahi = g.bounds(a)
    nonneg = bool(np.all(alo >= 0))
    if d is not None and d > 0 and nonneg and isinstance(a, Lin):
        out = _divmod_const(g, a, d, want)
        if out is not None:
            return out
    blo, bhi = g.bounds(b)
    if not (np.all(blo > 0) and nonneg):
        if op.name in ("arith.floordivsi",) or not nonneg:
            return top(shape, bits)
    if not np.all(blo > 0):
        return top(shape, bits)
    if want == "div":
        return Itv(alo // bhi, ahi // blo, shape, bits)
    small = ahi < blo  # a < d: a % d == a
    return Itv(np.where(small, alo, 0), np.where(small, ahi, np.minimum(ahi, bhi - 1)), shape, bits)


def _minmax(g: GridGraph, a, b, shape, bits, take_min: bool):
    alo, ahi = g.bounds(a)
    blo, bhi = g.bounds(b)
    if np.all(ahi <= blo):
        return a if take_min else b
    if np.all(bhi <= alo):
        return b if take_min else a
    if take_min:
        return Itv(np.minimum(alo, blo), np.minimum(ahi, bhi), shape, bits)
    return Itv(np.maximum(alo, blo), np.maximum(ahi, bhi), shape, bits)


def _bits(g: GridGraph, a, b, shape, bits, name: str):
    alo, ahi = g.bounds(a)
    blo, bhi = g.bounds(b)
    if not (np.all(alo >= 0) and np.all(blo >= 0)):
        return top(shape, bits)
    if name == "arith.andi":
        return Itv(np.zeros_like(np.minimum(ahi, bhi)), np.minimum(ahi, bhi), shape, bits)
    m = np.maximum(ahi, bhi)
    width = int(m.max()).bit_length() if np.size(m) else 0
    return Itv(np.zeros_like(m), np.full_like(m, (1 << width) - 1), shape, bits)


def _binary(g: GridGraph, op: Op, env, ctx: GCtx) -> list[Any]:
    a, b = (g.get(env, o) for o in op.operands[:2])
    ty = op.result_types[0]
    name = op.name
    if isinstance(a, Msk) or isinstance(b, Msk):
        return [_mask_logic(g, name, a, b, ty.shape)]
    if not _ints(a, b):
        return [
            _opaque(a, b)
            if any(isinstance(v, Opaque) for v in (a, b))
            else Opaque("out-of-vocabulary", f"{name} on pointers", op.loc)
        ]
    bits = ty.bits
    shape = ty.shape
    if name in ("arith.addi", "arith.subi"):
        sign = 1 if name == "arith.addi" else -1
        out: Lin | Itv
        ta, tb = getattr(a, "term", None), getattr(b, "term", None)
        if isinstance(a, Lin) and isinstance(b, Lin):
            out = _add(a, b, sign, shape, bits)
        elif sign < 0 and ta is not None and ta[0] is b:  # (x + rest) - x: the rest, lane for lane
            out = _from_object(ta[1], ta[2], shape, bits)
        else:
            alo, ahi = g.bounds(a)
            blo, bhi = g.bounds(b)
            out = _from_object(
                alo.astype(object) + (blo if sign > 0 else -bhi.astype(object)),
                ahi.astype(object) + (bhi if sign > 0 else -blo.astype(object)),
                shape,
                bits,
            )
            term = ranges.carried_term(name, (alo, ahi), (blo, bhi), ta, tb)
            if term is not None and out.lo.dtype != object:
                out = dataclasses.replace(out, term=term)
        return [g.checked(op, ctx, out, bits)]
    if name == "arith.muli":
        return [g.checked(op, ctx, _mul(g, a, b, shape, bits), bits)]
    if name == "arith.shli":
        s = uniform(b)
        if s is None or not 0 <= s < bits:
            return [top(shape, bits)]
        return [g.checked(op, ctx, _mul(g, a, const(1 << s, (), bits), shape, bits), bits)]
    if name in ("arith.shrsi", "arith.shrui"):
        s = uniform(b)
        if s is None or not 0 <= s < 63:
            return [top(shape, bits)]
        if name == "arith.shrui" and not np.all(g.bounds(a)[0] >= 0):
            return [
                Itv(
                    arr(0, len(shape)),
                    arr((1 << max(bits - s, 1)) - 1 if bits < 64 else limits(64)[1], len(shape)),
                    shape,
                    bits,
                )
            ]
        return [_divmod(g, op, a, const(1 << s, (), bits), shape, bits, "div")]
    if name in ("arith.divsi", "arith.divui", "arith.floordivsi"):
        return [_divmod(g, op, a, b, shape, bits, "div")]
    if name in ("arith.remsi", "arith.remui"):
        return [_divmod(g, op, a, b, shape, bits, "rem")]
    if name == "arith.ceildivsi":
        d = uniform(b)
        if d is not None and d > 0 and isinstance(a, Lin):
            shifted = _add(a, const(d - 1, (), bits), 1, shape, bits)
            return [_divmod(g, op, shifted, b, shape, bits, "div")]
        return [top(shape, bits)]
    if name in ("arith.minsi", "arith.maxsi"):
        return [_minmax(g, a, b, shape, bits, name == "arith.minsi")]
    if name in ("arith.minui", "arith.maxui"):
        if np.all(g.bounds(a)[0] >= 0) and np.all(g.bounds(b)[0] >= 0):
            return [_minmax(g, a, b, shape, bits, name == "arith.minui")]
        return [top(shape, bits)]
    if name in ("arith.andi", "arith.ori", "arith.xori"):
        return [_bits(g, a, b, shape, bits, name)]
    return [top(shape, bits)]


for _name in (
    "arith.addi",
    "arith.subi",
    "arith.muli",
    "arith.shli",
    "arith.shrsi",
    "arith.shrui",
    "arith.divsi",
    "arith.remsi",
    "arith.divui",
    "arith.remui",
    "arith.floordivsi",
    "arith.ceildivsi",
    "arith.minsi",
    "arith.maxsi",
    "arith.minui",
    "arith.maxui",
    "arith.andi",
    "arith.ori",
    "arith.xori",
):
    HANDLERS[_name] = _binary


# ---------------------------------------------------------------- masks


def _not(m: Msk) -> Msk:
    if m.exact and len(m.atoms) == 1:
        a = m.atoms[0]
        neg = Lin(-a.c - 1, coefs((a.k, -1)), a.shape, a.bits)
        return Msk(~m.may, ~m.must, (neg,), m.shape, True)
    return Msk(~m.may, ~m.must, (), m.shape, False)


def _mask_logic(g: GridGraph, name: str, a, b, shape) -> Any:
    if not (isinstance(a, Msk) and isinstance(b, Msk)):
        known = a if isinstance(a, Msk) else b
        other = b if known is a else a
        if name == "arith.andi" and isinstance(other, Opaque):
            # an unknown side only narrows: the known side bounds where the mask may be true
            return Opaque(
                other.why, other.message, other.loc, Msk(np.zeros((1,) * len(shape), bool), known.may, known.atoms, shape)
            )
        return _opaque(a, b) if isinstance(other, Opaque) else Opaque("out-of-vocabulary", f"{name} of a mask")
    if name == "arith.andi":
        return Msk(a.must & b.must, a.may & b.may, a.atoms + b.atoms, shape, a.exact and b.exact, both(a.anyof, b.anyof))
    if name == "arith.ori":
        # a true lane satisfies one side's atoms: kept as cases (`pid % 7 == 3 | k < 2`), each narrowing apart
        da, db = disjuncts(a), disjuncts(b)
        cases = () if da is None or db is None or len(da) + len(db) > MAX_DISJUNCTS else da + db
        return Msk(a.must | b.must, a.may | b.may, (), shape, False, cases)
    if name == "arith.xori":
        for x, y in ((a, b), (b, a)):
            if np.all(y.must) and np.all(y.may):
                return _not(x)
        return Msk(np.zeros((1,) * len(shape), bool), (a.may | b.may), (), shape, False)
    return Msk(np.zeros((1,) * len(shape), bool), np.ones((1,) * len(shape), bool), (), shape, False)


def _cmp_atoms(pred: str, d: Lin) -> tuple[Lin, ...] | None:
    """Atoms (each >= 0) equivalent to `d pred 0`, d = a - b."""
    neg = Lin(-d.c, coefs((d.k, -1)), d.shape, 64)
    one = np.int64(1)
    if pred in ("slt", "ult"):
        return (Lin(neg.c - one, neg.k, d.shape, 64),)
    if pred in ("sle", "ule"):
        return (neg,)
    if pred in ("sgt", "ugt"):
        return (Lin(d.c - one, d.k, d.shape, 64),)
    if pred in ("sge", "uge"):
        return (Lin(d.c, d.k, d.shape, 64),)
    if pred == "eq":
        return (Lin(d.c, d.k, d.shape, 64), neg)
    return None


@handles("arith.cmpi")
def _cmpi(g: GridGraph, op: Op, env, ctx) -> list[Any]:
    a, b = (g.get(env, o) for o in op.operands[:2])
    pred = op.predicate
    shape = op.result_types[0].shape
    if isinstance(a, GPtr) and isinstance(b, GPtr) and a.arg == b.arg:
        a, b = a.off, b.off
    if not _ints(a, b):
        return [_opaque(a, b)]
    if pred.startswith("u") and not (np.all(g.bounds(a)[0] >= 0) and np.all(g.bounds(b)[0] >= 0)):
        return [Msk(np.zeros((1,) * len(shape), bool), np.ones((1,) * len(shape), bool), (), shape, False)]
    alo, ahi = g.bounds(a)
    blo, bhi = g.bounds(b)
    lo, hi = alo - bhi, ahi - blo  # d = a - b lies in [lo, hi]
    base = pred.lstrip("su") if pred not in ("eq", "ne") else pred
    must, may = {
        "lt": (hi < 0, lo < 0),
        "le": (hi <= 0, lo <= 0),
        "gt": (lo > 0, hi > 0),
        "ge": (lo >= 0, hi >= 0),
        "eq": ((lo == 0) & (hi == 0), (lo <= 0) & (hi >= 0)),
        "ne": ((lo > 0) | (hi < 0), ~((lo == 0) & (hi == 0))),
    }[base]
    atoms: tuple[Lin, ...] = ()
    exact = False
    if isinstance(a, Lin) and isinstance(b, Lin):
        found = _cmp_atoms(pred, _add(g.norm(a), g.norm(b), -1, shape, 64))
        if found is not None:
            atoms, exact = found, True
    if pred in ("slt", "sle", "ult", "ule"):
        extra = _through_extremes(g, op, env, ctx, pred, shape)
        atoms, exact = atoms + extra, exact and not extra
    return [Msk(np.asarray(must), np.asarray(may), atoms, shape, exact)]


def _through_extremes(g: GridGraph, op: Op, env, ctx, pred: str, shape) -> tuple[Lin, ...]:
    """Atoms of `x < min(p, q)` (and of `max(p, q) < y`) that the minimum itself has none of: `x < p`
    and `x < q`, for each side with a form (a split's end, `tl.minimum(start + per_split, seq_len)`,
    keeps its relation to the sequence's length). Implied by the comparison, so its mask stays
    inexact (its negation gives no atoms)."""
    index = g.index()
    func = index.func_of.get(id(op))
    if func is None:
        return ()
    defs = index.defs[func]
    lefts = _extreme_sides(g, defs, op.operands[0], env, ctx, "arith.maxsi")
    rights = _extreme_sides(g, defs, op.operands[1], env, ctx, "arith.minsi")
    if len(lefts) == 1 and len(rights) == 1:
        return ()
    out: list[Lin] = []
    for x in lefts:
        for y in rights:
            if (x is lefts[0] and y is rights[0]) or not (isinstance(x, Lin) and isinstance(y, Lin)):
                continue
            out.extend(_cmp_atoms(pred, _add(g.norm(x), g.norm(y), -1, shape, 64)) or ())
    return tuple(out)


def _extreme_sides(g: GridGraph, defs, name: str, env, ctx, op_name: str) -> list[Any]:
    """The value of `name`, then the values it is a minimum (maximum) of (`guards.extreme_operands`),
    each taken to its lanes by the kernel's own shape ops."""
    out = [g.get(env, name)]
    for o, shaping in guards.extreme_operands(defs, name, op_name):
        value = g.get(env, o)
        for shape_op in shaping:
            value = HANDLERS[shape_op.name](g, shape_op, {shape_op.operands[0]: value}, ctx)[0]
        out.append(value)
    return out


@handles("arith.select")
def _select(g: GridGraph, op: Op, env, ctx) -> list[Any]:
    c, a, b = (g.get(env, o) for o in op.operands[:3])
    shape = op.result_types[0].shape
    if not isinstance(c, Msk):
        if isinstance(a, (GPtr, GChoice)) and isinstance(b, (GPtr, GChoice)):
            return [_choice(None, a, b)]
        return [
            _opaque(c, a, b)
            if any(isinstance(v, Opaque) for v in (c, a, b))
            else Opaque("data", "a select on loaded data", op.loc)
        ]
    if np.all(c.must):
        return [a]
    if not np.any(c.may):
        return [b]
    if _ints(a, b):
        from tilelens_lsp.engines.grid import lanes

        if isinstance(a, Itv) or isinstance(b, Itv):  # loaded data: each side narrowed by the condition
            a, b = lanes.select_sides(g, op, env, ctx)
        bits = op.result_types[0].bits
        alo, ahi = g.bounds(a)
        blo, bhi = g.bounds(b)
        lo = np.where(c.must, alo, np.where(~c.may, blo, np.minimum(alo, blo)))
        hi = np.where(c.must, ahi, np.where(~c.may, bhi, np.maximum(ahi, bhi)))
        return [Itv(lo, hi, shape, bits)]
    if isinstance(a, Msk) and isinstance(b, Msk):
        return [
            Msk(
                (c.must & a.must) | (~c.may & b.must) | (a.must & b.must),
                (c.may & a.may) | (~c.must & b.may),
                (),
                shape,
                False,
            )
        ]
    if isinstance(a, GPtr) and isinstance(b, GPtr) and a.arg == b.arg:
        return [GPtr(a.arg, _hull(g, a.off, b.off, shape, 64), a.pointee)]
    if isinstance(a, (GPtr, GChoice)) and isinstance(b, (GPtr, GChoice)):
        return [_choice(c, a, b)]
    return [
        _opaque(a, b)
        if any(isinstance(v, Opaque) for v in (a, b))
        else Opaque("out-of-vocabulary", "a select of values the model does not follow", op.loc)
    ]


def _choice(c: "Msk | None", a, b) -> GChoice:
    out = []
    for side, cond in ((a, c), (b, None if c is None else _not(c))):
        for p, w in side.options if isinstance(side, GChoice) else ((side, None),):
            if cond is None:
                out.append((p, w))
            elif w is None:
                out.append((p, cond))
            else:
                shape = tuple(np.broadcast_shapes(w.shape, cond.shape))
                out.append(
                    (p, Msk(w.must & cond.must, w.may & cond.may, w.atoms + cond.atoms, shape, w.exact and cond.exact))
                )
    return GChoice(tuple(out))


# ---------------------------------------------------------------- casts and shapes


def _cast(kind: str):
    def handler(g: GridGraph, op: Op, env, ctx) -> list[Any]:
        v = g.get(env, op.operands[0])
        ty = op.result_types[0]
        if isinstance(v, Msk):
            if not ty.is_int:
                return [Opaque("float", f"{op.name} to {ty.elem}", op.loc)]
            if ty.bits == 1:
                return [v]
            one = -1 if kind == "sext" else 1
            lo = np.where(v.must, one, np.where(v.may, min(0, one), 0))
            hi = np.where(v.must, one, np.where(v.may, max(0, one), 0))
            return [Itv(lo.astype(np.int64), hi.astype(np.int64), ty.shape, ty.bits)]
        if isinstance(v, Opaque) and widens_i1(op, ty):  # 0 or 1 whatever it was computed from
            ends = np.array([0, 1] if kind == "zext" else [-1, 0], np.int64).reshape(2, *(1,) * len(ty.shape))
            return [Itv(ends[0], ends[1], ty.shape, ty.bits)]
        if not isinstance(v, INT):
            return [v if isinstance(v, Opaque) else Opaque("out-of-vocabulary", f"{op.name} of a pointer", op.loc)]
        if not ty.is_int:
            return [Opaque("float", f"{op.name} to {ty.elem}", op.loc)]
        if ty.bits == 1:
            lo, hi = g.bounds(v)
            fixed = lo == hi
            bit = (lo & 1).astype(bool)
            return [Msk(fixed & bit, ~fixed | bit, (), ty.shape, False)]
        lo, hi = g.bounds(v)
        if kind == "zext" and not np.all(lo >= 0):
            return [Itv(np.zeros_like(lo), np.full_like(hi, (1 << v.bits) - 1), ty.shape, ty.bits)]
        if g.fits(v, ty.bits):
            return [Lin(v.c, v.k, ty.shape, ty.bits) if isinstance(v, Lin) else Itv(v.lo, v.hi, ty.shape, ty.bits)]
        return [top(ty.shape, ty.bits)]

    return handler


for _name in ("arith.extsi", "arith.trunci", "arith.index_cast"):
    HANDLERS[_name] = _cast("sext")
for _name in ("arith.extui", "arith.index_castui"):
    HANDLERS[_name] = _cast("zext")


@handles("arith.bitcast", "tt.bitcast")
def _bitcast(g: GridGraph, op: Op, env, ctx) -> list[Any]:
    v = g.get(env, op.operands[0])
    ty = op.result_types[0]
    if isinstance(v, GPtr) and ty.is_ptr:
        return [GPtr(v.arg, v.off, elem_bytes(ty.pointee))]
    if isinstance(v, GChoice) and ty.is_ptr:
        return [GChoice(tuple((GPtr(p.arg, p.off, elem_bytes(ty.pointee)), w) for p, w in v.options))]
    if isinstance(v, INT) and ty.is_int and ty.bits == v.bits:
        return [v]
    if isinstance(v, Opaque):
        return [v]
    return [Opaque("float", f"{op.name} to {ty.elem}", op.loc)]


def _shape_op(kind: str):
    def handler(g: GridGraph, op: Op, env, ctx) -> list[Any]:
        v = g.get(env, op.operands[0])
        ty = op.result_types[0]
        shape = ty.shape
        if isinstance(v, Opaque):
            if isinstance(v.bound, Msk):
                return [Opaque(v.why, v.message, v.loc, handler(g, op, {op.operands[0]: v.bound}, ctx)[0])]
            return [v]
        src = _shape_of(v)
        if kind == "splat":

            def fn(a):
                return (
                    np.asarray(a).reshape((1,) * len(shape))
                    if np.ndim(a) == 0
                    else np.asarray(a).reshape((1,) * (len(shape) - np.ndim(a)) + np.shape(a))
                )
        elif kind == "broadcast":

            def fn(a):
                return np.asarray(a)
        elif kind == "expand_dims":

            def fn(a):
                return np.expand_dims(np.asarray(a), op.axis)
        elif kind == "trans":
            order = list(op.order) if op.order is not None else list(range(len(src)))[::-1]

            def fn(a):
                return np.transpose(np.asarray(a), order)
        else:

            def fn(a):
                return np.ascontiguousarray(np.broadcast_to(np.asarray(a), src)).reshape(shape)

        return [map_lanes(v, fn, shape)]

    return handler


def _shape_of(v) -> tuple[int, ...]:
    if isinstance(v, GPtr):
        return v.off.shape
    if isinstance(v, GChoice):
        return v.options[0][0].off.shape
    return v.shape


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
HANDLERS["ub.poison"] = lambda g, op, env, ctx: [Opaque("float", "poison", op.loc)] * len(op.results)


# ---------------------------------------------------------------- pointers and memory


@handles("tt.addptr")
def _addptr(g: GridGraph, op: Op, env, ctx) -> list[Any]:
    p, off = (g.get(env, o) for o in op.operands[:2])
    shape = op.result_types[0].shape
    if isinstance(p, Opaque):
        return [p]
    if isinstance(off, Opaque):
        return [
            Opaque(
                "data" if off.why == "data" else off.why,
                "an offset computed from loaded data" if off.why == "data" else off.message,
                op.loc,
            )
        ]
    if not isinstance(off, INT):
        return [Opaque("out-of-vocabulary", "a pointer offset the model does not follow", op.loc)]

    def move(ptr: GPtr) -> GPtr:
        if (
            isinstance(ptr.off, Lin)
            and isinstance(off, Lin)
            and g.magnitude(ptr.off) + g.magnitude(off) * ptr.pointee < 2.0**62
        ):
            return GPtr(
                ptr.arg,
                Lin(ptr.off.c + off.c * ptr.pointee, coefs((ptr.off.k, 1), (off.k, ptr.pointee)), shape, 64),
                ptr.pointee,
            )
        alo, ahi = g.bounds(ptr.off)
        blo, bhi = g.bounds(off)
        # past ±2**62 bytes an address has left every tensor: clamped there, the bound still says so
        lo = np.clip(alo.astype(object) + blo.astype(object) * ptr.pointee, -LIMIT, LIMIT).astype(np.int64)
        hi = np.clip(ahi.astype(object) + bhi.astype(object) * ptr.pointee, -LIMIT, LIMIT).astype(np.int64)
        return GPtr(ptr.arg, Itv(lo, hi, shape, 64), ptr.pointee)

    if isinstance(p, GPtr):
        return [move(p)]
    if isinstance(p, GChoice):
        return [GChoice(tuple((move(c), w) for c, w in p.options))]
    return [Opaque("out-of-vocabulary", "pointer arithmetic on a value the model does not follow", op.loc)]


@handles("tt.int_to_ptr", "tt.ptr_to_int")
def _int_ptr(g: GridGraph, op: Op, env, ctx) -> list[Any]:
    return [Opaque("pointer-provenance", f"{op.name} loses the pointer's provenance", op.loc)]


@handles("tt.load")
def _load(g: GridGraph, op: Op, env, ctx) -> list[Any]:
    from tilelens_lsp.engines.grid import lanes

    ptr = g.get(env, op.operands[0])
    mask = g.get(env, op.operands[1]) if len(op.operands) > 1 else None
    g.record(op, "load", lanes.access(g, op, ptr, env, ctx), mask, ctx)
    ty = op.result_types[0] if op.result_types else None
    info = g.m.args.get(getattr(ptr, "arg", ""))
    if info is not None and info.values and ty is not None and ty.is_int and ty.bits > 1 and isinstance(ptr, GPtr):
        # the declared set: sorted disjoint [LO, HI) intervals; the grid engine keeps their hull
        lo, hi = int(info.values[0][0]), int(info.values[-1][1]) - 1
        unmasked = mask is None or isinstance(mask, Msk) and np.all(mask.must)
        if ty.shape == () and unmasked and not g.probing and lo < hi:
            # a per-program scalar: a variable over the hull, the set kept for the guards that narrow it
            w = g.fresh("w", lo, hi)
            g.derived.add(w)
            g.declared[w] = tuple(info.values)
            return [Lin(np.zeros((), np.int64), ((w, 1),), (), ty.bits)]
        if not unmasked:
            other = g.get(env, op.operands[2]) if len(op.operands) > 2 else None
            if not isinstance(other, INT):
                return [Opaque("data", "loaded data (masked-off lanes are undefined)", op.loc)]
            olo, ohi = g.bounds(other)
            return [Itv(np.minimum(olo, lo), np.maximum(ohi, hi), ty.shape, ty.bits)]
        return [Itv(arr(lo, len(ty.shape)), arr(hi, len(ty.shape)), ty.shape, ty.bits)]
    return [Opaque("data", "loaded data", op.loc)]


@handles("tt.store")
def _store(g: GridGraph, op: Op, env, ctx) -> list[Any]:
    from tilelens_lsp.engines.grid import lanes

    mask = g.get(env, op.operands[2]) if len(op.operands) > 2 else None
    g.record(op, "store", lanes.access(g, op, g.get(env, op.operands[0]), env, ctx), mask, ctx)
    return []


@handles("tt.atomic_rmw")
def _atomic_rmw(g: GridGraph, op: Op, env, ctx) -> list[Any]:
    mask = g.get(env, op.operands[2]) if len(op.operands) > 2 else None
    g.record(op, "atomic", g.get(env, op.operands[0]), mask, ctx)
    return [Opaque("data", "an atomic's old value", op.loc)]


@handles("tt.atomic_cas")
def _atomic_cas(g: GridGraph, op: Op, env, ctx) -> list[Any]:
    g.record(op, "atomic", g.get(env, op.operands[0]), None, ctx)
    return [Opaque("data", "an atomic's old value", op.loc)]


# ---------------------------------------------------------------- control flow


def join_values(g: GridGraph, a, b, op: Op):
    """What either of two values may be (a hull; pointers of two arguments become a choice)."""
    if a is b:
        return a
    if isinstance(a, Opaque):
        return a
    if isinstance(b, Opaque):
        return b
    if _ints(a, b):
        if isinstance(a, Lin) and isinstance(b, Lin) and a.k == b.k and np.array_equal(a.c, b.c):
            return a
        return _hull(g, a, b, a.shape, a.bits)
    if isinstance(a, Msk) and isinstance(b, Msk):
        return Msk(a.must & b.must, a.may | b.may, (), a.shape, False)
    if isinstance(a, GPtr) and isinstance(b, GPtr) and a.arg == b.arg:
        return GPtr(a.arg, _hull(g, a.off, b.off, a.off.shape, 64), a.pointee)
    if isinstance(a, (GPtr, GChoice)) and isinstance(b, (GPtr, GChoice)):
        return _choice(None, a, b)
    raise NotGrid(f"values of different kinds joined after {op.name}")


@handles("scf.if")
def _if(g: GridGraph, op: Op, env, ctx) -> list[Any]:
    from tilelens_lsp.engines.grid.graph import GCtx

    cond = g.get(env, op.operands[0])
    then_b = op.regions[0].blocks[0]
    else_b = op.regions[1].blocks[0] if len(op.regions) > 1 and op.regions[1].blocks else None
    if isinstance(cond, Msk):
        must, may = bool(np.all(cond.must)), bool(np.any(cond.may))
        then_ctx = GCtx(ctx.atoms + cond.atoms, ctx.stack, both(ctx.anyof, cond.anyof))
        neg = _not(cond)
        else_ctx = GCtx(ctx.atoms + neg.atoms, ctx.stack, ctx.anyof)
    elif isinstance(cond, Opaque):
        must, may = False, True
        then_ctx = else_ctx = ctx
    else:
        raise NotGrid("a branch condition the grid engine does not follow")
    then_v = g.eval_block(then_b, {**env, **g.edge_values(op, True, env, ctx)}, then_ctx) if may else None
    if not may:
        g.mark_unreachable(then_b, ctx)
    else_v = None
    if else_b is not None:
        if must:
            g.mark_unreachable(else_b, ctx)
        else:
            else_v = g.eval_block(else_b, {**env, **g.edge_values(op, False, env, ctx)}, else_ctx)
    if then_v is None:
        return else_v or []
    if else_v is None:
        return then_v
    if isinstance(cond, Opaque):
        return [
            t if isinstance(t, Opaque) else Opaque("data", "a value chosen by loaded data", op.loc) if not _same(t, e) else t
            for t, e in zip(then_v, else_v)
        ]
    return [join_values(g, t, e, op) for t, e in zip(then_v, else_v)]


def _same(a, b) -> bool:
    return a is b


@handles("scf.for")
def _for(g: GridGraph, op: Op, env, ctx) -> list[Any]:
    from tilelens_lsp.engines.grid.graph import GCtx

    lb, ub, step = (g.get(env, o) for o in op.operands[:3])
    if not _ints(lb, ub, step):
        raise NotGrid("loop bounds the grid engine does not follow")
    st = uniform(step)
    if st is None or st <= 0:
        raise NotGrid("a loop step that varies or is not positive")
    inits = [g.get(env, o) for o in op.operands[3:]]
    iv, carried = op.for_header.iv, op.for_header.iter_args
    body = op.regions[0].blocks[0]
    lo_diff = g.bounds(ub)[1] - g.bounds(lb)[0]
    T = int(np.max(-(-lo_diff // st))) if np.size(lo_diff) else 0
    trips_lo = int(np.min(-(-(g.bounds(ub)[0] - g.bounds(lb)[1]) // st)))
    if T <= 0:
        g.mark_unreachable(body, ctx)
        return inits
    t = g.fresh("t", 0, T - 1)
    lbl = lb if isinstance(lb, Lin) else None
    ivf: Lin | Itv
    if lbl is not None:
        ivf = Lin(lbl.c, coefs((lbl.k, 1), (((t, st),), 1)), (), lb.bits)
    else:
        ivf = Itv(lb.lo, lb.hi + st * (T - 1), (), lb.bits)
    atoms = ctx.atoms
    if isinstance(ub, Lin) and lbl is not None:
        # iteration t runs only where lb + st·t < ub
        atoms = atoms + (Lin(ub.c - lbl.c - 1, coefs((ub.k, 1), (lbl.k, -1), (((t, st),), -1)), (), 64),)
    steps = _probe(g, op, env, ctx, body, iv, ivf, carried, inits)
    inner = dict(env)
    inner[iv] = ivf
    for name, v, d in zip(carried, inits, steps):
        inner[name] = advance(g, v, d, t, T, op)
        if not g.probing:  # a mask on what its start was computed from narrows it (`lanes`)
            if d is None:
                g.steps.pop(name, None)  # this evaluation of the loop has no step: none from an earlier one
            else:
                g.steps[name] = (d, t, T, op)
    yielded = g.eval_block(body, inner, GCtx(atoms, ctx.stack, ctx.anyof))
    outs = []
    for v, d, y in zip(inits, steps, yielded):
        if d is None:
            outs.append(join_values(g, v, y, op) if not isinstance(y, (GPtr, GChoice)) else _after(g, v, None, 0, T, op))
        else:
            outs.append(_after(g, v, d, trips_lo, T, op))
    return outs


def _probe(g: GridGraph, op: Op, env, ctx, body, iv, ivf, carried, inits) -> list[int | None]:
    """Each carried value's uniform step per iteration (None: not a uniform step)."""
    from tilelens_lsp.engines.grid.graph import GCtx

    inner = dict(env)
    inner[iv] = ivf
    probes = []
    for i, (name, v) in enumerate(zip(carried, inits)):
        s = g.fresh("s", 0, 0)
        if isinstance(v, Lin):
            pv: Any = Lin(v.c, coefs((v.k, 1), (((s, 1),), 1)), v.shape, v.bits)
        elif isinstance(v, GPtr) and isinstance(v.off, Lin):
            pv = GPtr(v.arg, Lin(v.off.c, coefs((v.off.k, 1), (((s, 1),), 1)), v.off.shape, 64), v.pointee)
        elif isinstance(v, GPtr):
            # a pointer bounded per lane: pointer ops only translate it (addptr), so its step is what
            # the body adds to a symbolic base
            pv = GPtr(v.arg, Lin(np.zeros((1,) * len(v.off.shape), np.int64), ((s, 1),), v.off.shape, 64), v.pointee)
        else:
            pv = v
        probes.append((s, pv))
        inner[name] = pv
    g.probing += 1
    try:
        yielded = g.eval_block(body, inner, GCtx(ctx.atoms, ctx.stack, ctx.anyof))
    except NotGrid:
        yielded = [None] * len(inits)
    finally:
        g.probing -= 1
    steps: list[int | None] = []
    for (s, pv), y in zip(probes, yielded):
        steps.append(_step(g, pv, y, s))
    return steps


def _step(g: GridGraph, pv, y, s: str) -> int | None:
    if isinstance(pv, GPtr) and isinstance(y, GPtr) and y.arg == pv.arg:
        pv, y = pv.off, y.off
    if not (isinstance(pv, Lin) and isinstance(y, Lin)):
        return None
    d = _add(g.norm(y), g.norm(pv), -1, y.shape, 64)
    if d.k:
        return None
    return uniform(d)


def advance(g: GridGraph, v, d: int | None, t: str, T: int, op: Op):
    """A carried value inside the loop: init + d·t, or (no uniform step) whatever it may be."""
    if isinstance(v, Opaque):
        return v
    if d is None:
        if isinstance(v, INT):
            return top(v.shape, v.bits)
        if isinstance(v, Msk):
            return Msk(np.zeros((1,) * len(v.shape), bool), np.ones((1,) * len(v.shape), bool), (), v.shape)
        raise NotGrid("a loop-carried pointer that does not advance by a uniform step")
    if isinstance(v, Lin):
        return g.checked(op, _ctx0(), Lin(v.c, coefs((v.k, 1), (((t, d),), 1)), v.shape, v.bits), v.bits)
    if isinstance(v, Itv):
        return Itv(v.lo + min(0, d * (T - 1)), v.hi + max(0, d * (T - 1)), v.shape, v.bits)
    if isinstance(v, GPtr):
        return GPtr(v.arg, advance(g, v.off, d, t, T, op), v.pointee)
    raise NotGrid("a loop-carried value the grid engine does not follow")


def _after(g: GridGraph, v, d: int | None, trips_lo: int, T: int, op: Op):
    """A carried value after the loop: init + d·trips over the programs' trip counts."""
    if isinstance(v, Opaque):
        return v
    if d is None:
        if isinstance(v, INT):
            return top(v.shape, v.bits)
        if isinstance(v, Msk):
            return Msk(np.zeros((1,) * len(v.shape), bool), np.ones((1,) * len(v.shape), bool), (), v.shape)
        raise NotGrid("a loop-carried pointer that does not advance by a uniform step")
    trips_lo = max(trips_lo, 0)
    if isinstance(v, Lin) and trips_lo == T:
        return Lin(v.c + d * T, v.k, v.shape, v.bits)
    if isinstance(v, INT):
        lo, hi = g.bounds(v)
        return Itv(lo + min(d * trips_lo, d * T), hi + max(d * trips_lo, d * T), v.shape, v.bits)
    if isinstance(v, GPtr):
        return GPtr(v.arg, _after(g, v.off, d, trips_lo, T, op), v.pointee)
    return v


def _ctx0():
    from tilelens_lsp.engines.grid.graph import GCtx

    return GCtx((), ())


@handles("tt.call")
def _call(g: GridGraph, op: Op, env, ctx) -> list[Any]:
    from tilelens_lsp.engines.grid.graph import GCtx

    func = g.m.module.funcs.get(op.callee)
    if func is None or len(ctx.stack) > 32:
        raise NotGrid("a call the grid engine does not follow")
    inner = {name: g.get(env, o) for (name, _), o in zip(func.args, op.operands)}
    return g.eval_body(func.body, inner, GCtx(ctx.atoms, ctx.stack + (op.loc,), ctx.anyof))


@handles("tt.histogram")
def _histogram(g: GridGraph, op: Op, env, ctx) -> list[Any]:
    """`tl.histogram`: each bin counts lanes, so it lies in [0, lanes] whatever the values are."""
    ty = op.result_types[0]
    n = histogram_lanes(op.text + " " + op.tail)
    if n is None or not ty.shape:
        return [Opaque("out-of-vocabulary", "a histogram whose input size the IR does not give", op.loc)]
    total = n if len(ty.shape) == 1 else None
    return [Itv(arr(0, len(ty.shape)), arr(n, len(ty.shape)), tuple(ty.shape), ty.bits, total=total)]


@handles("tt.gather")
def _gather(g: GridGraph, op: Op, env, ctx) -> list[Any]:
    """`tl.gather(src, index, axis)`: each lane takes a lane of `src` along `axis`, so it lies in the
    hull of those lanes; an index that may leave the source is not modelled (Triton leaves it undefined)."""
    src, index = (g.get(env, o) for o in op.operands[:2])
    axis_m = re.search(r"axis = (\d+)", op.text)
    ty = op.result_types[0]
    n = gather_source_extent(op.text, int(axis_m.group(1))) if axis_m else None
    if any(isinstance(v, Opaque) for v in (src, index)):
        return [_opaque(src, index)]
    if n is None or not isinstance(src, INT) or not isinstance(index, INT) or ty.bits <= 1:
        return [Opaque("out-of-vocabulary", "a gather the model does not follow", op.loc)]
    ilo, ihi = g.bounds(index)
    if np.any(ilo < 0) or np.any(ihi >= n):
        return [Opaque("data", "a gather whose index may leave its source", op.loc)]
    slo, shi = g.bounds(src)
    axis = int(axis_m.group(1))  # type: ignore[union-attr]
    full = tuple(src.shape)
    lo = np.broadcast_to(slo, full).min(axis=axis, keepdims=True)
    hi = np.broadcast_to(shi, full).max(axis=axis, keepdims=True)
    return [_from_object(lo, hi, tuple(ty.shape), ty.bits)]


@handles("tt.reduce", "tt.scan")
def _reduce(g: GridGraph, op: Op, env, ctx) -> list[Any]:
    vals = [g.get(env, o) for o in op.operands]
    body = op.regions[0].blocks[0].ops if op.regions else []
    combine = [o.name for o in body if o.name not in ("tt.reduce.return", "tt.scan.return")]
    axis_m = re.search(r"axis = (\d+)", op.text + " " + op.tail)
    if op.name == "tt.scan" and len(vals) == 1 and isinstance(vals[0], INT) and combine == ["arith.addi"] and axis_m:
        return [_cumulative_sum(g, vals[0], int(axis_m.group(1)), "reverse = true" in op.text + " " + op.tail)]
    if (
        op.name == "tt.reduce"
        and len(vals) == 1
        and isinstance(vals[0], INT)
        and len(combine) == 1
        and combine[0] in ("arith.maxsi", "arith.minsi", "arith.addi")
        and axis_m
    ):
        v = vals[0]
        lo, hi = g.bounds(v)
        axis = int(axis_m.group(1))
        shape = op.result_types[0].shape
        # maxima and minima end by end; a sum too (`tl.sum` of a widened comparison counts the lanes
        # where it may hold), unless it may leave its width
        reductions: dict[str, Callable[..., np.ndarray]] = {
            "arith.maxsi": np.max,
            "arith.minsi": np.min,
            "arith.addi": np.sum,
        }
        fn = reductions[combine[0]]
        full = v.shape
        with np.errstate(all="ignore"):
            r_lo = fn(np.broadcast_to(lo, full).astype(np.int64), axis=axis)
            r_hi = fn(np.broadcast_to(hi, full).astype(np.int64), axis=axis)
        out = Itv(r_lo, r_hi, shape, v.bits)
        return [out if combine[0] != "arith.addi" or g.fits(out, v.bits) else top(shape, v.bits)]
    return [
        _opaque(*vals)
        if any(isinstance(v, Opaque) for v in vals)
        else Opaque("out-of-vocabulary", f"{op.name} is not modelled", op.loc)
    ] * len(op.results)


def _cumulative_sum(g: GridGraph, v: Any, axis: int, reverse: bool) -> Itv:
    """`tl.cumsum` of integers: the running sums of each end (a sum is monotone in every term), each
    lane its own term plus the terms before it (`Itv.term`), or every value of the width where a
    running sum may leave it."""
    if v.bits <= 1:
        return top(v.shape, v.bits)
    bounded = ranges.running_sums(g.bounds(v), v.shape, axis, reverse, getattr(v, "total", None))
    if not bounded.within(v.bits):
        return top(v.shape, v.bits)
    got = bounded.as_int64()
    return Itv(got.lo, got.hi, v.shape, v.bits, (v, got.before_lo, got.before_hi))
