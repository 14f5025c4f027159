"""The grid engine's values: integers over all programs at once, as affine forms or per-lane intervals.

A `Lin` is `c[lane] + Σ k_v · v`: per-lane integer constants plus uniform integer coefficients on grid
variables (program ids `p0..p2`, loop iterations `t…`, the quotient/remainder pair a division by a
constant splits a variable into, and fresh variables standing for a program-uniform value the forms
do not follow). Its value is exact and unwrapped. An `Itv` is a per-lane interval [lo, hi] over every
program, a proven bound and nothing more. A `Msk` is a tri-state mask per lane (true for every
program / true for some program) with the affine atoms `f >= 0` every true lane satisfies, which
narrow the variables when an access is recorded. `GPtr` is a pointer: provenance plus a byte offset.

What this deliberately does not do: evaluate any op (that is `graph`), or guess: whatever leaves the
domain becomes an interval, an opaque value, or `NotGrid`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


class NotGrid(Exception):
    """The launch leaves what the grid engine follows; another engine answers it."""


Coefs = tuple[tuple[str, int], ...]


def coefs(*parts: tuple[Coefs, int]) -> Coefs:
    """Σ scale · coefficients, zero terms dropped, sorted by variable."""
    out: dict[str, int] = {}
    for k, scale in parts:
        for v, a in k:
            out[v] = out.get(v, 0) + a * scale
    return tuple(sorted((v, a) for v, a in out.items() if a))


@dataclass(frozen=True)
class Lin:
    c: np.ndarray  # int64, ndim == len(shape), broadcastable to shape
    k: Coefs
    shape: tuple[int, ...]
    bits: int


@dataclass(frozen=True)
class Itv:
    lo: np.ndarray  # inclusive bounds, int64 (or object past int64), broadcastable to shape
    hi: np.ndarray
    shape: tuple[int, ...]
    bits: int
    # (x, lo, hi): this value is the value x (that very object, lane for lane) plus a rest in [lo, hi],
    # as `ranges.RangeV.term`: a running sum less its own term is the exclusive sum
    term: tuple[object, np.ndarray, np.ndarray] | None = field(default=None, compare=False)
    total: int | None = None  # as `ranges.RangeV.total`: nonnegative lanes summing to at most this


@dataclass(frozen=True)
class Msk:
    must: np.ndarray  # bool, broadcastable: true in every program where the code runs
    may: np.ndarray  # bool: true in some program
    atoms: tuple[Lin, ...]  # every true lane satisfies atom >= 0
    shape: tuple[int, ...]
    exact: bool = False  # the mask is exactly the conjunction of its atoms
    # and every true lane satisfies all the atoms of at least one of these (a disjunction, from `|`)
    anyof: tuple[tuple[Lin, ...], ...] = ()


MAX_DISJUNCTS = 8  # cases a disjunction of atoms keeps; past that it is dropped (a weaker, sound mask)


def disjuncts(m: Msk) -> tuple[tuple[Lin, ...], ...] | None:
    """The conjunctions one of which every true lane of `m` satisfies; None when one is empty (no condition)."""
    cases = tuple(m.atoms + d for d in m.anyof) if m.anyof else (m.atoms,)
    return None if any(not c for c in cases) else cases


def both(a: tuple[tuple[Lin, ...], ...], b: tuple[tuple[Lin, ...], ...]) -> tuple[tuple[Lin, ...], ...]:
    """Two disjunctions that both hold, as one (every pair of cases), or the smaller one past MAX_DISJUNCTS."""
    if not a or not b:
        return a or b
    if len(a) * len(b) > MAX_DISJUNCTS:
        return a if len(a) <= len(b) else b
    return tuple(x + y for x in a for y in b)


@dataclass(frozen=True)
class GPtr:
    arg: str
    off: "Lin | Itv"  # byte offset from the parameter's address
    pointee: int


@dataclass(frozen=True)
class GChoice:
    """A pointer that is one of several arguments' pointers: each option with the mask that picks it."""

    options: tuple[tuple[GPtr, "Msk | None"], ...]


def arr(x, ndim: int) -> np.ndarray:
    """`x` as an array of `ndim` dimensions (leading axes of size 1 added); bools stay bools."""
    a = np.asarray(x)
    if a.dtype != bool and a.dtype != object:
        a = a.astype(np.int64, copy=False)
    return a.reshape((1,) * (ndim - a.ndim) + a.shape) if a.ndim < ndim else a


def const(value, shape: tuple[int, ...], bits: int) -> Lin:
    return Lin(arr(value, len(shape)), (), shape, bits)


def top(shape: tuple[int, ...], bits: int) -> Itv:
    b = min(bits, 64)
    return Itv(arr(-(1 << (b - 1)), len(shape)), arr((1 << (b - 1)) - 1, len(shape)), shape, bits)


def uniform(v) -> int | None:
    """The value of a form that is the same integer in every lane and program, else None."""
    if isinstance(v, Lin) and not v.k:
        flat = v.c.reshape(-1)
        if flat.size and (flat == flat[0]).all():
            return int(flat[0])
    return None


def limits(bits: int) -> tuple[int, int]:
    b = min(bits, 64)
    return -(1 << (b - 1)), (1 << (b - 1)) - 1


def reshape_c(c: np.ndarray, fn) -> np.ndarray:
    return np.asarray(fn(c))


def map_lanes(v, fn, shape: tuple[int, ...]):
    """Apply a lane-shape transform (splat, broadcast, expand_dims, reshape, trans) to a value's arrays."""
    if isinstance(v, Lin):
        return Lin(fn(v.c), v.k, shape, v.bits)
    if isinstance(v, Itv):
        return Itv(fn(v.lo), fn(v.hi), shape, v.bits)
    if isinstance(v, Msk):
        return Msk(
            fn(v.must),
            fn(v.may),
            tuple(map_lanes(a, fn, shape) for a in v.atoms),
            shape,
            v.exact,
            tuple(tuple(map_lanes(a, fn, shape) for a in case) for case in v.anyof),
        )
    if isinstance(v, GPtr):
        return GPtr(v.arg, map_lanes(v.off, fn, shape), v.pointee)
    if isinstance(v, GChoice):
        return GChoice(
            tuple((map_lanes(p, fn, shape), None if m is None else map_lanes(m, fn, shape)) for p, m in v.options)
        )
    return v
