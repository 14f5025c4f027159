"""What the lanes of one store write, as far as the race check between lanes of that store needs it.

`stored` reads the stored value's definitions back from the store (with the enumeration's values of
the current programs, `env`): exact per-lane values where they are known (integers, and floats
converted exactly from integers: `sitofp`, `uitofp`, `extf`, `truncf` where every value is an integer
the float type holds exactly), else classes of lanes that provably store one value (`keys`: lanes
that loaded one element in one load, a pure elementwise op of such values). `Uniformity` proves,
from the definitions alone, values that are one value on every lane whatever the data: one scalar
splat over the lanes, and what loops and branches carry of such values. Of values it does not know
exactly, `origin` says what they derive from (loaded data, a computation, or neither followed), for
the possible race's message.

What this deliberately does not do: float arithmetic (a float is known only as an exact conversion of
an integer), calls, while loops, or reductions: a value it cannot follow leaves the lanes' collision
a possible race (TL006).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import numpy as np

from tilelens_lsp.engines.enumerate.arith import SHAPE_FNS
from tilelens_lsp.engines.values import IntV, PtrV, unsigned
from tilelens_lsp.ttir.reader import Func, Op

if TYPE_CHECKING:
    from tilelens_lsp.engines.enumerate.graph import AccessGraph

# integers of magnitude up to 2**p convert exactly to a float of p significand bits (and stay below its largest value)
EXACT_INT_BITS = {
    "f64": 53,
    "f32": 24,
    "f16": 11,
    "bf16": 8,
    "f8E4M3FN": 4,
    "f8E4M3FNUZ": 4,
    "f8E4M3B11FNUZ": 4,
    "f8E5M2": 3,
    "f8E5M2FNUZ": 3,
}
PURE_ELEMENTWISE = ("arith.", "math.")  # every op of these dialects computes each lane from its operands' lanes
PURE_TT = {"tt.fp_to_fp", "tt.precise_sqrt", "tt.precise_divf", "tt.clampf", "tt.mulhiui"}
MAX_DEPTH = 32
_SPLAT = re.compile(r"dense<\s*[^\s\[\"]")


@dataclass(frozen=True)
class Stored:
    """Per lane, broadcastable to (programs, *lanes): the exact values (`floating`: of a float type),
    or keys (lanes of one program with equal keys store equal values), or neither (None, None)."""

    values: np.ndarray | None = None
    floating: bool = False
    keys: np.ndarray | None = None
    origin: str = "unfollowed"  # what the stored value derives from (`origin`), said where lanes may race


UNKNOWN = Stored()


def stored(g: AccessGraph, op: Op, env: dict) -> Stored:
    """What the store `op` writes, per lane, from its value operand's definitions."""
    func = g.index.func_of.get(id(op))
    if func is None:
        return UNKNOWN
    defs = g.index.defs[func]
    value = op.operands[1]
    if not isinstance(env.get(value), IntV) and Uniformity(defs).uniform(value, frozenset()):
        return Stored(keys=np.zeros((1,), dtype=np.int64))  # one value on every lane of a program
    known = _resolve(g, defs, env, value, 0, {})
    if known.values is not None:
        return known
    return replace(known, origin=origin(defs, value, _block_args(g.m.module.funcs[func], func == g.m.module.entry)))


def _block_args(func: Func, entry: bool) -> dict[str, list[str]]:
    """The block arguments whose values `origin` follows: each loop index, to its loop's bounds and
    step, and (in the kernel itself, not a called function) each declared argument, to nothing."""
    args: dict[str, list[str]] = {n: [] for n, _ in func.args} if entry else {}
    stack = list(func.body.blocks)
    while stack:
        for op in stack.pop().ops:
            if op.name == "scf.for" and op.for_header.iv:
                args[op.for_header.iv] = list(op.operands[:3])
            stack.extend(b for r in op.regions for b in r.blocks)
    return args


def origin(defs: dict[str, Op], name: str, args: dict[str, list[str]]) -> str:
    """What a value derives from, read off its definitions: "loaded" where some load feeds it (loaded
    data decides some of it), else "computed" where it is computed from constants, program and lane
    indices, loop indices and the kernel's declared arguments alone (`args`: block arguments, to what
    each derives from), else "unfollowed" (a value a loop, branch or call produced, an argument of a
    called function, or a chain too deep)."""
    seen: set[str] = set()
    stack = [(name, 0)]
    followed = True
    while stack:
        n, depth = stack.pop()
        if n in seen:
            continue
        seen.add(n)
        if n in args:
            stack.extend((o, depth + 1) for o in args[n])
            continue
        op = defs.get(n)
        if op is None:
            followed = False
            continue
        if op.name == "tt.load":
            return "loaded"
        if op.regions or op.name == "tt.call" or depth > MAX_DEPTH:
            followed = False
            continue
        stack.extend((o, depth + 1) for o in op.operands)
    return "computed" if followed else "unfollowed"


