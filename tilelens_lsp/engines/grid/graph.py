"""GridGraph: one launch evaluated for all of its programs at once, at a cost that does not grow with them.

Program ids are variables over their ranges, loop iterations too (a loop is evaluated once, its
carried values advancing by a uniform step found by a probe pass); values are affine forms in those
variables or per-lane intervals (`forms`). An access records, per lane, the lowest and highest
element any program may touch (the mask's affine atoms narrow the variables first): a proven bound,
never claimed exact. Where a bound leaves the storage, or an int32 address computation may leave its
width, candidate programs (the corners of the grid and the programs that reach the extremes) are
evaluated concretely by the enumeration (`witness`); only what that concrete run shows is definite.

Early returns are walked as one abstract program (`ttir.cfg`); a branch on a loaded scalar narrows it
on each side (`branches`). What this deliberately does not do: per-program runs for races (the sites
carry a symbolic per-program footprint instead), or anything outside the domain: that raises
`NotGrid` and another engine answers (or an access is refused by kind).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from tilelens_lsp.engines import accounting
from tilelens_lsp.engines.enumerate.address_slice import address_slice
from tilelens_lsp.engines.enumerate.guards import FuncIndex
from tilelens_lsp.engines.grid import branches, forms, handlers, relational, witness
from tilelens_lsp.engines.grid.forms import Coefs, GChoice, GPtr, Itv, Lin, Msk, NotGrid, arr, coefs, const, limits, top
from tilelens_lsp.engines.values import IntV, LaunchModel, Obligation, Opaque, PtrV, SiteResult, elem_bytes
from tilelens_lsp.refusal import Refusal
from tilelens_lsp.ttir import cfg
from tilelens_lsp.ttir.reader import Block, Op, Region

MAX_LANES = 1 << 22  # lanes one value may hold; the engine's memory is bounded by it, not by programs
NARROW_ROUNDS = 2
MAX_RESIDUE_CASES = 64  # cases an access's bound is split into by the values of small remainders
RESIDUE_LANES = 1 << 20  # ... and lanes times those cases


@dataclass
class GCtx:
    atoms: tuple[Lin, ...]  # conditions every program running this code satisfies
    stack: tuple[str, ...]
    anyof: tuple[tuple[Lin, ...], ...] = ()  # and the atoms of one of these cases (a disjunction)


@dataclass(frozen=True)
class PerProgram:
    """A site's footprint as a function of the program (for races): the elements Σ coef·x over the
    program's coordinates x (each `(name, coef, extent)`), plus a span [lo, hi] covering every lane and
    loop iteration of that program. `leaves` names every coordinate of more than one value: a program
    is identified by them, so one missing from `k` means programs that share their footprint."""

    k: tuple[tuple[str, int, int], ...]
    leaves: tuple[str, ...]
    lo: int
    hi: int
    lanes_distinct: bool = False  # every live lane of one program touches its own element (no lane race)
    # where the access was bounded case by case by the values of one remainder coordinate (`by_residue`):
    # that coordinate and, per value r0 some program with it reaches, the span [lo, hi] of those programs
    residues: tuple[str, tuple[tuple[int, int, int], ...]] | None = None


class GridGraph:
    """Evaluates one launch over its whole grid; same results as the other engines (`sites`,
    `width_obligations()`, `truncated`, `unreachable`), plus `notes` and `candidates`."""

    def __init__(self, model: LaunchModel) -> None:
        self.m = model
        self.sites: dict[tuple, SiteResult] = {}
        self.truncated: Refusal | None = None
        self.unreachable: set[accounting.Context] = set()
        self.notes: list[str] = []
        # the enumeration this answer stands in for, stopped at its budget (`select.choose`): what it
        # showed concretely before stopping is the verdict where it showed anything
        self.replaced: Any = None
        self.slice = address_slice(model.module)
        self.work = 0
        self.probing = 0
        self.vars: dict[str, tuple[int, int]] = {}  # variable -> inclusive range
        self.subst: dict[str, tuple[tuple[str, int], ...]] = {}  # a split variable -> q·m + r
        self.splits: dict[tuple[str, int], tuple[str, str]] = {}
        self.parts: list[tuple[str, int, str, str]] = []  # (v, m, q, r) in the order the splits were made
        self.coords: set[str] = set()  # variables that identify the program (bijectively)
        self.derived: set[str] = set()  # variables standing for a program-uniform value
        # a variable standing for a loaded scalar -> the declared value set of its tensor (a guard snaps to it)
        self.declared: dict[str, tuple[tuple[int, int], ...]] = {}
        self._index: FuncIndex | None = None
        # a loop-carried value -> (its uniform step, the iteration variable, trips, the loop): `lanes`
        self.steps: dict[str, tuple[int, str, int, Op]] = {}
        self.obligations: dict[tuple, Obligation] = {}
        self.pending_obligations: dict[tuple, dict[str, Any]] = {}
        self.pending_sites: dict[tuple, dict[str, Any]] = {}
        self.per_program: dict[tuple, Any] = {}
        self.candidates: list[int] = []
        gx, gy, gz = model.grid
        self.P = gx * gy * gz

    def width_obligations(self) -> list[Obligation]:
        return list(self.obligations.values())

    # -- driver

    def run(self) -> None:
        if self.P == 0:
            return
        for axis, n in enumerate(self.m.grid):
            self.vars[f"p{axis}"] = (0, n - 1)
            self.coords.add(f"p{axis}")
        self.pids = [
            Lin(np.zeros((), np.int64), ((f"p{axis}", 1),) if n > 1 else (), (), 32) for axis, n in enumerate(self.m.grid)
        ]
        entry = self.m.module.funcs[self.m.module.entry]
        env = {name: self._arg(self.m.arg_values[name]) for name, _ in entry.args}
        self.eval_body(entry.body, env, GCtx((), ()))
        self.finish_per_program()
        witness.confirm(self)  # the enumeration, on a few candidate programs

    def _arg(self, v: Any) -> Any:
        if isinstance(v, IntV):
            a = int(v.a.reshape(-1)[0])
            if v.bits == 1:
                b = np.array(bool(a))  # a 0-d mask, broadcastable like the arrays it meets
                return Msk(b, b, (), (), True)
            return const(a, (), v.bits)
        if isinstance(v, PtrV):
            return GPtr(v.arg, const(int(v.boff.reshape(-1)[0]), (), 64), v.pointee)
        if isinstance(v, Opaque):
            return v
        raise NotGrid(f"an argument the grid engine does not follow ({type(v).__name__})")

    def eval_body(self, body: Region, env: dict[str, Any], ctx: GCtx) -> list[Any]:
        """A function body: one block, or a control-flow graph of blocks (early returns), which
        `ttir.cfg` walks with this engine as one abstract program (a branch every program takes the
        same way is followed; any other runs both ways and joins what arrives)."""
        if cfg.is_graph(body):
            return cfg.run(body, env, ctx, self)
        return self.eval_block(body.blocks[0], env, ctx)

    def eval_block(self, block: Block, env: dict[str, Any], ctx: GCtx) -> list[Any]:
        term = self.eval_ops(block, env, ctx)
        if term is not None and term.name in ("scf.yield", "tt.return", "scf.condition"):
            return [self.get(env, o) for o in term.operands]
        if term is not None:
            raise NotGrid(f"a branch ({term.name}) inside a single-block region")
        return []

    def eval_ops(self, block: Block, env: dict[str, Any], ctx: GCtx) -> Op | None:
        """Evaluate a block's ops up to its terminator, which is returned (not evaluated)."""
        for op in block.ops:
            if op.name in ("scf.yield", "tt.return", "scf.condition") or op.successors:
                return op
            if any(len(r.blocks) != 1 for r in op.regions):
                raise NotGrid(f"{op.name} with a region of several blocks")
            handler = handlers.HANDLERS.get(op.name)
            results = handler(self, op, env, ctx) if handler is not None else self.unknown(op, env)
            for name, value in zip(op.results, results):
                if isinstance(value, Itv) and value.shape == () and not self.probing and value.bits > 1:
                    value = self.uniform_var(value)
                env[name] = value
            self.spend(max([1] + [int(np.prod(t.shape, dtype=np.int64)) for t in op.result_types]))
        return None

    # -- the control-flow graph protocol (tilelens_lsp.ttir.cfg), over one abstract program

    def branch_condition(self, value: Any, op: Op) -> np.ndarray | None:
        if isinstance(value, Msk):
            if np.all(value.must):
                return np.ones(1, dtype=bool)
            if not np.any(value.may):
                return np.zeros(1, dtype=bool)
            return None  # programs differ: both successors may run
        if isinstance(value, Opaque) and value.why == "data":
            return None
        raise NotGrid("a branch condition the grid engine does not follow")

    def edge_values(self, term: Op, polarity: bool, env: dict[str, Any], ctx: GCtx) -> dict[str, Any]:
        """Values narrowed where the condition of `term` (a `cf.cond_br`, or an `scf.if` for the side it
        runs) is `polarity` (`branches`)."""
        if self.probing:
            return {}
        return branches.edge_values(self, term, term.operands[0], polarity, env)

    def index(self) -> FuncIndex:
        """Definitions of the module's SSA names, for reading a branch's condition."""
        if self._index is None:
            self._index = FuncIndex(self.m.module.funcs)
        return self._index

    def join(self, incoming: list[tuple[np.ndarray, Any]], op: Op) -> Any:
        value = incoming[0][1]
        for _, v in incoming[1:]:
            value = handlers.join_values(self, value, v, op)
        return value

    def narrow(self, ctx: GCtx, may: np.ndarray, exact: bool) -> GCtx:
        return ctx

    def ctx_pred(self, ctx: GCtx) -> tuple[np.ndarray, bool]:
        return np.ones(1, dtype=bool), False

    def get(self, env: dict[str, Any], name: str) -> Any:
        try:
            return env[name]
        except KeyError:
            raise NotGrid(f"value {name} used before its definition") from None

    def unknown(self, op: Op, env: dict[str, Any]) -> list[Any]:
        if op.regions or accounting.is_memory_op(op):
            raise NotGrid(f"{op.name} is not followed by the grid engine")
        if any(isinstance(env.get(o), Opaque) and env[o].why == "data" for o in op.operands):
            return [Opaque("data", f"{op.name} of loaded data", op.loc)] * len(op.results)
        why = "inline-asm" if "inline_asm" in op.name else "out-of-vocabulary"
        return [Opaque(why, f"{op.name} is not modelled", op.loc)] * len(op.results)

    def spend(self, work: int) -> None:
        self.work += work
        if work > MAX_LANES or self.work > self.m.budget:
            raise NotGrid("the grid evaluation exceeds its budget")

    def mark_unreachable(self, block: Block, ctx: GCtx) -> None:
        if self.probing:
            return
        for op, stack in accounting.contexts_in_ops(accounting.block_ops(block), self.m.module, ctx.stack):
            self.unreachable.add((id(op), stack))

    # -- variables

    def uniform_var(self, v: Itv) -> Lin:
        """A program-uniform value the forms do not follow: a fresh variable over its range."""
        lo, hi = int(np.asarray(v.lo)), int(np.asarray(v.hi))
        if lo == hi:
            return const(lo, (), v.bits)
        w = self.fresh("w", lo, hi)
        self.derived.add(w)
        return Lin(np.zeros((), np.int64), ((w, 1),), (), v.bits)

    def fresh(self, prefix: str, lo: int, hi: int) -> str:
        name = f"{prefix}{len(self.vars)}"
        self.vars[name] = (int(lo), int(hi))
        return name

    def norm(self, v: Lin) -> Lin:
        """The form with split variables expanded into their quotient and remainder."""
        k = v.k
        while any(x in self.subst for x, _ in k):
            k = coefs(*[(((x, 1),), a) if x not in self.subst else (self.subst[x], a) for x, a in k])
        return v if k == v.k else Lin(v.c, k, v.shape, v.bits)

    def split(self, v: str, m: int) -> tuple[str, str]:
        """v = q·m + r with 0 <= r < m: the quotient and remainder become variables of their own."""
        hit = self.splits.get((v, m))
        if hit is not None:
            return hit
        lo, hi = self.vars[v]
        if lo != 0:
            raise NotGrid("a division of a variable that does not start at 0")
        q = self.fresh("q", 0, hi // m)
        r = self.fresh("r", 0, min(m - 1, hi))
        if v in self.coords:
            self.coords |= {q, r}
        if v in self.derived:
            self.derived |= {q, r}
        self.subst[v] = coefs((((q, m),), 1), (((r, 1),), 1))
        self.splits[(v, m)] = (q, r)
        self.parts.append((v, m, q, r))
        return q, r

    def recombine(self, k: Coefs, rng: dict) -> tuple[dict[str, int], dict]:
        """The terms of Σ k·x with a split variable's quotient and remainder put back together where
        they appear as a multiple of it (a·m·q + a·r = a·v), v ranging over what q·m + r reaches inside
        v's own range. The box of (q, r) alone also holds q's last value with every remainder, values
        past v's end that no program has (`pid % 7` splits pid = 7q + r: at 500000 programs the box
        reaches 7·71428 + 6 = 500002). Deepest splits first, so nested ones fold back in turn. `rng`
        maps variables to (lo, hi), ints or per-lane arrays; a copy with v's range added is returned."""
        terms = dict(k)
        if not self.parts:
            return terms, rng
        rng = dict(rng)
        for v, m, q, r in reversed(self.parts):
            a, b = terms.get(r), terms.get(q)
            if a is None or b is None or b != a * m or q not in rng or r not in rng:
                continue
            (qlo, qhi), (rlo, rhi) = rng[q], rng[r]
            vlo, vhi = rng.get(v, self.vars[v])
            rng[v] = (_maximum(qlo * m + rlo, vlo), _minimum(qhi * m + rhi, vhi))
            del terms[q], terms[r]
            terms[v] = terms.get(v, 0) + a
            if not terms[v]:
                del terms[v]
        return terms, rng

    def expand_point(self, point: dict[str, int]) -> dict[str, int]:
        """An assignment of recombined variables (`recombine`) given back as their quotients and remainders."""
        point = dict(point)
        for v, m, q, r in self.parts:
            if v in point and q not in point and r not in point:
                point[q], point[r] = divmod(point[v], m)
        return point

    def domain_atoms(self, names: set[str]) -> tuple[Lin, ...]:
        """q·m + r <= v's last value, for the splits of these variables (each atom >= 0)."""
        out = []
        for v, m, q, r in self.parts:
            if q in names or r in names:
                out.append(Lin(np.asarray(self.vars[v][1], np.int64), coefs((((q, -m), (r, -1)), 1)), (), 64))
        return tuple(out)

    def span(self, v: Lin) -> tuple[int, int]:
        """Lowest and highest value of the variable part Σ k·v over the variables' ranges (exact ints)."""
        terms, rng = self.recombine(v.k, {x: self.vars[x] for x, _ in v.k})
        lo = hi = 0
        for x, a in terms.items():
            vlo, vhi = rng[x]
            lo += min(a * vlo, a * vhi)
            hi += max(a * vlo, a * vhi)
        return int(lo), int(hi)

    def bounds(self, v) -> tuple[np.ndarray, np.ndarray]:
        """Per-lane lowest and highest value over every program (broadcastable arrays)."""
        if isinstance(v, Itv):
            return v.lo, v.hi
        lo, hi = self.span(v)
        if max(abs(lo), abs(hi)) + float(np.abs(v.c).max(initial=0)) >= 2.0**62:
            b = limits(64)
            return arr(b[0], len(v.shape)), arr(b[1], len(v.shape))
        return v.c + lo, v.c + hi

    def magnitude(self, v: Lin) -> float:
        lo, hi = self.span(v)
        return max(abs(lo), abs(hi)) + float(np.abs(v.c).max(initial=0))

    def fits(self, v, bits: int) -> bool:
        if isinstance(v, Lin) and self.magnitude(v) >= 2.0**62:
            return False
        lo, hi = self.bounds(v)
        lim = limits(bits)
        return bool(np.all(lo >= lim[0]) and np.all(hi <= lim[1]))

    # -- narrowing by atoms

    def narrow_vars(
        self, names: set[str], atoms: tuple[Lin, ...], shape: tuple[int, ...]
    ) -> tuple[dict[str, tuple[np.ndarray, np.ndarray]], np.ndarray]:
        """Per-lane ranges of the variables under `atoms` (each >= 0), and the lanes some program reaches."""
        ndim = len(shape)
        atoms = tuple(self.norm(a) for a in atoms)
        for a in atoms:
            names = names | {x for x, _ in a.k}
        extra = tuple(self.norm(a) for a in self.domain_atoms(names))
        for a in extra:
            names = names | {x for x, _ in a.k}
        atoms = atoms + extra
        rng = {x: (arr(self.vars[x][0], ndim), arr(self.vars[x][1], ndim)) for x in names}
        live = np.ones((1,) * ndim, dtype=bool)
        for _ in range(NARROW_ROUNDS):
            for a in atoms:
                c = arr(a.c, ndim)
                if not a.k:
                    live = live & (c >= 0)
                    continue
                most = {x: np.maximum(k * rng[x][0], k * rng[x][1]) for x, k in a.k}
                total = c + sum(most.values())
                for x, k in a.k:
                    rest = total - most[x]  # k·x >= -rest
                    lo, hi = rng[x]
                    if k > 0:
                        lo = np.maximum(lo, -(rest // k))
                    else:
                        hi = np.minimum(hi, rest // (-k))
                    rng[x] = (lo, hi)
        for lo, hi in rng.values():
            live = live & (lo <= hi)
        return rng, live

    def tighten(self, off: Lin, atoms: tuple[Lin, ...], rng: dict, lo, hi):
        """Bounds read off an atom the offset is proportional to: where off = c - λ·(the atom's variable
        part) + rest, the atom (part >= -a.c) gives off <= c + λ·a.c + max(rest) (and the mirror image
        for a lower bound). A swizzled row index masked by `rows < M` stays inside M this way, though
        its variables' box does not."""
        ndim = len(off.shape)
        mine = dict(off.k)
        for a in (self.norm(x) for x in atoms):
            if not a.k or any(x not in mine for x, _ in a.k):
                continue
            ((v0, a0),) = a.k[:1]
            for sign in (-1, 1):  # -1: an upper bound; +1: a lower bound
                num, den = mine[v0] * sign, a0  # λ = num / den, > 0
                if num * den <= 0 or any(mine[x] * sign * den != num * ax for x, ax in a.k):
                    continue
                rest = Lin(off.c, tuple((x, k) for x, k in off.k if x not in dict(a.k)), off.shape, 64)
                rlo, rhi = self.range_under(rest, rng)
                scaled = arr(a.c, ndim) * num
                fl = scaled // den if den > 0 else (-scaled) // (-den)  # floor(λ·a.c)
                if sign < 0:
                    hi = np.minimum(hi, rhi + fl)
                else:
                    lo = np.maximum(lo, rlo - fl)
        return lo, hi

    def range_under(self, v: Lin, rng: dict) -> tuple[np.ndarray, np.ndarray]:
        lo, hi, _, _ = self.extremes(v, rng)
        return lo, hi

    def extremes(self, v: Lin, rng: dict) -> tuple[np.ndarray, np.ndarray, dict, dict]:
        """Per-lane lowest and highest value of `v` over the variables' ranges `rng`, and an assignment
        reaching each (variable -> per-lane value; split variables as `recombine` leaves them). A split's
        quotient and remainder that appear apart (row·stride + col·BLOCK) are bounded together, inside
        v's range (`pair_extremes`); every other variable by its own range."""
        ndim = len(v.shape)
        lo = arr(v.c, ndim)
        hi = lo
        terms, rng = self.recombine(v.k, rng)
        at_lo: dict = {}
        at_hi: dict = {}
        for x0, m, q, r in self.parts:
            if q in terms and r in terms and q in rng and r in rng:
                bq, br = terms.pop(q), terms.pop(r)
                f_lo, f_hi, w_lo, w_hi = pair_extremes(bq, br, m, self.vars[x0][1], rng[q], rng[r])
                lo, hi = lo + f_lo, hi + f_hi
                at_lo[q], at_lo[r] = w_lo
                at_hi[q], at_hi[r] = w_hi
        for x, k in terms.items():
            a, b = k * rng[x][0], k * rng[x][1]
            lo = lo + np.minimum(a, b)
            hi = hi + np.maximum(a, b)
            at_lo[x], at_hi[x] = (rng[x][0], rng[x][1]) if k > 0 else (rng[x][1], rng[x][0])
        return lo, hi, at_lo, at_hi

    # -- width obligations

    def checked(self, op: Op, ctx: GCtx, v, bits: int):
        """The result of an integer op at its width: kept when it provably fits, else (it may wrap)
        the whole width, with the obligation to confirm for an op of the address slice."""
        if bits == 1:
            return v
        if bits >= 64:  # no obligation (only narrower ops carry one), but never past int64
            return v if self.fits(v, 64) and not (isinstance(v, Itv) and v.lo.dtype == object) else top(v.shape, bits)
        if self.probing and isinstance(v, Lin) and any(x.startswith("s") for x, _ in v.k):
            return v
        if self.fits(v, bits):
            if id(op) in self.slice and bits <= 32 and not self.probing:
                self.obligations.setdefault((id(op), ctx.stack), Obligation(op.name, op.loc, ctx.stack, bits))
            return v
        if id(op) in self.slice and bits <= 32 and not self.probing:
            key = (id(op), ctx.stack)
            self.obligations.setdefault(key, Obligation(op.name, op.loc, ctx.stack, bits))
            if key not in self.pending_obligations:
                self.pending_obligations[key] = {
                    "op": op,
                    "programs": self.extreme_programs(v, ctx) + self.crossing_programs(v, bits),
                }
        return top(v.shape, bits)

    def extreme_programs(self, v, ctx: GCtx) -> list[int]:
        """Programs (linear indices) where an affine value reaches its lowest or highest, to try first."""
        if not isinstance(v, Lin):
            return []
        v = self.norm(v)
        out = []
        for sign in (1, -1):
            point = {x: (self.vars[x][1] if a * sign > 0 else self.vars[x][0]) for x, a in v.k}
            out.append(self.program_of(point))
        return [p for p in out if p is not None]

    def crossing_programs(self, v, bits: int) -> list[int]:
        """The first programs past which an affine value leaves its width, one variable moving (where
        it wraps to the other end of the range: the addresses most likely to leave the storage)."""
        if not isinstance(v, Lin) or not v.k:
            return []
        v = self.norm(v)
        lo_lim, hi_lim = limits(bits)
        c_hi, c_lo = int(np.max(v.c)), int(np.min(v.c))
        out = []
        for x, a in v.k:
            base = {y: self.vars[y][0] for y, _ in v.k}
            if a > 0:
                first = -(-(hi_lim + 1 - c_hi - sum(b * base[y] for y, b in v.k if y != x)) // a)
            else:
                first = -(-(c_lo + sum(b * base[y] for y, b in v.k if y != x) - lo_lim + 1) // -a)
            vlo, vhi = self.vars[x]
            if vlo <= first <= vhi:
                base[x] = first
                p = self.program_of(base)
                if p is not None:
                    out.append(p)
        return out

    def program_of(self, point: dict[str, int]) -> int | None:
        """The linear program index of an assignment of coordinate variables (unassigned ones are 0)."""
        pids = []
        for axis, n in enumerate(self.m.grid):
            form = self.norm(Lin(np.zeros((), np.int64), ((f"p{axis}", 1),), (), 64))
            value = 0
            for x, a in form.k:
                if x in self.derived:
                    return None
                value += a * point.get(x, 0)
            pids.append(min(max(value, 0), n - 1))
        return self.m.program_index(*pids)

    # -- accesses

    def bounded_address(self, off) -> str | None:
        """Why an address's per-program footprint is a bound over every program (for the race note):
        it comes from loaded data, or from a per-program value known only by its range; None when it
        is a function of the program's coordinates and loop iterations alone."""
        if isinstance(off, Itv):
            source = "loaded data"
        else:
            names = {x for x, _ in off.k if x in self.derived}
            if not names:
                return None
            source = "loaded data" if any(self.from_declared(x) for x in names) else "a per-program value known by its range"
        return f"an address from {source}, bounded over all {self.P:,} programs at once"

    def from_declared(self, x: str) -> bool:
        """`x` stands for a scalar loaded from a tensor of declared values, or for a quotient or
        remainder of one."""
        if x in self.declared:
            return True
        return any(x in (q, r) and self.from_declared(v) for v, _, q, r in self.parts)

    def site(self, op: Op, kind: str, arg: str, ctx: GCtx) -> SiteResult:
        key = (id(op), ctx.stack, arg)
        s = self.sites.get(key)
        if s is None:
            s = self.sites[key] = SiteResult(kind, arg, op.loc, ctx.stack)
            s.exact = False
            s.tagged = None
        return s

    def record(self, op: Op, kind: str, ptr: Any, mask: Any, ctx: GCtx) -> None:
        if self.probing:
            return
        if isinstance(ptr, GChoice):
            for option, when in ptr.options:
                self.record(op, kind, option, when if mask is None else _and(when, mask), ctx)
            return
        if isinstance(ptr, Opaque) or not isinstance(ptr, GPtr):
            s = self.site(op, kind, "?", ctx)
            if s.refusal is None:
                why = ptr.why if isinstance(ptr, Opaque) else "out-of-vocabulary"
                k = {"data": "indirect-address", "float": "out-of-vocabulary"}.get(why, why)
                message = ptr.message if isinstance(ptr, Opaque) else "a value the model does not follow"
                s.refusal = Refusal(k, f"the address of this {kind} depends on {message or why}", op.loc)
            return
        s = self.site(op, kind, ptr.arg, ctx)
        if s.races_unchecked is None:
            # per lane, a bound over every program: which programs share an element is not known here
            s.races_unchecked = self.bounded_address(ptr.off)
        info = self.m.args[ptr.arg]
        shape = ptr.off.shape
        atoms = ctx.atoms
        anyof = ctx.anyof
        may = np.ones((1,) * len(shape), dtype=bool)
        if isinstance(mask, Msk):
            shape = tuple(np.broadcast_shapes(shape, mask.shape))
            may = mask.may
            atoms = atoms + mask.atoms
            anyof = forms.both(anyof, mask.anyof)
        elif isinstance(mask, Opaque) and mask.bound is not None and isinstance(mask.bound, Msk):
            may = mask.bound.may
        ndim = len(shape)
        off = ptr.off
        if isinstance(off, Lin):
            off = self.norm(off)
        storage = (info.lo * info.elem_size, info.hi * info.elem_size)
        cases = self.under_cases(off, tuple(atoms + d for d in anyof) or (atoms,), shape, storage)
        live = np.zeros(shape, dtype=bool)
        lo = np.full(shape, np.iinfo(np.int64).max, dtype=np.int64)
        hi = np.full(shape, np.iinfo(np.int64).min, dtype=np.int64)
        for c_live, c_lo, c_hi, _ in cases:  # the hull over the cases, each where it has a program
            c_live = np.broadcast_to(c_live & arr(may, ndim), shape)
            live = live | c_live
            lo = np.where(c_live, np.minimum(lo, c_lo), lo)
            hi = np.where(c_live, np.maximum(hi, c_hi), hi)
        if not live.any():
            self.per_program.setdefault((id(op), ctx.stack, ptr.arg), None)
            return
        size = info.elem_size
        elo, ehi = lo[live] // size, hi[live] // size
        s.add_intervals(elo, ehi + 1)
        self._per_program((id(op), ctx.stack, ptr.arg), off, live, size, [(c[0] & arr(may, ndim), c[3]) for c in cases])
        key = (id(op), ctx.stack, ptr.arg)
        if key not in self.pending_sites and (elo.min() < info.lo or ehi.max() >= info.hi):
            full_lo, full_hi = lo // size, hi // size
            low = live & (full_lo < info.lo)
            bad = low | (live & (full_hi >= info.hi))
            where = np.unravel_index(int(np.argmax(bad.reshape(-1))), bad.shape)
            at_low = bool(low[where])
            element = int((full_lo if at_low else full_hi)[where])
            programs = []
            if isinstance(off, Lin):
                # one assignment that reaches this end of the bound, in the case that reaches it (split
                # variables recombined as there)
                rng = next(
                    c_rng
                    for c_live, c_lo, c_hi, c_rng in cases
                    if np.broadcast_to(c_live & arr(may, ndim), shape)[where]
                    and (c_lo if at_low else c_hi)[where] == (lo if at_low else hi)[where]
                )
                _, _, reach_lo, reach_hi = self.extremes(off, rng)
                reach = reach_lo if at_low else reach_hi
                point = {x: int(np.broadcast_to(arr(w, ndim), shape)[where]) for x, w in reach.items()}
                p = self.program_of(self.expand_point(point))
                programs = [] if p is None else [p]
            self.pending_sites[key] = {"lane": tuple(int(i) for i in where), "element": element, "programs": programs}

    def under_cases(
        self, off, cases: tuple[tuple[Lin, ...], ...], shape: tuple[int, ...], storage: tuple[int, int] | None = None
    ) -> list[tuple]:
        """Per case of the conditions (atoms that all hold, one such tuple per disjunct): the lanes some
        program reaches, the offset's lowest and highest there (broadcast to `shape`), the variables'
        ranges. Every running lane satisfies one case, so the hull over them bounds the access. Where
        a bound leaves `storage` (bytes [lo, hi)), the case's atoms are read relationally too."""
        ndim = len(shape)
        out = []
        for atoms in (sub for case in cases for sub in self.by_residue(off, case, lane_count(shape))):
            if isinstance(off, Lin):
                rng, live = self.narrow_vars({x for x, _ in off.k}, atoms, shape)
                lo, hi = self.range_under(off, rng)
                lo, hi = self.tighten(off, atoms, rng, lo, hi)
            else:
                rng, live = self.narrow_vars(set(), atoms, shape)
                lo, hi = off.lo, off.hi
            lo, hi = np.broadcast_to(arr(lo, ndim), shape), np.broadcast_to(arr(hi, ndim), shape)
            if isinstance(off, Lin) and storage is not None:
                alive = np.broadcast_to(live, shape)
                need = (bool((alive & (lo < storage[0])).any()), bool((alive & (hi >= storage[1])).any()))
                if any(need):
                    lo, hi, dead = relational.bound(off, tuple(self.norm(a) for a in atoms), rng, lo, hi, need)
                    if dead is not None:
                        live = live & ~dead
            out.append((live, lo, hi, rng))
        return out

    def by_residue(self, off, atoms: tuple[Lin, ...], lanes: int) -> list[tuple[Lin, ...]]:
        """`atoms` split by the value of a small remainder an atom ties to other variables (a loop over
        `range(pid % 6)`: t < r): one case per value r0, with r == r0, so each case bounds t by r0 and q by
        the programs with that remainder, which the box of (q, r, t) alone does not. The cases cover every
        value of r: their hull is still a bound. At most MAX_RESIDUE_CASES in all, and RESIDUE_LANES
        lanes times cases (each case narrows every lane)."""
        if not isinstance(off, Lin) or not self.parts:
            return [atoms]
        tied = set()
        for a in (self.norm(x) for x in atoms):
            if len(a.k) > 1:
                tied |= {x for x, _ in a.k}
        cases = [atoms]
        for _, m, _, r in self.parts:
            lo, hi = self.vars[r]
            n = len(cases) * (hi - lo + 1)
            if r not in tied or n > MAX_RESIDUE_CASES or n * lanes > RESIDUE_LANES:
                continue
            cases = [
                case + (Lin(np.asarray(-r0, np.int64), ((r, 1),), (), 64), Lin(np.asarray(r0, np.int64), ((r, -1),), (), 64))
                for case in cases
                for r0 in range(lo, hi + 1)
            ]
        return cases

    def _per_program(self, key: tuple, off, live: np.ndarray, size: int, cases: list) -> None:
        """Collect the program part and the lanes' span of an offset affine in the program's coordinates
        (element-aligned), and the span per value of a remainder the cases fix (`residue_spans`);
        anything else leaves the site without a per-program footprint."""
        known = self.per_program.get(key, ...)
        if known is None:
            return
        ok = (
            isinstance(off, Lin)
            and all(x in self.coords or x.startswith("t") for x, _ in off.k)
            and all(a % size == 0 for x, a in off.k if x in self.coords)
        )
        if not ok:
            self.per_program[key] = None
            return
        prog = tuple((x, a // size) for x, a in off.k if x in self.coords)
        inner = Lin(off.c, tuple((x, a) for x, a in off.k if x not in self.coords), off.shape, 64)
        g_lo, g_hi = self.bounds(inner)
        g_lo = np.broadcast_to(arr(g_lo, len(off.shape)), live.shape)[live]
        g_hi = np.broadcast_to(arr(g_hi, len(off.shape)), live.shape)[live]
        lo, hi = int(g_lo.min()) // size, int(g_hi.max()) // size
        # lanes of one program differ only by the per-lane constant when no loop term varies by lane:
        # distinct elements there mean no two lanes of this access meet within an iteration
        c = np.broadcast_to(arr(np.asarray(off.c), len(off.shape)), live.shape)[live]
        distinct = bool(
            all(np.ndim(a) == 0 for _, a in inner.k) and (c % size == 0).all() and np.unique(c // size).size == c.size
        )
        residues = self.residue_spans(inner, cases, live.shape, size)
        if known is ...:
            self.per_program[key] = (prog, lo, hi, distinct, residues)
        elif known[0] == prog:
            merged = _merge_residues(known[4], residues)
            self.per_program[key] = (prog, min(known[1], lo), max(known[2], hi), known[3] and distinct, merged)
        else:
            self.per_program[key] = None

    def residue_spans(self, inner: Lin, cases: list, shape: tuple[int, ...], size: int) -> tuple | None:
        """Where every case of an access with a live lane fixes one and the same remainder coordinate r
        to one value r0 (the cases `by_residue` makes), per r0 the elements [lo, hi] the offset's
        non-coordinate part `inner` reaches in that case (its variables narrowed there: a loop of
        `pid % 6` trips runs r0 iterations): (r, ((r0, lo, hi), ...)); None otherwise. A value of r no
        case has a live lane for is one whose programs make no such access. The cases cover every
        lane a program runs, so each span bounds what the programs with that remainder touch."""
        ndim = len(shape)
        name = None
        spans: dict[int, tuple[int, int]] = {}
        for c_live, rng in cases:
            c_live = np.broadcast_to(c_live, shape)
            if not c_live.any():
                continue
            fixed = []
            for _, _, _, r in self.parts:
                if r in self.coords and r in rng:
                    r_lo = np.broadcast_to(arr(rng[r][0], ndim), shape)[c_live]
                    r_hi = np.broadcast_to(arr(rng[r][1], ndim), shape)[c_live]
                    if (r_lo == r_hi).all() and (r_lo == r_lo[0]).all():
                        fixed.append((r, int(r_lo[0])))
            if len(fixed) != 1 or name not in (None, fixed[0][0]):
                return None
            name, r0 = fixed[0]
            i_lo, i_hi = self.range_under(inner, rng)
            lo = int(np.broadcast_to(arr(i_lo, ndim), shape)[c_live].min()) // size
            hi = int(np.broadcast_to(arr(i_hi, ndim), shape)[c_live].max()) // size
            old = spans.get(r0, (lo, hi))
            spans[r0] = (min(old[0], lo), max(old[1], hi))
        if name is None:
            return None
        return name, tuple((r0, lo, hi) for r0, (lo, hi) in sorted(spans.items()))

    def finish_per_program(self) -> None:
        """Each site's symbolic per-program footprint, in the coordinates the whole run ended with."""
        leaves: set[str] = set()
        for axis in range(3):
            leaves |= {x for x, _ in self.norm(Lin(np.zeros(()), ((f"p{axis}", 1),), (), 64)).k}
        leaves = {x for x in leaves if self.vars[x][1] > self.vars[x][0]}
        for key, site in self.sites.items():
            entry = self.per_program.get(key)
            if entry is None or site.refusal is not None:
                continue
            prog, lo, hi, distinct, residues = entry
            form = self.norm(Lin(np.zeros(()), coefs((prog, 1)), (), 64))
            k = tuple((x, a, self.vars[x][1] - self.vars[x][0] + 1) for x, a in form.k)
            if residues is not None and residues[0] in self.subst:
                residues = None  # the remainder was split again later: its values no longer name programs
            site.per_program = PerProgram(k, tuple(sorted(leaves)), lo, hi, distinct, residues)


def pair_extremes(bq: int, br: int, m: int, last: int, q_rng: tuple, r_rng: tuple) -> tuple:
    """Lowest and highest of bq·q + br·r over integers q in q_rng, r in r_rng with q·m + r <= last (a
    split v = q·m + r of v in [0, last]), per lane, each with the (q, r) reaching it. For a fixed q the
    best r is an end of [r_lo, min(r_hi, last - q·m)]; as q moves, that end is linear on each side of
    the last q where r_hi still fits, so the ends of those two pieces hold the extremes. Lanes with no
    such (q, r) keep the box's values (they have no program: any bound is sound there)."""
    ql, qh = (np.asarray(x, dtype=np.int64) for x in q_rng)
    rl, rh = (np.asarray(x, dtype=np.int64) for x in r_rng)
    qe = np.minimum(qh, (last - rl) // m)  # the last q some r in range fits under
    qa = (last - rh) // m  # the last q where r_hi fits
    big = np.iinfo(np.int64)
    lanes = np.broadcast_shapes(ql.shape, qh.shape, rl.shape, rh.shape)
    f_lo, f_hi = np.full(lanes, big.max), np.full(lanes, big.min)
    w_lo = [np.zeros_like(f_lo), np.zeros_like(f_lo)]
    w_hi = [np.zeros_like(f_lo), np.zeros_like(f_lo)]
    for q in (ql, qe, np.clip(qa, ql, qe), np.clip(qa + 1, ql, qe)):
        r_top = np.minimum(rh, last - q * m)
        for r in (rl, r_top):
            ok = (ql <= q) & (q <= qe) & (rl <= r) & (r <= r_top)
            f = bq * q + br * r
            lower, higher = ok & (f < f_lo), ok & (f > f_hi)
            f_lo, f_hi = np.where(lower, f, f_lo), np.where(higher, f, f_hi)
            w_lo = [np.where(lower, q, w_lo[0]), np.where(lower, r, w_lo[1])]
            w_hi = [np.where(higher, q, w_hi[0]), np.where(higher, r, w_hi[1])]
    none = f_lo > f_hi  # no (q, r) at all: the box
    if none.any():
        box = [bq * ql, bq * qh]
        rbox = [br * rl, br * rh]
        f_lo = np.where(none, np.minimum(*box) + np.minimum(*rbox), f_lo)
        f_hi = np.where(none, np.maximum(*box) + np.maximum(*rbox), f_hi)
    return f_lo, f_hi, (w_lo[0], w_lo[1]), (w_hi[0], w_hi[1])


def _merge_residues(a: tuple | None, b: tuple | None) -> tuple | None:
    """Two records of one site's per-remainder spans as one (None unless both fix the same remainder)."""
    if a is None or b is None or a[0] != b[0]:
        return None
    spans = {r0: (lo, hi) for r0, lo, hi in a[1]}
    for r0, lo, hi in b[1]:
        old = spans.get(r0, (lo, hi))
        spans[r0] = (min(old[0], lo), max(old[1], hi))
    return a[0], tuple((r0, lo, hi) for r0, (lo, hi) in sorted(spans.items()))


def _maximum(a, b):
    return np.maximum(a, b) if isinstance(a, np.ndarray) or isinstance(b, np.ndarray) else max(a, b)


def _minimum(a, b):
    return np.minimum(a, b) if isinstance(a, np.ndarray) or isinstance(b, np.ndarray) else min(a, b)


def _and(a: "Msk | None", b: Any) -> Any:
    if a is None:
        return b
    if isinstance(b, Msk):
        shape = tuple(np.broadcast_shapes(a.shape, b.shape))
        exact = a.exact and b.exact
        return Msk(a.must & b.must, a.may & b.may, a.atoms + b.atoms, shape, exact, forms.both(a.anyof, b.anyof))
    return a


def lane_count(shape: tuple[int, ...]) -> int:
    return math.prod(shape) if shape else 1


__all__ = ["GridGraph", "NotGrid", "PerProgram", "elem_bytes"]
