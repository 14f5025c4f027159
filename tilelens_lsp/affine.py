"""Affine summaries: exact footprints of a whole launch without enumerating lanes or loop iterations.

Every integer is a *form*: a per-program constant (a numpy array over the launch's programs, so
swizzles like grouped-matmul ordering stay exact) plus integer coefficients on symbolic variables:
lane axes (`L0`, `L1`, ...), loop iterations (`t0`, ...), quotients of divisions that split a lane
range (`q3`, ..., pinned by side constraints), and past MAX_PROGRAMS the program ids (`P0`, ...). A
mask is a per-program predicate plus linear constraints `form >= 0`; a select or min/max whose choice
varies by lane is a piecewise value (one form per disjoint region). A loop whose carried values
advance by a loop-invariant step is evaluated once, with its iteration as a variable. An access's
footprint is then the image of a box (lanes × iterations × programs) cut by the constraints: programs
are factored into box variables when their constants form a lattice, variables whose strides tile
each other are fused, constraints the box already implies are dropped, coupling constraints split
rows, and what remains becomes one interval per row of the outer variables.

The cost depends on the number of programs only through a few numpy operations on per-program
scalars, never on lanes × programs × iterations. Whatever leaves this fragment (an address or mask
from loaded data, a while loop, an integer reduction, a value that may wrap) raises `NotAffine`, and
the enumerating `AccessGraph` answers the launch instead; an out-of-bounds access keeps the summary's
footprint only when the launch is too large to enumerate, with a witness from one enumerated
program. `TILELENS_ENGINE=compare` checks the two engines against each other on every launch.
"""
from __future__ import annotations

import dataclasses
import os
import re
from collections import Counter
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from tilelens_lsp.engines import accounting, views
from tilelens_lsp.ttir import cfg
from tilelens_lsp import graph as G
from tilelens_lsp.graph import ArgInfo, LaunchModel, Obligation, Opaque, SiteResult
from tilelens_lsp.refusal import Refusal
from tilelens_lsp.ttir.reader import Block, Op, Region, Type, split_top, symbol_name

MAX_PROGRAMS = 1 << 24      # per-program constants are arrays up to here; past it, program ids are variables
MAX_QUOTIENTS = 64          # values a division's quotient may take across one lane range
MAX_PIECES = 16             # regions of one piecewise value (selects and min/max of lane values)


class NotAffine(Exception):
    """The launch leaves the affine fragment; the enumerating AccessGraph answers it instead."""


# ---------------------------------------------------------------- values


@dataclass
class Form:
    """c + Σ k[v]·v: `c` per program ((P,) or (1,)), `k` integer coefficients on lane/loop variables.

    A division or remainder that splits a lane range brings a quotient variable `q<n>` and `side`
    constraints (each `form >= 0`) that pin it to the one value the division gives; every access or
    mask built from the value carries them. `rng`, when set, bounds the value per program."""

    c: np.ndarray
    k: dict[str, int]
    shape: tuple[int, ...]
    bits: int
    side: tuple["Form", ...] = ()
    rng: tuple[np.ndarray, np.ndarray] | None = None


@dataclass
class Cond:
    """An i1 value: `pred` per program ((P,) or (1,)) and, on top of it, constraints `form >= 0`
    (`side`: the quotient variables' definitions, which a negation keeps as they are)."""

    pred: np.ndarray
    cons: tuple[Form, ...]
    shape: tuple[int, ...]
    side: tuple[Form, ...] = ()


@dataclass
class Pieces:
    """An integer that is one form on each of several lane regions (a select or a min/max whose
    choice varies by lane): `parts` are (guard, form), the guards (conjunctions of `form >= 0`)
    cover every point exactly once."""

    parts: tuple[tuple[tuple[Form, ...], Form], ...]
    shape: tuple[int, ...]
    bits: int


@dataclass
class Ptr:
    arg: str
    off: "Form | Pieces"   # byte offset from the argument's address
    pointee: int


def _k(*parts: tuple[dict[str, int], int]) -> dict[str, int]:
    out: dict[str, int] = {}
    for k, scale in parts:
        for v, a in k.items():
            out[v] = out.get(v, 0) + a * scale
    return {v: a for v, a in out.items() if a}


def _const(v: int, shape: tuple[int, ...] = (), bits: int = 64) -> Form:
    return Form(np.array([v], dtype=np.int64), {}, shape, bits)


def _sides(*vals: Any) -> tuple[Form, ...]:
    """The side constraints of every operand, each once."""
    out: list[Form] = []
    seen: set[int] = set()
    for v in vals:
        v = v.off if isinstance(v, Ptr) else v
        sides = [f for _, part in v.parts for f in part.side] if isinstance(v, Pieces) else getattr(v, "side", ())
        for f in sides:
            if id(f) not in seen:
                seen.add(id(f))
                out.append(f)
    return tuple(out)


def _parts(v: Any) -> tuple[tuple[tuple[Form, ...], Form], ...]:
    """A form or a piecewise value as (guard, form) parts."""
    return v.parts if isinstance(v, Pieces) else (((), v),)


def _pieces(parts: list[tuple[tuple[Form, ...], Form]], shape: tuple[int, ...], bits: int) -> "Form | Pieces":
    if len(parts) == 1 and not parts[0][0]:
        return parts[0][1]
    if len(parts) > MAX_PIECES:
        raise NotAffine(f"a value of more than {MAX_PIECES} pieces")
    return Pieces(tuple(parts), shape, bits)


def _negate(f: Form) -> Form:
    """not (f >= 0), i.e. -f - 1 >= 0."""
    return Form(-f.c - 1, {v: -a for v, a in f.k.items()}, f.shape, 64)


def _regions(cond: "Cond") -> tuple[tuple[Form, ...], list[tuple[Form, ...]]]:
    """A lane condition as its true region and disjoint regions covering its complement (each a
    conjunction): not (c1 and c2 and ...) = (not c1) or (c1 and not c2) or ... ."""
    cons = list(cond.cons)
    if not cond.pred.all():
        cons.insert(0, Form(np.where(cond.pred, 0, -1).astype(np.int64), {}, cond.shape, 64))
    side = tuple(cond.side)
    falses = [side + tuple(cons[:i]) + (_negate(cons[i]),) for i in range(len(cons))]
    return side + tuple(cons), falses


def _uniform(f: Form) -> int | None:
    """The value of a form that is one integer for every program, else None."""
    if f.k:
        return None
    c = f.c
    if c.size == 1 or (c == c[0]).all():
        return int(c[0])
    return None


def _relabel(k: dict[str, int], mapping: dict[int, int]) -> dict[str, int]:
    out = {}
    for v, a in k.items():
        out[f"L{mapping[int(v[1:])]}" if v[0] == "L" else v] = a
    return out


class _Ctx:
    def __init__(self, pred: np.ndarray, cons: tuple[Form, ...], stack: tuple[str, ...]):
        self.pred = pred            # (P,) bool: programs for which this code runs
        self.cons = cons            # loop constraints (iteration variables within per-program trips)
        self.stack = stack


# ---------------------------------------------------------------- evaluator


