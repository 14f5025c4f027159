"""Loaded integers with a declared value range (`i32[N].values(LO, HI)`), as intervals per lane.

An index tensor whose values the user declared (vocabulary size, number of blocks, number of
classes) loads as a `RangeV`: per lane, the lowest and highest value it may hold. Integer arithmetic
on it is interval arithmetic; an address built from it is a `PtrSpan`, whose footprint per lane is
the hull of what it may touch, a proven over-approximation (`exact: false`). A range also remembers
which declared value gives each end (`src`), so an access that may leave its storage names the
index value that takes it there. Whatever interval arithmetic cannot bound here is loaded data, and
the enumeration refuses addresses built from it as before. This module knows only numpy.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np


@dataclass
class RangeV:
    """An integer in [lo, hi] (inclusive) per lane, arrays shaped like an IntV's (P or 1, *lanes).

    `undef`: lanes whose value is undefined (a masked-off load without `other`), None when none is.
    `src`: (declared value at lo, declared value at hi, the tensor's name), None once ranges mix.
    `decl`: the declared set ((LO, HI), ...) while the value is a loaded element itself (not yet
    computed on), so a guard's bound snaps to the values the set holds (`y != -100` with labels in
    {-100} ∪ [0, V) leaves [0, V))."""

    lo: np.ndarray
    hi: np.ndarray
    bits: int
    undef: np.ndarray | None = None
    src: tuple[np.ndarray, np.ndarray, str] | None = None
    decl: tuple[tuple[int, int], ...] | None = None
    # bounded by another loaded value (`offs < end`, a loop from `start` to `end`): a segment between
    # per-program offsets (cu_seqlens, expert offsets, row pointers), not a scatter's free index
    segment: bool = False
    # (x, lo, hi): this value is the value x (that very object, lane for lane) plus a rest in [lo, hi]:
    # a running sum is each lane's own term plus the terms before it, so `tl.cumsum(c) - c` (the
    # exclusive prefix sum) is that rest exactly, not the wider difference of two intervals
    term: tuple[object, np.ndarray, np.ndarray] | None = None
    # the lanes are nonnegative and sum to at most this along their one lane axis (a histogram's bins
    # count the lanes of its input): a running sum of them never passes it
    total: int | None = None

    def map(self, fn: Callable[[np.ndarray], np.ndarray]) -> "RangeV":
        src = None if self.src is None else (fn(self.src[0]), fn(self.src[1]), self.src[2])
        return RangeV(
            fn(self.lo), fn(self.hi), self.bits, None if self.undef is None else fn(self.undef), src, self.decl, self.segment
        )


@dataclass
class PtrSpan:
    """A pointer whose byte offset lies in [lo, hi] per lane (an address built from a RangeV)."""

    arg: str
    lo: np.ndarray
    hi: np.ndarray
    pointee: int
    undef: np.ndarray | None = None
    src: tuple[np.ndarray, np.ndarray, str] | None = None
    segment: bool = False  # built from a segment's index (see RangeV)

    def map(self, fn: Callable[[np.ndarray], np.ndarray], pointee: int | None = None) -> "PtrSpan":
        src = None if self.src is None else (fn(self.src[0]), fn(self.src[1]), self.src[2])
        return PtrSpan(
            self.arg,
            fn(self.lo),
            fn(self.hi),
            self.pointee if pointee is None else pointee,
            None if self.undef is None else fn(self.undef),
            src,
            self.segment,
        )

    def plus(
        self,
        lo: np.ndarray,
        hi: np.ndarray,
        undef: np.ndarray | None = None,
        src: tuple | None = None,
        keep_src: bool = True,
        segment: bool = False,
    ) -> "PtrSpan":
        return PtrSpan(
            self.arg,
            self.lo + lo,
            self.hi + hi,
            self.pointee,
            _undef(self.undef, undef),
            self.src if keep_src else src,
            self.segment or segment,
        )


def _undef(a: np.ndarray | None, b: np.ndarray | None) -> np.ndarray | None:
    if a is None:
        return b
    if b is None:
        return a
    return a | b


def join_undef(a: np.ndarray | None, b: np.ndarray | None) -> np.ndarray | None:
    return _undef(a, b)


def bounds(v) -> tuple[np.ndarray, np.ndarray]:
    """(lo, hi) of a RangeV, or of an IntV (`.a`) as a degenerate interval."""
    if isinstance(v, RangeV):
        return v.lo, v.hi
    return v.a, v.a


def loaded(
    intervals: tuple[tuple[int, int], ...],
    shape: tuple[int, ...],
    bits: int,
    name: str,
    mask: np.ndarray | None,
    other: np.ndarray | None,
) -> RangeV:
    """A load of a tensor declared `values=...` (sorted disjoint [LO, HI) intervals): masked-off lanes
    take `other` (or are undefined)."""
    lo_a = np.full(shape, intervals[0][0], dtype=np.int64)
    hi_a = np.full(shape, intervals[-1][1] - 1, dtype=np.int64)
    src = (lo_a, hi_a, name)
    undef = None
    decl: tuple[tuple[int, int], ...] | None = intervals
    if mask is not None:
        off = ~np.broadcast_to(mask, shape)
        if other is None:
            undef = off if off.any() else None
        else:
            o = np.broadcast_to(other, shape)
            if off.any():
                decl = None  # a lane holding `other` is not one of the declared values
            lo_a, hi_a = np.where(off, o, lo_a), np.where(off, o, hi_a)
            src = (np.where(off, o, src[0]), np.where(off, o, src[1]), name)
    return RangeV(lo_a, hi_a, bits, undef, src, decl)


def snap(r: RangeV) -> RangeV:
    """Move each end inward to the nearest value of the declared set (no-op without one)."""
    if r.decl is None or len(r.decl) < 2:
        return r
    los = np.array([a for a, _ in r.decl], dtype=np.int64)
    his = np.array([b - 1 for _, b in r.decl], dtype=np.int64)
    # lo: the first interval whose top is >= lo, then max(lo, its bottom)
    i = np.clip(np.searchsorted(his, r.lo, side="left"), 0, len(los) - 1)
    lo = np.maximum(r.lo, los[i])
    # hi: the last interval whose bottom is <= hi, then min(hi, its top)
    j = np.clip(np.searchsorted(los, r.hi, side="right") - 1, 0, len(los) - 1)
    hi = np.minimum(r.hi, his[j])
    return RangeV(lo, hi, r.bits, r.undef, r.src, r.decl, r.segment)


NEGATE = {
    "slt": "sge",
    "sle": "sgt",
    "sgt": "sle",
    "sge": "slt",
    "eq": "ne",
    "ne": "eq",
    "ult": "uge",
    "ule": "ugt",
    "ugt": "ule",
    "uge": "ult",
}
FLIP = {
    "slt": "sgt",
    "sle": "sge",
    "sgt": "slt",
    "sge": "sle",
    "eq": "eq",
    "ne": "ne",
    "ult": "ugt",
    "ule": "uge",
    "ugt": "ult",
    "uge": "ule",
}


def refine(x: RangeV, pred: str, y) -> tuple[RangeV, np.ndarray]:
    """x narrowed by the fact `x pred y` (y a RangeV or IntV): (the narrowed x, lanes where the fact
    cannot hold for any value, i.e. the narrowed interval is empty). Empty lanes keep x's own bounds
    (they never run), undefined lanes are never called empty (their value is not x's range)."""
    ylo, yhi = bounds(y)
    lo, hi = x.lo, x.hi
    if pred.startswith("u"):
        if (ylo < 0).any():
            return x, np.zeros(np.broadcast_shapes(lo.shape, ylo.shape), bool)
        if pred in ("ult", "ule"):  # x <u y with y >= 0: 0 <= x < y as signed values
            lo = np.maximum(lo, 0)
        elif (lo < 0).any():  # x >u y: a negative x is a huge unsigned one
            return x, np.zeros(np.broadcast_shapes(lo.shape, ylo.shape), bool)
        pred = "s" + pred[1:]
    if pred == "slt":
        hi = np.minimum(hi, yhi - 1)
    elif pred == "sle":
        hi = np.minimum(hi, yhi)
    elif pred == "sgt":
        lo = np.maximum(lo, ylo + 1)
    elif pred == "sge":
        lo = np.maximum(lo, ylo)
    elif pred == "eq":
        lo, hi = np.maximum(lo, ylo), np.minimum(hi, yhi)
    elif pred == "ne":
        point = ylo == yhi  # only a known value can be removed, and only at an end
        lo = np.where(point & (lo == ylo), lo + 1, lo)
        hi = np.where(point & (hi == ylo), hi - 1, hi)
    lo, hi = np.broadcast_arrays(lo, hi)
    out = snap(RangeV(lo, hi, x.bits, None, None, x.decl))
    empty = out.lo > out.hi
    if x.undef is not None:
        empty = empty & ~x.undef
    lo, hi = (
        np.where(empty, np.broadcast_to(x.lo, empty.shape), out.lo),
        np.where(empty, np.broadcast_to(x.hi, empty.shape), out.hi),
    )
    src = x.src
    if src is not None:
        if x.decl is not None or (_equal_broadcast(src[0], x.lo) and _equal_broadcast(src[1], x.hi)):
            src = (lo, hi, src[2])  # the value is the loaded element itself
        elif not (
            np.array_equal(np.broadcast_to(x.lo, lo.shape), lo) and np.array_equal(np.broadcast_to(x.hi, hi.shape), hi)
        ):
            src = None  # an end moved: which declared value gives it is not known
    return RangeV(lo, hi, x.bits, x.undef, src, x.decl, x.segment or isinstance(y, RangeV)), empty


def hull(a, b, bits: int) -> RangeV:
    """Either value (the join of two paths): per lane, the interval holding both."""
    alo, ahi = bounds(a)
    blo, bhi = bounds(b)
    ua, ub = getattr(a, "undef", None), getattr(b, "undef", None)
    return RangeV(np.minimum(alo, blo), np.maximum(ahi, bhi), bits, _undef(ua, ub), segment=_segment(a) or _segment(b))


def _segment(v) -> bool:
    return bool(getattr(v, "segment", False))


def binary(name: str, a, b, bits: int) -> RangeV | None:
    """Interval arithmetic for `name` on RangeV/IntV operands; None where it gives no bound."""
    ta, tb = getattr(a, "term", None), getattr(b, "term", None)
    if name == "arith.subi" and ta is not None and ta[0] is b:  # (x + rest) - x: the rest, lane for lane
        return RangeV(ta[1], ta[2], bits, _undef(getattr(a, "undef", None), getattr(b, "undef", None)))
    out = _binary(name, a, b, bits)
    if out is not None:
        out.segment = _segment(a) or _segment(b)
        out.term = carried_term(name, bounds(a), bounds(b), ta, tb)
    return out


def carried_term(
    name: str, a: tuple[np.ndarray, np.ndarray], b: tuple[np.ndarray, np.ndarray], ta, tb
) -> tuple[object, np.ndarray, np.ndarray] | None:
    """The term (`RangeV.term`) of `a name b`, given both sides' bounds and terms, where one side is
    some x plus a rest: x plus the rest moved by the other side (`start + tl.cumsum(c) - c` is `start`
    plus the exclusive sum); None where neither side or both have one, or for any other op."""
    if name not in ("arith.addi", "arith.subi") or (ta is None) == (tb is None):
        return None
    with np.errstate(all="ignore"):
        if ta is not None:
            if name == "arith.addi":
                return (ta[0], ta[1] + b[0], ta[2] + b[1])
            return (ta[0], ta[1] - b[1], ta[2] - b[0])
        if name == "arith.addi":
            return (tb[0], tb[1] + a[0], tb[2] + a[1])
    return None


def _binary(name: str, a, b, bits: int) -> RangeV | None:
    alo, ahi = bounds(a)
    blo, bhi = bounds(b)
    undef = _undef(getattr(a, "undef", None), getattr(b, "undef", None))
    ranged_a, ranged_b = isinstance(a, RangeV), isinstance(b, RangeV)
    src = a.src if ranged_a and not ranged_b else b.src if ranged_b and not ranged_a else None
    const = b.a if ranged_a and not ranged_b else a.a if ranged_b and not ranged_a else None
    if name == "arith.addi":
        return RangeV(alo + blo, ahi + bhi, bits, undef, src)
    if name == "arith.subi":
        if ranged_b and src is not None:  # x - r: the low end comes from r's high end
            src = (src[1], src[0], src[2])
        return RangeV(alo - bhi, ahi - blo, bits, undef, src)
    if name in ("arith.muli", "arith.shli"):
        if name == "arith.shli":
            if ranged_b or (b.a < 0).any() or (b.a >= 63).any():
                return None
            blo = bhi = np.left_shift(np.ones_like(b.a), b.a)
            const = blo
        corners = np.stack(np.broadcast_arrays(alo * blo, alo * bhi, ahi * blo, ahi * bhi))
        lo, hi = corners.min(axis=0), corners.max(axis=0)
        if src is not None and const is not None:
            neg = np.broadcast_to(const < 0, lo.shape)
            s0, s1 = np.broadcast_arrays(src[0], src[1], lo)[:2]
            src = (np.where(neg, s1, s0), np.where(neg, s0, s1), src[2])
        else:
            src = None
        return RangeV(lo, hi, bits, undef, src)
    if name in ("arith.divsi", "arith.divui", "arith.floordivsi", "arith.ceildivsi", "arith.shrsi", "arith.shrui"):
        divisions: dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
            "arith.divsi": _tdiv,
            "arith.divui": np.floor_divide,
            "arith.floordivsi": np.floor_divide,
            "arith.ceildivsi": lambda x, y: -((-x) // y),
        }
        if ranged_b:
            # a divisor loaded from a declared range (a split count per sequence): for a positive divisor
            # each of these divisions is monotone in the dividend and, the dividend fixed, in the divisor,
            # so its extremes are at the corners of the two intervals
            if name not in ("arith.divsi", "arith.floordivsi", "arith.ceildivsi") or (blo <= 0).any():
                return None
            fn = divisions[name]
            corners = np.stack(np.broadcast_arrays(fn(alo, blo), fn(alo, bhi), fn(ahi, blo), fn(ahi, bhi)))
            return RangeV(corners.min(axis=0), corners.max(axis=0), bits, undef)
        if (b.a <= 0).any() or (name in ("arith.divui", "arith.shrui") and (alo < 0).any()):
            return None
        if name.startswith("arith.shr"):
            d = np.left_shift(np.ones_like(b.a), np.clip(b.a, 0, 62))
            return RangeV(alo // d, ahi // d, bits, undef, src)
        fn = divisions[name]
        return RangeV(fn(alo, b.a), fn(ahi, b.a), bits, undef, src)  # monotone for a positive divisor
    if name in ("arith.remsi", "arith.remui"):
        if ranged_b or (b.a <= 0).any():
            return None
        m = b.a - 1
        if ((alo >= 0) & (alo // b.a == ahi // b.a)).all():
            # one quotient for the whole range (a range below the divisor, or one value): the remainder
            # grows with the value, so its ends are the ends' remainders
            return RangeV(alo % b.a, ahi % b.a, bits, undef, src)
        if (alo >= 0).all() or name == "arith.remui" and (alo >= 0).all():
            return RangeV(np.zeros_like(alo), np.broadcast_to(m, alo.shape).copy(), bits, undef)
        if name == "arith.remsi":
            return RangeV(-np.broadcast_to(m, alo.shape), np.broadcast_to(m, alo.shape).copy(), bits, undef)
        return None
    if name in ("arith.minsi", "arith.maxsi"):
        pick = np.minimum if name == "arith.minsi" else np.maximum
        return RangeV(pick(alo, blo), pick(ahi, bhi), bits, undef)
    if name == "arith.andi" and const is not None and (const >= 0).all():
        return RangeV(
            np.zeros_like(np.broadcast_to(const, np.broadcast_shapes(alo.shape, const.shape))),
            np.broadcast_to(const, np.broadcast_shapes(ahi.shape, const.shape)).copy(),
            bits,
            undef,
        )
    return None


def compare(pred: str, a, b) -> tuple[np.ndarray, np.ndarray]:
    """(lanes where `a pred b` holds for every value, lanes where it holds for none)."""
    alo, ahi = bounds(a)
    blo, bhi = bounds(b)
    if pred.startswith("u"):
        if (alo < 0).any() or (blo < 0).any():
            shape = np.broadcast_shapes(alo.shape, blo.shape)
            return np.zeros(shape, dtype=bool), np.zeros(shape, dtype=bool)
        pred = "s" + pred[1:]
    table = {
        "slt": (ahi < blo, alo >= bhi),
        "sle": (ahi <= blo, alo > bhi),
        "sgt": (alo > bhi, ahi <= blo),
        "sge": (alo >= bhi, ahi < blo),
        "eq": ((alo == ahi) & (blo == bhi) & (alo == blo), (ahi < blo) | (alo > bhi)),
        "ne": ((ahi < blo) | (alo > bhi), (alo == ahi) & (blo == bhi) & (alo == blo)),
    }
    always, never = table[pred]
    for v in (a, b):
        if getattr(v, "undef", None) is not None:
            always, never = always & ~v.undef, never & ~v.undef
    return always, never


def fits(r: RangeV, bits: int) -> bool:
    lo, hi = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    return bool((r.lo >= lo).all() and (r.hi <= hi).all())


@dataclass(frozen=True)
class RunningSums:
    """Per lane, bounds of a running sum (the lane's own term included) and of the terms before it."""

    lo: np.ndarray
    hi: np.ndarray
    before_lo: np.ndarray
    before_hi: np.ndarray

    def within(self, bits: int) -> bool:
        """Whether every sum, with its own term or without, fits a signed integer of `bits`."""
        low, high = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
        pairs = ((self.lo, self.hi), (self.before_lo, self.before_hi))
        return all(bool((lo >= low).all()) and bool((hi <= high).all()) for lo, hi in pairs)

    def as_int64(self) -> RunningSums:
        """The same bounds as int64 arrays (they fit: see `within`)."""
        return RunningSums(*(a.astype(np.int64) for a in (self.lo, self.hi, self.before_lo, self.before_hi)))


def running_sums(
    x: tuple[np.ndarray, np.ndarray],
    shape: tuple[int, ...],
    axis: int,
    reverse: bool,
    total: int | None = None,
    own: tuple[np.ndarray, np.ndarray] | None = None,
) -> RunningSums:
    """Bounds of a running sum (`tl.cumsum`; `reverse`: from the end) along `axis` of a vector of
    `shape` whose lanes lie in `x`, and of the terms before each lane (after it, reversed): the
    exclusive sums. `own` bounds each lane's own term where a fact narrowed it: a fact about one lane
    says nothing about the others, so only the own term narrows. The bounds are taken to the whole
    shape first: one bound may stand for every lane. With `total` (nonnegative lanes summing to at
    most it), the terms before a lane leave room for its own, and no sum passes it. Never wrapped:
    int64 where no sum can pass 2**62, Python integers else."""
    own = x if own is None else own
    largest = max(max(int(np.max(a)), -int(np.min(a))) for a in (*x, *own))
    largest = max(largest, 0 if total is None else abs(total))
    dtype: type = np.int64 if (largest + 1) * (shape[axis] + 2) < 1 << 62 else object

    def full(a: np.ndarray) -> np.ndarray:
        return np.broadcast_to(a, shape).astype(dtype)

    def before(a: np.ndarray) -> np.ndarray:
        terms = np.flip(full(a), axis) if reverse else full(a)
        sums = np.cumsum(terms, axis=axis) - terms
        return np.flip(sums, axis) if reverse else sums

    before_lo, before_hi = before(x[0]), before(x[1])
    own_lo, own_hi = full(own[0]), full(own[1])
    if total is not None:
        before_hi = np.maximum(np.minimum(before_hi, total - own_lo), before_lo)
    lo, hi = before_lo + own_lo, before_hi + own_hi
    if total is not None:
        hi = np.maximum(np.minimum(hi, total), lo)
    return RunningSums(lo, hi, before_lo, before_hi)


def running_sum_narrowed(
    x: tuple[np.ndarray, np.ndarray],
    own: tuple[np.ndarray, np.ndarray],
    lanes: tuple[int, ...],
    axis: int,
    reverse: bool,
    bits: int,
    total: int | None = None,
) -> RunningSums | None:
    """`running_sums` of a vector of `lanes` after a leading program axis, as int64, where a fact
    narrowed each lane's own term to `own`; None where a sum may leave `bits`."""
    programs = max(np.shape(a)[0] if np.ndim(a) else 1 for a in (*x, *own))
    sums = running_sums(x, (programs, *lanes), axis, reverse, total, own)
    return sums.as_int64() if sums.within(bits) else None


def choose(cond: np.ndarray, a, b, bits: int) -> RangeV:
    """Lane-wise `cond ? a : b` of RangeV/IntV values."""
    alo, ahi = bounds(a)
    blo, bhi = bounds(b)
    undef = None
    ua, ub = getattr(a, "undef", None), getattr(b, "undef", None)
    if ua is not None or ub is not None:
        shape = np.broadcast_shapes(cond.shape, alo.shape, blo.shape)
        za = np.zeros(shape, bool) if ua is None else ua
        zb = np.zeros(shape, bool) if ub is None else ub
        undef = np.where(cond, za, zb)
    return RangeV(np.where(cond, alo, blo), np.where(cond, ahi, bhi), bits, undef, segment=_segment(a) or _segment(b))


def _equal_broadcast(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether two arrays hold the same values once broadcast to one shape."""
    x, y = np.broadcast_arrays(a, b)
    return bool(np.array_equal(x, y))


def _tdiv(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    q = np.abs(a) // np.abs(b)
    return np.where((a < 0) != (b < 0), -q, q)
