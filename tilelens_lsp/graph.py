"""AccessGraph: evaluates the address, mask and control slice of a TTIR module for a whole launch.

Every integer value is a numpy array over (programs, *lanes) with its bit width, so wraparound and
width obligations are exact; every pointer keeps its provenance (the kernel parameter it derives
from). Programs are evaluated in batches and loops iteration by iteration with a per-program
`active` predicate, so pid-dependent trip counts and program-uniform branches are followed exactly.
Loaded data is opaque: an address built from it is refused (`indirect-address`), a mask built from it
turns the footprint into a proven over-approximation (`exact: false`).
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from tilelens_lsp.engines import accounting, ranges, views
from tilelens_lsp.ttir import cfg
from tilelens_lsp.engines.ranges import PtrSpan, RangeV
from tilelens_lsp.refusal import Refusal
from tilelens_lsp.ttir.reader import Block, Func, Module, Op, Region, Type, parse_type, split_top, symbol_name

CHUNK_LANES = 1 << 20          # programs × lanes per batch: bounds memory, not results
MAX_PROGRAMS = (1 << 63) - 1   # grids past this are refused outright (program indices are int64)
DTYPE_BYTES = {"i1": 1, "i8": 1, "i16": 2, "i32": 4, "i64": 8, "f16": 2, "bf16": 2, "f32": 4,
               "f64": 8, "f8E4M3FN": 1, "f8E5M2": 1, "f8E4M3FNUZ": 1, "f8E5M2FNUZ": 1, "f8E4M3B11FNUZ": 1,
               "tf32": 4}


# ---------------------------------------------------------------- values


@dataclass
class IntV:
    a: np.ndarray   # (P or 1, *shape); bool for i1, int64 otherwise (wrapped to `bits`)
    bits: int


class PtrV:
    """A pointer value: provenance plus byte offsets kept as a short sum of broadcastable terms.

    `base + row * stride + cols` stays (P,1) + (1,C) instead of a (P, C) array until something needs
    the sum; `record` reads contiguity and row heads off the terms, so the common access costs
    O(programs × rows) instead of O(programs × lanes)."""

    __slots__ = ("arg", "terms", "pointee", "_sum")
    MAX_TERMS = 4

    def __init__(self, arg: str, boff: np.ndarray | None = None, pointee: int = 1,
                 terms: tuple[np.ndarray, ...] | None = None) -> None:
        self.arg = arg                   # kernel parameter the address derives from
        self.pointee = pointee           # bytes per element of the pointee type
        self.terms = tuple(terms) if terms is not None else (boff,)
        self._sum = boff if terms is None else None

    @property
    def boff(self) -> np.ndarray:
        """Byte offsets from the parameter's address, (P or 1, *shape)."""
        if self._sum is None:
            total = self.terms[0]
            for t in self.terms[1:]:
                total = total + t
            self._sum = total
        return self._sum

    def shape(self) -> tuple[int, ...]:
        return np.broadcast_shapes(*(t.shape for t in self.terms))

    def plus(self, offset: np.ndarray) -> "PtrV":
        terms = list(self.terms)
        for i, t in enumerate(terms):
            if t.shape == offset.shape or t.size == 1 and offset.size == 1:
                terms[i] = t + offset
                break
        else:
            terms.append(offset)
        if len(terms) > self.MAX_TERMS:
            return PtrV(self.arg, PtrV(self.arg, terms=tuple(terms)).boff, self.pointee)
        return PtrV(self.arg, pointee=self.pointee, terms=tuple(terms))

    def map(self, fn: Callable[[np.ndarray], np.ndarray], pointee: int | None = None) -> "PtrV":
        return PtrV(self.arg, pointee=self.pointee if pointee is None else pointee,
                    terms=tuple(fn(t) for t in self.terms))

    def __repr__(self) -> str:
        return f"PtrV({self.arg}, {len(self.terms)} terms, shape {self.shape()})"


@dataclass
class PtrChoice:
    """A pointer that is one of several arguments' pointers, chosen per program or per lane
    (`p = a_ptr if pid % 2 == 0 else b_ptr`, `tl.where(c, a_ptr + offs, b_ptr + offs)`): each
    candidate with the lanes where it is the one (`when`, a bool array broadcastable to the pointer's
    shape; None where loaded data decides, so the candidate may be any lane's)."""

    options: tuple[tuple[PtrV, "np.ndarray | None"], ...]

    def map(self, fn: Callable[[np.ndarray], np.ndarray], pointee: int | None = None) -> "PtrChoice":
        return PtrChoice(tuple((p.map(fn, pointee), None if w is None else fn(w)) for p, w in self.options))


@dataclass
class BlockPtrV:
    base: PtrV
    shape: list[np.ndarray]
    strides: list[np.ndarray]
    offsets: list[np.ndarray]
    block: tuple[int, ...]


@dataclass
class Opaque:
    """A value the model does not compute: loaded data (`why='data'`) or an unmodelled op."""

    why: str          # data | float | out-of-vocabulary | inline-asm
    message: str = ""
    loc: str = ""
    bound: "IntV | None" = None   # for an unknown mask: lanes where it may be true (None: any lane)


Value = Any
_MEMORY_OP = accounting.MEMORY_OP
_REGISTER_OPS = accounting.REGISTER_OPS


def _cost(value: Any) -> int:
    """Elements a value really holds (broadcast views count once along their stride-0 axes)."""
    if isinstance(value, IntV):
        arrays: tuple[np.ndarray, ...] = (value.a,)
    elif isinstance(value, PtrV):
        arrays = value.terms
    else:
        return 0
    total = 0
    for a in arrays:
        n = 1
        for size, stride in zip(a.shape, a.strides):
            if stride:
                n *= size
        total += n
    return total


def sorted_unique(a: np.ndarray) -> np.ndarray:
    """np.unique for int64 element indices, by one sort (numpy's hash-based unique is far slower here)."""
    if a.size == 0:
        return a
    a = np.sort(a, kind="stable" if a.size < 64 else None)
    keep = np.empty(a.size, dtype=bool)
    keep[0] = True
    np.not_equal(a[1:], a[:-1], out=keep[1:])
    return a[keep]


def _wrap(a: np.ndarray, bits: int) -> np.ndarray:
    if bits >= 64:
        return a
    if bits == 1:
        return a.astype(bool)
    half = 1 << (bits - 1)
    return ((a + half) & ((1 << bits) - 1)) - half


def _unsigned(a: np.ndarray, bits: int) -> np.ndarray:
    if bits >= 64:
        return a.astype(np.uint64)
    return a.astype(np.int64) & ((1 << bits) - 1)


def elem_bytes(elem: str) -> int:
    if elem.startswith("ptr<"):
        return 8
    return DTYPE_BYTES.get(elem, 4)


# ---------------------------------------------------------------- results of evaluation


@dataclass
class SiteResult:
    """What one access site touched over the whole launch."""

    op: str
    arg: str
    loc: str
    call_stack: tuple[str, ...]
    starts: list[np.ndarray] = field(default_factory=list)   # half-open element intervals touched
    ends: list[np.ndarray] = field(default_factory=list)
    exact: bool = True
    oob: dict[str, Any] | None = None        # first out-of-bounds lane, in evaluation order
    refusal: Refusal | None = None
    view_out: dict[str, Any] | None = None   # first lane inside the storage but outside the view
    # (starts, ends, program index) per program, for races; None when the engine cannot give them
    tagged: list[tuple[np.ndarray, np.ndarray, np.ndarray]] | None = field(default_factory=list)

    def add_tagged(self, starts: np.ndarray, ends: np.ndarray, progs: np.ndarray) -> None:
        if self.tagged is None:
            return
        last = self.tagged[-1] if self.tagged else None
        if last is not None and last[1].shape == starts.shape and np.array_equal(last[1], starts) \
                and np.array_equal(last[2], progs):
            self.tagged[-1] = (last[0], ends, progs)    # a row continued by the next loop iteration
            return
        self.tagged.append((starts, ends, progs))

    def add_elements(self, elems: np.ndarray) -> None:
        """Element indices → runs of consecutive elements (one interval each)."""
        elems = sorted_unique(elems)
        if elems.size == 0:
            return
        breaks = np.flatnonzero(np.diff(elems) != 1)
        self.starts.append(np.concatenate((elems[:1], elems[breaks + 1])))
        self.ends.append(np.concatenate((elems[breaks], elems[-1:])) + 1)

    def add_intervals(self, starts: np.ndarray, ends: np.ndarray) -> None:
        starts, ends = starts.reshape(-1), ends.reshape(-1)
        last = self.ends[-1] if self.ends else None
        if last is not None and last.shape == starts.shape and np.array_equal(last, starts):
            # a loop walking along its rows continues each row where the previous iteration ended
            self.ends[-1] = ends
            return
        self.starts.append(starts)
        self.ends.append(ends)

    def intervals(self) -> tuple[np.ndarray, np.ndarray]:
        """Sorted, disjoint, merged half-open intervals."""
        return merge_intervals(self.starts, self.ends)


