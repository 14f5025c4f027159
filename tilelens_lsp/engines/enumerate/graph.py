"""AccessGraph: evaluates the address, mask and control slice of a TTIR module for a whole launch.

Every integer value is a numpy array over (programs, *lanes) with its bit width, so wraparound and
width obligations are exact; every pointer keeps its provenance (the kernel parameter it derives
from). Programs are evaluated in batches and loops iteration by iteration with a per-program
`active` predicate, so pid-dependent trip counts and program-uniform branches are followed exactly.
Loaded data is opaque: an address built from it is refused (`indirect-address`), a mask built from it
turns the footprint into a proven over-approximation (`exact: false`). The ops themselves are
evaluated by the handlers of `arith`, `memory` and `control`; accesses are recorded by `recording`.
"""

from __future__ import annotations

import itertools
import re
from typing import Any

import numpy as np

from tilelens_lsp.engines import accounting
from tilelens_lsp.engines.enumerate import guards
from tilelens_lsp.engines.enumerate.address_slice import address_slice
from tilelens_lsp.engines.enumerate.recording import SiteRecorder, WitnessesFound
from tilelens_lsp.engines.enumerate.table import HANDLERS, Ctx, blend, opaque_of
from tilelens_lsp.engines.ranges import PtrSpan, RangeV
from tilelens_lsp.engines.values import (
    IntV,
    LaunchModel,
    Obligation,
    Opaque,
    PtrV,
    SiteResult,
    Value,
    unmodelled_kind,
    unmodelled_value,
    wrap,
)
from tilelens_lsp.refusal import Refusal
from tilelens_lsp.ttir import cfg
from tilelens_lsp.ttir.reader import Block, Func, Op, Region, Type

CHUNK_LANES = 1 << 20  # programs × lanes per batch: bounds memory, not results
# grids past this are refused outright (program indices are int64); the affine summary has no such limit
ENUMERATION_MAX_PROGRAMS = (1 << 63) - 1


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


def _numel(t: Type) -> int:
    n = 1
    for s in t.shape:
        n *= s
    return n


_FLOAT = re.compile(r"(b|t)?f\d")


def stored_floats(index: guards.FuncIndex) -> frozenset[int]:
    """The float arithmetic whose values reach nothing but the values stores write (a filter's taps
    summed and stored): no address, mask, branch, loop or call reads them, and what a store writes is
    read back from the definitions (`lanevalues`), never from the values, so evaluating them only
    spends time: in a loop over a whole tensor, most of its ops. Pure ops of the `arith` and `math`
    dialects with float results only; a value used anywhere else keeps its op and those it reads."""
    candidates: dict[int, tuple[Op, dict[str, list[Op]]]] = {}
    for fname, defs in index.defs.items():
        uses = index.uses[fname]
        for op in {id(o): o for o in defs.values()}.values():
            if (
                op.name.startswith(("arith.", "math."))
                and not op.regions
                and op.result_types
                and all(_FLOAT.match(t.elem) for t in op.result_types)
            ):
                candidates[id(op)] = (op, uses)
    dead = set(candidates)
    changed = True
    while changed:
        changed = False
        for key in list(dead):
            op, uses = candidates[key]
            for r in op.results:
                # a float is never a store's pointer or mask: a store reads it as the value it writes
                if any(id(u) not in dead and u.name != "tt.store" for u in uses.get(r, ())):
                    dead.discard(key)
                    changed = True
                    break
    return frozenset(dead)


def _several_blocks(g: "AccessGraph", op: Op, env: dict[str, Value], ctx: Ctx) -> list[Value]:
    raise Refusal("control-flow", f"{op.name} with a region of {len(op.regions[0].blocks)} blocks", op.loc)