class Uniformity:
    """Which values hold one value on every lane of a program, whatever the data, read off the
    definitions alone: scalars, splats, splat constants, pure elementwise and shape ops of such values,
    a load of one address (no mask, or a uniform mask with a uniform `other`), a branch's results
    whose both yields are, and a loop's carried values whose initial values are and whose yields are
    when the carried values are (the largest such set of a loop's carried values)."""

    def __init__(self, defs: dict[str, Op]) -> None:
        self.defs = defs
        self.carried: dict[str, tuple[Op, int]] = {}  # a loop body's carried value -> (the loop, index)
        self.ivs: set[str] = set()
        for op in {id(o): o for o in defs.values()}.values():
            if op.name == "scf.for":
                header = op.for_header
                if header.iv:
                    self.ivs.add(header.iv)
                for i, name in enumerate(header.iter_args):
                    self.carried[name] = (op, i)
        self.memo: dict[tuple[str, frozenset], bool] = {}
        self.loops: dict[tuple[int, frozenset], frozenset] = {}

    def uniform(self, name: str, assumed: frozenset, depth: int = 0) -> bool:
        key = (name, assumed)
        if key not in self.memo:
            self.memo[key] = False  # a cycle not through a loop's assumption: not uniform
            self.memo[key] = self._uniform(name, assumed, depth)
        return self.memo[key]

    def _uniform(self, name: str, assumed: frozenset, depth: int) -> bool:
        if depth > MAX_DEPTH:
            return False
        op = self.defs.get(name)
        if op is None:  # a block argument
            if name in self.ivs:
                return True
            if name in self.carried:
                loop, i = self.carried[name]
                return not loop.result_types[i].shape or name in assumed
            return False
        i = op.results.index(name)
        ty = op.result_types[i] if i < len(op.result_types) else None
        if ty is not None and not ty.shape:
            return True  # a scalar
        d = depth + 1
        if op.name == "tt.splat":
            return True
        if op.name == "arith.constant":
            return splat_constant(op)
        if op.name in SHAPE_FNS:
            return self.uniform(op.operands[0], assumed, d)
        if op.name == "tt.load":
            ptr_ok = self.uniform(op.operands[0], assumed, d)
            if len(op.operands) == 1:
                return ptr_ok
            return ptr_ok and len(op.operands) > 2 and all(self.uniform(o, assumed, d) for o in op.operands[1:3])
        if op.name == "tt.addptr" or op.name.startswith(PURE_ELEMENTWISE) or op.name in PURE_TT:
            return all(self.uniform(o, assumed, d) for o in op.operands)
        if op.name == "scf.if" and len(op.regions) == 2 and op.regions[1].blocks:
            yields = [r.blocks[0].ops[-1] for r in op.regions]
            return all(y.name == "scf.yield" and self.uniform(y.operands[i], assumed, d) for y in yields)
        if op.name == "scf.for":
            header = op.for_header
            return header.iter_args[i] in self._loop(op, assumed, d)
        return False

    def _loop(self, loop: Op, assumed: frozenset, depth: int) -> frozenset:
        """The largest set of the loop's carried values that start uniform and stay uniform when the
        set is assumed uniform (shrunk until it holds)."""
        key = (id(loop), assumed)
        if key in self.loops:
            return self.loops[key]
        self.loops[key] = frozenset()  # while being computed: assume nothing of it
        names = loop.for_header.iter_args
        inits = loop.operands[3:]
        yielded = loop.regions[0].blocks[0].ops[-1]
        if yielded.name != "scf.yield" or len(inits) != len(names) or len(yielded.operands) != len(names):
            return frozenset()
        live = {n for n, x in zip(names, inits) if self.uniform(x, assumed, depth)}
        while True:
            inside = assumed | frozenset(live)
            keep = {n for n, y in zip(names, yielded.operands) if n in live and self.uniform(y, inside, depth)}
            if keep == live:
                break
            live = keep
        self.loops[key] = frozenset(live)
        return self.loops[key]


def splat_constant(op: Op) -> bool:
    """A constant printed as one value for every element (`dense<1.0>`, `dense<0x7FC00000>`), not a list
    (`dense<[...]>`) or a hex blob of every element (`dense<"0x...">`)."""
    return _SPLAT.search(op.text) is not None


def _keys(s: Stored) -> np.ndarray | None:
    """Equality classes of a resolved value (exact values are their own classes)."""
    return s.values if s.values is not None else s.keys


def _resolve(g: AccessGraph, defs: dict[str, Op], env: dict, name: str, depth: int, memo: dict) -> Stored:
    """What `name` holds per lane. `memo` keeps each (name, depth) answered in this reading: a sum of
    products of loaded values shares its terms, and walking them again from every use is exponential
    in the depth (a bicubic filter's 25 taps took 90,000 steps for 600 values)."""
    key = (name, depth)
    found = memo.get(key)
    if found is None:
        found = memo[key] = _resolve_new(g, defs, env, name, depth, memo)
    return found


