"""Relational guards: a mask comparing linear forms of loaded values bounds the address they build.

`bos = tl.load(cu + i)`, `eos = tl.load(cu + i + 1)`, `mask = o_t < eos - bos`, address `x + bos + o_t`:
each of `bos`, `eos` is known only by its declared interval, so interval arithmetic (and `guards`)
bounds the address by max(bos) + max(o_t). Here the mask's comparisons and the address are written as
linear forms (`engines.linear`) over the program's loaded scalars, with the lane values the
enumeration knows exactly as constants, and each comparison `x < y` / `x <= y` (`==` is both) bounds
the address from above, `bos + o_t = (o_t - eos + bos) + eos <= -1 + max(eos)`, and from below (an
upper bound of its negation: the mirror `eos - 1 - o_t >= bos`); never past what the intervals give.

Soundness: a form follows an op only where the enumeration's own value of it is exact (an `IntV`) or a
declared-range value whose interval arithmetic was checked not to wrap (a `RangeV`: `arith` turns a
range that may wrap, or a cast that may change it, into opaque data, and opaque data has no form).
Atoms are program-uniform scalars (the same value in every lane of a program), so a mask lane's fact
and the address lane that it guards speak of the same unknowns. A comparison joined by `|` gives no
fact (`guards.collect` follows `&` only), nor does an unsigned one unless both sides are non-negative.
Not done here: vector-loaded atoms, loop trip counts, branches and selects.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from tilelens_lsp.engines import linear
from tilelens_lsp.engines.enumerate import guards
from tilelens_lsp.engines.enumerate.arith import SHAPE_FNS
from tilelens_lsp.engines.enumerate.table import Ctx, mask_and
from tilelens_lsp.engines.linear import Form
from tilelens_lsp.engines.ranges import PtrSpan, RangeV
from tilelens_lsp.engines.values import IntV, PtrV, Value
from tilelens_lsp.ttir.reader import Op

if TYPE_CHECKING:
    from tilelens_lsp.engines.enumerate.graph import AccessGraph

CASTS = frozenset(
    {"arith.extsi", "arith.extui", "arith.trunci", "arith.index_cast", "arith.index_castui", "arith.bitcast", "tt.bitcast"}
)
MAX_DEPTH = 64
# a fact `x pred y` as `x - y <= slack`; the other predicates appear in `collect`'s flipped twin
SLACK = {"slt": -1, "sle": 0, "eq": 0, "ult": -1, "ule": 0}


@dataclass(frozen=True)
class Trip:
    """Trip t of a loop whose bounds are loaded (`control._for_ranged`), as its body sees it: the
    induction variable is `lb + offset` (offset = t·step, per program), and the trip runs only where
    that is below `ub`, a signed comparison: `lb + offset < ub`, and below each value `ub` is a
    minimum of. An evaluation that stands for many trips at once (`control._for_summed`) has an
    offset known only by its range: an unknown of its own. A split's loop `range(lo, tl.minimum(lo +
    chunk, end))` thus runs only where `chunk` is positive, which puts `start + split·chunk` at or
    past `start`."""

    func: str
    lb: str
    ub: str
    offset: np.ndarray  # t·step per program, or the lowest of the trips a summed-up evaluation stands for
    offset_hi: np.ndarray | None = None  # ... and then the highest (the offset is an unknown between)


class Forms:
    """Linear forms of one function's values over its loaded scalars, read off their definitions."""

    def __init__(self, g: AccessGraph, func: str, env) -> None:
        self.defs = g.index.defs[func]
        self.env = env
        self.trips = {iv: trip for iv, trip in g.ranged_trips.items() if trip.func == func}
        self.box: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        self.tensor: dict[str, str | None] = {}  # the tensor each atom was loaded from, where known
        self._memo: dict[str, Form | None] = {}

    def of(self, name: str, depth: int = 0) -> Form | None:
        if name not in self._memo:
            self._memo[name] = None  # cycles and depth: no form
            self._memo[name] = self._build(name, depth)
        return self._memo[name]

    def _build(self, name: str, depth: int) -> Form | None:
        v = self.env.get(name)
        if isinstance(v, IntV):
            return linear.constant(v.a) if v.bits > 1 else None
        if isinstance(v, PtrV):
            return linear.constant(v.boff)  # byte offsets from the argument's address
        if not isinstance(v, (RangeV, PtrSpan)) or v.undef is not None or depth > MAX_DEPTH:
            return None
        trip = self.trips.get(name)
        if trip is not None:  # a loop's induction variable on one trip: its start plus t steps
            start = self.of(trip.lb, depth + 1)
            if start is not None:
                return linear.combine(start, self.steps(name, trip))
        op = self.defs.get(name)
        if op is not None and not op.regions:
            form = self._through(op, depth)
            if form is not None:
                return form
        if isinstance(v, RangeV) and v.lo.ndim <= 1:  # a scalar per program: an unknown of its own
            self.box[name] = (np.asarray(v.lo, dtype=np.int64), np.asarray(v.hi, dtype=np.int64))
            self.tensor[name] = v.src[2] if v.src is not None else None
            return linear.atom(name)
        return None

    def steps(self, iv: str, trip: Trip) -> Form:
        """The steps a trip's induction variable is past its start: t·step, or an unknown in a range."""
        if trip.offset_hi is None:
            return linear.constant(trip.offset)
        name = f"{iv}#steps"
        self.box[name] = (np.asarray(trip.offset, dtype=np.int64), np.asarray(trip.offset_hi, dtype=np.int64))
        self.tensor[name] = None
        return linear.atom(name)

    def _through(self, op: Op, depth: int) -> Form | None:
        """The form of `op`'s result from its operands' (None where the op is not linear)."""
        name = op.name
        if name in ("arith.addi", "arith.subi"):
            a, b = (self.of(o, depth + 1) for o in op.operands[:2])
            if a is None or b is None:
                return None
            return linear.combine(a, b, 1 if name == "arith.addi" else -1)
        if name in ("arith.muli", "arith.shli"):
            for mine, other in ((0, 1), (1, 0)):
                c = self.env.get(op.operands[other])
                if not isinstance(c, IntV) or (name == "arith.shli" and mine == 1):
                    continue
                factor = c.a.astype(np.int64)
                if name == "arith.shli":
                    if (factor < 0).any() or (factor > 62).any():
                        return None
                    factor = np.left_shift(np.ones_like(factor), factor)
                a = self.of(op.operands[mine], depth + 1)
                return None if a is None else linear.scale(a, factor)
            return None
        if name in CASTS:  # the handler kept a declared range only where the value is unchanged
            return self.of(op.operands[0], depth + 1)
        if name in guards.SHAPE_OPS:
            a = self.of(op.operands[0], depth + 1)
            return None if a is None else _shaped(a, op)
        if name == "tt.addptr":
            p, off = self.env.get(op.operands[0]), self.of(op.operands[1], depth + 1)
            base = self.of(op.operands[0], depth + 1)
            if base is None or off is None or not isinstance(p, (PtrV, PtrSpan)):
                return None
            return linear.combine(base, linear.scale(off, np.asarray(p.pointee)))
        return None


def _trip_facts(forms: Forms) -> list[tuple[Form, int]]:
    """(x - y, -1) for each `x < y` the running of the loop trips around the access implies (`Trip`)."""
    out = []
    for iv, trip in forms.trips.items():
        start = forms.of(trip.lb)
        if start is None:
            continue
        x = linear.combine(start, forms.steps(iv, trip))
        for end, shaping in [(trip.ub, ()), *guards.extreme_operands(forms.defs, trip.ub, "arith.minsi")]:
            y = _form_through(forms, end, shaping)
            if y is not None:
                out.append((linear.combine(x, y, -1), -1))
    return out


def _facts(forms: Forms, mask_name: str | None, env) -> list[tuple[Form, int]]:
    """(x - y, slack) for each comparison `x pred y` the mask implies, in the mask's lanes, and each
    the loop trips around the access imply."""
    out = _trip_facts(forms)
    if mask_name is None:
        return out
    for f in guards.collect(forms.defs, env, mask_name, True):
        slack = SLACK.get(f.pred)
        if slack is None:
            continue
        # x < min(a, b) is x < a and x < b (max(a, b) < y likewise): `tl.minimum(start + per_split,
        # seq_len)` as a loop's end keeps the relation to the sequence's length
        lefts = [(f.name, ()), *guards.extreme_operands(forms.defs, f.name, "arith.maxsi")]
        rights = [(f.other, ()), *guards.extreme_operands(forms.defs, f.other, "arith.minsi")]
        for left, left_shape in lefts:
            for right, right_shape in rights:
                x, y = _form_through(forms, left, left_shape), _form_through(forms, right, right_shape)
                if x is None or y is None:
                    continue
                if f.pred.startswith("u") and not all(_non_negative(env.get(n)) for n in (left, right)):
                    continue  # an unsigned comparison is the signed one only between non-negative values
                d = linear.combine(x, y, -1)
                for op in f.chain:  # to the lanes of the mask: lane j of it holds the comparison's lane it reads
                    d = _shaped(d, op)
                out.append((d, slack))
    return out


def _lifted(form: Form, ndim: int) -> Form:
    """A program-uniform form (a loop trip's fact: arrays of the program axis only) with the lane axes
    an index of `ndim` axes has, each of length 1, so that it broadcasts over the index's lanes."""

    def lift(a: np.ndarray) -> np.ndarray:
        return a if a.ndim >= ndim else a.reshape((a.shape[:1] or (1,)) + (1,) * (ndim - max(a.ndim, 1)))

    return linear.map_lanes(form, lift)


def _form_through(forms: Forms, name: str, shape: tuple[Op, ...]) -> Form | None:
    form = forms.of(name)
    for op in shape:
        if form is None:
            return None
        form = _shaped(form, op)
    return form


def _shaped(form: Form, op: Op) -> Form:
    """A form through a shape op, with the lane map the enumeration applies to values."""
    fn = SHAPE_FNS[op.name]
    ty = op.result_types[0]
    return linear.map_lanes(form, lambda t: fn(t, op, ty))


def _non_negative(v: Value) -> bool:
    if isinstance(v, IntV):
        return bool((v.a >= 0).all())
    return isinstance(v, RangeV) and bool((v.lo >= 0).all())


def tighten(
    g: AccessGraph, op: Op, ptr_name: str, mask_name: str | None, ptr: Value, mask: Value | None, env, ctx: Ctx
) -> tuple[Value, Value | None]:
    """The access's declared-range address with its ends moved inward by what the mask's comparisons
    say relationally, and the mask without the lanes where those ends cross (the comparisons cannot
    hold there); unchanged where nothing tightens."""
    if not isinstance(ptr, PtrSpan) or ptr.undef is not None:
        return ptr, mask
    func = g.index.func_of.get(id(op))
    info = g.m.args.get(ptr.arg)
    if func is None or info is None:
        return ptr, mask
    # only an end that may leave the storage is worth tightening (the others keep their interval)
    need_top = bool((ptr.hi // info.elem_size >= info.hi).any())
    need_bottom = bool((ptr.lo // info.elem_size < info.lo).any())
    if not (need_top or need_bottom):
        return ptr, mask
    forms = Forms(g, func, env)
    with np.errstate(all="ignore"):
        facts = _facts(forms, mask_name, env)
        if not facts:
            return ptr, mask
        index = forms.of(ptr_name)
        if index is None or not index.k:
            return ptr, mask
        ndim = max([index.c.ndim] + [k.ndim for _, k in index.k])
        facts = [(_lifted(fact, ndim), slack) for fact, slack in facts]
        top = _best(index, facts, forms, ptr) if need_top else None
        # a lower bound is an upper bound of -index (the mirror `eos - 1 - o_t` stays above bos)
        bottom = _best(linear.scale(index, np.asarray(-1)), facts, forms, ptr) if need_bottom else None
    if top is None and bottom is None:
        return ptr, mask
    shape = np.broadcast_shapes(ptr.lo.shape, ptr.hi.shape, *(b.shape for pair in (top, bottom) if pair for b in pair))
    lo, hi = np.broadcast_to(ptr.lo, shape), np.broadcast_to(ptr.hi, shape)
    new_lo = lo if bottom is None else np.maximum(lo, -np.broadcast_to(bottom[0], shape))
    new_hi = hi if top is None else np.minimum(hi, np.broadcast_to(top[0], shape))
    if np.array_equal(new_hi, hi) and np.array_equal(new_lo, lo):
        return ptr, mask
    impossible = new_hi < new_lo
    new_lo, new_hi = np.where(impossible, lo, new_lo), np.where(impossible, hi, new_hi)
    src = None
    if ptr.src is not None:
        # the witness names the offset that takes the address to an end (`cu_seqlens` holding eos)
        ends = []
        for pair, old, new, end in ((bottom, lo, new_lo, 0), (top, hi, new_hi, 1)):
            moved = new != old
            named = np.broadcast_to(pair[1], shape) if pair is not None else np.full(shape, NO_VALUE)
            ends.append(None if (moved & (named == NO_VALUE)).any() else np.where(moved, named, ptr.src[end]))
        if ends[0] is not None and ends[1] is not None:
            src = (ends[0], ends[1], ptr.src[2])
    out = PtrSpan(ptr.arg, new_lo, new_hi, ptr.pointee, None, src, True)
    if impossible.any():
        mask = mask_and(mask, IntV(~impossible, 1)) if mask is not None else IntV(~impossible, 1)
    return out, mask


def _best(index: Form, facts: list[tuple[Form, int]], forms: Forms, ptr: PtrSpan) -> tuple[np.ndarray, np.ndarray] | None:
    """The smallest upper bound of `index` over the facts, per lane, with the loaded value naming it."""
    best: tuple[np.ndarray, np.ndarray] | None = None
    for fact, slack in facts:
        u = linear.upper(index, fact, slack, forms.box)  # k absorbs the bytes per element
        if u is None:
            continue
        named = _named_value(u, forms, ptr)
        if best is None:
            best = (u.hi, named)
        else:
            better = u.hi < best[0]
            best = (np.where(better, u.hi, best[0]), np.where(better, named, best[1]))
    return best


NO_VALUE = np.iinfo(np.int64).min


def _named_value(u: linear.Bound, forms: Forms, ptr: PtrSpan) -> np.ndarray:
    """Per lane the loaded value at which the bound is attained, where that is one atom loaded from the
    tensor the address's own witness names; NO_VALUE elsewhere."""
    if ptr.src is None:
        return np.full((1,), NO_VALUE, dtype=np.int64)
    same = np.array([forms.tensor.get(a) == ptr.src[2] for a in u.atoms] + [False])
    return np.where(same[u.atom], u.value, NO_VALUE)


def most_trips(g: AccessGraph, op: Op, env, step: np.ndarray) -> np.ndarray | None:
    """Per program at most how many trips a loop with loaded bounds runs, from its bounds' relation:
    it runs while `lb + t·step < ub`, and `ub` is at most each value it is a minimum of, so its trips
    are at most ceil(max(y - lb) / step) for each such y (`range(lo, tl.minimum(lo + chunk, end))`:
    at most ceil(max(chunk) / step), whatever the intervals of `lo` and `end`). None: no relation."""
    func = g.index.func_of.get(id(op))
    if func is None:
        return None
    forms = Forms(g, func, env)
    with np.errstate(all="ignore"):
        start = forms.of(op.operands[0])
        if start is None:
            return None
        ub = op.operands[1]
        best = None
        for end, shaping in [(ub, ()), *guards.extreme_operands(forms.defs, ub, "arith.minsi")]:
            if shaping:
                continue  # a lane-shaped operand of a scalar bound: not a scalar's relation
            y = forms.of(end)
            if y is None:
                continue
            top = linear.maximum(linear.combine(y, start, -1), forms.box)
            if top is None:
                continue
            top = np.broadcast_to(top.reshape(top.shape[:1] or (1,)), step.shape)
            trips = np.maximum(0, -((-top) // step))
            best = trips if best is None else np.minimum(best, trips)
    return best
