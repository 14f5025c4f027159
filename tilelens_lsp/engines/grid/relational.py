"""Relational bounds in the grid engine: an atom relating loaded scalars bounds the address they build.

fla's varlen kernels load `bos`, `eos` (program-uniform values the grid engine makes variables over
their declared hull), mask `o_t < eos - bos` and address `bos + o_t`. Narrowing each variable by the
atom `eos - bos - 1 - o_t >= 0` alone gives `bos + o_t` the box bound max(bos) + max(o_t), past the
sequence's end; read relationally, `bos + o_t = (o_t - eos + bos) + eos <= -1 + max(eos)`.
`engines.linear.upper` does that reading (the enumeration's rule, `enumerate/relational.py`): here
every atom `a >= 0` of the access's case is the fact `-a <= 0`, the address the index, and the
variables' narrowed per-lane ranges the box its remainder is maximized over.

Soundness rests on the grid engine's own invariant: a `Lin` is the exact, unwrapped value of every
program (an op that may leave its width gives an interval, which has no form here), each variable
is one value per program (and loop iteration), so an atom and the address speak of the same unknowns,
and an atom holds on every lane of the case it belongs to. A bound is only ever intersected with the
one the box gives; a lane where the two ends cross satisfies no assignment of the case: it is dead.
What this does not do: atoms of one variable (narrowing bounds those exactly already), intervals
(`Itv` offsets or atoms), or more than MAX_FACTS atoms per case.
"""

from __future__ import annotations

import numpy as np

from tilelens_lsp.engines import linear
from tilelens_lsp.engines.grid.forms import Lin, arr

MAX_FACTS = 8  # atoms read relationally per case of an access (each costs a pass over its lanes)


def form(v: Lin, ndim: int) -> linear.Form:
    """`v` as a linear form whose arrays all have `ndim` axes (uniform coefficients per variable)."""
    one = np.ones((1,) * ndim, dtype=np.int64)
    return linear.Form(arr(v.c, ndim), tuple((x, one * a) for x, a in v.k))


def facts(off: Lin, atoms: tuple[Lin, ...]) -> list[Lin]:
    """The atoms worth reading relationally for `off`: of several variables, sharing one with it."""
    mine = {x for x, _ in off.k}
    out = [a for a in atoms if len(a.k) > 1 and any(x in mine for x, _ in a.k)]
    return out[:MAX_FACTS]


def bound(
    off: Lin,
    atoms: tuple[Lin, ...],
    rng: dict,
    lo: np.ndarray,
    hi: np.ndarray,
    need: tuple[bool, bool],
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """`lo`, `hi` (per lane, over the lanes' shape) moved inward by what each atom says of `off`
    relationally, and the lanes where they cross (None where nothing moved). `off` and the atoms are
    normalized (split variables expanded) and `rng` holds every variable of them, per lane; `need`:
    (the lower end, the upper end) may leave the storage, so only those are worth the work."""
    found = facts(off, atoms)
    if not found or not off.k:
        return lo, hi, None
    ndim = np.ndim(lo)  # lo and hi have the access's shape
    box = {x: (arr(r[0], ndim), arr(r[1], ndim)) for x, r in rng.items()}
    index = form(off, ndim)
    new_lo, new_hi = lo, hi
    with np.errstate(all="ignore"):
        for a in found:
            fact = linear.scale(form(a, ndim), np.asarray(-1))  # a >= 0: the fact -a <= 0
            if need[1]:
                u = linear.upper(index, fact, 0, box)
                if u is not None:
                    new_hi = np.minimum(new_hi, u.hi)
            if need[0]:
                u = linear.upper(linear.scale(index, np.asarray(-1)), fact, 0, box)
                if u is not None:
                    new_lo = np.maximum(new_lo, -u.hi)
    if new_lo is lo and new_hi is hi:
        return lo, hi, None
    shape = np.broadcast_shapes(np.shape(lo), np.shape(hi), np.shape(new_lo), np.shape(new_hi))
    new_lo, new_hi = np.broadcast_to(new_lo, shape), np.broadcast_to(new_hi, shape)
    dead = new_hi < new_lo
    return np.where(dead, np.broadcast_to(lo, shape), new_lo), np.where(dead, np.broadcast_to(hi, shape), new_hi), dead
