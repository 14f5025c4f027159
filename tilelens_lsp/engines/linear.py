"""Linear forms over program-uniform unknowns, and the bound a relational guard puts on an index.

A varlen kernel masks `o_t < eos - bos` and addresses `bos + o_t`, with `bos` and `eos` loaded: each
is known only by its interval, and interval arithmetic bounds `bos + o_t` by max(bos) + max(o_t),
past the sequence's end. Written as linear forms over the unknowns (`atoms`), the guard is
`F = o_t - eos + bos <= -1` and the index `I = bos + o_t = 1·F + eos`, so on every lane the guard lets
through `I <= -1 + max(eos)`. `upper` reads such bounds: `I = k·F + R` for a k > 0 per lane, hence
`I <= k·slack + max(R)`, where R's atoms range over their intervals.

A `Form` is `c + Σ k_a · a` per lane: `c` and each `k_a` are int64 arrays shaped like an enumeration
value, (P or 1, *lanes); an atom is one unknown integer per program (a scalar), named by the caller.
The identity is exact over the integers: the caller builds forms only through operations that did not
wrap. A lower bound is an upper bound of the negated index (the caller's to ask). This module knows
only numpy and evaluates nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

LIMIT = float(1 << 62)  # a bound whose terms may reach this is not computed (int64 headroom)


@dataclass(frozen=True)
class Form:
    """`c + Σ k · atom` per lane (c and each k broadcastable to one shape)."""

    c: np.ndarray
    k: tuple[tuple[str, np.ndarray], ...] = ()

    def coef(self, name: str) -> np.ndarray | None:
        for a, k in self.k:
            if a == name:
                return k
        return None


def constant(c: np.ndarray) -> Form:
    return Form(np.asarray(c, dtype=np.int64))


def atom(name: str) -> Form:
    """The unknown `name` itself: one value per program, so its arrays have the program axis only."""
    return Form(np.zeros((1,), dtype=np.int64), ((name, np.ones((1,), dtype=np.int64)),))


def combine(a: Form, b: Form, sign: int = 1) -> Form:
    """a + sign·b."""
    coefs = dict(a.k)
    for name, k in b.k:
        coefs[name] = coefs[name] + sign * k if name in coefs else sign * k
    return Form(a.c + sign * b.c, tuple(sorted(coefs.items(), key=lambda item: item[0])))


def scale(a: Form, s: np.ndarray) -> Form:
    s = np.asarray(s, dtype=np.int64)
    return Form(a.c * s, tuple((name, k * s) for name, k in a.k))


def map_lanes(a: Form, fn: Callable[[np.ndarray], np.ndarray]) -> Form:
    """A lane-shape transform (splat, broadcast, expand_dims, reshape, trans) on every array."""
    return Form(fn(a.c), tuple((name, fn(k)) for name, k in a.k))


def _amax(a: np.ndarray | None) -> float:
    """The largest magnitude in `a` (0 for none), as a float."""
    return 0.0 if a is None or a.size == 0 else float(np.abs(a.astype(np.float64)).max())


def _per_program(a: np.ndarray, ndim: int) -> np.ndarray:
    """A per-program interval end (P or 1,) shaped to broadcast against (P or 1, *lanes); one that
    already has every axis (a per-lane end, as the grid engine narrows its variables) as it is."""
    if a.ndim == ndim:
        return a
    return a.reshape(a.shape[:1] + (1,) * (ndim - 1))


@dataclass(frozen=True)
class Bound:
    """Per lane the upper bound `hi`; where it is attained at one atom's end alone (`atom` >= 0, an index
    into `atoms`), that atom's value there (`value`), so a witness can name it; else `atom` is -1."""

    hi: np.ndarray
    atom: np.ndarray
    value: np.ndarray
    atoms: tuple[str, ...]


def upper(index: Form, fact: Form, slack: int, box: dict[str, tuple[np.ndarray, np.ndarray]]) -> Bound | None:
    """Per lane an upper bound of `index` wherever `fact <= slack` holds, None where no atom gives one.

    For each atom a of the fact, k = index's coefficient / fact's coefficient (per lane, where that is
    a positive integer); then index = k·fact + R exactly, and index <= k·slack + max(R) over `box`
    (each atom's per-program [lo, hi]). Lanes without such a k get int64's maximum (no bound); the
    smallest bound over the atoms is kept."""
    ndim = max([index.c.ndim, fact.c.ndim] + [k.ndim for _, k in index.k + fact.k])
    names = sorted({a for a, _ in index.k} | {a for a, _ in fact.k})
    if any(a not in box for a in names):
        return None
    lo = {a: _per_program(box[a][0], ndim) for a in names}
    hi = {a: _per_program(box[a][1], ndim) for a in names}
    zero = np.zeros((1,) * ndim, dtype=np.int64)
    best: Bound | None = None
    tried: list[np.ndarray] = []
    for pivot, fk in fact.k:
        ik = index.coef(pivot)
        if ik is None:
            continue
        with np.errstate(all="ignore"):
            safe = np.where(fk == 0, 1, fk)
            k = np.where((fk != 0) & (ik % safe == 0), ik // safe, 0)
        valid = k > 0
        if not valid.any() or any(np.array_equal(k, seen) for seen in tried):
            continue  # index - k·fact does not depend on the pivot that gave k: one bound per k
        tried.append(k)
        k = np.where(valid, k, 0)
        # the largest term of the bound, in floating point first: skip a pivot whose int64 sum could overflow
        kmax = _amax(k)
        size = _amax(index.c) + kmax * (_amax(fact.c) + abs(slack))
        rest = []
        for a in names:
            ka, fa = index.coef(a), fact.coef(a)
            coef = (zero if ka is None else ka) - k * (zero if fa is None else fa)
            big = max(_amax(lo[a]), _amax(hi[a]))
            size += (_amax(ka) + kmax * _amax(fa)) * big
            rest.append((coef, a))
        if not size < LIMIT:
            continue
        bound = index.c - k * fact.c + k * slack
        count = np.zeros((1,) * ndim, dtype=np.int64)
        atom = np.full((1,) * ndim, -1, dtype=np.int64)
        value = np.zeros((1,) * ndim, dtype=np.int64)
        for i, (coef, a) in enumerate(rest):
            end = np.where(coef >= 0, hi[a], lo[a])  # the end of the atom that maximizes R
            bound = bound + coef * end
            count = count + (coef != 0)
            atom = np.where(coef != 0, i, atom)
            value = np.where(coef != 0, end, value)
        bound = np.where(valid, bound, np.iinfo(np.int64).max)
        atom = np.where(count == 1, atom, -1)
        if best is None:
            best = Bound(bound, atom, value, tuple(names))
        else:
            better = bound < best.hi
            pick = [np.where(better, new, old) for new, old in ((bound, best.hi), (atom, best.atom), (value, best.value))]
            best = Bound(pick[0], pick[1], pick[2], best.atoms)
    return best


def maximum(form: Form, box: dict[str, tuple[np.ndarray, np.ndarray]]) -> np.ndarray | None:
    """Per program the largest value of a program-uniform `form` (arrays of the program axis only) over
    `box`; None where an atom has no interval or the sum could leave int64."""
    if any(a not in box for a, _ in form.k):
        return None
    size = _amax(form.c) + sum(_amax(k) * max(_amax(box[a][0]), _amax(box[a][1])) for a, k in form.k)
    if not size < LIMIT:
        return None
    out = np.asarray(form.c, dtype=np.int64)
    for a, k in form.k:
        lo, hi = box[a]
        out = out + k * np.where(k >= 0, hi, lo)
    return out
