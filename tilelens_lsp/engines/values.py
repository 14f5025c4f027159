"""The value model both engines share: the launch model they read and the site results they write.

In: nothing above `ttir/` and `refusal`. Integer and pointer values (`IntV`, `PtrV`, `PtrChoice`,
`Opaque`), the records of a launch (`LaunchModel`, `ArgInfo`) and of what it touched (`SiteResult`,
`Obligation`), and the integer semantics of `arith` ops (`BINARY_OPS`, `COMPARISONS`, `wrap`,
`unsigned`) that the enumeration evaluates and the affine summary folds constants with. No evaluation.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Generic, TypeVar

import numpy as np

from tilelens_lsp.dtypes import element_bytes
from tilelens_lsp.refusal import Refusal
from tilelens_lsp.ttir.reader import Module, Op
from tilelens_lsp.ttir.types import Type, operand_types, parse_type, split_top

# ---------------------------------------------------------------- values


@dataclass
class IntV:
    a: np.ndarray  # (P or 1, *shape); bool for i1, int64 otherwise (wrapped to `bits`)
    bits: int


class PtrV:
    """A pointer value: provenance plus byte offsets kept as a short sum of broadcastable terms.

    `base + row * stride + cols` stays (P,1) + (1,C) instead of a (P, C) array until something needs
    the sum; `record` reads contiguity and row heads off the terms, so the common access costs
    O(programs × rows) instead of O(programs × lanes)."""

    __slots__ = ("arg", "terms", "pointee", "_sum")
    MAX_TERMS = 4

    def __init__(
        self, arg: str, boff: np.ndarray | None = None, pointee: int = 1, terms: tuple[np.ndarray, ...] | None = None
    ) -> None:
        self.arg = arg  # kernel parameter the address derives from
        self.pointee = pointee  # bytes per element of the pointee type
        self.terms: tuple[np.ndarray, ...]
        self._sum: np.ndarray | None
        if terms is not None:
            self.terms, self._sum = tuple(terms), None
        elif boff is not None:
            self.terms, self._sum = (boff,), boff
        else:
            raise TypeError("PtrV needs its byte offsets: boff or terms")

    @property
    def boff(self) -> np.ndarray:
        """Byte offsets from the parameter's address, (P or 1, *shape)."""
        if self._sum is None:
            total = self.terms[0]
            for t in self.terms[1:]:
                total = total + t
            self._sum = total
            return total
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
        return PtrV(self.arg, pointee=self.pointee if pointee is None else pointee, terms=tuple(fn(t) for t in self.terms))

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


# what bounds an unknown mask: the enumeration's IntV, the grid engine's own mask value
MaskBound = TypeVar("MaskBound")


@dataclass
class Opaque(Generic[MaskBound]):
    """A value the model does not compute: loaded data (`why='data'`) or an unmodelled op."""

    why: str  # data | float | out-of-vocabulary | inline-asm
    message: str = ""
    loc: str = ""
    bound: MaskBound | None = None  # for an unknown mask: lanes where it may be true (None: any lane)


def unmodelled_value(op_name: str, loc: str, operands: list[Any]) -> Opaque:
    """The value of an op no engine models: loaded data when an operand is, else named by the op's kind.

    Both engines call it, so an address that leads back to such an op is refused alike by either."""
    if any(isinstance(v, Opaque) and v.why == "data" for v in operands):
        return Opaque("data", f"{op_name} of loaded data", loc)
    return Opaque(unmodelled_kind(op_name), f"{op_name} is not modelled", loc)


def widens_i1(op: Op, ty: Type) -> bool:
    """Whether cast `op` widens an i1 to an integer of two bits or more (`cond.to(tl.int32)`): its
    value is 0 or 1 (-1 or 0 sign-extended) whatever the i1 was computed from. The source type is
    read as a type (`%c : tensor<32xi1> to tensor<32xi32>`), never matched in the text, where an
    operand named after a variable `i1` (`arith.extsi %i1 : i32 to i64`) would read as one."""
    if not ty.is_int or ty.bits < 2 or op.name == "arith.trunci":
        return False
    parts = split_top(op.text, " : ")
    return len(parts) > 1 and parse_type(split_top(parts[-1], " to ")[0]).elem == "i1"


def unmodelled_kind(op_name: str) -> str:
    """The refusal kind of an op no engine models, by the op's name."""
    if "inline_asm" in op_name:
        return "inline-asm"
    if "descriptor" in op_name:
        return "tensor-descriptor"
    return "out-of-vocabulary"


def opaque_address_refusal(kind: str, ptr: Opaque, loc: str) -> Refusal:
    """The refusal of an access whose address is `ptr`, a value the model does not compute."""
    name = {"data": "indirect-address", "float": "out-of-vocabulary"}.get(ptr.why, ptr.why)
    hint = ""
    if ptr.why == "data" and "declared-range index" in ptr.message:
        hint = (
            "; the declared range does not bound this arithmetic (a product that may wrap, a "
            "division by a loaded value): a narrower `.values(...)` or 64-bit indices may"
        )
    elif ptr.why == "data":
        hint = "; declaring the values of the index tensor it is loaded from (`i32[N].values(LO, HI)`) bounds it"
    return Refusal(name, f"the address of this {kind} depends on {ptr.message or ptr.why}{hint}", loc)


