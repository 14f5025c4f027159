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
    `src`: (declared value at lo, declared value at hi, the tensor's name), None once ranges mix."""

    lo: np.ndarray
    hi: np.ndarray
    bits: int
    undef: np.ndarray | None = None
    src: tuple[np.ndarray, np.ndarray, str] | None = None

    def map(self, fn: Callable[[np.ndarray], np.ndarray]) -> "RangeV":
        src = None if self.src is None else (fn(self.src[0]), fn(self.src[1]), self.src[2])
        return RangeV(fn(self.lo), fn(self.hi), self.bits, None if self.undef is None else fn(self.undef), src)


@dataclass
class PtrSpan:
    """A pointer whose byte offset lies in [lo, hi] per lane (an address built from a RangeV)."""

    arg: str
    lo: np.ndarray
    hi: np.ndarray
    pointee: int
    undef: np.ndarray | None = None
    src: tuple[np.ndarray, np.ndarray, str] | None = None

    def map(self, fn: Callable[[np.ndarray], np.ndarray], pointee: int | None = None) -> "PtrSpan":
        src = None if self.src is None else (fn(self.src[0]), fn(self.src[1]), self.src[2])
        return PtrSpan(self.arg, fn(self.lo), fn(self.hi), self.pointee if pointee is None else pointee,
                       None if self.undef is None else fn(self.undef), src)

    def plus(self, lo: np.ndarray, hi: np.ndarray, undef: np.ndarray | None = None,
             src: tuple | None = None, keep_src: bool = True) -> "PtrSpan":
        return PtrSpan(self.arg, self.lo + lo, self.hi + hi, self.pointee, _undef(self.undef, undef),
                       self.src if keep_src else src)


def _undef(a: np.ndarray | None, b: np.ndarray | None) -> np.ndarray | None:
    if a is None:
        return b
    if b is None:
        return a
    return a | b


def bounds(v) -> tuple[np.ndarray, np.ndarray]:
    """(lo, hi) of a RangeV, or of an IntV (`.a`) as a degenerate interval."""
    if isinstance(v, RangeV):
        return v.lo, v.hi
    return v.a, v.a


def loaded(lo: int, hi: int, shape: tuple[int, ...], bits: int, name: str, mask: np.ndarray | None,
           other: np.ndarray | None) -> RangeV:
    """A load of a tensor declared `values=(lo, hi)`: masked-off lanes take `other` (or are undefined)."""
    lo_a = np.full(shape, lo, dtype=np.int64)
    hi_a = np.full(shape, hi - 1, dtype=np.int64)
    src = (lo_a, hi_a, name)
    undef = None
    if mask is not None:
        off = ~np.broadcast_to(mask, shape)
        if other is None:
            undef = off if off.any() else None
        else:
            o = np.broadcast_to(other, shape)
            lo_a, hi_a = np.where(off, o, lo_a), np.where(off, o, hi_a)
            src = (np.where(off, o, src[0]), np.where(off, o, src[1]), name)
    return RangeV(lo_a, hi_a, bits, undef, src)


def binary(name: str, a, b, bits: int) -> RangeV | None:
    """Interval arithmetic for `name` on RangeV/IntV operands; None where it gives no bound."""
    alo, ahi = bounds(a)
    blo, bhi = bounds(b)
    undef = _undef(getattr(a, "undef", None), getattr(b, "undef", None))
    ranged_a, ranged_b = isinstance(a, RangeV), isinstance(b, RangeV)
    src = a.src if ranged_a and not ranged_b else b.src if ranged_b and not ranged_a else None
    const = b.a if ranged_a and not ranged_b else a.a if ranged_b and not ranged_a else None
    if name == "arith.addi":
        return RangeV(alo + blo, ahi + bhi, bits, undef, src)
    if name == "arith.subi":
        if ranged_b and src is not None:      # x - r: the low end comes from r's high end
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
        if ranged_b or (b.a <= 0).any() or (name in ("arith.divui", "arith.shrui") and (alo < 0).any()):
            return None
        if name.startswith("arith.shr"):
            d = np.left_shift(np.ones_like(b.a), np.clip(b.a, 0, 62))
            return RangeV(alo // d, ahi // d, bits, undef, src)
        fn = {"arith.divsi": _tdiv, "arith.divui": np.floor_divide, "arith.floordivsi": np.floor_divide,
              "arith.ceildivsi": lambda x, y: -((-x) // y)}[name]
        return RangeV(fn(alo, b.a), fn(ahi, b.a), bits, undef, src)   # monotone for a positive divisor
    if name in ("arith.remsi", "arith.remui"):
        if ranged_b or (b.a <= 0).any():
            return None
        m = b.a - 1
        if ((alo >= 0) & (ahi <= m)).all():
            return RangeV(alo, ahi, bits, undef, src)
        if (alo >= 0).all() or name == "arith.remui" and (alo >= 0).all():
            return RangeV(np.zeros_like(alo), np.broadcast_to(m, alo.shape).copy(), bits, undef)
        if name == "arith.remsi":
            return RangeV(-np.broadcast_to(m, alo.shape), np.broadcast_to(m, alo.shape).copy(), bits, undef)
        return None
    if name in ("arith.minsi", "arith.maxsi"):
        pick = np.minimum if name == "arith.minsi" else np.maximum
        return RangeV(pick(alo, blo), pick(ahi, bhi), bits, undef)
    if name == "arith.andi" and const is not None and (const >= 0).all():
        return RangeV(np.zeros_like(np.broadcast_to(const, np.broadcast_shapes(alo.shape, const.shape))),
                      np.broadcast_to(const, np.broadcast_shapes(ahi.shape, const.shape)).copy(), bits, undef)
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
        "slt": (ahi < blo, alo >= bhi), "sle": (ahi <= blo, alo > bhi),
        "sgt": (alo > bhi, ahi <= blo), "sge": (alo >= bhi, ahi < blo),
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
    return RangeV(np.where(cond, alo, blo), np.where(cond, ahi, bhi), bits, undef)


def _tdiv(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    q = np.abs(a) // np.abs(b)
    return np.where((a < 0) != (b < 0), -q, q)
