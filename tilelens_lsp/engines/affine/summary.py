"""AffineGraph: the affine summary of a whole launch, evaluated once for every program and lane at a time.

Every integer is a form (`forms`): a per-program constant (a numpy array over the launch's programs,
so swizzles like grouped-matmul ordering stay exact) plus integer coefficients on symbolic variables:
lane axes (`L0`, ...), loop iterations (`t0`, ...), quotients of divisions that split a lane range
(`q3`, ..., pinned by side constraints), and past SUMMARY_ARRAY_PROGRAMS the program ids (`P0`, ...).
A loop whose carried values advance by a loop-invariant step is evaluated once, with its iteration as
a variable. Whatever leaves this fragment raises `NotAffine` and the enumeration answers the launch.
Ops are evaluated by `handlers` and `control`; accesses are recorded by `footprints`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tilelens_lsp.engines import accounting
from tilelens_lsp.engines.affine.footprints import SummaryFootprints
from tilelens_lsp.engines.affine.forms import Cond, Ctx, Form, NotAffine, Pieces, Ptr, blend, parts_of
from tilelens_lsp.engines.affine.handlers import HANDLERS
from tilelens_lsp.engines.enumerate.table import HANDLERS as ENUMERATED
from tilelens_lsp.engines.values import IntV, LaunchModel, Obligation, Opaque, PtrV, SiteResult, unmodelled_value
from tilelens_lsp.refusal import Refusal
from tilelens_lsp.ttir import cfg
from tilelens_lsp.ttir.reader import Block, Op, Region

# per-program constants are arrays up to this many programs; past it, program ids are variables
# (the enumeration's limit, ENUMERATION_MAX_PROGRAMS, is another matter: past it a launch is refused)
SUMMARY_ARRAY_PROGRAMS = 1 << 24


class AffineGraph(SummaryFootprints):
    """Summarizes one launch; same results as `AccessGraph` (`sites`, `width_obligations`, `truncated`)."""

    def __init__(self, model: LaunchModel) -> None:
        self.m = model
        self.sites: dict[tuple, SiteResult] = {}
        self.truncated: Refusal | None = None
        self.pending: dict[tuple, int] = {}  # out-of-bounds site -> the program that shows it
        self.symbolic_programs = False  # program ids as variables (grids past SUMMARY_ARRAY_PROGRAMS)
        self._images: dict[tuple, tuple[np.ndarray, np.ndarray]] = {}
        self.extent: dict[str, int] = {}
        self.work = 0
        self.probing = 0
        self.loops = 0  # scf.for loops entered so far: names their trip variables (t0, t1, ...)
        self.unreachable: set[accounting.Context] = set()  # memory ops proven not to run
        self.loaded_from: dict[int, tuple] = {}  # id of a loaded value -> (it, its pointer, its mask)
        self.to_tag: list = []  # accesses whose per-program runs the race check may need
        self.to_image: list = []  # accesses whose footprints are computed once the run is done
        # opaque values the enumeration cannot compute either (loaded data, an op no engine models, a
        # float), by id, each kept alive here: an address made of one is refused, not enumerated
        self.beyond: dict[int, Opaque] = {}
        self.race_work = 0
        gx, gy, gz = model.grid
        self.P = gx * gy * gz

    def width_obligations(self) -> list[Obligation]:
        """None is violated: a value that may leave its width sends the launch to the enumeration."""
        return []

    def run(self) -> None:
        if self.P == 0:
            return
        gx, gy, gz = self.m.grid
        if self.P > min(SUMMARY_ARRAY_PROGRAMS, self.m.budget):
            # too many programs for per-program arrays: program ids become box variables themselves
            # (one row stands for every program; what needs a concrete program leaves the fragment)
            self.P = 1
            self.symbolic_programs = True
            for axis, n in enumerate((gx, gy, gz)):
                self.extent[f"P{axis}"] = n
            self.pids = [
                Form(np.zeros(1, np.int64), {f"P{axis}": 1} if n > 1 else {}, (), 32) for axis, n in enumerate((gx, gy, gz))
            ]
        else:
            idx = np.arange(self.P, dtype=np.int64)
            self.pids = [Form(a, {}, (), 32) for a in (idx % gx, (idx // gx) % gy, idx // (gx * gy))]
        entry = self.m.module.funcs[self.m.module.entry]
        env = {name: self._arg(self.m.arg_values[name]) for name, _ in entry.args}
        self.eval_body(entry.body, env, Ctx(np.ones(self.P, dtype=bool), (), ()))
        self.image_sites()
        self.tag_for_races()

    def _arg(self, v: Any) -> Any:
        if isinstance(v, IntV):
            if v.bits == 1:
                return Cond(v.a.reshape(-1)[:1].astype(bool), (), ())
            return Form(v.a.reshape(-1)[:1].astype(np.int64), {}, (), v.bits)
        if isinstance(v, PtrV):
            return Ptr(v.arg, Form(v.boff.reshape(-1)[:1].astype(np.int64), {}, (), 64), v.pointee)
        return v

    # -- blocks

    def eval_body(self, body: Region, env: dict[str, Any], ctx: Ctx) -> list[Any]:
        """A function body: one block, or a control-flow graph of blocks (early returns)."""
        if cfg.is_graph(body):
            return cfg.run(body, env, ctx, self)
        return self.eval_block(body.blocks[0], env, ctx)

    def eval_block(self, block: Block, env: dict[str, Any], ctx: Ctx) -> list[Any]:
        term = self.eval_ops(block, env, ctx)
        if term is not None and term.name in ("scf.yield", "tt.return", "scf.condition"):
            return [self.get(env, o) for o in term.operands]
        if term is not None:
            raise NotAffine(f"a branch ({term.name}) inside a single-block region")
        return []

    # -- the control-flow graph protocol (tilelens_lsp.ttir.cfg)

    def branch_condition(self, value: Any, op: Op) -> np.ndarray:
        if not isinstance(value, Cond) or value.cons:
            raise NotAffine("a branch condition outside the affine fragment")
        return np.broadcast_to(value.pred, (self.P,))

    def join(self, incoming: list[tuple[np.ndarray, Any]], op: Op) -> Any:
        value = incoming[0][1]
        if all(v is value for _, v in incoming[1:]):
            return value
        if (sum((w.astype(int) for w, _ in incoming), np.zeros(self.P, dtype=int)) > 1).any():
            raise NotAffine("a value joined from overlapping paths")
        for when, v in incoming[1:]:
            value = blend(when, v, value, self.P)
        return value

    def narrow(self, ctx: Ctx, may: np.ndarray, exact: bool) -> Ctx:
        return Ctx(may, ctx.cons, ctx.stack)

    def ctx_pred(self, ctx: Ctx) -> tuple[np.ndarray, bool]:
        return np.broadcast_to(ctx.pred, (self.P,)), True

    def mark_unreachable(self, block: Block, ctx: Ctx) -> None:
        if self.probing:
            return
        for op, stack in accounting.contexts_in_ops(accounting.block_ops(block), self.m.module, ctx.stack):
            self.unreachable.add((id(op), stack))

    def eval_ops(self, block: Block, env: dict[str, Any], ctx: Ctx) -> Op | None:
        """Evaluate a block's ops up to its terminator, which is returned (not evaluated)."""
        for op in block.ops:
            if op.name in ("scf.yield", "tt.return", "scf.condition") or op.successors:
                return op
            if any(len(r.blocks) != 1 for r in op.regions):
                raise NotAffine(f"{op.name} with a region of several blocks")
            handler = HANDLERS.get(op.name)
            if handler is None:
                results = self.unknown(op, env)
            else:
                results = handler(self, op, env, ctx)
            for name, value in zip(op.results, results):
                env[name] = value
                if isinstance(value, (Form, Ptr, Pieces)):
                    off = value.off if isinstance(value, Ptr) else value
                    self.spend(sum(np.size(f.c) for _, f in parts_of(off)))
        return None

    def get(self, env: dict[str, Any], name: str) -> Any:
        try:
            return env[name]
        except KeyError:
            raise NotAffine(f"value {name} used before its definition") from None

    def unknown(self, op: Op, env: dict[str, Any]) -> list[Any]:
        if op.regions or op.successors or accounting.is_memory_op(op):
            raise NotAffine(f"{op.name} is not summarized")
        if op.name in ENUMERATED:  # the enumeration computes it: an address made of it is its to answer
            return [Opaque("out-of-vocabulary", f"{op.name} is not modelled", op.loc)] * len(op.results)
        value = unmodelled_value(op.name, op.loc, [env[o] for o in op.operands if o in env])
        return [self.beyond_engines(value)] * len(op.results)

    def beyond_engines(self, value: Opaque, *sources: Any) -> Opaque:
        """`value`, marked as one no engine computes (with `sources`: when one of them is)."""
        if not sources or any(self.unfollowable(v) for v in sources):
            self.beyond[id(value)] = value
        return value

    def unfollowable(self, value: Any) -> bool:
        """An opaque value the enumeration would not compute either: a float, or one marked so."""
        return isinstance(value, Opaque) and (value.why == "float" or self.beyond.get(id(value)) is value)

    def spend(self, work: int) -> None:
        self.work += int(work)
        if self.work > self.m.budget:
            raise NotAffine("the summary exceeds the evaluation budget")

    # -- ranges

    def var_extent(self, v: str, shape: tuple[int, ...]) -> int:
        if v[0] == "L":
            return shape[int(v[1:])]
        ext = self.extent.get(v)
        if ext is None:  # a probe variable: its range is what the probe is finding out
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
            return f  # a probe variable's range is what the probe finds out: the real pass checks
        limit = 1 << (min(f.bits, 63) - 1)
        big = float(np.abs(f.c).max()) + sum(abs(a) * float(self.var_extent(v, f.shape)) for v, a in f.k.items())
        if big >= limit:
            lo, hi = self.box(f)
            if big >= 1 << 62 or lo.min() < -limit or hi.max() > limit - 1:
                raise NotAffine(f"{op.name} may leave i{f.bits}")
        return f