Value = Any


def same_values(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether two arrays hold the same values once broadcast to one shape (a (P, 1) column equals
    a (P, C) block that repeats it)."""
    x, y = np.broadcast_arrays(a, b)
    return bool(np.array_equal(x, y))


def radix_apart(steps: list[tuple[int, int]], width: int = 1) -> bool:
    """Offsets Σ step·i over axes of (step > 0, extent) with each i in [0, extent), each plus a span of
    `width` elements, never meet for two different index tuples: the steps form a mixed radix, each at
    least `width` past everything the smaller ones reach."""
    reach = 0
    for step, extent in sorted(steps):
        if step < reach + width:
            return False
        reach += step * (extent - 1)
    return True


def sorted_unique(a: np.ndarray) -> np.ndarray:
    """np.unique for int64 element indices, by one sort (numpy's hash-based unique is far slower here)."""
    if a.size == 0:
        return a
    a = np.sort(a, kind="stable" if a.size < 64 else None)
    keep = np.empty(a.size, dtype=bool)
    keep[0] = True
    np.not_equal(a[1:], a[:-1], out=keep[1:])
    return a[keep]


def wrap(a: np.ndarray, bits: int) -> np.ndarray:
    if bits >= 64:
        return a
    if bits == 1:
        return a.astype(bool)
    half = 1 << (bits - 1)
    return ((a + half) & ((1 << bits) - 1)) - half


def unsigned(a: np.ndarray, bits: int) -> np.ndarray:
    if bits >= 64:
        return a.astype(np.uint64)
    return a.astype(np.int64) & ((1 << bits) - 1)


def elem_bytes(elem: str) -> int:
    """Bytes per element of a TTIR element type (dtypes.py), 4 for one the table does not know."""
    size = element_bytes(elem)
    return 4 if size is None else size


# ---------------------------------------------------------------- results of evaluation


@dataclass
class SiteResult:
    """What one access site touched over the whole launch."""

    op: str
    arg: str
    loc: str
    call_stack: tuple[str, ...]
    starts: list[np.ndarray] = field(default_factory=list)  # half-open element intervals touched
    ends: list[np.ndarray] = field(default_factory=list)
    exact: bool = True
    oob: dict[str, Any] | None = None  # first out-of-bounds lane, in evaluation order
    refusal: Refusal | None = None
    view_out: dict[str, Any] | None = None  # first lane inside the storage but outside the view
    # (starts, ends, program index) per program, for races; None when the engine cannot give them
    tagged: list[tuple[np.ndarray, np.ndarray, np.ndarray]] | None = field(default_factory=list)
    # two lanes of one program storing one element: pid, lanes, element, their values (None when not
    # known exactly; origin then says what they derive from), definite (the values differ); the first found
    lane_race: dict[str, Any] | None = None
    # per-lane bounds of a store or load built from a declared-range index, for possible races:
    # (lo, hi, program, lane) flat arrays of element intervals [lo, hi); None past the race budget
    bounds: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]] | None = field(default_factory=list)
    per_program: Any = None  # the grid engine's symbolic per-program footprint (grid.PerProgram), for races
    # why `tagged` or `bounds` was dropped to bound memory (too many of them kept), for the race note
    races_unchecked: str | None = None
    # two programs that store one element at one declared value of the data (a possible race, TL006):
    # element, the two linear program indices, the value and the tensor it fills (`engines/pinned.py`)
    meets: tuple[int, int, int, int, str] | None = None
    # proven from the address form: no element of this site is touched by two programs
    programs_apart: bool = False
    # fills `tagged` when the race check needs it: left by an engine that proved `programs_apart`, since
    # a lone store whose programs stay apart needs no per-program runs (millions at production sizes)
    deferred: Callable[[], None] | None = None
    # where programs are too many to list (the affine summary's symbolic programs): the address form
    # that `programs_apart` was proven of; sites of one argument sharing it cannot race between programs
    apart_form: tuple | None = None

    def fill_tagged(self) -> None:
        """Compute the per-program runs an engine left for later, once."""
        if self.deferred is not None:
            fill, self.deferred = self.deferred, None
            fill()

    def add_tagged(self, starts: np.ndarray, ends: np.ndarray, progs: np.ndarray) -> None:
        if self.tagged is None:
            return
        last = self.tagged[-1] if self.tagged else None
        if (
            last is not None
            and last[1].shape == starts.shape
            and np.array_equal(last[1], starts)
            and np.array_equal(last[2], progs)
        ):
            self.tagged[-1] = (last[0], ends, progs)  # a row continued by the next loop iteration
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

    def compact(self) -> int:
        """Keep the footprint as its merged intervals (the same elements, in fewer entries where they
        overlap or touch); returns how many it keeps."""
        if len(self.starts) > 1 or self.starts and self.starts[0].size > 1:
            s, e = self.intervals()
            self.starts, self.ends = [s], [e]
        return sum(int(a.size) for a in self.starts)


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
    new[1:] = s[1:] > reach[:-1]  # adjacent intervals merge too
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
    lo: int  # lowest valid element index relative to the argument's address
    hi: int  # one past the highest
    # declared set of the tensor's elements: sorted disjoint half-open intervals ((LO, HI), ...)
    values: tuple[tuple[int, int], ...] | None = None
    view: tuple[np.ndarray, np.ndarray] | None = None  # runs the declared view covers, when it does
    # not cover its whole storage (element indices relative to the argument's address)