def _tagged_runs(elems: np.ndarray, progs: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Element indices with the program that touched each → runs of consecutive elements per program."""
    order = np.lexsort((elems, progs))
    e, p = elems[order], progs[order]
    brk = np.ones(e.size, dtype=bool)
    brk[1:] = (np.diff(e) != 1) | (p[1:] != p[:-1])
    first = np.flatnonzero(brk)
    last = np.concatenate((first[1:] - 1, [e.size - 1]))
    return e[first], e[last] + 1, p[first]


def merge_intervals(starts: list[np.ndarray], ends: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    if not starts:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty
    s = np.concatenate(starts).astype(np.int64, copy=False)
    e = np.concatenate(ends).astype(np.int64, copy=False)
    order = np.argsort(s, kind="stable")
    s, e = s[order], e[order]
    reach = np.maximum.accumulate(e)
    new = np.ones(s.size, dtype=bool)
    new[1:] = s[1:] > reach[:-1]          # adjacent intervals merge too
    first = np.flatnonzero(new)
    last = np.concatenate((first[1:] - 1, [s.size - 1]))
    return s[first], reach[last]


@dataclass
class Obligation:
    """An integer op in address arithmetic whose result must fit its width."""

    op: str
    loc: str
    call_stack: tuple[str, ...]
    bits: int
    violation: dict[str, Any] | None = None


@dataclass
class ArgInfo:
    name: str
    elem_size: int
    lo: int          # lowest valid element index relative to the argument's address
    hi: int          # one past the highest
    values: tuple[int, int] | None = None   # declared range [LO, HI) of the tensor's elements
    view: tuple[np.ndarray, np.ndarray] | None = None   # runs the declared view covers, when it does
    # not cover its whole storage (element indices relative to the argument's address)


@dataclass
class LaunchModel:
    module: Module
    arg_values: dict[str, Any]       # entry func arg SSA name → value (scalar ints, ptrs, opaque)
    args: dict[str, ArgInfo]         # pointer parameters by name
    grid: tuple[int, int, int]
    budget: int


# ---------------------------------------------------------------- evaluator


class _Ctx:
    def __init__(self, pred: np.ndarray, iters: tuple[int, ...], exact: bool, stack: tuple[str, ...]):
        self.pred = pred          # (P,) bool: programs for which this code runs
        self.iters = iters
        self.exact = exact
        self.stack = stack        # call-site locs, innermost last


class AccessGraph:
    """Evaluates one launch; `run()` returns its access sites and width obligations."""

    def __init__(self, model: LaunchModel) -> None:
        self.m = model
        self.sites: dict[tuple, SiteResult] = {}
        self.obligations: dict[tuple, Obligation] = {}
        self.work = 0
        self.slice = _address_slice(model.module)
        self.pid_base = 0
        self.P = 1
        self._pids: list[np.ndarray] = []
        self.truncated: Refusal | None = None
        self._steps: dict[tuple[int, int], tuple[np.ndarray, int | None]] = {}
        self._current_loc = ""
        self.unreachable: set[accounting.Context] = set()   # memory ops proven not to run

    def width_obligations(self) -> list[Obligation]:
        return list(self.obligations.values())

    # -- driver

    def run(self) -> None:
        """Evaluate every program; on budget exhaustion keep the definite findings and stop."""
        gx, gy, gz = self.m.grid
        total = gx * gy * gz
        if total == 0:
            return
        lanes = max([1] + [_numel(t) for f in self.m.module.funcs.values()
                           for op in accounting.region_ops(f.body) for t in op.result_types])
        chunk = max(1, min(total, CHUNK_LANES // lanes))
        n_chunks = -(-total // chunk)
        # the last programs hold most tail and overflow bugs: visit them first, so a launch that runs
        # out of budget still reports them (lazily: a grid of 2**31 programs is 2**31 chunk starts)
        order = itertools.chain((n_chunks - 1,), range(n_chunks - 1))
        entry = self.m.module.funcs[self.m.module.entry]
        programs = 0
        try:
            if total > MAX_PROGRAMS:   # program ids of int64 lanes would wrap
                raise Refusal("launch-too-large", f"the grid {self.m.grid} has {total:,} programs, more than "
                              f"the {MAX_PROGRAMS:,} this analysis enumerates; declare a smaller launch to check it")
            for i in order:
                start = i * chunk
                count = min(chunk, total - start)
                # programs count against the budget too: a launch whose accesses all sit in a loop that
                # never runs would otherwise walk a grid of 2**62 programs
                programs += count
                if programs > self.m.budget and i != n_chunks - 1:
                    raise Refusal("launch-too-large",
                                  f"enumerating this launch exceeds the budget of {self.m.budget:,} lane "
                                  f"evaluations ({total:,} programs); declare a smaller launch to check it")
                self._run_chunk(entry, start, count)
        except Refusal as refusal:
            if refusal.kind != "launch-too-large":
                raise
            self.truncated = refusal

    def _run_chunk(self, entry: Func, start: int, count: int) -> None:
        gx, gy, _ = self.m.grid
        self.P = count
        self.pid_base = start
        idx = np.arange(start, start + count, dtype=np.int64)
        self._pids = [idx % gx, (idx // gx) % gy, idx // (gx * gy)]
        env = {name: self.m.arg_values[name] for name, _ in entry.args}
        self.eval_body(entry.body, env, _Ctx(np.ones(count, dtype=bool), (), True, ()))

    # -- blocks

    def eval_body(self, body: Region, env: dict[str, Value], ctx: _Ctx) -> list[Value]:
        """A function body: one block, or a control-flow graph of blocks (early returns)."""
        if cfg.is_graph(body):
            return cfg.run(body, env, ctx, self)
        return self.eval_block(body.blocks[0], env, ctx)

    def eval_block(self, block: Block, env: dict[str, Value], ctx: _Ctx) -> list[Value]:
        term = self.eval_ops(block, env, ctx)
        if term is not None and term.name in ("scf.yield", "tt.return", "scf.condition"):
            return [self.get(env, o) for o in term.operands]
        if term is not None and term.successors:
            raise Refusal("control-flow", f"a branch ({term.name}) inside a single-block region", term.loc)
        return []

    def eval_ops(self, block: Block, env: dict[str, Value], ctx: _Ctx) -> Op | None:
        """Evaluate a block's ops up to its terminator, which is returned (not evaluated)."""
        for op in block.ops:
            if op.name in ("scf.yield", "tt.return", "scf.condition") or op.successors:
                return op
            if any(len(r.blocks) != 1 for r in op.regions):
                raise Refusal("control-flow", f"{op.name} with a region of {len(op.regions[0].blocks)} blocks",
                              op.loc)
            handler = _HANDLERS.get(op.name)
            if handler is None:
                results = self.unknown(op, env, ctx)
            else:
                results = handler(self, op, env, ctx)
            for name, value in zip(op.results, results):
                env[name] = value
                self._spend(_cost(value), op)
        return None

    # -- the control-flow graph protocol (tilelens_lsp.cfg)

    def branch_condition(self, value: Value, op: Op) -> np.ndarray | None:
        if isinstance(value, IntV):
            return np.broadcast_to(value.a.reshape(value.a.shape[:1]), (self.P,)).astype(bool)
        if isinstance(value, Opaque) and value.why == "data":
            return None
        raise Refusal("control-flow" if not isinstance(value, Opaque) or value.why == "float" else value.why,
                      "a branch condition the model does not compute", op.loc)

    def join(self, incoming: list[tuple[np.ndarray, Value]], op: Op) -> Value:
        """The value a block argument (or a return) takes: per program, the one of the edge it came by."""
        value = incoming[0][1]
        if all(v is value for _, v in incoming[1:]):
            return value
        total = np.zeros(self.P, dtype=int)
        for when, _ in incoming:
            total = total + when
        if (total > 1).any():     # edges chosen by loaded data overlap: either value may arrive
            return _opaque_of(*(v for _, v in incoming)) if any(isinstance(v, Opaque) for _, v in incoming) \
                else Opaque("data", "a value chosen by loaded data", op.loc)
        for when, v in incoming[1:]:
            value = _blend(when, v, value, op)
        return value

    def narrow(self, ctx: _Ctx, may: np.ndarray, exact: bool) -> _Ctx:
        return _Ctx(may, ctx.iters, exact, ctx.stack)

    def ctx_pred(self, ctx: _Ctx) -> tuple[np.ndarray, bool]:
        return np.broadcast_to(ctx.pred, (self.P,)), ctx.exact

    def mark_unreachable(self, block: Block, ctx: _Ctx) -> None:
        """No program runs `block` here: its memory ops (and those of what it calls) are accounted for."""
        for op, stack in accounting.contexts_in_ops(accounting.block_ops(block), self.m.module, ctx.stack):
            self.unreachable.add((id(op), stack))

    def get(self, env: dict[str, Value], name: str) -> Value:
        try:
            return env[name]
        except KeyError:
            raise Refusal("reader-misalignment", f"value {name} used before its definition") from None

    def unknown(self, op: Op, env: dict[str, Value], ctx: _Ctx) -> list[Value]:
        if op.regions or op.successors:
            # what runs inside is unknown to the model: never skipped, refused by name
            raise Refusal("control-flow", f"{op.name} holds code the model does not follow", op.loc)
        why = "inline-asm" if "inline_asm" in op.name else "out-of-vocabulary"
        if _MEMORY_OP.search(op.name) and op.name not in _REGISTER_OPS:
            # an access the model does not follow must never read as "clean"
            site = self._site(op, "load" if "load" in op.name or "gather" in op.name else "store", "?", ctx)
            if site.refusal is None:
                site.refusal = Refusal(why, f"{op.name} accesses memory in a way the model does not follow",
                                       op.loc)
        if any(isinstance(self.get(env, o), Opaque) and self.get(env, o).why == "data" for o in op.operands
               if o in env):
            return [Opaque("data", f"{op.name} of loaded data", op.loc)] * len(op.results)
        return [Opaque(why, f"{op.name} is not modelled", op.loc)] * len(op.results)

    # -- helpers used by handlers

    def need_int(self, v: Value, op: Op, role: str) -> IntV:
        if isinstance(v, IntV):
            return v
        if isinstance(v, (RangeV, PtrSpan)):
            raise Refusal("data-dependent-bound", f"{role} depends on a loaded index", op.loc)
        if isinstance(v, Opaque):
            kind = {"data": "data-dependent-bound", "float": "out-of-vocabulary"}.get(v.why, v.why)
            raise Refusal(kind, f"{role} depends on {v.message or v.why}", v.loc or op.loc)
        raise Refusal("out-of-vocabulary", f"{role} is not an integer", op.loc)

    def pred_like(self, ctx: _Ctx, shape_ndim: int) -> np.ndarray:
        return ctx.pred.reshape((self.P,) + (1,) * shape_ndim)

    def pid(self, axis: int) -> np.ndarray:
        return self._pids[axis]

    def check_width(self, op: Op, ctx: _Ctx, exact: np.ndarray, bits: int) -> np.ndarray:
        """Record the width obligation of `op` and return the wrapped result."""
        if bits > 32 or bits == 1 or id(op) not in self.slice:
            return _wrap(exact, bits)
        key = (id(op), ctx.stack)
        ob = self.obligations.get(key)
        if ob is None:
            ob = self.obligations[key] = Obligation(op.name, op.loc, ctx.stack, bits)
        if ob.violation is None and exact.size and (exact.min() < -(1 << (bits - 1))
                                                    or exact.max() > (1 << (bits - 1)) - 1):
            lo, hi = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
            full = np.broadcast_to(exact, (self.P,) + exact.shape[1:])
            bad = ((full < lo) | (full > hi)) & self.pred_like(ctx, full.ndim - 1)
            if bad.any():
                flat = int(np.argmax(bad.reshape(-1)))
                where = np.unravel_index(flat, bad.shape)
                ob.violation = {"pid": self.pid_tuple(int(where[0])), "lane": tuple(int(i) for i in where[1:]),
                                "iteration": ctx.iters or None, "value": int(full[where])}
        return _wrap(exact, bits)

    def pid_tuple(self, p: int) -> tuple[int, int, int]:
        return (int(self._pids[0][p]), int(self._pids[1][p]), int(self._pids[2][p]))

    def record(self, op: Op, kind: str, ptr: Value, mask: Value, ctx: _Ctx) -> None:
        """Record the elements that mask-true lanes of running programs touch."""
        if isinstance(ptr, BlockPtrV):
            ptr, bmask = _block_addresses(ptr, op)
            mask = bmask if mask is None else _and(mask, bmask)
        if isinstance(ptr, PtrChoice):
            # each candidate is checked against its own storage, on the lanes where it is chosen
            for cand, when in ptr.options:
                if when is None:
                    bound = mask if isinstance(mask, IntV) else mask.bound if isinstance(mask, Opaque) else None
                    sub = Opaque("data", "a pointer chosen by loaded data", op.loc, bound)
                else:
                    sub = _and(mask, IntV(when, 1)) if mask is not None else IntV(when, 1)
                self.record(op, kind, cand, sub, ctx)
            return
        if isinstance(ptr, PtrSpan):
            self._record_span(op, kind, ptr, mask, ctx)
            return
        if isinstance(ptr, Opaque):
            site = self._site(op, kind, "?", ctx)
            if site.refusal is None:
                k = {"data": "indirect-address", "float": "out-of-vocabulary"}.get(ptr.why, ptr.why)
                site.refusal = Refusal(k, f"the address of this {kind} depends on {ptr.message or ptr.why}",
                                       op.loc)
            return
        if not isinstance(ptr, PtrV):
            raise Refusal("out-of-vocabulary", f"{kind} through a value the model does not follow", op.loc)
        site = self._site(op, kind, ptr.arg, ctx)
        exact = ctx.exact
        if isinstance(mask, Opaque):
            exact = False
            mask = mask.bound
        if not exact:
            site.exact = False
        lanes = ptr.shape()[1:]
        if isinstance(mask, IntV):
            lanes = np.broadcast_shapes(lanes, mask.a.shape[1:])
        shape = (self.P,) + tuple(lanes)
        pred = self.pred_like(ctx, len(shape) - 1)
        lane_mask = mask.a if isinstance(mask, IntV) else np.ones((1,) * len(shape), dtype=bool)
        info = self.m.args[ptr.arg]
        self._current_loc = op.loc
        if self._record_rows(site, ptr, lane_mask, pred, shape, info, ctx, exact):
            return
        m_small = pred & lane_mask
        boff = np.broadcast_to(ptr.boff, shape)
        m = np.broadcast_to(m_small, shape)
        elems = boff[m] // info.elem_size
        if elems.size:
            site.add_elements(elems)
            if site.tagged is not None and site.exact:
                starts, ends, progs = _tagged_runs(elems, np.nonzero(m)[0] + self.pid_base)
                site.add_tagged(starts, ends, progs)
            if site.oob is None and (elems.min() < info.lo or elems.max() >= info.hi):
                self._witness(site, boff, m, info, ctx, exact)
            if info.view is not None and site.view_out is None:
                self._check_view(site, site.starts[-1], site.ends[-1], boff, m, info, ctx, exact)
        self._spend(int(np.prod(shape, dtype=np.int64)), op)

    def _record_span(self, op: Op, kind: str, ptr: PtrSpan, mask: Value, ctx: _Ctx) -> None:
        """An address from a declared-range index: per lane the hull [lo, hi] of the elements it may
        touch, a proven bound; a lane that may leave the storage is a possible out-of-bounds (TL002)
        whose witness names the declared index value that takes it there."""
        site = self._site(op, kind, ptr.arg, ctx)
        site.exact = False
        site.tagged = None          # which elements each program touches is not known
        if isinstance(mask, Opaque):
            mask = mask.bound
        shape = (self.P,) + tuple(np.broadcast_shapes(ptr.lo.shape, ptr.hi.shape,
                                                      *([mask.a.shape] if isinstance(mask, IntV) else []))[1:])
        m = np.broadcast_to(self.pred_like(ctx, len(shape) - 1), shape)
        if isinstance(mask, IntV):
            m = m & np.broadcast_to(mask.a, shape)
        if ptr.undef is not None and (np.broadcast_to(ptr.undef, shape) & m).any():
            if site.refusal is None:
                site.refusal = Refusal("indirect-address", f"the address of this {kind} uses an index loaded by a "
                                       "masked-off lane without `other` (its value is undefined)", op.loc)
            return
        info = self.m.args[ptr.arg]
        lo = np.broadcast_to(ptr.lo, shape)[m] // info.elem_size
        hi = np.broadcast_to(ptr.hi, shape)[m] // info.elem_size
        self._spend(int(np.prod(shape, dtype=np.int64)), op)
        if not lo.size:
            return
        site.add_intervals(lo, hi + 1)
        if site.oob is None and (lo.min() < info.lo or hi.max() >= info.hi):
            full_lo, full_hi = np.broadcast_to(ptr.lo, shape) // info.elem_size, np.broadcast_to(ptr.hi, shape) // info.elem_size
            low = m & (full_lo < info.lo)
            bad = low | (m & (full_hi >= info.hi))
            where = np.unravel_index(int(np.argmax(bad.reshape(-1))), bad.shape)
            at_low = bool(low[where])
            element = int((full_lo if at_low else full_hi)[where])
            value = None
            if ptr.src is not None:
                value = int(np.broadcast_to(ptr.src[0 if at_low else 1], shape)[where])
            site.oob = {"pid": self.pid_tuple(int(where[0])), "lane": tuple(int(i) for i in where[1:]),
                        "iteration": ctx.iters or None, "element": element, "exact": False,
                        "value": value, "index": ptr.src[2] if ptr.src is not None else None}

    def _record_rows(self, site: SiteResult, ptr: PtrV, lane_mask: np.ndarray, pred: np.ndarray,
                     shape: tuple[int, ...], info: ArgInfo, ctx: _Ctx, exact: bool) -> bool:
        """Fast path: lines along a lane axis that are contiguous in memory and whose mask is a prefix
        become one interval each (row-major tiles along the last axis, transposed ones along another).
        Read off the pointer's terms and the minimal mask, without materializing the whole tile."""
        size = info.elem_size
        for axis in range(len(shape) - 1, 0, -1):
            n = shape[axis]
            if n < 2:
                continue
            steps = [self._axis_step(t, axis) for t in ptr.terms]
            if any(st is None for st in steps) or sum(steps) != size:
                continue
            # the program predicate is constant along lanes: the mask alone decides prefixes and counts
            first = (slice(None),) * axis + (0,)
            if lane_mask.shape[axis] > 1:
                line = np.moveaxis(lane_mask, axis, -1)
                if not (line[..., 1:] <= line[..., :-1]).all():
                    return False
                counts = line.sum(axis=-1)
            else:
                counts = lane_mask[first].astype(np.int64) * n
            counts = counts * pred[first]
            head = None
            for term in ptr.terms:
                h = term[first]                 # a view: no copy of the term
                head = h if head is None else head + h
            reduced = shape[:axis] + shape[axis + 1:]
            head = np.broadcast_to(head, reduced)
            counts = np.broadcast_to(counts, reduced)
            live = counts > 0
            # the work is one row head each; spent after recording, so what was found is kept
            if not live.any():
                self._spend(int(np.prod(reduced, dtype=np.int64)), None)
                return True
            starts = head[live]
            if (starts % size).any():
                return False
            starts = starts // size
            ends = starts + counts[live]
            site.add_intervals(starts, ends)
            if site.tagged is not None and site.exact:
                site.add_tagged(starts, ends, np.nonzero(live)[0] + self.pid_base)
            if site.oob is None and (starts.min() < info.lo or ends.max() > info.hi):
                self._witness(site, np.broadcast_to(ptr.boff, shape), np.broadcast_to(pred & lane_mask, shape),
                              info, ctx, exact)
            if info.view is not None and site.view_out is None:
                self._check_view(site, starts, ends, np.broadcast_to(ptr.boff, shape),
                                 np.broadcast_to(pred & lane_mask, shape), info, ctx, exact)
            self._spend(int(np.prod(reduced, dtype=np.int64)), None)
            return True
        return False

    def _spend(self, work: int, op: Op | None) -> None:
        """Count evaluation work against the budget (deterministic: counts, never seconds)."""
        self.work += work
        if self.work > self.m.budget:
            raise Refusal("launch-too-large",
                          f"enumerating this launch exceeds the budget of {self.m.budget:,} evaluations; "
                          "declare a smaller launch to check it", op.loc if op else self._current_loc)

    def _axis_step(self, term: np.ndarray, axis: int) -> int | None:
        """The uniform step of `term` along `axis` (0 when constant), None when it is not uniform."""
        if term.ndim <= axis or term.shape[axis] == 1 or term.strides[axis] == 0:
            return 0
        key = (id(term), axis)
        hit = self._steps.get(key)
        if hit is not None and hit[0] is term:
            return hit[1]
        d = np.diff(term, axis=axis)
        first = int(d.reshape(-1)[0])
        step = first if (d == first).all() else None
        if len(self._steps) > 512:
            self._steps.clear()
        self._steps[key] = (term, step)
        return step

    def _check_view(self, site: SiteResult, starts: np.ndarray, ends: np.ndarray, boff: np.ndarray,
                    m: np.ndarray, info: ArgInfo, ctx: _Ctx, exact: bool) -> None:
        """The first element this access touches inside the storage but outside the declared view."""
        element = views.first_outside(starts, ends, info.view, info.lo, info.hi)
        if element is None:
            return
        bad = m & (boff // info.elem_size == element)
        where = np.unravel_index(int(np.argmax(bad.reshape(-1))), bad.shape)
        site.view_out = {"pid": self.pid_tuple(int(where[0])), "lane": tuple(int(i) for i in where[1:]),
                         "iteration": ctx.iters or None, "element": element, "exact": exact}

    def _witness(self, site: SiteResult, boff: np.ndarray, m: np.ndarray, info: ArgInfo, ctx: _Ctx,
                 exact: bool) -> None:
        full = boff // info.elem_size
        bad = m & ((full < info.lo) | (full >= info.hi))
        flat = int(np.argmax(bad.reshape(-1)))
        where = np.unravel_index(flat, bad.shape)
        site.oob = {"pid": self.pid_tuple(int(where[0])), "lane": tuple(int(i) for i in where[1:]),
                    "iteration": ctx.iters or None, "element": int(full[where]), "exact": exact}

    def _site(self, op: Op, kind: str, arg: str, ctx: _Ctx) -> SiteResult:
        key = (id(op), ctx.stack, arg)
        site = self.sites.get(key)
        if site is None:
            site = self.sites[key] = SiteResult(kind, arg, op.loc, ctx.stack)
        return site


# ---------------------------------------------------------------- op handlers

_HANDLERS: dict[str, Callable[[AccessGraph, Op, dict, _Ctx], list[Value]]] = {}


def handles(*names: str):
    def deco(fn):
        for n in names:
            _HANDLERS[n] = fn
        return fn
    return deco


def _numel(t: Type) -> int:
    n = 1
    for s in t.shape:
        n *= s
    return n


def _and(a: Value, b: Value) -> Value:
    """Conjunction of masks; with an unknown side, the known side still bounds the result."""
    if isinstance(a, IntV) and isinstance(b, IntV):
        return IntV(a.a & b.a, 1)
    unknown = a if isinstance(a, Opaque) else b
    bounds = [v for v in (a, b) if isinstance(v, IntV)]
    bounds += [v.bound for v in (a, b) if isinstance(v, Opaque) and v.bound is not None]
    bound = None
    for v in bounds:
        bound = v if bound is None else IntV(bound.a & v.a, 1)
    return Opaque(unknown.why, unknown.message, unknown.loc, bound)


def _or(a: Value, b: Value) -> Value:
    unknown = a if isinstance(a, Opaque) else b
    ba = a if isinstance(a, IntV) else a.bound
    bb = b if isinstance(b, IntV) else b.bound
    bound = IntV(ba.a | bb.a, 1) if ba is not None and bb is not None else None
    return Opaque(unknown.why, unknown.message, unknown.loc, bound)


@handles("arith.constant")
def _constant(g: AccessGraph, op: Op, env, ctx) -> list[Value]:
    const = op.int_constant
    if const is None:
        return [Opaque("float", "a floating-point constant", op.loc)]
    if const.elements is not None:
        vals = np.array(const.elements, dtype=np.int64).reshape((1,) + const.shape)
    else:
        vals = np.full((1,) + const.shape, const.value, dtype=np.int64)
    if const.bits == 1:
        return [IntV(vals.astype(bool), 1)]
    return [IntV(_wrap(vals, const.bits), const.bits)]


@handles("tt.get_program_id")
def _program_id(g: AccessGraph, op: Op, env, ctx) -> list[Value]:
    return [IntV(g.pid(op.program_axis).copy(), 32)]


@handles("tt.get_num_programs")
def _num_programs(g: AccessGraph, op: Op, env, ctx) -> list[Value]:
    return [IntV(np.full((1,), g.m.grid[op.program_axis], dtype=np.int64), 32)]


@handles("tt.make_range")
def _make_range(g: AccessGraph, op: Op, env, ctx) -> list[Value]:
    start, end = op.range_bounds
    return [IntV(np.arange(start, end, dtype=np.int64)[None], 32)]


def _binary(fn: Callable[[np.ndarray, np.ndarray, int], np.ndarray], checked: bool = False):
    def handler(g: AccessGraph, op: Op, env, ctx) -> list[Value]:
        a, b = (g.get(env, o) for o in op.operands[:2])
        ty = op.result_types[0]
        if isinstance(a, PtrV) or isinstance(b, PtrV):
            return [Opaque("out-of-vocabulary", f"{op.name} on pointers", op.loc)]
        if (isinstance(a, RangeV) or isinstance(b, RangeV)) and all(isinstance(v, (IntV, RangeV)) for v in (a, b)):
            return [_range_binary(g, op, ctx, a, b, ty.bits or max(a.bits, b.bits), checked)]
        if not isinstance(a, IntV) or not isinstance(b, IntV):
            if ty.bits == 1 and op.name in ("arith.andi", "arith.ori") and _is_mask(a) and _is_mask(b):
                return [_and(a, b) if op.name == "arith.andi" else _or(a, b)]
            return [_opaque_of(a, b, op)]
        bits = ty.bits or max(a.bits, b.bits)
        with np.errstate(all="ignore"):
            exact = fn(a.a.astype(np.int64) if a.bits != 1 else a.a, b.a.astype(np.int64) if b.bits != 1 else b.a,
                       bits)
        if bits == 1:
            return [IntV(exact.astype(bool), 1)]
        if checked:
            return [IntV(g.check_width(op, ctx, exact, bits), bits)]
        return [IntV(_wrap(exact, bits), bits)]
    return handler


def _range_binary(g: AccessGraph, op: Op, ctx: _Ctx, a: Value, b: Value, bits: int, checked: bool) -> Value:
    """Interval arithmetic on a declared-range value; a bound that may wrap is no bound."""
    with np.errstate(all="ignore"):
        r = ranges.binary(op.name, a, b, bits) if bits > 1 else None
    if r is None:
        return Opaque("data", f"{op.name} of a loaded index", op.loc)
    if checked:      # a declared value at the end of its range overflows: a real TL003
        g.check_width(op, ctx, r.lo, bits)
        g.check_width(op, ctx, r.hi, bits)
    if not ranges.fits(r, bits):
        return Opaque("data", f"{op.name} of a loaded index may wrap", op.loc)
    return r


def _is_mask(v: Value) -> bool:
    # an unknown mask, whatever made it unknown, only means "may be true": a sound over-approximation
    return (isinstance(v, IntV) and v.bits == 1) or isinstance(v, Opaque)


def _opaque_of(*values: Value) -> Opaque:
    for v in values:
        if isinstance(v, Opaque) and v.why == "data":
            return v
        if isinstance(v, (RangeV, PtrSpan)):
            return Opaque("data", "a value computed from a loaded index")
    for v in values:
        if isinstance(v, Opaque):
            return v
    return Opaque("out-of-vocabulary", "an unmodelled operand")


def _tdiv(a, b, bits):
    safe = np.where(b == 0, 1, b)
    q = np.abs(a) // np.abs(safe)
    return np.where(b == 0, 0, np.where((a < 0) != (safe < 0), -q, q))


def _trem(a, b, bits):
    safe = np.where(b == 0, 1, b)
    return np.where(b == 0, 0, a - _tdiv(a, safe, bits) * safe)


def _udiv(a, b, bits):
    ua, ub = _unsigned(a, bits), _unsigned(b, bits)
    one = ub.dtype.type(1)
    return np.where(ub == 0, ub.dtype.type(0), ua // np.where(ub == 0, one, ub)).astype(np.int64)


def _urem(a, b, bits):
    ua, ub = _unsigned(a, bits), _unsigned(b, bits)
    one = ub.dtype.type(1)
    return np.where(ub == 0, ub.dtype.type(0), ua % np.where(ub == 0, one, ub)).astype(np.int64)


def _shrui(a, b, bits):
    shift = np.clip(b, 0, 63)
    if bits >= 64:
        return (a.astype(np.uint64) >> shift.astype(np.uint64)).astype(np.int64)
    return _unsigned(a, bits) >> shift


def _floordiv(a, b, bits):
    safe = np.where(b == 0, 1, b)
    return np.where(b == 0, 0, a // safe)


def _ceildiv(a, b, bits):
    safe = np.where(b == 0, 1, b)
    return np.where(b == 0, 0, -((-a) // safe))


_handlers_binary = {
    "arith.addi": (lambda a, b, w: a + b, True),
    "arith.subi": (lambda a, b, w: a - b, True),
    "arith.muli": (lambda a, b, w: a * b, True),
    "arith.shli": (lambda a, b, w: np.where((b >= 0) & (b < w), a << np.clip(b, 0, 63), 0), True),
    "arith.shrsi": (lambda a, b, w: a >> np.clip(b, 0, 63), False),
    "arith.shrui": (_shrui, False),
    "arith.divsi": (_tdiv, False),
    "arith.remsi": (_trem, False),
    "arith.divui": (_udiv, False),
    "arith.remui": (_urem, False),
    "arith.floordivsi": (_floordiv, False),
    "arith.ceildivsi": (_ceildiv, False),
    "arith.minsi": (lambda a, b, w: np.minimum(a, b), False),
    "arith.maxsi": (lambda a, b, w: np.maximum(a, b), False),
    "arith.minui": (lambda a, b, w: np.where(_unsigned(a, w) <= _unsigned(b, w), a, b), False),
    "arith.maxui": (lambda a, b, w: np.where(_unsigned(a, w) >= _unsigned(b, w), a, b), False),
    "arith.andi": (lambda a, b, w: a & b, False),
    "arith.ori": (lambda a, b, w: a | b, False),
    "arith.xori": (lambda a, b, w: a ^ b, False),
}
for _name, (_fn, _checked) in _handlers_binary.items():
    _HANDLERS[_name] = _binary(_fn, _checked)

_CMP = {
    "eq": np.equal, "ne": np.not_equal, "slt": np.less, "sle": np.less_equal, "sgt": np.greater,
    "sge": np.greater_equal, "ult": np.less, "ule": np.less_equal, "ugt": np.greater, "uge": np.greater_equal,
}


@handles("arith.cmpi")
def _cmpi(g: AccessGraph, op: Op, env, ctx) -> list[Value]:
    pred = op.predicate
    a, b = (g.get(env, o) for o in op.operands[:2])
    if isinstance(a, PtrV) and isinstance(b, PtrV) and a.arg == b.arg:
        return [IntV(_CMP[pred](a.boff, b.boff), 1)]
    if (isinstance(a, RangeV) or isinstance(b, RangeV)) and all(isinstance(v, (IntV, RangeV)) for v in (a, b)):
        # decided where the declared range decides it (`y == ignore_index`, `idx < n`)
        always, never = ranges.compare(pred, a, b)
        if (always | never).all():
            return [IntV(always, 1)]
        return [Opaque("data", "a comparison of a loaded index", op.loc, IntV(~never, 1))]
    if not isinstance(a, IntV) or not isinstance(b, IntV):
        return [_opaque_of(a, b, op)]
    x, y = a.a, b.a
    if pred.startswith("u"):
        x, y = _unsigned(x, a.bits), _unsigned(y, b.bits)
    return [IntV(_CMP[pred](x, y), 1)]


@handles("arith.select")
def _select(g: AccessGraph, op: Op, env, ctx) -> list[Value]:
    c, a, b = (g.get(env, o) for o in op.operands[:3])
    if isinstance(c, IntV) and isinstance(a, IntV) and isinstance(b, IntV):
        return [IntV(np.where(c.a, a.a, b.a), a.bits)]
    if isinstance(c, IntV) and isinstance(a, (IntV, RangeV)) and isinstance(b, (IntV, RangeV)):
        return [ranges.choose(c.a, a, b, a.bits)]
    if isinstance(c, IntV) and isinstance(a, PtrV) and isinstance(b, PtrV) and a.arg == b.arg:
        return [PtrV(a.arg, np.where(c.a, a.boff, b.boff), a.pointee)]
    if isinstance(a, (PtrV, PtrChoice)) and isinstance(b, (PtrV, PtrChoice)):
        if isinstance(c, IntV):
            return [_choose(c.a, a, b)]
        if isinstance(c, Opaque) and c.why == "data":
            return [_choose(None, a, b)]
    if isinstance(c, Opaque) and c.why == "data":
        return [Opaque("data", "a select on loaded data", op.loc)]
    return [_opaque_of(c, a, b)]


def _cast(kind: str):
    def handler(g: AccessGraph, op: Op, env, ctx) -> list[Value]:
        v = g.get(env, op.operands[0])
        ty = op.result_types[0]
        if isinstance(v, RangeV):
            if not ty.is_int or ty.bits < 2 or (kind == "zext" and (v.lo < 0).any()) or not ranges.fits(v, ty.bits):
                return [Opaque("data", f"{op.name} of a loaded index", op.loc)]
            return [RangeV(v.lo, v.hi, ty.bits, v.undef, v.src)]
        if not isinstance(v, IntV):
            return [v if isinstance(v, Opaque) else Opaque("out-of-vocabulary", f"{op.name} of a pointer", op.loc)]
        if not ty.is_int:
            return [Opaque("float", f"{op.name} to {ty.elem}", op.loc)]
        a = v.a.astype(np.int64)
        if kind == "zext":
            a = _unsigned(a, v.bits) if v.bits > 1 else a
        elif v.bits == 1:
            a = -a  # sign-extending an i1 true gives all ones
        if ty.bits == 1:
            return [IntV((a & 1).astype(bool), 1)]
        return [IntV(_wrap(a, ty.bits), ty.bits)]
    return handler


for _name in ("arith.extsi", "arith.trunci", "arith.index_cast"):
    _HANDLERS[_name] = _cast("sext")
for _name in ("arith.extui", "arith.index_castui"):
    _HANDLERS[_name] = _cast("zext")


@handles("arith.bitcast", "tt.bitcast")
def _bitcast(g: AccessGraph, op: Op, env, ctx) -> list[Value]:
    v = g.get(env, op.operands[0])
    ty = op.result_types[0]
    if isinstance(v, (PtrV, PtrChoice, PtrSpan)) and ty.is_ptr:
        return [v.map(lambda t: t, elem_bytes(ty.pointee))]
    if isinstance(v, IntV) and ty.is_int and ty.bits == v.bits:
        return [v]
    if isinstance(v, Opaque):
        return [v]
    return [Opaque("float", f"{op.name} to {ty.elem}", op.loc)]




def _shape_op(fn: Callable[[np.ndarray, Op, Type], np.ndarray]):
    def handler(g: AccessGraph, op: Op, env, ctx) -> list[Value]:
        v = g.get(env, op.operands[0])
        ty = op.result_types[0]
        if isinstance(v, IntV):
            return [IntV(fn(v.a, op, ty), v.bits)]
        if isinstance(v, (PtrV, PtrChoice, PtrSpan, RangeV)):
            return [v.map(lambda t: fn(t, op, ty))]
        if isinstance(v, Opaque) and v.bound is not None:
            return [Opaque(v.why, v.message, v.loc, IntV(fn(v.bound.a, op, ty), 1))]
        return [v if isinstance(v, Opaque) else Opaque("out-of-vocabulary", f"{op.name} of this value", op.loc)]
    return handler


def _splat(a: np.ndarray, op: Op, ty: Type) -> np.ndarray:
    return np.broadcast_to(a.reshape(a.shape[:1] + (1,) * len(ty.shape)), a.shape[:1] + ty.shape)


def _broadcast(a: np.ndarray, op: Op, ty: Type) -> np.ndarray:
    return np.broadcast_to(a, a.shape[:1] + ty.shape)


def _expand_dims(a: np.ndarray, op: Op, ty: Type) -> np.ndarray:
    return np.expand_dims(a, op.axis + 1)


def _reshape(a: np.ndarray, op: Op, ty: Type) -> np.ndarray:
    return np.ascontiguousarray(a).reshape(a.shape[:1] + ty.shape)


def _trans(a: np.ndarray, op: Op, ty: Type) -> np.ndarray:
    order = list(op.order) if op.order is not None else list(range(a.ndim - 1))[::-1]
    return np.transpose(a, [0] + [o + 1 for o in order])


_HANDLERS["tt.splat"] = _shape_op(_splat)
_HANDLERS["tt.broadcast"] = _shape_op(_broadcast)
_HANDLERS["tt.expand_dims"] = _shape_op(_expand_dims)
_HANDLERS["tt.reshape"] = _shape_op(_reshape)
_HANDLERS["tt.trans"] = _shape_op(_trans)
_HANDLERS["tt.assume"] = lambda g, op, env, ctx: []
_HANDLERS["tt.assert"] = lambda g, op, env, ctx: []
_HANDLERS["tt.print"] = lambda g, op, env, ctx: []
_HANDLERS["gpu.barrier"] = lambda g, op, env, ctx: []
_HANDLERS["ttg.barrier"] = lambda g, op, env, ctx: []
_HANDLERS["ub.poison"] = lambda g, op, env, ctx: [Opaque("float", "poison", op.loc)] * len(op.results)


@handles("tt.join")
def _join(g: AccessGraph, op: Op, env, ctx) -> list[Value]:
    a, b = (g.get(env, o) for o in op.operands[:2])
    if isinstance(a, IntV) and isinstance(b, IntV):
        ty = op.result_types[0]
        full = (g.P if a.a.shape[0] == g.P or b.a.shape[0] == g.P else 1,) + ty.shape[:-1]
        return [IntV(np.stack([np.broadcast_to(a.a, full), np.broadcast_to(b.a, full)], axis=-1), a.bits)]
    if isinstance(a, PtrV) and isinstance(b, PtrV) and a.arg == b.arg:
        ty = op.result_types[0]
        full = (g.P if a.boff.shape[0] == g.P or b.boff.shape[0] == g.P else 1,) + ty.shape[:-1]
        return [PtrV(a.arg, np.stack([np.broadcast_to(a.boff, full), np.broadcast_to(b.boff, full)], axis=-1),
                     a.pointee)]
    return [_opaque_of(a, b)]


@handles("tt.split")
def _split(g: AccessGraph, op: Op, env, ctx) -> list[Value]:
    v = g.get(env, op.operands[0])
    if isinstance(v, IntV):
        return [IntV(v.a[..., 0], v.bits), IntV(v.a[..., 1], v.bits)]
    if isinstance(v, PtrV):
        return [PtrV(v.arg, v.boff[..., 0], v.pointee), PtrV(v.arg, v.boff[..., 1], v.pointee)]
    return [v, v]


@handles("tt.addptr")
def _addptr(g: AccessGraph, op: Op, env, ctx) -> list[Value]:
    p, off = (g.get(env, o) for o in op.operands[:2])
    if isinstance(p, Opaque):
        return [p]
    if isinstance(off, RangeV) and isinstance(p, (PtrV, PtrSpan)):
        # an address from a declared-range index: per lane, the hull of what it may touch
        lo, hi = off.lo * p.pointee, off.hi * p.pointee
        if isinstance(p, PtrV):
            return [PtrSpan(p.arg, p.boff + lo, p.boff + hi, p.pointee, off.undef, off.src)]
        return [p.plus(lo, hi, off.undef, keep_src=False)]
    if isinstance(p, PtrSpan) and isinstance(off, IntV):
        shift = off.a.astype(np.int64, copy=False) * p.pointee
        return [p.plus(shift, shift)]
    if not isinstance(p, (PtrV, PtrChoice)):
        if isinstance(p, PtrSpan):
            return [Opaque("data", "an address computed from loaded data", op.loc)]
        return [Opaque("out-of-vocabulary", "pointer arithmetic on a value the model does not follow", op.loc)]
    if isinstance(off, Opaque):
        why = "data" if off.why == "data" else off.why
        return [Opaque(why, "an offset computed from loaded data" if why == "data" else off.message, op.loc)]
    if not isinstance(off, IntV):
        return [Opaque("out-of-vocabulary", "a pointer offset the model does not follow", op.loc)]
    if isinstance(p, PtrChoice):
        return [PtrChoice(tuple((c.plus(off.a.astype(np.int64, copy=False) * c.pointee), w) for c, w in p.options))]
    return [p.plus(off.a.astype(np.int64, copy=False) * p.pointee)]


@handles("tt.int_to_ptr", "tt.ptr_to_int")
def _int_ptr(g: AccessGraph, op: Op, env, ctx) -> list[Value]:
    return [Opaque("pointer-provenance", f"{op.name} loses the pointer's provenance", op.loc)]


@handles("tt.load")
def _load(g: AccessGraph, op: Op, env, ctx) -> list[Value]:
    ptr = g.get(env, op.operands[0])
    mask = g.get(env, op.operands[1]) if len(op.operands) > 1 else None
    g.record(op, "load", ptr, mask, ctx)
    ty = op.result_types[0] if op.result_types else None
    info = g.m.args.get(getattr(ptr, "arg", ""))
    if info is not None and info.values and ty is not None and ty.is_int and ty.bits > 1 \
            and isinstance(ptr, (PtrV, PtrSpan)) and (mask is None or isinstance(mask, IntV)):
        other = g.get(env, op.operands[2]) if len(op.operands) > 2 else None
        if other is None or isinstance(other, IntV):
            shape = np.broadcast_shapes(ptr.shape() if isinstance(ptr, PtrV) else ptr.lo.shape,
                                        *([mask.a.shape] if mask is not None else []))
            return [ranges.loaded(info.values[0], info.values[1], shape, ty.bits, info.name,
                                  None if mask is None else mask.a, None if other is None else other.a)]
    return [Opaque("data", "loaded data", op.loc)]


@handles("tt.store")
def _store(g: AccessGraph, op: Op, env, ctx) -> list[Value]:
    ptr = g.get(env, op.operands[0])
    mask = g.get(env, op.operands[2]) if len(op.operands) > 2 else None
    g.record(op, "store", ptr, mask, ctx)
    return []


@handles("tt.atomic_rmw")
def _atomic_rmw(g: AccessGraph, op: Op, env, ctx) -> list[Value]:
    ptr = g.get(env, op.operands[0])
    mask = g.get(env, op.operands[2]) if len(op.operands) > 2 else None
    g.record(op, "atomic", ptr, mask, ctx)
    return [Opaque("data", "an atomic's old value", op.loc)]


@handles("tt.atomic_cas")
def _atomic_cas(g: AccessGraph, op: Op, env, ctx) -> list[Value]:
    g.record(op, "atomic", g.get(env, op.operands[0]), None, ctx)
    return [Opaque("data", "an atomic's old value", op.loc)]


# -- block pointers (Triton ≤ 3.8)


def _operand_groups(text: str) -> list[list[str]]:
    return [re.findall(r"%[\w$.\-]+(?:#\d+)?", grp) for grp in re.findall(r"\[([^\]]*)\]", text)]


@handles("tt.make_block_ptr", "tt.make_tensor_ptr")
def _make_block_ptr(g: AccessGraph, op: Op, env, ctx) -> list[Value]:
    base = g.get(env, op.operands[0])
    if not isinstance(base, PtrV):
        return [base if isinstance(base, Opaque) else Opaque("out-of-vocabulary", "block pointer base", op.loc)]
    shape_n, stride_n, off_n = _operand_groups(split_top(op.text, " : ")[0])[:3]
    vals = []
    for group in (shape_n, stride_n, off_n):
        row = []
        for n in group:
            v = g.get(env, n)
            if not isinstance(v, IntV):
                return [Opaque("data" if isinstance(v, Opaque) and v.why == "data" else "out-of-vocabulary",
                               "a block pointer field the model does not compute", op.loc)]
            row.append(v.a.astype(np.int64))
        vals.append(row)
    block = parse_type(op.text.rsplit(" : ", 1)[-1].strip().lstrip("<").rstrip(">")
                       if "tensor<" in op.text else "tensor<1xi8>").shape
    return [BlockPtrV(base, vals[0], vals[1], vals[2], block)]


@handles("tt.advance")
def _advance(g: AccessGraph, op: Op, env, ctx) -> list[Value]:
    bp = g.get(env, op.operands[0])
    if not isinstance(bp, BlockPtrV):
        return [bp if isinstance(bp, Opaque) else Opaque("out-of-vocabulary", "advance of a non block pointer",
                                                         op.loc)]
    deltas = []
    for n in op.operands[1:]:
        v = g.get(env, n)
        if not isinstance(v, IntV):
            return [Opaque("data" if isinstance(v, Opaque) and v.why == "data" else "out-of-vocabulary",
                           "a block pointer advance the model does not compute", op.loc)]
        deltas.append(v.a.astype(np.int64))
    return [BlockPtrV(bp.base, bp.shape, bp.strides, [o + d for o, d in zip(bp.offsets, deltas)], bp.block)]


def _block_addresses(bp: BlockPtrV, op: Op) -> tuple[PtrV, IntV]:
    """Byte offsets and the boundary-check mask of a block pointer access."""
    m = re.search(r"boundaryCheck = array<i32:\s*([\d,\s]*)>", op.text)
    checked = {int(x) for x in m.group(1).split(",") if x.strip()} if m else set()
    nd = len(bp.block)
    boff: np.ndarray = np.zeros((1,) * (nd + 1), dtype=np.int64) + bp.base.boff.reshape((-1,) + (1,) * nd)
    mask = np.ones((1,) * (nd + 1), dtype=bool)
    for d in range(nd):
        shape = [1] * (nd + 1)
        shape[d + 1] = bp.block[d]
        idx = np.arange(bp.block[d], dtype=np.int64).reshape(shape)
        pos = bp.offsets[d].reshape((-1,) + (1,) * nd) + idx
        boff = boff + pos * bp.strides[d].reshape((-1,) + (1,) * nd) * bp.base.pointee
        if d in checked:
            mask = mask & (pos >= 0) & (pos < bp.shape[d].reshape((-1,) + (1,) * nd))
    return PtrV(bp.base.arg, boff, bp.base.pointee), IntV(mask, 1)


# -- control flow


def _blend(cond: np.ndarray, new: Value, old: Value, op: Op) -> Value:
    """Per-program select between a loop's (or branch's) new and old value."""
    if cond.all() and type(new) is type(old) and not isinstance(new, Opaque):
        if not isinstance(new, PtrV) or new.arg == old.arg:
            return new
    if isinstance(new, IntV) and isinstance(old, IntV):
        c = cond.reshape(cond.shape + (1,) * (max(new.a.ndim, old.a.ndim) - 1))
        return IntV(np.where(c, new.a, old.a), new.bits)
    if isinstance(new, (IntV, RangeV)) and isinstance(old, (IntV, RangeV)):
        nd = max(ranges.bounds(new)[0].ndim, ranges.bounds(old)[0].ndim)
        return ranges.choose(cond.reshape(cond.shape + (1,) * (nd - 1)), new, old, new.bits)
    if isinstance(new, (PtrV, PtrChoice)) and isinstance(old, (PtrV, PtrChoice)) and not (
            isinstance(new, PtrV) and isinstance(old, PtrV) and new.arg == old.arg):
        return _choose(cond, new, old)
    if isinstance(new, PtrV) and isinstance(old, PtrV):
        c = cond.reshape(cond.shape + (1,) * (max(new.boff.ndim, old.boff.ndim) - 1))
        return PtrV(new.arg, np.where(c, new.boff, old.boff), new.pointee)
    if isinstance(new, BlockPtrV) and isinstance(old, BlockPtrV):
        fields = []
        for a_list, b_list in ((new.shape, old.shape), (new.strides, old.strides), (new.offsets, old.offsets)):
            fields.append([np.where(cond, a, b) for a, b in zip(a_list, b_list)])
        base = _blend(cond, new.base, old.base, op)
        if not isinstance(base, PtrV):
            return base
        return BlockPtrV(base, fields[0], fields[1], fields[2], new.block)
    if isinstance(new, Opaque):
        return new
    if isinstance(old, Opaque):
        return old
    return Opaque("out-of-vocabulary", "a loop-carried value of changing kind", op.loc)


def _choose(cond: np.ndarray | None, a: "PtrV | PtrChoice", b: "PtrV | PtrChoice") -> PtrChoice:
    """`cond ? a : b` between pointers of different arguments: both stay candidates, each with the
    programs/lanes that pick it (`cond` is (P or 1, *lanes) or (P,); None: loaded data decides)."""
    out = []
    for side, pick in ((a, True), (b, False)):
        for cand, when in (side.options if isinstance(side, PtrChoice) else ((side, None),)):
            if cond is None or (when is None and isinstance(side, PtrChoice)):
                out.append((cand, None))       # chosen by loaded data: it may be any lane's
                continue
            ndim = len(cand.shape())
            c = cond.astype(bool).reshape(cond.shape + (1,) * (ndim - cond.ndim))
            c = c if pick else ~c
            out.append((cand, c if when is None else when & c))
    return PtrChoice(tuple(out))


@handles("scf.for")
def _for(g: AccessGraph, op: Op, env, ctx) -> list[Value]:
    lb, ub, step = (g.need_int(g.get(env, o), op, "a loop bound") for o in op.operands[:3])
    inits = [g.get(env, o) for o in op.operands[3:]]
    iv, carried = op.for_header.iv, op.for_header.iter_args
    P = g.P
    lbv = np.broadcast_to(lb.a, (P,)).astype(np.int64)
    ubv = np.broadcast_to(ub.a, (P,)).astype(np.int64)
    stv = np.broadcast_to(step.a, (P,)).astype(np.int64)
    if (stv[ctx.pred] <= 0).any():
        raise Refusal("control-flow", "a loop with a non-positive step", op.loc)
    trips = np.where(ctx.pred, np.maximum(0, -((lbv - ubv) // stv)), 0)
    values = list(inits)
    body = op.regions[0].blocks[0]
    if not trips.size or int(trips.max()) == 0:
        g.mark_unreachable(body, ctx)       # no program enters the loop
    for t in range(int(trips.max()) if trips.size else 0):
        active = trips > t
        inner = dict(env)
        uniform = lb.a.shape[0] == 1 and step.a.shape[0] == 1   # the same iv in every program
        inner[iv] = IntV(_wrap((lb.a + t * step.a) if uniform else (lbv + t * stv), lb.bits), lb.bits)
        for name, v in zip(carried, values):
            inner[name] = v
        yielded = g.eval_block(body, inner, _Ctx(active, ctx.iters + (t,), ctx.exact, ctx.stack))
        values = [_blend(active, new, old, op) for new, old in zip(yielded, values)]
    return values


@handles("scf.if")
def _if(g: AccessGraph, op: Op, env, ctx) -> list[Value]:
    cond = g.get(env, op.operands[0])
    then_b = op.regions[0].blocks[0]
    else_b = op.regions[1].blocks[0] if len(op.regions) > 1 else None
    if isinstance(cond, IntV):
        c = np.broadcast_to(cond.a.reshape(cond.a.shape[:1]), (g.P,)).astype(bool)
        then_v = g.eval_block(then_b, dict(env), _Ctx(ctx.pred & c, ctx.iters, ctx.exact, ctx.stack))
        else_v = (g.eval_block(else_b, dict(env), _Ctx(ctx.pred & ~c, ctx.iters, ctx.exact, ctx.stack))
                  if else_b else [])
        return [_blend(c, t, e, op) for t, e in zip(then_v, else_v)]
    if isinstance(cond, Opaque):
        # a condition the model does not compute (loaded data, a float argument): both branches may
        # run, so their accesses become over-approximations
        then_v = g.eval_block(then_b, dict(env), _Ctx(ctx.pred, ctx.iters, False, ctx.stack))
        else_v = g.eval_block(else_b, dict(env), _Ctx(ctx.pred, ctx.iters, False, ctx.stack)) if else_b else []
        return [t if isinstance(t, Opaque) else Opaque("data", "a value chosen by loaded data", op.loc)
                for t, _ in zip(then_v, else_v)]
    raise Refusal("control-flow" if not isinstance(cond, Opaque) or cond.why == "float" else cond.why,
                  "a branch condition the model does not compute", op.loc)


WHILE_LIMIT = 1 << 16   # iterations of one while loop before it is refused as non-terminating


@handles("scf.while")
def _while(g: AccessGraph, op: Op, env, ctx) -> list[Value]:
    """Iterate a while loop per program while its condition is computable (grid-stride loops);
    when the condition depends on loaded data (spin locks, searches), fall back to `_while_opaque`."""
    before = op.regions[0].blocks[0]
    after = op.regions[1].blocks[0]
    names = [a.split("=")[0].strip() for a in re.findall(r"(%[\w$.\-]+\s*=\s*%[\w$.\-#]+)",
                                                          op.text.split(":")[0])]
    carried = [g.get(env, o) for o in op.operands]
    active = ctx.pred.copy()
    final: list[Value] | None = None
    for t in range(WHILE_LIMIT):
        inner = dict(env)
        inner.update(zip(names, carried))
        out = g.eval_block(before, inner, _Ctx(active, ctx.iters + (t,), ctx.exact, ctx.stack))
        cond, forwarded = out[0], out[1:]
        if not isinstance(cond, IntV):
            if t == 0:
                return _while_opaque(g, op, env, ctx)
            raise Refusal("data-dependent-bound", "a while condition that depends on loaded data", op.loc)
        c = np.broadcast_to(cond.a.reshape(cond.a.shape[:1]), (g.P,)).astype(bool) & active
        leaving = active & ~c
        final = forwarded if final is None else [_blend(leaving, f, old, op) for f, old in zip(forwarded, final)]
        if not c.any():
            if t == 0:
                g.mark_unreachable(after, ctx)   # the do-region never runs
            return final
        inner = dict(env)
        inner.update(zip(after.args, forwarded))
        yielded = g.eval_block(after, inner, _Ctx(c, ctx.iters + (t,), ctx.exact, ctx.stack))
        carried = [_blend(c, new, old, op) for new, old in zip(yielded, carried)]
        active = c
    raise Refusal("control-flow", f"a while loop still running after {WHILE_LIMIT} iterations", op.loc)


def _while_opaque(g: AccessGraph, op: Op, env, ctx) -> list[Value]:
    """A data-dependent while loop runs its before-region at least once: accesses whose addresses do
    not depend on the carried values are recorded (the do-region's as an over-approximation, since it
    may run zero times); accesses that do depend on them are refused."""
    carried = Opaque("control-flow", "a value carried by a while loop", op.loc)
    before = op.regions[0].blocks[0] if op.regions else None
    after = op.regions[1].blocks[0] if len(op.regions) > 1 else None
    names = [a.split("=")[0].strip() for a in re.findall(r"(%[\w$.\-]+\s*=\s*%[\w$.\-#]+)", op.text)]
    for block, exact in ((before, ctx.exact), (after, False)):
        if block is None:
            continue
        inner = dict(env)
        for name in names + block.args:
            inner[name] = carried
        g.eval_block(block, inner, _Ctx(ctx.pred, ctx.iters, exact, ctx.stack))
    return [carried] * len(op.results)


@handles("tt.call")
def _call(g: AccessGraph, op: Op, env, ctx) -> list[Value]:
    func = g.m.module.funcs.get(op.callee)
    if func is None:
        raise Refusal("call", f"call of @{op.callee}, which the module does not define", op.loc)
    if len(ctx.stack) > 32:
        raise Refusal("call", "calls nested more than 32 deep", op.loc)
    inner = {name: g.get(env, o) for (name, _), o in zip(func.args, op.operands)}
    return g.eval_body(func.body, inner, _Ctx(ctx.pred, ctx.iters, ctx.exact, ctx.stack + (op.loc,)))


@handles("tt.scan")
def _scan(g: AccessGraph, op: Op, env, ctx) -> list[Value]:
    vals = [g.get(env, o) for o in op.operands]
    return [_opaque_of(*vals) if any(isinstance(v, Opaque) for v in vals)
            else Opaque("out-of-vocabulary", "a scan is not modelled", op.loc)] * len(op.results)


@handles("tt.reduce")
def _reduce(g: AccessGraph, op: Op, env, ctx) -> list[Value]:
    vals = [g.get(env, o) for o in op.operands]
    body = op.regions[0].blocks[0].ops if op.regions else []
    combine = [o.name for o in body if o.name != "tt.reduce.return"]
    axis_m = re.search(r"axis = (\d+)", op.text + " " + op.tail)
    fns = {"arith.addi": np.sum, "arith.maxsi": np.max, "arith.minsi": np.min, "arith.ori": np.any,
           "arith.andi": np.all}
    if (len(vals) == 1 and isinstance(vals[0], IntV) and len(combine) == 1 and combine[0] in fns and axis_m):
        v = vals[0]
        full = np.broadcast_to(v.a, (g.P,) + v.a.shape[1:])
        out = fns[combine[0]](full, axis=int(axis_m.group(1)) + 1)
        return [IntV(_wrap(out.astype(np.int64), v.bits) if v.bits > 1 else out.astype(bool), v.bits)]
    return [_opaque_of(*vals) if any(isinstance(v, Opaque) for v in vals)
            else Opaque("out-of-vocabulary", "this reduction is not modelled", op.loc)] * len(op.results)


# ---------------------------------------------------------------- address slice


def _address_slice(module: Module) -> set[int]:
    """ids of integer ops whose results flow into a pointer offset or block-pointer field."""
    defs: dict[tuple[str, str], Op] = {}
    carried: dict[tuple[str, str], list[str]] = {}
    roots: list[tuple[str, str]] = []
    for fname, func in module.funcs.items():
        for block in func.body.blocks:
            for op in block.ops:
                for succ in op.successors:      # a value passed to a block argument flows on
                    target = func.body.block(succ.label)
                    for arg, src in zip(target.args if target else [], succ.operands):
                        carried.setdefault((fname, arg), []).append(src)
        for op in accounting.region_ops(func.body):
            for r in op.results:
                defs[(fname, r)] = op
            if op.name == "tt.addptr":
                roots.append((fname, op.operands[1]))
            elif op.name in ("tt.make_block_ptr", "tt.make_tensor_ptr", "tt.advance"):
                roots.extend((fname, o) for o in op.operands[1:])
            elif op.name == "tt.call":
                roots.extend((fname, o) for o in op.operands)
            if op.name == "scf.for":
                iv = op.for_header.iv
                names = op.for_header.iter_args
                yields = op.regions[0].blocks[0].ops[-1].operands if op.regions[0].blocks[0].ops else []
                for i, n in enumerate(names):
                    srcs = [op.operands[3 + i]] + ([yields[i]] if i < len(yields) else [])
                    carried[(fname, n)] = srcs
                    if i < len(op.results):
                        carried[(fname, op.results[i])] = srcs
                if iv:
                    carried[(fname, iv)] = op.operands[:3]
    seen: set[tuple[str, str]] = set()
    ops: set[int] = set()
    stack = list(roots)
    while stack:
        key = stack.pop()
        if key in seen:
            continue
        seen.add(key)
        fname, name = key
        for src in carried.get(key, []):
            stack.append((fname, src))
        op = defs.get(key)
        if op is None:
            continue
        ops.add(id(op))
        for o in op.operands:
            stack.append((fname, o))
    return ops
