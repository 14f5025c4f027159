"""What a branch on a loaded scalar says about it, for the grid engine: the side of `if y != -100:`, the
rest of a kernel after `if y == ignore_index: ...; return`.

A per-program scalar loaded from a tensor with declared values is a variable over its declared hull
(`GridGraph.declared` keeps the set). On the side of a branch where `y pred c` holds (c a constant),
the variable's range is narrowed as the enumeration narrows it (`ranges.refine`, snapped to the
declared set: `y != -100` with labels in {-100} ∪ [0, V) leaves [0, V)), and every value of the
environment that is a form in it is rewritten in a fresh variable over the narrowed range. The facts
are read off the condition as the enumeration reads them (`guards.collect`).

Sound by construction: on that side the loaded value lies in the narrowed range, so each rewritten
value is still a bound of what it stands for; a value left in the old variable is a looser bound.
What is not narrowed here: lane facts (vectors), relations between two loaded values, a variable a
division split into quotient and remainder, and an edge no value can take (left as it is).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from tilelens_lsp.engines import ranges
from tilelens_lsp.engines.enumerate import guards
from tilelens_lsp.engines.grid.forms import GPtr, Lin, Msk
from tilelens_lsp.engines.ranges import RangeV
from tilelens_lsp.engines.values import IntV
from tilelens_lsp.ttir.reader import Op

if TYPE_CHECKING:
    from tilelens_lsp.engines.grid.graph import GridGraph


def edge_values(g: GridGraph, op: Op, cond: str, polarity: bool, env: dict[str, Any]) -> dict[str, Any]:
    """The values of `env` narrowed where the i1 `cond` (the condition of `op`, a branch) is `polarity`."""
    index = g.index()
    func = index.func_of.get(id(op))
    if func is None:
        return {}
    renamed: dict[str, str] = {}
    for fact in guards.collect(index.defs[func], env, cond, polarity):
        if fact.group is not None:
            continue  # a lane fact: the grid engine keeps no per-lane identity of loaded vectors
        var = _variable(g, env.get(fact.name), renamed)
        c = _constant(env.get(fact.other))
        if var is None or c is None:
            continue
        narrowed = _narrow(g, var, fact.pred, c)
        if narrowed is not None:
            renamed[var] = narrowed
    if not renamed:
        return {}
    final = {old: _last(renamed, old) for old in renamed}
    out = {}
    for name, value in env.items():
        new = rename(value, final)
        if new is not value:
            out[name] = new
    return out


def _last(renamed: dict[str, str], var: str) -> str:
    while var in renamed:
        var = renamed[var]
    return var


def _variable(g: GridGraph, v: Any, renamed: dict[str, str]) -> str | None:
    """The variable `v` is exactly (a scalar form `1 · w`, w standing for a loaded value), as narrowed so far."""
    if not isinstance(v, Lin) or v.shape != () or len(v.k) != 1 or v.k[0][1] != 1 or int(np.asarray(v.c)) != 0:
        return None
    var = v.k[0][0]
    if var not in g.derived or var in g.subst:
        return None
    return _last(renamed, var)


def _constant(v: Any) -> int | None:
    if isinstance(v, Lin) and v.shape == () and not v.k:
        return int(np.asarray(v.c))
    return None


def _narrow(g: GridGraph, var: str, pred: str, c: int) -> str | None:
    """A fresh variable over `var`'s range where `var pred c` holds; None where nothing narrows, or
    where no value can hold it (the side is then left as it is)."""
    lo, hi = g.vars[var]
    one = np.zeros(1, dtype=np.int64)
    value = RangeV(one + lo, one + hi, 64, decl=g.declared.get(var))
    with np.errstate(all="ignore"):
        out, empty = ranges.refine(value, pred, IntV(one + c, 64))
    if empty.any():
        return None
    nlo, nhi = int(out.lo.reshape(-1)[0]), int(out.hi.reshape(-1)[0])
    if (nlo, nhi) == (lo, hi):
        return None
    new = g.fresh("w", nlo, nhi)
    g.derived.add(new)
    if var in g.declared:
        g.declared[new] = g.declared[var]
    return new


def rename(v: Any, names: dict[str, str]) -> Any:
    """`v` with its variables renamed; the very object where none of them occurs."""
    if isinstance(v, Lin):
        if not any(x in names for x, _ in v.k):
            return v
        return Lin(v.c, tuple(sorted((names.get(x, x), a) for x, a in v.k)), v.shape, v.bits)
    if isinstance(v, GPtr):
        off = rename(v.off, names)
        return v if off is v.off else GPtr(v.arg, off, v.pointee)
    if isinstance(v, Msk):
        atoms = tuple(rename(a, names) for a in v.atoms)
        anyof = tuple(tuple(rename(a, names) for a in case) for case in v.anyof)
        if all(a is b for a, b in zip(atoms, v.atoms)) and all(
            x is y for case, old in zip(anyof, v.anyof) for x, y in zip(case, old)
        ):
            return v
        return Msk(v.must, v.may, atoms, v.shape, v.exact, anyof)
    return v