@dataclass
class LaunchModel:
    module: Module
    arg_values: dict[str, Any]  # entry func arg SSA name → value (scalar ints, ptrs, opaque)
    args: dict[str, ArgInfo]  # pointer parameters by name
    grid: tuple[int, int, int]
    budget: int

    def program_index(self, x: int, y: int = 0, z: int = 0) -> int:
        """The linear index of program (x, y, z): x varies fastest, as the engines number programs."""
        gx, gy, _ = self.grid
        return int(x) + gx * (int(y) + gy * int(z))


# ---------------------------------------------------------------- integer semantics of arith ops


def tdiv(a, b, bits):
    safe = np.where(b == 0, 1, b)
    q = np.abs(a) // np.abs(safe)
    return np.where(b == 0, 0, np.where((a < 0) != (safe < 0), -q, q))


def trem(a, b, bits):
    safe = np.where(b == 0, 1, b)
    return np.where(b == 0, 0, a - tdiv(a, safe, bits) * safe)


def udiv(a, b, bits):
    ua, ub = unsigned(a, bits), unsigned(b, bits)
    one = ub.dtype.type(1)
    return np.where(ub == 0, ub.dtype.type(0), ua // np.where(ub == 0, one, ub)).astype(np.int64)


def urem(a, b, bits):
    ua, ub = unsigned(a, bits), unsigned(b, bits)
    one = ub.dtype.type(1)
    return np.where(ub == 0, ub.dtype.type(0), ua % np.where(ub == 0, one, ub)).astype(np.int64)


def shrui(a, b, bits):
    shift = np.clip(b, 0, 63)
    if bits >= 64:
        return (a.astype(np.uint64) >> shift.astype(np.uint64)).astype(np.int64)
    return unsigned(a, bits) >> shift


def floordiv(a, b, bits):
    safe = np.where(b == 0, 1, b)
    return np.where(b == 0, 0, a // safe)


def ceildiv(a, b, bits):
    safe = np.where(b == 0, 1, b)
    return np.where(b == 0, 0, -((-a) // safe))


# op → (fn(a, b, bits) on int64 arrays, whether the result carries a width obligation)
BINARY_OPS = {
    "arith.addi": (lambda a, b, w: a + b, True),
    "arith.subi": (lambda a, b, w: a - b, True),
    "arith.muli": (lambda a, b, w: a * b, True),
    "arith.shli": (lambda a, b, w: np.where((b >= 0) & (b < w), a << np.clip(b, 0, 63), 0), True),
    "arith.shrsi": (lambda a, b, w: a >> np.clip(b, 0, 63), False),
    "arith.shrui": (shrui, False),
    "arith.divsi": (tdiv, False),
    "arith.remsi": (trem, False),
    "arith.divui": (udiv, False),
    "arith.remui": (urem, False),
    "arith.floordivsi": (floordiv, False),
    "arith.ceildivsi": (ceildiv, False),
    "arith.minsi": (lambda a, b, w: np.minimum(a, b), False),
    "arith.maxsi": (lambda a, b, w: np.maximum(a, b), False),
    "arith.minui": (lambda a, b, w: np.where(unsigned(a, w) <= unsigned(b, w), a, b), False),
    "arith.maxui": (lambda a, b, w: np.where(unsigned(a, w) >= unsigned(b, w), a, b), False),
    "arith.andi": (lambda a, b, w: a & b, False),
    "arith.ori": (lambda a, b, w: a | b, False),
    "arith.xori": (lambda a, b, w: a ^ b, False),
}


COMPARISONS = {
    "eq": np.equal,
    "ne": np.not_equal,
    "slt": np.less,
    "sle": np.less_equal,
    "sgt": np.greater,
    "sge": np.greater_equal,
    "ult": np.less,
    "ule": np.less_equal,
    "ugt": np.greater,
    "uge": np.greater_equal,
}


def histogram_lanes(op_text: str) -> int | None:
    """The number of lanes `tt.histogram` counts: its input tensor's size, from the op's type
    (`tt.histogram %x : tensor<64xi32> -> tensor<16xi32>`); None where the text gives none."""
    types = operand_types(op_text)
    if not types or not types[0].shape:
        return None
    return int(np.prod(types[0].shape, dtype=np.int64))


def gather_source_extent(op_text: str, axis: int) -> int | None:
    """The length along `axis` of the tensor `tt.gather` reads from, from the op's type
    (`tt.gather %src[%idx] {axis = 0 : i32} : (tensor<16xi32>, tensor<64xi32>) -> ...`)."""
    types = operand_types(op_text)
    shape = types[0].shape if types else ()
    return shape[axis] if 0 <= axis < len(shape) else None