class AffineGraph:
    """Summarizes one launch; same results as `AccessGraph` (`sites`, `width_obligations`, `truncated`)."""

    def __init__(self, model: LaunchModel) -> None:
        self.m = model
        self.sites: dict[tuple, SiteResult] = {}
        self.truncated: Refusal | None = None
        self.pending: dict[tuple, int] = {}     # out-of-bounds site -> the program that shows it
        self.symbolic_programs = False          # program ids as variables (grids past MAX_PROGRAMS)
        self._images: dict[tuple, tuple[np.ndarray, np.ndarray]] = {}
        self.extent: dict[str, int] = {}
        self.work = 0
        self.probing = 0
        self._loops = 0
        self.unreachable: set[accounting.Context] = set()   # memory ops proven not to run
        gx, gy, gz = model.grid
        self.P = gx * gy * gz

    def width_obligations(self) -> list[Obligation]:
        """None is violated: a value that may leave its width sends the launch to the enumeration."""
        return []

    def run(self) -> None:
        if self.P == 0:
            return
        gx, gy, gz = self.m.grid
        if self.P > min(MAX_PROGRAMS, self.m.budget):
            # too many programs for per-program arrays: program ids become box variables themselves
            # (one row stands for every program; what needs a concrete program leaves the fragment)
            self.P = 1
            self.symbolic_programs = True
            for axis, n in enumerate((gx, gy, gz)):
                self.extent[f"P{axis}"] = n
            self.pids = [Form(np.zeros(1, np.int64), {f"P{axis}": 1} if n > 1 else {}, (), 32)
                         for axis, n in enumerate((gx, gy, gz))]
        else:
            idx = np.arange(self.P, dtype=np.int64)
            self.pids = [Form(a, {}, (), 32) for a in (idx % gx, (idx // gx) % gy, idx // (gx * gy))]
        entry = self.m.module.funcs[self.m.module.entry]
        env = {name: self._arg(self.m.arg_values[name]) for name, _ in entry.args}
        self.eval_body(entry.body, env, _Ctx(np.ones(self.P, dtype=bool), (), ()))

    def _arg(self, v: Any) -> Any:
        if isinstance(v, G.IntV):
            if v.bits == 1:
                return Cond(v.a.reshape(-1)[:1].astype(bool), (), ())
            return Form(v.a.reshape(-1)[:1].astype(np.int64), {}, (), v.bits)
        if isinstance(v, G.PtrV):
            return Ptr(v.arg, Form(v.boff.reshape(-1)[:1].astype(np.int64), {}, (), 64), v.pointee)
        return v

    # -- blocks

    def eval_body(self, body: Region, env: dict[str, Any], ctx: _Ctx) -> list[Any]:
        """A function body: one block, or a control-flow graph of blocks (early returns)."""
        if cfg.is_graph(body):
            return cfg.run(body, env, ctx, self)
        return self.eval_block(body.blocks[0], env, ctx)

    def eval_block(self, block: Block, env: dict[str, Any], ctx: _Ctx) -> list[Any]:
        term = self.eval_ops(block, env, ctx)
        if term is not None and term.name in ("scf.yield", "tt.return", "scf.condition"):
            return [self.get(env, o) for o in term.operands]
        if term is not None:
            raise NotAffine(f"a branch ({term.name}) inside a single-block region")
        return []

    # -- the control-flow graph protocol (tilelens_lsp.cfg)

    def branch_condition(self, value: Any, op: Op) -> np.ndarray:
        if not isinstance(value, Cond) or value.cons:
            raise NotAffine("a branch condition outside the affine fragment")
        return np.broadcast_to(value.pred, (self.P,))

    def join(self, incoming: list[tuple[np.ndarray, Any]], op: Op) -> Any:
        value = incoming[0][1]
        if all(v is value for _, v in incoming[1:]):
            return value
        if (sum(w.astype(int) for w, _ in incoming) > 1).any():
            raise NotAffine("a value joined from overlapping paths")
        for when, v in incoming[1:]:
            value = _blend(when, v, value, self.P)
        return value

    def narrow(self, ctx: _Ctx, may: np.ndarray, exact: bool) -> _Ctx:
        return _Ctx(may, ctx.cons, ctx.stack)

    def ctx_pred(self, ctx: _Ctx) -> tuple[np.ndarray, bool]:
        return np.broadcast_to(ctx.pred, (self.P,)), True

    def mark_unreachable(self, block: Block, ctx: _Ctx) -> None:
        if self.probing:
            return
        for op, stack in accounting.contexts_in_ops(accounting.block_ops(block), self.m.module, ctx.stack):
            self.unreachable.add((id(op), stack))

    def eval_ops(self, block: Block, env: dict[str, Any], ctx: _Ctx) -> Op | None:
        """Evaluate a block's ops up to its terminator, which is returned (not evaluated)."""
        for op in block.ops:
            if op.name in ("scf.yield", "tt.return", "scf.condition") or op.successors:
                return op
            if any(len(r.blocks) != 1 for r in op.regions):
                raise NotAffine(f"{op.name} with a region of several blocks")
            handler = _HANDLERS.get(op.name)
            if handler is None:
                results = self.unknown(op, env)
            else:
                results = handler(self, op, env, ctx)
            for name, value in zip(op.results, results):
                env[name] = value
                if isinstance(value, (Form, Ptr, Pieces)):
                    off = value.off if isinstance(value, Ptr) else value
                    self.spend(sum(np.size(f.c) for _, f in _parts(off)))
        return None

    def get(self, env: dict[str, Any], name: str) -> Any:
        try:
            return env[name]
        except KeyError:
            raise NotAffine(f"value {name} used before its definition") from None

    def unknown(self, op: Op, env: dict[str, Any]) -> list[Any]:
        if op.regions or op.successors or accounting.is_memory_op(op):
            raise NotAffine(f"{op.name} is not summarized")
        return [Opaque("out-of-vocabulary", f"{op.name} is not modelled", op.loc)] * len(op.results)

    def spend(self, work: int) -> None:
        self.work += int(work)
        if self.work > self.m.budget:
            raise NotAffine("the summary exceeds the evaluation budget")

    # -- ranges

    def var_extent(self, v: str, shape: tuple[int, ...]) -> int:
        if v[0] == "L":
            return shape[int(v[1:])]
        ext = self.extent.get(v)
        if ext is None:          # a probe variable: its range is what the probe is finding out
            raise NotAffine("range of a loop-carried value under probe")
        return ext

    def box(self, f: Form) -> tuple[np.ndarray, np.ndarray]:
        """Per-program lowest and highest value of `f` over the box of its variables (a superset of
        the points the program really reaches, so a check that passes on it holds exactly)."""
        lo = f.c.astype(np.int64)
        hi = lo.copy()
        for v, a in f.k.items():
            span = a * (self.var_extent(v, f.shape) - 1)
            if span < 0:
                lo = lo + span
            else:
                hi = hi + span
        if f.rng is not None:
            lo, hi = np.maximum(lo, f.rng[0]), np.minimum(hi, f.rng[1])
        return lo, hi

    def quotient(self, extent: int) -> str:
        name = f"q{len(self.extent)}"
        self.extent[name] = extent
        return name

    def fit(self, f: Form, op: Op) -> Form:
        """A form whose value may leave its width would wrap: enumeration decides those exactly."""
        if f.bits == 1:
            return f
        if self.probing and any(v[0] == "s" for v in f.k):
            return f      # a probe variable's range is what the probe finds out: the real pass checks
        limit = 1 << (min(f.bits, 63) - 1)
        big = float(np.abs(f.c).max()) + sum(abs(a) * float(self.var_extent(v, f.shape)) for v, a in f.k.items())
        if big >= limit:
            lo, hi = self.box(f)
            if big >= 1 << 62 or lo.min() < -limit or hi.max() > limit - 1:
                raise NotAffine(f"{op.name} may leave i{f.bits}")
        return f

    # -- accesses

    def record(self, op: Op, kind: str, ptr: Any, mask: Any, ctx: _Ctx) -> None:
        if not isinstance(ptr, Ptr):
            raise NotAffine("an address outside the affine fragment")
        if mask is not None and not isinstance(mask, Cond):
            raise NotAffine("a mask outside the affine fragment")
        if self.probing:
            return
        key = (id(op), ctx.stack, ptr.arg)
        site = self.sites.get(key)
        if site is None:
            site = self.sites[key] = SiteResult(kind, ptr.arg, op.loc, ctx.stack)
        info = self.m.args[ptr.arg]
        pred = np.broadcast_to(ctx.pred, (self.P,))
        if mask is not None:
            pred = pred & np.broadcast_to(mask.pred, (self.P,))
        for guard, off in _parts(ptr.off):     # a piecewise address: each region on its own
            cons = list(ctx.cons) + list(guard) + list(off.side)
            if mask is not None:
                cons += list(mask.cons) + [f for f in mask.side if all(f is not g for g in off.side)]
            starts, ends = self.image(off, cons, pred, info)
            if starts.size:
                site.add_intervals(starts, ends)
                if (starts.min() < info.lo or ends.max() > info.hi) and key not in self.pending:
                    self.pending[key] = self.witness_program(off, cons, pred, info)
                if info.view is not None and views.first_outside(starts, ends, info.view, info.lo, info.hi) is not None:
                    raise NotAffine("an access leaves its declared view: the enumeration finds its witness")
            self._tag(site, off, cons, pred, info)

    def _tag(self, site: SiteResult, off: Form, cons: list[Form], pred: np.ndarray, info: ArgInfo) -> None:
        """Per-program intervals for the race check: the image of each program's own row, within a
        budget of its own (past it, or over symbolic programs, races stay undecided)."""
        if site.tagged is None or kind_is_atomic(site.op):
            return
        if self.symbolic_programs:
            site.tagged = None
            return
        spent = [0]

        def spend(work: int) -> None:
            spent[0] += int(work)
            if spent[0] > self.m.budget // RACE_SHARE:
                raise NotAffine("per-program footprints past the race budget")
        if not pred.any():
            return
        try:
            rows, programs, coef, ext, C = self._problem(off, cons, pred, info)
            starts, ends, progs = _box_image(rows, coef, ext, C, spend, tags=programs, with_tags=True)
        except NotAffine:
            site.tagged = None
            return
        site.add_tagged(starts, ends, progs)

    def _problem(self, off: Form, cons: list[Form], pred: np.ndarray, info: ArgInfo):
        """The access as a box problem in elements: per-program rows [base, constraint constants...],
        the programs they belong to, and the variables' strides, extents and constraint coefficients."""
        size = info.elem_size
        names = sorted(set(off.k) | {v for f in cons for v in f.k})
        ext = np.array([self.var_extent(v, off.shape) for v in names], dtype=np.int64)
        coef = np.array([off.k.get(v, 0) for v in names], dtype=np.int64)
        base = np.broadcast_to(off.c, (self.P,))[pred]
        if (coef % size).any() or (base % size).any():
            raise NotAffine("an address that is not a whole number of elements")
        cols = [base // size] + [np.broadcast_to(f.c, (self.P,))[pred] for f in cons]
        C = np.array([[f.k.get(v, 0) for v in names] for f in cons], dtype=np.int64).reshape(len(cons), len(names))
        return np.stack(cols, axis=1), np.flatnonzero(pred), coef // size, ext, C

    def image(self, off: Form, cons: list[Form], pred: np.ndarray, info: ArgInfo
              ) -> tuple[np.ndarray, np.ndarray]:
        """Element intervals {off / size} over every program in `pred`, every point of the box of the
        variables, within the constraints."""
        empty = np.zeros(0, dtype=np.int64)
        if not pred.any():
            return empty, empty
        rows, _, coef, ext, C = self._problem(off, cons, pred, info)
        key = (rows.shape, rows.tobytes(), coef.tobytes(), ext.tobytes(), C.shape, C.tobytes())
        hit = self._images.get(key)      # loads and stores of one tile share their problem
        if hit is not None:
            return hit
        self._images[key] = out = self._solve(rows, coef, ext, C)
        return out

    def _solve(self, rows: np.ndarray, coef: np.ndarray, ext: np.ndarray, C: np.ndarray
               ) -> tuple[np.ndarray, np.ndarray]:
        rows = _unique_rows(rows)
        self.spend(rows.size)
        lattice = _factor(rows)
        if lattice is not None:
            x0, atoms = lattice
            rows = x0[None, :]
            for d, n in atoms:
                ext = np.append(ext, n)
                coef = np.append(coef, d[0])
                C = np.concatenate((C, d[1:, None]), axis=1)
        return _box_image(rows, coef, ext, C, self.spend)

    def witness_program(self, off: Form, cons: list[Form], pred: np.ndarray, info: ArgInfo) -> int:
        """The lowest program index whose part of this access leaves the argument's storage."""
        if self.symbolic_programs:
            raise NotAffine("an out-of-bounds access among symbolic programs: enumeration finds its witness")
        rows, programs, coef, ext, C = self._problem(off, cons, pred, info)
        order = np.lexsort(rows.T[::-1])          # stable: equal rows keep ascending programs
        rows, programs = rows[order], programs[order]
        first = np.ones(len(rows), dtype=bool)
        first[1:] = (rows[1:] != rows[:-1]).any(axis=1)
        self.spend(rows.size)
        lo, hi, tags = _box_image(rows[first], coef, ext, C, self.spend, tags=programs[first], extremes=True)
        bad = (lo < info.lo) | (hi >= info.hi)
        if not bad.any():
            raise NotAffine("no program found for an out-of-bounds footprint")
        return int(tags[bad].min())

    def fill_witnesses(self) -> None:
        """Witnesses for the out-of-bounds sites: each from enumerating the one program found for it
        (lane, loop iteration and element exactly as the enumeration reports them)."""
        by_program: dict[int, list[tuple]] = {}
        for key, program in self.pending.items():
            by_program.setdefault(program, []).append(key)
        entry = self.m.module.funcs[self.m.module.entry]
        for program, keys in sorted(by_program.items()):
            one = G.AccessGraph(self.m)
            try:
                one._run_chunk(entry, program, 1)
            except Refusal as refusal:
                raise NotAffine(f"enumerating the witness program failed: {refusal}") from None
            for key in keys:
                site = one.sites.get(key)
                if site is None or site.oob is None:
                    raise NotAffine("the witness program does not reproduce the out-of-bounds access")
                self.sites[key].oob = site.oob
        self.pending.clear()


# ---------------------------------------------------------------- box images


def _unique_rows(rows: np.ndarray) -> np.ndarray:
    """Distinct rows in lexicographic order (np.unique(axis=0) sorts byte views, far slower)."""
    if len(rows) <= 1:
        return rows
    rows = rows[np.lexsort(rows.T[::-1])]
    keep = np.ones(len(rows), dtype=bool)
    keep[1:] = (rows[1:] != rows[:-1]).any(axis=1)
    return rows[keep]


def _factor(rows: np.ndarray) -> tuple[np.ndarray, list[tuple[np.ndarray, int]]] | None:
    """Recognize sorted unique rows as a lattice x0 + Σ i_j·d_j over a full box of i_j, or None."""
    atoms: list[tuple[np.ndarray, int]] = []
    cur = rows
    while len(cur) > 1:
        d = cur[1] - cur[0]
        L = len(cur)
        ok = (cur == cur[0] + np.arange(L, dtype=np.int64)[:, None] * d).all(axis=1)
        n = L if ok.all() else int(np.argmin(ok))
        if L % n:
            return None
        blocks = cur.reshape(L // n, n, -1)
        if not (blocks == blocks[:, :1] + np.arange(n, dtype=np.int64)[None, :, None] * d).all():
            return None
        atoms.append((d, n))
        cur = blocks[:, 0]
    return cur[0].copy(), atoms


def kind_is_atomic(op: str) -> bool:
    return op == "atomic"


def _box_image(rows: np.ndarray, coef: np.ndarray, ext: np.ndarray, C: np.ndarray,
               spend: Callable[[int], None], tags: np.ndarray | None = None,
               extremes: bool = False, with_tags: bool = False) -> tuple[np.ndarray, ...]:
    """Intervals of {rows[b,0] + coef·v : 0 <= v < ext, rows[b,1+j] + C[j]·v >= 0 for all j} over rows b.
    With `extremes`: instead, the lowest and highest value of each non-empty piece and its row's tag.

    Exact: every step is a bijection (fusing variables whose strides tile), an implication (dropping
    constraints the box satisfies, fixing a variable that only constraints see at its best value), or
    a split into more rows (enumerating a variable that couples constraints)."""
    base = rows[:, 0].astype(np.int64)
    K = rows[:, 1:].astype(np.int64)          # (B, m) constraint constants
    tags = np.arange(base.size) if tags is None else tags
    coef, ext, C = coef.copy(), ext.copy(), C.copy()
    for _ in range(64):
        # -- constraints with no variable, or implied by the box, or unsatisfiable in it
        if C.shape[0]:
            lo = K + np.minimum(C * (ext - 1), 0).sum(axis=1)
            hi = K + np.maximum(C * (ext - 1), 0).sum(axis=1)
            live = (hi >= 0).all(axis=1)
            base, K, lo, tags = base[live], K[live], lo[live], tags[live]
            keep = ~(lo >= 0).all(axis=0)
            C, K = C[keep], K[:, keep]
        if base.size == 0:
            return (np.zeros(0, dtype=np.int64),) * 3 if extremes or with_tags else (np.zeros(0, dtype=np.int64),) * 2
        # -- variables of extent 1, or seen by nothing
        drop = (ext <= 1) | ((coef == 0) & ~(C != 0).any(axis=0))
        if drop.any():
            coef, ext, C = coef[~drop], ext[~drop], C[:, ~drop]
            continue
        # -- variables only constraints see: fixed where every constraint is loosest, when they agree
        hidden = np.flatnonzero(coef == 0)
        fixed = False
        for v in hidden:
            signs = np.sign(C[:, v])
            if (signs >= 0).all() or (signs <= 0).all():
                best = ext[v] - 1 if (signs > 0).any() else 0
                K = K + C[:, v] * best
                coef, ext, C = np.delete(coef, v), np.delete(ext, v), np.delete(C, v, axis=1)
                fixed = True
                break
        if fixed:
            continue
        # -- negative strides: v -> ext-1-v
        neg = coef < 0
        if neg.any():
            base = base + (coef * (ext - 1) * neg).sum()
            K = K + (C * (ext - 1) * neg).sum(axis=1)
            coef, C = np.where(neg, -coef, coef), np.where(neg, -C, C)
        # -- fuse i (stride s, extent n) with j (stride s·n) when every constraint sees them alike
        order = np.argsort(coef, kind="stable")
        fused = False
        for a, b in zip(order[:-1], order[1:]):
            if coef[a] and coef[b] == coef[a] * ext[a] and (C[:, b] == C[:, a] * ext[a]).all():
                ext[a] = ext[a] * ext[b]
                coef, ext, C = np.delete(coef, b), np.delete(ext, b), np.delete(C, b, axis=1)
                fused = True
                break
        if fused:
            continue
        if hidden.size:
            v = int(hidden[0])                           # seen by constraints of both signs
        else:
            multi = (C != 0).sum(axis=1) > 1
            if not multi.any():
                break
            seen = np.flatnonzero((C[multi] != 0).any(axis=0))
            v = int(seen[np.argmax(coef[seen])])        # the outermost variable coupling constraints
        base, K = _split(base, K, coef[v], C[:, v], int(ext[v]), spend)
        tags = np.repeat(tags, int(ext[v]))
        coef, ext, C = np.delete(coef, v), np.delete(ext, v), np.delete(C, v, axis=1)
    else:
        raise NotAffine("the footprint does not reduce to a box")
    # every constraint now bounds one variable: per-row ranges
    B = base.size
    lo = np.zeros((B, ext.size), dtype=np.int64)
    hi = np.broadcast_to(ext, (B, ext.size)).copy()
    for j in range(C.shape[0]):
        (v,) = np.flatnonzero(C[j])
        a = int(C[j, v])
        if a > 0:
            lo[:, v] = np.maximum(lo[:, v], -(K[:, j] // a))
        else:
            hi[:, v] = np.minimum(hi[:, v], K[:, j] // (-a) + 1)
    live = (hi > lo).all(axis=1)
    base, lo, hi, tags = base[live], lo[live], hi[live], tags[live]
    if extremes:       # strides are >= 0 here: the corners of each row's box
        return base + (lo * coef).sum(axis=1), base + ((hi - 1) * coef).sum(axis=1), tags
    order = np.argsort(coef, kind="stable")
    inner = int(order[0]) if ext.size and coef[order[0]] == 1 else None
    outer = [int(v) for v in order if v != inner]
    count = base.size * int(np.prod(ext[outer], dtype=np.int64)) if outer else base.size
    spend(count)
    B = base.size
    starts = base
    ok = np.ones(B, dtype=bool)
    for v in outer:
        vals = np.arange(int(ext[v]), dtype=np.int64)
        lead = (B,) + (1,) * starts.ndim
        starts = starts[..., None] + coef[v] * vals
        ok = ok[..., None] & (vals >= lo[:, v].reshape(lead)) & (vals < hi[:, v].reshape(lead))
    if inner is not None:
        lead = (B,) + (1,) * (starts.ndim - 1)
        starts = starts + lo[:, inner].reshape(lead)
        ends = starts + (hi[:, inner] - lo[:, inner]).reshape(lead)
    else:
        ends = starts + 1
    if with_tags:
        owner = np.broadcast_to(tags.reshape((B,) + (1,) * (starts.ndim - 1)), starts.shape)
        return starts[ok], ends[ok], owner[ok]
    return starts[ok], ends[ok]


def _split(base: np.ndarray, K: np.ndarray, a: int, cv: np.ndarray, n: int,
           spend: Callable[[int], None]) -> tuple[np.ndarray, np.ndarray]:
    """Enumerate one variable: every row becomes n rows with the variable's value folded in."""
    spend(base.size * n)
    vals = np.arange(n, dtype=np.int64)
    base = (base[:, None] + a * vals[None, :]).reshape(-1)
    K = (K[:, None, :] + cv[None, None, :] * vals[None, :, None]).reshape(-1, K.shape[1])
    return base, K


# ---------------------------------------------------------------- op handlers

_HANDLERS: dict[str, Callable[[AffineGraph, Op, dict, _Ctx], list[Any]]] = {}


def handles(*names: str):
    def deco(fn):
        for n in names:
            _HANDLERS[n] = fn
        return fn
    return deco


def _data(*vals: Any) -> Opaque:
    for v in vals:
        if isinstance(v, Opaque):
            return v
    return Opaque("out-of-vocabulary", "an unmodelled operand")


@handles("arith.constant")
def _constant(g: AffineGraph, op: Op, env, ctx) -> list[Any]:
    const = op.int_constant
    if const is None:
        return [Opaque("float", "a floating-point constant", op.loc)]
    if const.elements is not None:
        raise NotAffine("a constant tensor of distinct values")
    if const.bits == 1:
        return [Cond(np.array([bool(const.value)]), (), const.shape)]
    return [Form(G._wrap(np.array([const.value], dtype=np.int64), const.bits), {}, const.shape, const.bits)]


@handles("tt.get_program_id")
def _program_id(g: AffineGraph, op: Op, env, ctx) -> list[Any]:
    return [g.pids[op.program_axis]]


@handles("tt.get_num_programs")
def _num_programs(g: AffineGraph, op: Op, env, ctx) -> list[Any]:
    return [_const(g.m.grid[op.program_axis], (), 32)]


@handles("tt.make_range")
def _make_range(g: AffineGraph, op: Op, env, ctx) -> list[Any]:
    start, end = op.range_bounds
    return [Form(np.array([start], dtype=np.int64), {"L0": 1} if end - start > 1 else {}, (end - start,), 32)]


def _concrete(fn, a: Form, b: Form, bits: int, checked: bool, op: Op) -> np.ndarray:
    with np.errstate(all="ignore"):
        exact = fn(a.c, b.c, bits)
    if checked and bits < 64 and exact.size and (exact.min() < -(1 << (bits - 1))
                                                  or exact.max() > (1 << (bits - 1)) - 1):
        raise NotAffine(f"{op.name} overflows i{bits}: enumeration reports it")
    return G._wrap(exact.astype(np.int64), bits)


def _divmod(g: AffineGraph, name: str, a: Form, d: int, bits: int) -> Form:
    """A division or remainder of a form with variables by a positive constant."""
    lo, hi = g.box(a)
    floor_ok = name in ("arith.floordivsi", "arith.shrsi", "arith.ceildivsi")
    if not floor_ok and lo.min() < 0:
        raise NotAffine(f"{name} of a value that may be negative")
    rem = name in ("arith.remsi", "arith.remui")
    if name == "arith.ceildivsi":
        neg = Form(-a.c, {v: -x for v, x in a.k.items()}, a.shape, bits, a.side)
        q = _divmod(g, "arith.floordivsi", neg, d, bits)
        return Form(-q.c, {v: -x for v, x in q.k.items()}, a.shape, bits, q.side)
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
    r = Form(a.c - d * qlo, _k((a.k, 1), ({q: -d}, 1)), a.shape, 64)
    side = a.side + (r, Form(d - 1 - r.c, {v: -x for v, x in r.k.items()}, a.shape, 64))
    if rem:
        return Form(r.c, dict(r.k), a.shape, bits, side, (np.zeros(1, np.int64), np.full(1, d - 1)))
    return Form(qlo, {q: 1}, a.shape, bits, side, (qlo, qhi))


_DIVS = {"arith.divsi", "arith.divui", "arith.floordivsi", "arith.ceildivsi", "arith.remsi", "arith.remui",
         "arith.shrsi", "arith.shrui"}


def _binary(name: str, fn, checked: bool):
    def handler(g: AffineGraph, op: Op, env, ctx) -> list[Any]:
        a, b = (g.get(env, o) for o in op.operands[:2])
        ty = op.result_types[0]
        if isinstance(a, Cond) and isinstance(b, Cond):
            return [_bool_op(name, a, b, ty)]
        if isinstance(a, Pieces) or isinstance(b, Pieces):
            if not isinstance(a, (Form, Pieces)) or not isinstance(b, (Form, Pieces)):
                return [_data(a, b)] if isinstance(a, Opaque) or isinstance(b, Opaque) else \
                    [Opaque("out-of-vocabulary", f"{op.name} of a pointer or mask", op.loc)]
            parts = []
            for ga, fa in _parts(a):
                for gb, fb in _parts(b):
                    for gr, fr in _parts(forms(g, op, ctx, fa, fb)):
                        parts.append((ga + gb + gr, fr))
            return [_pieces(parts, ty.shape, ty.bits or max(a.bits, b.bits))]
        if not isinstance(a, Form) or not isinstance(b, Form):
            if isinstance(a, (Ptr, Cond)) or isinstance(b, (Ptr, Cond)):
                return [Opaque("out-of-vocabulary", f"{op.name} of a pointer or mask", op.loc)]
            return [_data(a, b)]
        return [forms(g, op, ctx, a, b)]

    def forms(g: AffineGraph, op: Op, ctx: _Ctx, a: Form, b: Form) -> "Form | Pieces":
        ty = op.result_types[0]
        bits = ty.bits or max(a.bits, b.bits)
        shape = ty.shape
        if not a.k and not b.k:
            return g.fit(Form(_concrete(fn, a, b, bits, checked, op), {}, shape, bits), op)
        if name in ("arith.addi", "arith.subi"):
            s = 1 if name == "arith.addi" else -1
            return g.fit(Form(a.c + s * b.c, _k((a.k, 1), (b.k, s)), shape, bits, _sides(a, b)), op)
        if name in ("arith.muli", "arith.shli"):
            if name == "arith.shli":
                s = _uniform(b)
                if s is None or not 0 <= s < bits:
                    raise NotAffine("a shift by a varying amount")
                return g.fit(Form(a.c << s, _k((a.k, 1 << s)), shape, bits, a.side), op)
            sa, sb = _uniform(a), _uniform(b)
            if sb is not None:
                return g.fit(Form(a.c * sb, _k((a.k, sb)), shape, bits, a.side), op)
            if sa is not None:
                return g.fit(Form(b.c * sa, _k((b.k, sa)), shape, bits, b.side), op)
            raise NotAffine("a product of two varying values")
        if name in _DIVS:
            d = _uniform(b)
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
            sides = _sides(a, b)
            if not (a_first or b_first):        # the winner varies: two regions, split at a = b
                if "min" in name:               # a wins where a <= b: b - a >= 0
                    a_wins = Form(b.c - a.c, _k((b.k, 1), (a.k, -1)), shape, 64)
                else:                           # a wins where a >= b: a - b >= 0
                    a_wins = Form(a.c - b.c, _k((a.k, 1), (b.k, -1)), shape, 64)
                b_wins = _negate(a_wins)
                return Pieces(((sides + (a_wins,), Form(a.c, dict(a.k), shape, bits, sides)),
                               (sides + (b_wins,), Form(b.c, dict(b.k), shape, bits, sides))), shape, bits)
            smaller, larger = (a, b) if a_first else (b, a)
            pick = smaller if "min" in name else larger
            return Form(pick.c, dict(pick.k), shape, bits, sides)
        raise NotAffine(f"{op.name} of lane or loop values")
    return handler


for _name, (_fn, _checked) in G._handlers_binary.items():
    _HANDLERS[_name] = _binary(_name, _fn, _checked)


def _bool_op(name: str, a: Cond, b: Cond, ty: Type) -> Cond:
    if name == "arith.andi":
        return Cond(a.pred & b.pred, a.cons + b.cons, ty.shape, _sides(a, b))
    if not a.cons and not b.cons:
        fn = {"arith.ori": np.logical_or, "arith.xori": np.logical_xor}.get(name)
        if fn is None:
            raise NotAffine(f"{name} of masks")
        return Cond(fn(a.pred, b.pred), (), ty.shape)
    if name == "arith.xori":
        for x, y in ((a, b), (b, a)):
            if not y.cons and y.pred.all() and x.pred.all() and len(x.cons) == 1:
                f = x.cons[0]          # not (f >= 0)  <=>  -f - 1 >= 0
                return Cond(np.ones(1, dtype=bool), (Form(-f.c - 1, {v: -c for v, c in f.k.items()}, f.shape, 64),),
                            ty.shape, x.side)
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
            return [_data(a, b)]
        return [Opaque("out-of-vocabulary", "a comparison the model does not follow", op.loc)]
    if not a.k and not b.k:
        x, y = a.c, b.c
        if pred.startswith("u"):
            x, y = G._unsigned(x, a.bits), G._unsigned(y, b.bits)
        return [Cond(G._CMP[pred](x, y), (), shape)]
    if pred.startswith("u"):
        if g.box(a)[0].min() < 0 or g.box(b)[0].min() < 0:
            raise NotAffine("an unsigned comparison of a value that may be negative")
        pred = "s" + pred[1:]
    d = Form(a.c - b.c, _k((a.k, 1), (b.k, -1)), shape, 64)        # a - b
    neg = Form(-d.c, {v: -c for v, c in d.k.items()}, shape, 64)     # b - a
    one = lambda f: Form(f.c - 1, f.k, shape, 64)                   # noqa: E731
    cons = {"slt": (one(neg),), "sle": (neg,), "sgt": (one(d),), "sge": (d,), "eq": (d, neg)}.get(pred)
    if cons is None:
        raise NotAffine(f"a {pred} comparison of lane values")
    return [Cond(np.ones(1, dtype=bool), cons, shape, _sides(a, b))]


@handles("arith.select")
def _select(g: AffineGraph, op: Op, env, ctx) -> list[Any]:
    c, a, b = (g.get(env, o) for o in op.operands[:3])
    if isinstance(a, Opaque) and isinstance(b, Opaque):
        return [_data(a, b)]
    if isinstance(c, Opaque):
        return [Opaque("data", "a select on loaded data", op.loc) if c.why == "data" else c]
    if not isinstance(c, Cond):
        raise NotAffine("a select on an unknown condition")
    if c.cons:
        if not isinstance(a, (Form, Pieces)) or not isinstance(b, (Form, Pieces)):
            raise NotAffine("a select on a lane condition between values that are not integers")
        true, falses = _regions(c)
        ty = op.result_types[0]
        parts = [(true + ga, fa) for ga, fa in _parts(a)]
        parts += [(f + gb, fb) for f in falses for gb, fb in _parts(b)]
        return [_pieces(parts, ty.shape, ty.bits)]
    if isinstance(a, Pieces) or isinstance(b, Pieces):
        raise NotAffine("a per-program choice between piecewise values")
    return [_blend(c.pred, a, b, g.P)]


def _blend(cond: np.ndarray, a: Any, b: Any, P: int) -> Any:
    """Per-program choice between two values (a branch's results, a select on a program condition)."""
    if isinstance(a, Opaque) or isinstance(b, Opaque):
        return a if isinstance(a, Opaque) else b
    if isinstance(a, (Form, Cond)) and isinstance(b, (Form, Cond)) and (a.side or b.side) and a.side != b.side:
        raise NotAffine("a per-program choice between values with different quotient variables")
    if isinstance(a, Form) and isinstance(b, Form) and a.k == b.k:
        return Form(np.where(np.broadcast_to(cond, (P,)), np.broadcast_to(a.c, (P,)), np.broadcast_to(b.c, (P,)))
                    if not cond.all() else a.c, dict(a.k), a.shape, a.bits, a.side)
    if isinstance(a, Ptr) and isinstance(b, Ptr) and a.arg == b.arg and a.pointee == b.pointee:
        return Ptr(a.arg, _blend(cond, a.off, b.off, P), a.pointee)
    if isinstance(a, Cond) and isinstance(b, Cond) and not a.cons and not b.cons:
        return Cond(np.where(cond, a.pred, b.pred), (), a.shape)
    raise NotAffine("a per-program choice between values of different shape")


def _cast(kind: str):
    def handler(g: AffineGraph, op: Op, env, ctx) -> list[Any]:
        v = g.get(env, op.operands[0])
        ty = op.result_types[0]
        if isinstance(v, Opaque):
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
            return [Form(G._wrap(a, ty.bits), {}, ty.shape, ty.bits)]
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
                a = G._unsigned(a, v.bits)
            if ty.bits == 1:
                return [Cond((a & 1).astype(bool), (), ty.shape)]
            return [Form(G._wrap(a, ty.bits), {}, ty.shape, ty.bits)]
        if ty.bits == 1:
            raise NotAffine("a truncation of lane values to i1")
        if kind == "zext" and g.box(v)[0].min() < 0:
            raise NotAffine("a zero extension of a value that may be negative")
        return [g.fit(Form(v.c, dict(v.k), ty.shape, ty.bits, v.side, v.rng), op)]
    return handler


for _name in ("arith.extsi", "arith.trunci", "arith.index_cast"):
    _HANDLERS[_name] = _cast("sext")
for _name in ("arith.extui", "arith.index_castui"):
    _HANDLERS[_name] = _cast("zext")


@handles("arith.bitcast", "tt.bitcast")
def _bitcast(g: AffineGraph, op: Op, env, ctx) -> list[Any]:
    v = g.get(env, op.operands[0])
    ty = op.result_types[0]
    if isinstance(v, Ptr) and ty.is_ptr:
        return [Ptr(v.arg, v.off, G.elem_bytes(ty.pointee))]
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
        if isinstance(v, Pieces) or isinstance(v, Ptr) and isinstance(v.off, Pieces):
            pieces = v if isinstance(v, Pieces) else v.off
            parts = []
            for guard, f in pieces.parts:
                # the guard moves with its form: carry it as the form's side constraints
                carrier = Form(f.c, f.k, f.shape, f.bits, tuple(guard) + tuple(f.side), f.rng)
                (moved,) = handler(g, op, {op.operands[0]: carrier}, ctx)
                n = len(guard)
                parts.append((moved.side[:n], Form(moved.c, moved.k, moved.shape, moved.bits, moved.side[n:],
                                                   moved.rng)))
            out = Pieces(tuple(parts), op.result_types[0].shape, pieces.bits)
            return [Ptr(v.arg, out, v.pointee) if isinstance(v, Ptr) else out]
        src = v.off.shape if isinstance(v, Ptr) else v.shape
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
        sides = v.off.side if isinstance(v, Ptr) else v.side
        moved = any(a != b for a, b in mapping.items())
        fresh = {q: g.quotient(g.extent[q]) for q in sorted({x for f in sides for x in f.k if x[0] == "q"})} \
            if moved else {}

        def move(f: Form, side: tuple[Form, ...] = ()) -> Form:
            k = {fresh.get(x, x): a for x, a in _relabel(f.k, mapping).items()}
            return Form(f.c, k, ty.shape, f.bits, side, f.rng)

        side = tuple(move(f) for f in sides)
        if isinstance(v, Form):
            return [move(v, side)]
        if isinstance(v, Ptr):
            return [Ptr(v.arg, move(v.off, side), v.pointee)]
        if isinstance(v, Cond):
            return [Cond(v.pred, tuple(move(f) for f in v.cons), ty.shape, side)]
        raise NotAffine(f"{op.name} of this value")
    return handler


for _name, _kind in (("tt.splat", "splat"), ("tt.broadcast", "broadcast"), ("tt.expand_dims", "expand_dims"),
                     ("tt.reshape", "reshape"), ("tt.trans", "trans")):
    _HANDLERS[_name] = _shape_op(_kind)
for _name in ("tt.assume", "tt.assert", "tt.print", "gpu.barrier", "ttg.barrier"):
    _HANDLERS[_name] = lambda g, op, env, ctx: []


@handles("tt.addptr")
def _addptr(g: AffineGraph, op: Op, env, ctx) -> list[Any]:
    p, off = (g.get(env, o) for o in op.operands[:2])
    if isinstance(p, Opaque):
        return [p]
    if not isinstance(p, Ptr):
        return [Opaque("out-of-vocabulary", "pointer arithmetic on a value the model does not follow", op.loc)]
    if isinstance(off, Opaque):
        return [Opaque("data", "an offset computed from loaded data", op.loc)]
    if not isinstance(off, (Form, Pieces)):
        return [Opaque("out-of-vocabulary", "a pointer offset the model does not follow", op.loc)]
    shape = op.result_types[0].shape
    if isinstance(off, Pieces) or isinstance(p.off, Pieces):
        parts = []
        for gp, fp in _parts(p.off):
            for go, fo in _parts(off):
                moved = Form(fp.c + fo.c * p.pointee, _k((fp.k, 1), (fo.k, p.pointee)), shape, 64, _sides(fp, fo))
                parts.append((gp + go, g.fit(moved, op)))
        return [Ptr(p.arg, _pieces(parts, shape, 64), p.pointee)]
    moved = Form(p.off.c + off.c * p.pointee, _k((p.off.k, 1), (off.k, p.pointee)), shape, 64, _sides(p, off))
    return [Ptr(p.arg, g.fit(moved, op), p.pointee)]


@handles("tt.load")
def _load(g: AffineGraph, op: Op, env, ctx) -> list[Any]:
    mask = g.get(env, op.operands[1]) if len(op.operands) > 1 else None
    ptr = g.get(env, op.operands[0])
    info = g.m.args.get(getattr(ptr, "arg", ""))
    if info is not None and info.values:
        raise NotAffine("a load of an index with a declared value range (the enumeration bounds it)")
    g.record(op, "load", ptr, mask, ctx)
    return [Opaque("data", "loaded data", op.loc)]


@handles("tt.store")
def _store(g: AffineGraph, op: Op, env, ctx) -> list[Any]:
    mask = g.get(env, op.operands[2]) if len(op.operands) > 2 else None
    g.record(op, "store", g.get(env, op.operands[0]), mask, ctx)
    return []


@handles("tt.atomic_rmw")
def _atomic_rmw(g: AffineGraph, op: Op, env, ctx) -> list[Any]:
    mask = g.get(env, op.operands[2]) if len(op.operands) > 2 else None
    g.record(op, "atomic", g.get(env, op.operands[0]), mask, ctx)
    return [Opaque("data", "an atomic's old value", op.loc)]


@handles("tt.atomic_cas")
def _atomic_cas(g: AffineGraph, op: Op, env, ctx) -> list[Any]:
    g.record(op, "atomic", g.get(env, op.operands[0]), None, ctx)
    return [Opaque("data", "an atomic's old value", op.loc)]


# -- control flow


@handles("scf.for")
def _for(g: AffineGraph, op: Op, env, ctx) -> list[Any]:
    lb, ub, step = (g.get(env, o) for o in op.operands[:3])
    if not all(isinstance(x, Form) and not x.k for x in (lb, ub, step)):
        raise NotAffine("loop bounds outside the affine fragment")
    st = _uniform(step)
    if st is None or st <= 0:
        raise NotAffine("a loop step that varies or is not positive")
    inits = [g.get(env, o) for o in op.operands[3:]]
    iv, carried = op.for_header.iv, op.for_header.iter_args
    trips = np.where(ctx.pred, np.maximum(0, -((lb.c - ub.c) // st)), 0)
    T = int(trips.max()) if trips.size else 0
    if T == 0:
        g.mark_unreachable(op.regions[0].blocks[0], ctx)     # no program enters the loop
        return inits
    t = f"t{g._loops}"
    g._loops += 1
    g.extent[t] = T
    ivf = g.fit(Form(lb.c, {t: st} if T > 1 else {}, (), lb.bits), op)
    body = op.regions[0].blocks[0]
    # probe: carried values as init + s; an induction variable yields s + (a uniform step)
    steps: list[int | None] = []
    inner = dict(env)
    inner[iv] = ivf
    probes = []
    for i, (name, v) in enumerate(zip(carried, inits)):
        s = f"s{g._loops}_{i}"
        if isinstance(v, Pieces) or isinstance(v, Ptr) and isinstance(v.off, Pieces):
            raise NotAffine("a loop-carried piecewise value")
        if isinstance(v, Form):
            pv: Any = Form(v.c, _k((v.k, 1), ({s: 1}, 1)), v.shape, v.bits, v.side)
        elif isinstance(v, Ptr):
            pv = Ptr(v.arg, Form(v.off.c, _k((v.off.k, 1), ({s: 1}, 1)), v.off.shape, 64, v.off.side), v.pointee)
        elif isinstance(v, Opaque):
            pv = v
        else:
            raise NotAffine("a loop-carried mask")
        probes.append((s, pv))
        inner[name] = pv
    g.probing += 1
    try:
        yielded = g.eval_block(body, inner, _Ctx(ctx.pred & (trips > 0), ctx.cons, ctx.stack))
    finally:
        g.probing -= 1
    for (s, pv), y, v in zip(probes, yielded, inits):
        steps.append(_induction(pv, y, s))
    # the real pass: iteration t sees init + t·step
    running = ctx.pred & (trips > 0)
    body_ctx = _Ctx(running, ctx.cons + (Form(trips - 1, {t: -1}, (), 64),) if T > 1 else ctx.cons, ctx.stack)
    inner = dict(env)
    inner[iv] = ivf
    for name, v, d in zip(carried, inits, steps):
        inner[name] = _advance(v, d, {t: d} if T > 1 else {}, g, op)
    g.eval_block(body, inner, body_ctx)
    outs = []
    for v, d in zip(inits, steps):
        if d is None:
            outs.append(Opaque("data", "a value carried by a loop", op.loc) if not isinstance(v, Opaque) else v)
        elif isinstance(v, Form):
            outs.append(g.fit(Form(v.c + trips * d, dict(v.k), v.shape, v.bits, v.side), op))
        else:
            outs.append(Ptr(v.arg, g.fit(Form(v.off.c + trips * d, dict(v.off.k), v.off.shape, 64, v.off.side),
                                         op),
                            v.pointee))
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
    diff = _k((y.k, 1), (pv.k, -1))
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
        return g.fit(Form(v.c, _k((v.k, 1), (k, 1)), v.shape, v.bits, v.side), op)
    return Ptr(v.arg, g.fit(Form(v.off.c, _k((v.off.k, 1), (k, 1)), v.off.shape, 64, v.off.side), op),
               v.pointee)


@handles("scf.if")
def _if(g: AffineGraph, op: Op, env, ctx) -> list[Any]:
    cond = g.get(env, op.operands[0])
    if not isinstance(cond, Cond) or cond.cons:
        raise NotAffine("a branch condition outside the affine fragment")
    c = np.broadcast_to(cond.pred, (g.P,))
    then_b = op.regions[0].blocks[0]
    else_b = op.regions[1].blocks[0] if len(op.regions) > 1 else None
    then_v = g.eval_block(then_b, dict(env), _Ctx(ctx.pred & c, ctx.cons, ctx.stack))
    else_v = g.eval_block(else_b, dict(env), _Ctx(ctx.pred & ~c, ctx.cons, ctx.stack)) if else_b else []
    return [_blend(c, t, e, g.P) for t, e in zip(then_v, else_v)]


@handles("tt.reduce", "tt.scan")
def _reduce(g: AffineGraph, op: Op, env, ctx) -> list[Any]:
    vals = [g.get(env, o) for o in op.operands]
    if all(isinstance(v, Opaque) for v in vals):
        return [_data(*vals)] * len(op.results)
    raise NotAffine("a reduction of lane values")


@handles("tt.call")
def _call(g: AffineGraph, op: Op, env, ctx) -> list[Any]:
    func = g.m.module.funcs.get(op.callee)
    if func is None or len(ctx.stack) > 32:
        raise NotAffine("a call the summary does not follow")
    inner = {name: g.get(env, o) for (name, _), o in zip(func.args, op.operands)}
    return g.eval_body(func.body, inner, _Ctx(ctx.pred, ctx.cons, ctx.stack + (op.loc,)))


WITNESS_SHARE = 8                # an out-of-bounds launch is enumerated when it fits budget / this
RACE_SHARE = 8                   # per-program footprints for the race check get budget / this
ENGINE_ENV = "TILELENS_ENGINE"   # auto (default) | enumerate | compare (tests: both engines, must agree)
ENGINES: Counter[str] = Counter()  # launches answered per engine in this process (tests and benchmarks)


def engine_mode() -> str:
    return os.environ.get(ENGINE_ENV, "auto")


def analyze(model: LaunchModel) -> Any:
    """The launch's summary when it stays in the affine fragment, else its enumeration.

    An out-of-bounds launch is enumerated when that fits a share of the budget, so its witness is
    the one enumeration reports at any size that fits; past that, the summary keeps its exact
    footprint and takes each witness from enumerating the one program found to show it."""
    mode = engine_mode()
    if mode != "enumerate":
        summary = AffineGraph(model)
        try:
            summary.run()
            if summary.pending:
                trial = G.AccessGraph(dataclasses.replace(model, budget=max(1, model.budget // WITNESS_SHARE)))
                trial.run()
                if trial.truncated is None:
                    ENGINES["enumeration"] += 1
                    return trial
                summary.fill_witnesses()
        except (NotAffine, OverflowError):   # OverflowError: a coefficient past int64
            pass
        except Exception:   # a bug of the summary must not cost the launch its verdict: enumerate
            if mode == "compare":
                raise       # ... but tests must see it
            ENGINES["summary-failed"] += 1
        else:
            if mode == "compare":
                compare(summary, model)
            ENGINES["summary"] += 1
            return summary
    graph = G.AccessGraph(model)
    graph.run()
    ENGINES["enumeration"] += 1
    return graph


def site_footprints(sites: dict) -> dict:
    """What an engine found at each site, in a form two engines can be compared by (witnesses aside:
    the summary's may come from another program)."""
    out = {}
    for key, site in sites.items():
        s, e = site.intervals()
        out[key] = (site.op, site.loc, s.tolist(), e.tolist(), site.exact, site.oob is not None,
                    site.refusal is not None)
    return out


def compare(summary: AffineGraph, model: LaunchModel) -> None:
    """Enumerate a summarized launch too and insist on the same sites and footprints (a test mode:
    each engine checks the other on every launch the summary answers)."""
    graph = G.AccessGraph(model)
    graph.run()
    if graph.truncated is not None:
        return

    a, b = site_footprints(summary.sites), site_footprints(graph.sites)
    if a != b:
        diff = [(a.get(k), b.get(k)) for k in set(a) | set(b) if a.get(k) != b.get(k)]
        raise AssertionError(f"the affine summary and the enumeration disagree: {str(diff[0])[:600]}")
    if any(ob.violation is not None for ob in graph.width_obligations()):
        raise AssertionError("the enumeration finds an overflow the affine summary did not")