class AccessGraph(SiteRecorder):
    """Evaluates one launch; `run()` returns its access sites and width obligations."""

    def __init__(self, model: LaunchModel) -> None:
        self.m = model
        self.sites: dict[tuple, SiteResult] = {}
        self.obligations: dict[tuple, Obligation] = {}
        self.work = 0
        self.chunk_work = 0  # `work` when the current chunk of programs began
        # programs of the launch left for the chunks after the current one; None outside `run` (a
        # witness search over chosen programs stops at its witnesses, not at a projected cost)
        self.programs_after: int | None = None
        self.projecting = True  # `expect` may stop the run before its budget is spent ...
        self.projected = False  # ... and did
        self.slice = address_slice(model.module)
        self.pid_base = 0
        self.P = 1
        self._pids: list[np.ndarray] = []
        self.truncated: Refusal | None = None
        self._steps: dict[tuple[int, int], tuple[np.ndarray, int | None]] = {}
        self._current_loc = ""
        self.unreachable: set[accounting.Context] = set()  # memory ops proven not to run
        self.index = guards.FuncIndex(model.module.funcs)  # defs and uses, for guards
        self.unread = stored_floats(self.index)  # ops eval_ops skips (their values are never read)
        self.watch: frozenset[int] = frozenset()  # ops a while loop's condition depends on (control.py)
        self.wraps: dict[int, dict] = {}  # the first wrap of each watched op: where, and its exact value
        self._plans: dict[int, tuple[list[tuple[Op, Any]], Op | None, Block]] = {}  # eval_ops' reading of each block
        self.loop_plans: dict[int, tuple[Block, Block]] = {}  # per scf.for: its hoisted ops, the rest (control.py)
        # the trips of loops with loaded bounds being evaluated, by induction variable (control.py's
        # `_for_ranged`): what the trip's running says of its bounds (relational.py)
        self.ranged_trips: dict[str, Any] = {}

    def width_obligations(self) -> list[Obligation]:
        return list(self.obligations.values())

    # -- driver

    def run(self) -> None:
        """Evaluate every program; on budget exhaustion keep the definite findings and stop."""
        gx, gy, gz = self.m.grid
        total = gx * gy * gz
        if total == 0:
            return
        lanes = max(
            [1]
            + [
                _numel(t)
                for f in self.m.module.funcs.values()
                for op in accounting.region_ops(f.body)
                for t in op.result_types
            ]
        )
        chunk = max(1, min(total, CHUNK_LANES // lanes))
        n_chunks = -(-total // chunk)
        # the last programs hold most tail and overflow bugs: visit them first, so a launch that runs
        # out of budget still reports them (lazily: a grid of 2**31 programs is 2**31 chunk starts)
        order = itertools.chain((n_chunks - 1,), range(n_chunks - 1))
        entry = self.m.module.funcs[self.m.module.entry]
        programs = 0
        try:
            if total > ENUMERATION_MAX_PROGRAMS:  # program ids of int64 lanes would wrap
                raise Refusal(
                    "launch-too-large",
                    f"the grid {self.m.grid} has {total:,} programs, more than "
                    f"the {ENUMERATION_MAX_PROGRAMS:,} this analysis enumerates; "
                    "declare a smaller launch to check it",
                )
            for i in order:
                start = i * chunk
                count = min(chunk, total - start)
                # programs count against the budget too: a launch whose accesses all sit in a loop that
                # never runs would otherwise walk a grid of 2**62 programs
                programs += count
                if programs > self.m.budget and i != n_chunks - 1:
                    raise Refusal(
                        "launch-too-large",
                        f"enumerating this launch exceeds the budget of {self.m.budget:,} lane "
                        f"evaluations ({total:,} programs); declare a smaller launch to check it",
                    )
                self.chunk_work, self.programs_after = self.work, total - programs
                self._run_chunk(entry, start, count)
        except Refusal as refusal:
            if not refusal.keeps_findings:
                raise
            self.truncated = refusal
        finally:
            self.programs_after = None

    def run_programs(self, start: int, count: int, until: frozenset[tuple] | None = None) -> None:
        """Evaluate programs start, ..., start + count - 1 only (linear program indices, x fastest), with
        no budget truncation: a refusal propagates. The affine summary fills its witnesses this way;
        `until` names the sites it needs them for, and the run ends once each has its first one."""
        self.wanted = until
        try:
            self._run_chunk(self.m.module.funcs[self.m.module.entry], start, count)
        except WitnessesFound:
            pass

    def _run_chunk(self, entry: Func, start: int, count: int) -> None:
        gx, gy, _ = self.m.grid
        self.P = count
        self.pid_base = start
        idx = np.arange(start, start + count, dtype=np.int64)
        self._pids = [idx % gx, (idx // gx) % gy, idx // (gx * gy)]
        env = {name: self.m.arg_values[name] for name, _ in entry.args}
        self.eval_body(entry.body, env, Ctx(np.ones(count, dtype=bool), (), True, ()))

    # -- blocks

    def eval_body(self, body: Region, env: dict[str, Value], ctx: Ctx) -> list[Value]:
        """A function body: one block, or a control-flow graph of blocks (early returns)."""
        if cfg.is_graph(body):
            return cfg.run(body, env, ctx, self)
        return self.eval_block(body.blocks[0], env, ctx)

    def eval_block(self, block: Block, env: dict[str, Value], ctx: Ctx) -> list[Value]:
        term = self.eval_ops(block, env, ctx)
        if term is not None and term.name in ("scf.yield", "tt.return", "scf.condition"):
            return [self.get(env, o) for o in term.operands]
        if term is not None and term.successors:
            raise Refusal("control-flow", f"a branch ({term.name}) inside a single-block region", term.loc)
        return []

    def eval_ops(self, block: Block, env: dict[str, Value], ctx: Ctx) -> Op | None:
        """Evaluate a block's ops up to its terminator, which is returned (not evaluated)."""
        steps, term = self._plan(block)
        for op, handler in steps:
            if handler is None:
                results = self.unknown(op, env, ctx)
            else:
                results = handler(self, op, env, ctx)
            for name, value in zip(op.results, results):
                env[name] = value
                self._spend(_cost(value), op)
        return term

    def _plan(self, block: Block) -> tuple[list[tuple[Op, Any]], Op | None]:
        """A block's ops before its terminator, each with its handler, and the terminator: read once
        per block, since a loop body is evaluated once per iteration. An op whose region has several
        blocks is planned as a refusal where it stands."""
        plan = self._plans.get(id(block))
        if plan is None:
            steps: list[tuple[Op, Any]] = []
            term = None
            for op in block.ops:
                if op.name in ("scf.yield", "tt.return", "scf.condition") or op.successors:
                    term = op
                    break
                if any(len(r.blocks) != 1 for r in op.regions):
                    steps.append((op, _several_blocks))
                    continue
                if id(op) not in self.unread:
                    steps.append((op, HANDLERS.get(op.name)))
            plan = self._plans[id(block)] = (steps, term, block)
        return plan[0], plan[1]

    # -- the control-flow graph protocol (tilelens_lsp.ttir.cfg)

    def branch_condition(self, value: Value, op: Op) -> np.ndarray | None:
        if isinstance(value, IntV):
            return np.broadcast_to(value.a.reshape(value.a.shape[:1]), (self.P,)).astype(bool)
        if isinstance(value, Opaque) and value.why == "data":
            return None
        raise Refusal(
            "control-flow" if not isinstance(value, Opaque) or value.why == "float" else value.why,
            "a branch condition the model does not compute",
            op.loc,
        )

    def join(self, incoming: list[tuple[np.ndarray, Value]], op: Op) -> Value:
        """The value a block argument (or a return) takes: per program, the one of the edge it came by."""
        value = incoming[0][1]
        if all(v is value for _, v in incoming[1:]):
            return value
        total = np.zeros(self.P, dtype=int)
        for when, _ in incoming:
            total = total + when
        if (total > 1).any():  # edges chosen by loaded data overlap: either value may arrive
            return (
                opaque_of(*(v for _, v in incoming))
                if any(isinstance(v, Opaque) for _, v in incoming)
                else Opaque("data", "a value chosen by loaded data", op.loc)
            )
        for when, v in incoming[1:]:
            value = blend(when, v, value, op)
        return value

    def edge_values(self, term: Op, polarity: bool, env: dict[str, Value], ctx: Ctx) -> dict[str, Value]:
        """Values narrowed on the edge of `cf.cond_br` taken when its condition is `polarity`."""
        if not isinstance(env.get(term.operands[0]), Opaque):
            return {}
        return guards.branch_env(self, term, term.operands[0], polarity, env, ctx)

    def narrow(self, ctx: Ctx, may: np.ndarray, exact: bool) -> Ctx:
        return Ctx(may, ctx.iters, exact, ctx.stack)

    def ctx_pred(self, ctx: Ctx) -> tuple[np.ndarray, bool]:
        return np.broadcast_to(ctx.pred, (self.P,)), ctx.exact

    def mark_unreachable(self, block: Block, ctx: Ctx) -> None:
        """No program runs `block` here: its memory ops (and those of what it calls) are accounted for."""
        for op, stack in accounting.contexts_in_ops(accounting.block_ops(block), self.m.module, ctx.stack):
            self.unreachable.add((id(op), stack))

    def get(self, env: dict[str, Value], name: str) -> Value:
        try:
            return env[name]
        except KeyError:
            raise Refusal("reader-misalignment", f"value {name} used before its definition") from None

    def unknown(self, op: Op, env: dict[str, Value], ctx: Ctx) -> list[Value]:
        if op.regions or op.successors:
            # what runs inside is unknown to the model: never skipped, refused by name
            raise Refusal("control-flow", f"{op.name} holds code the model does not follow", op.loc)
        value = unmodelled_value(op.name, op.loc, [env[o] for o in op.operands if o in env])
        if accounting.MEMORY_OP.search(op.name) and op.name not in accounting.REGISTER_OPS:
            # an access the model does not follow must never read as "clean"
            site = self._site(op, "load" if "load" in op.name or "gather" in op.name else "store", "?", ctx)
            if site.refusal is None:
                why = unmodelled_kind(op.name)
                site.refusal = Refusal(why, f"{op.name} accesses memory in a way the model does not follow", op.loc)
        return [value] * len(op.results)

    # -- helpers used by handlers

    def need_int(self, v: Value, op: Op, role: str) -> IntV:
        if isinstance(v, IntV):
            return v
        if isinstance(v, (RangeV, PtrSpan)):
            raise Refusal(
                "data-dependent-bound",
                f"{role} depends on a loaded index in a way its declared range does not bound",
                op.loc,
            )
        if isinstance(v, Opaque):
            kind = {"data": "data-dependent-bound", "float": "out-of-vocabulary"}.get(v.why, v.why)
            hint = ""
            if v.why == "data":
                hint = (
                    "; declare the values of the tensor it is loaded from (`i32[N].values(LO, HI)` or "
                    "`tensor(..., values=...)`) and the loop runs over every trip count they allow"
                )
            raise Refusal(kind, f"{role} depends on {v.message or v.why}{hint}", v.loc or op.loc)
        raise Refusal("out-of-vocabulary", f"{role} is not an integer", op.loc)

    def pred_like(self, ctx: Ctx, shape_ndim: int) -> np.ndarray:
        return ctx.pred.reshape((self.P,) + (1,) * shape_ndim)

    def pid(self, axis: int) -> np.ndarray:
        return self._pids[axis]

    def check_width(
        self, op: Op, ctx: Ctx, exact: np.ndarray, bits: int, loaded: tuple[str, np.ndarray] | None = None
    ) -> np.ndarray:
        """Record the width obligation of `op` and return the wrapped result; an op a while loop's
        condition depends on (`watch`) also records its first wrap in `wraps`. `loaded`: where the
        value is an end of a declared range, the tensor and the declared value (per lane) giving it."""
        if bits > 32 or bits == 1:
            return wrap(exact, bits)
        if id(op) in self.watch and id(op) not in self.wraps:
            found = self._outside_width(ctx, exact, bits)
            if found is not None:
                self.wraps[id(op)] = found
        if id(op) not in self.slice:
            return wrap(exact, bits)
        key = (id(op), ctx.stack)
        ob = self.obligations.get(key)
        if ob is None:
            ob = self.obligations[key] = Obligation(op.name, op.loc, ctx.stack, bits)
        if ob.violation is None:
            ob.violation = self._outside_width(ctx, exact, bits, loaded)
        return wrap(exact, bits)

    def _outside_width(
        self, ctx: Ctx, exact: np.ndarray, bits: int, loaded: tuple[str, np.ndarray] | None = None
    ) -> dict | None:
        """The first lane of a running program whose exact value leaves the signed range of `bits`:
        its program, lane, loop iterations and value; None when every one fits."""
        lo, hi = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
        if not exact.size or (exact.min() >= lo and exact.max() <= hi):
            return None
        full = np.broadcast_to(exact, (self.P,) + exact.shape[1:])
        bad = ((full < lo) | (full > hi)) & self.pred_like(ctx, full.ndim - 1)
        if not bad.any():
            return None
        where = np.unravel_index(int(np.argmax(bad.reshape(-1))), bad.shape)
        found: dict[str, Any] = {
            "pid": self.pid_tuple(int(where[0])),
            "lane": tuple(int(i) for i in where[1:]),
            "iteration": ctx.iters or None,
            "value": int(full[where]),
        }
        if loaded is not None:
            name, values = loaded
            found["loaded"] = [name, int(np.broadcast_to(values, full.shape)[where])]
        return found

    def pid_tuple(self, p: int) -> tuple[int, int, int]:
        return (int(self._pids[0][p]), int(self._pids[1][p]), int(self._pids[2][p]))

    def expect(self, per_trip: int, trips_left: int, op: Op, alike: bool) -> None:
        """Refuse now when the trips a loop has left, each costing what its cheapest trip so far did,
        would take the enumeration past its budget: the refusal `_spend` would give once they ran,
        without running them (minutes, where a trip count from loaded data let through a launch that
        `select.launch_size`, counting each loop once, took for small). With `alike` (every program
        of this chunk has the loop's trip count: one from declared ranges) the programs after this
        chunk count too, each costing what one of this chunk's will; a trip count that grows with the
        program (a causal loop, longest in the last programs, visited first) is not extrapolated."""
        if self.programs_after is None or not self.projecting:
            return
        this_chunk = self.work - self.chunk_work + per_trip * trips_left
        later = this_chunk * self.programs_after // max(self.P, 1) if alike else 0
        if self.work + per_trip * trips_left + later > self.m.budget:
            self.projected = True
            raise Refusal(
                "launch-too-large",
                f"enumerating this launch would exceed the budget of {self.m.budget:,} evaluations "
                f"(a loop with {trips_left:,} trips to go, then {self.programs_after:,} more programs); "
                "declare a smaller launch to check it",
                op.loc,
            )

    def _spend(self, work: int, op: Op | None) -> None:
        """Count evaluation work against the budget (deterministic: counts, never seconds)."""
        self.work += work
        if self.work > self.m.budget:
            raise Refusal(
                "launch-too-large",
                f"enumerating this launch exceeds the budget of {self.m.budget:,} evaluations; "
                "declare a smaller launch to check it",
                op.loc if op else self._current_loc,
            )