def _resolve_new(g: AccessGraph, defs: dict[str, Op], env: dict, name: str, depth: int, memo: dict) -> Stored:
    v = env.get(name)
    if isinstance(v, IntV):
        return Stored(values=v.a)
    op = defs.get(name)
    if op is None or depth > MAX_DEPTH or len(op.results) != 1 or not op.result_types:
        return UNKNOWN
    ty = op.result_types[0]
    if ty.elem == "?":
        return UNKNOWN  # a type the reader did not read: neither a scalar nor a known shape
    if not ty.shape and not ty.is_ptr:
        return Stored(keys=np.zeros((1,), dtype=np.int64))  # a scalar: one value per program
    if op.name == "arith.constant":
        # a float constant printed as one value (dense<1.0>) is that value in every lane
        return Stored(keys=np.zeros((1,) * (len(ty.shape) + 1), dtype=np.int64)) if splat_constant(op) else UNKNOWN
    if op.name in SHAPE_FNS:
        inner = _resolve(g, defs, env, op.operands[0], depth + 1, memo)
        fn = SHAPE_FNS[op.name]
        if inner.values is not None:
            return Stored(values=fn(inner.values, op, ty), floating=inner.floating)
        return Stored(keys=fn(inner.keys, op, ty)) if inner.keys is not None else UNKNOWN
    if op.name in ("arith.sitofp", "arith.uitofp", "arith.extf", "arith.truncf"):
        return _convert(g, defs, env, op, depth, memo)
    if op.name == "tt.load":
        return _loaded(g, defs, env, op, depth, memo)
    if op.name.startswith(PURE_ELEMENTWISE) or op.name in PURE_TT:
        parts = [_keys(_resolve(g, defs, env, o, depth + 1, memo)) for o in op.operands]
        known = [p for p in parts if p is not None]
        if len(known) != len(parts):
            return UNKNOWN
        return Stored(keys=_label(known))
    return UNKNOWN


def _convert(g: AccessGraph, defs: dict[str, Op], env: dict, op: Op, depth: int, memo: dict) -> Stored:
    """An int-to-float or float-to-float conversion: exact values where each is an integer the result
    type holds exactly, else the operand's classes (a conversion maps equal values to equal values)."""
    inner = _resolve(g, defs, env, op.operands[0], depth + 1, memo)
    if inner.values is None:
        return Stored(keys=inner.keys) if inner.keys is not None else UNKNOWN
    values = inner.values.astype(np.int64, copy=False)
    if op.name == "arith.uitofp":
        src = env.get(op.operands[0])
        if not isinstance(src, IntV):
            return Stored(keys=_label([values]))
        values = unsigned(values, src.bits) if src.bits > 1 else values
    elif op.name in ("arith.extf", "arith.truncf") and not inner.floating:
        return Stored(keys=_label([values]))  # a float that is not one of our exact integers
    p = EXACT_INT_BITS.get(op.result_types[0].elem)
    if p is not None and values.size and int(np.abs(values).max()) <= (1 << p):
        return Stored(values=values, floating=True)
    return Stored(keys=_label([values]))


def _loaded(g: AccessGraph, defs: dict[str, Op], env: dict, op: Op, depth: int, memo: dict) -> Stored:
    """A load: lanes that read one element in it read one value; lanes its mask turns off hold
    `other` (lanes with no `other` hold what is undefined: each a class of its own)."""
    ptr = env.get(op.operands[0])
    if not isinstance(ptr, PtrV):
        return UNKNOWN
    addr = ptr.boff
    if len(op.operands) < 2:
        return Stored(keys=addr)
    mask = env.get(op.operands[1])
    if not isinstance(mask, IntV):
        return UNKNOWN
    on = np.broadcast_to(mask.a, np.broadcast_shapes(mask.a.shape, addr.shape))
    if len(op.operands) > 2:
        off = _keys(_resolve(g, defs, env, op.operands[2], depth + 1, memo))
        if off is None:
            return UNKNOWN
    else:
        off = -1 - np.arange(on.size, dtype=np.int64).reshape(on.shape)  # every masked-off lane apart
    return Stored(keys=_label([on, np.where(on, addr, 0), np.where(on, 0, _label([off]))]))


def _label(parts: list[np.ndarray]) -> np.ndarray:
    """One integer key per lane for the tuple of the parts' keys there (equal tuples, equal keys)."""
    cols = []
    for p in parts:
        a = np.asarray(p)
        if a.dtype.kind not in "iub":  # float values: their classes, as integers
            _, inverse = np.unique(a.reshape(-1), return_inverse=True)
            a = inverse.reshape(a.shape)
        cols.append(a.astype(np.int64, copy=False))
    if len(cols) == 1:
        return cols[0]
    shape = np.broadcast_shapes(*(c.shape for c in cols))
    # the tuple's class, one column at a time: (class so far, this column's class) pairs numbered by a
    # one-dimensional unique, so every key stays below the lane count (no overflow) and no row-wise
    # unique (a sort of void records, many times slower) is needed; equal tuples get equal keys
    key = np.zeros(int(np.prod(shape, dtype=np.int64)), dtype=np.int64)
    for c in cols:
        _, col = np.unique(np.broadcast_to(c, shape).reshape(-1), return_inverse=True)
        _, key = np.unique(key * (int(col.max(initial=0)) + 1) + col.reshape(-1), return_inverse=True)
    return key.reshape(shape).astype(np.int64)
