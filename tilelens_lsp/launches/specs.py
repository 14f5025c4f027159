"""The directive vocabulary and tensor specs: dtypes, limits, checked values, `TensorSpec` builders.

What a launch directive may name and build (docs/directives.md), shared by the evaluator, the statement runner,
the toml tables and editor help. Pure values and checks: nothing here parses or evaluates user text.
"""

from __future__ import annotations

import ast
import math
from dataclasses import dataclass, replace
from typing import Any, Iterable

from tilelens_lsp.model import ArgSpec, DescriptorSpec, ScalarSpec, TensorSpec, TupleSpec

# ---------------------------------------------------------------- vocabulary

DTYPES = (
    "fp8e4nv",
    "fp8e5",
    "fp8e4b15",
    "fp8e4b8",
    "fp8e5b16",
    "fp16",
    "bf16",
    "fp32",
    "fp64",
    "i1",
    "i8",
    "i16",
    "i32",
    "i64",
    "u1",
    "u8",
    "u16",
    "u32",
    "u64",
)
DTYPE_ALIASES = {
    "bool": "i1",
    "int1": "i1",
    "int8": "i8",
    "int16": "i16",
    "int32": "i32",
    "int64": "i64",
    "uint1": "u1",
    "uint8": "u8",
    "uint16": "u16",
    "uint32": "u32",
    "uint64": "u64",
    "float16": "fp16",
    "bfloat16": "bf16",
    "float32": "fp32",
    "float64": "fp64",
    "float8e4nv": "fp8e4nv",
    "float8e5": "fp8e5",
    "float8e4b15": "fp8e4b15",
    "float8e4b8": "fp8e4b8",
    "float8e5b16": "fp8e5b16",
}
FUNCTIONS = ("cdiv", "triton.cdiv", "min", "max", "i64", "tensor", "descriptor")
RESERVED = (
    frozenset(DTYPES) | frozenset(DTYPE_ALIASES) | {"cdiv", "min", "max", "tensor", "triton", "meta", "tl", "descriptor"}
)
DTYPE_MODULES = ("tl", "triton.language")  # `tl.float16`, `triton.language.bfloat16`: a dtype value
LIMIT = 2**64  # magnitude bound on every integer a directive computes
MAX_GRID = 2**31 - 1  # program ids are i32
MAX_DEPTH = 64  # expression nesting
MAX_DIRECTIVE_CHARS = 20_000


def canonical_dtype(name: str) -> str | None:
    """`float16` → `fp16`, `fp16` → `fp16`, anything else → None."""
    return name if name in DTYPES else DTYPE_ALIASES.get(name)


# ---------------------------------------------------------------- values and errors


class EvalError(ValueError):
    """An expression the evaluator refuses. `static` errors do not depend on meta-parameter values."""

    def __init__(self, message: str, node: ast.AST | None = None, static: bool = True) -> None:
        super().__init__(message)
        self.message = message
        self.node = node
        self.static = static
        self.kernel: str | None = None


@dataclass(frozen=True)
class DType:
    name: str


@dataclass(frozen=True)
class GridLambda:
    """`lambda meta: ...`: either already evaluated (`grid`) or kept as source over `meta`."""

    grid: tuple[int, ...] | None
    body: str = ""
    env: tuple[tuple[str, Any], ...] = ()


@dataclass(frozen=True)
class Failed:
    """A name whose binding failed: later uses say so instead of 'unknown name'."""

    line: int


def short(v: int) -> str:
    if v.bit_length() <= 64:
        return str(v)
    exact = abs(v) & (abs(v) - 1) == 0
    return f"{'-' if v < 0 else ''}{'' if exact else '~'}2**{v.bit_length() - 1}"


def kind_of(v: Any) -> str:
    if isinstance(v, TensorSpec):
        return f"a tensor spec {v.dtype}[{', '.join(map(str, v.shape))}]"
    if isinstance(v, ScalarSpec):
        return f"an {v.kind}({v.value}) scalar"
    if isinstance(v, DType):
        return f"the dtype {v.name}"
    if isinstance(v, DescriptorSpec):
        return f"a descriptor over {_spec_text(v.tensor.dtype, v.tensor.shape)}"
    if isinstance(v, GridLambda):
        return "a lambda"
    if v is None:
        return "None"
    names = {bool: "a bool", int: "an int", float: "a float", str: "a string", tuple: "a tuple"}
    return names.get(type(v), type(v).__name__)


def check_int(v: int, node: ast.AST | None, static: bool = False) -> int:
    if abs(v) > LIMIT:
        raise EvalError(
            f"the value {short(v)} is too large: directive values are limited to 2**64 in magnitude", node, static
        )
    return v


def check_number(v: Any, node: ast.AST, sym: str) -> Any:
    if isinstance(v, complex):
        raise EvalError(f"'{sym}' gives a complex number here", node, static=False)
    if isinstance(v, float) and not math.isfinite(v):
        raise EvalError(f"'{sym}' overflows the float range", node, static=False)
    return check_int(v, node) if isinstance(v, int) else v


def need_int(v: Any, what: str, node: ast.AST) -> int:
    if isinstance(v, bool) or not isinstance(v, int):
        raise EvalError(f"{what} must be an int, got {kind_of(v)}", node)
    return v


def need_number(v: Any, what: str, node: ast.AST) -> Any:
    if not isinstance(v, (int, float)):
        raise EvalError(f"{what} needs numbers, got {kind_of(v)}", node)
    return v


# ---------------------------------------------------------------- tensors and grids


def _spec_text(dtype: str, shape: Iterable[int]) -> str:
    return f"{dtype}[{', '.join(map(str, shape))}]"


def _int_tuple(v: Any, what: str, node: ast.AST) -> tuple[int, ...]:
    items = v if isinstance(v, tuple) else (v,)
    return tuple(need_int(x, what, node) for x in items)


def contiguous_strides(shape: tuple[int, ...]) -> tuple[int, ...]:
    """Row-major strides as PyTorch computes them (a size-0 dimension counts as 1)."""
    strides, step = [], 1
    for size in reversed(shape):
        strides.append(step)
        step *= max(size, 1)
    return tuple(reversed(strides))


def make_tensor(
    dtype: str,
    shape: Any,
    strides: Any = None,
    offset: Any = 0,
    storage: Any = None,
    node: ast.AST | None = None,
    values: Any = None,
) -> TensorSpec:
    """A checked TensorSpec; storage defaults to the minimal one covering the view."""
    node = node or ast.Constant(0)
    dims = _int_tuple(shape, "a tensor size", node)
    label = _spec_text(dtype, dims)
    for i, size in enumerate(dims):
        if size < 0:
            raise EvalError(f"negative tensor size {size} in dimension {i} of {label}", node, False)
    numel = math.prod(dims)
    check_int(numel, node)
    steps = contiguous_strides(dims) if strides is None else _int_tuple(strides, "a stride", node)
    if len(steps) != len(dims):
        raise EvalError(f"{label} has {len(dims)} dimensions but {len(steps)} strides", node)
    if any(s < 0 for s in steps):
        raise EvalError(f"strides of {label} must be >= 0, got {steps}", node, False)
    offset = need_int(offset, "offset", node)
    if offset < 0:
        raise EvalError(f"offset of {label} must be >= 0, got {offset}", node, False)
    span = 0 if numel == 0 else offset + sum((d - 1) * s for d, s in zip(dims, steps)) + 1
    check_int(span, node)
    if storage is None:
        storage = span
    elif need_int(storage, "storage", node) < span:
        raise EvalError(
            f"storage={storage} is smaller than the {span} elements the view {label} spans (offset + largest index + 1)",
            node,
            False,
        )
    spec = TensorSpec(dtype, dims, steps, offset, check_int(storage, node))
    return spec if values is None else with_values(spec, values, node)


class ValueList(tuple):
    """A list literal of a directive (`[(0, V), -100]`): only a value set takes one."""


MAX_VALUE_PARTS = 64  # intervals and points of one declared value set


def with_values(t: TensorSpec, values: Any, node: ast.AST | None = None) -> TensorSpec:
    """The spec of an integer tensor whose every element lies in a declared set: `(LO, HI)` (every
    element in [LO, HI)) or a union `[(LO, HI), V, ...]` of intervals and points. Loads from it are
    values in that set, so addresses built from them (embeddings, gathers, labels) get a bounded
    footprint."""
    node = node or ast.Constant(0)
    label = _spec_text(t.dtype, t.shape)
    if not (t.dtype.startswith(("i", "u")) and t.dtype[1:].isdigit()) and t.dtype not in ("bool", "i1"):
        raise EvalError(f"values=(LO, HI) declares the range of an integer tensor; {label} is not one", node)
    if (
        isinstance(values, tuple)
        and not isinstance(values, ValueList)
        and len(values) == 2
        and all(isinstance(v, int) and not isinstance(v, bool) for v in values)
    ):
        lo, hi = values
        if lo >= hi:
            raise EvalError(
                f"the value range of {label} is empty: values=({lo}, {hi}) needs LO < HI (HI is excluded)", node, False
            )
        return replace(t, values=(lo, hi))
    if not isinstance(values, tuple) or not values:
        raise EvalError(
            f"values of {label} must be a pair (LO, HI) or a list of intervals and points "
            f"such as [(0, V), -100], got {kind_of(values)}",
            node,
        )
    if len(values) > MAX_VALUE_PARTS:
        raise EvalError(f"values of {label} has {len(values)} parts: at most {MAX_VALUE_PARTS} intervals and points", node)
    parts = []
    for item in values:
        if isinstance(item, int) and not isinstance(item, bool):
            parts.append((item, item + 1))
            continue
        if not (isinstance(item, tuple) and len(item) == 2):
            raise EvalError(f"values of {label}: each part is an interval (LO, HI) or a point V, got {kind_of(item)}", node)
        lo, hi = (need_int(v, "a value bound", node) for v in item)
        if lo >= hi:
            raise EvalError(
                f"the interval ({lo}, {hi}) in the values of {label} is empty: it needs LO < HI (HI is excluded)",
                node,
                False,
            )
        parts.append((lo, hi))
    merged: list[tuple[int, int]] = []
    for lo, hi in sorted(parts):
        if merged and lo <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], hi))
        else:
            merged.append((lo, hi))
    return replace(t, values=merged[0] if len(merged) == 1 else tuple(merged))


def transpose(t: TensorSpec, node: ast.AST | None = None) -> TensorSpec:
    if len(t.shape) != 2:
        raise EvalError(f"'.T' needs a 2-D tensor spec, got {len(t.shape)}-D {_spec_text(t.dtype, t.shape)}", node)
    return TensorSpec(t.dtype, t.shape[::-1], t.strides[::-1], t.offset, t.storage, t.values)


def make_descriptor(tensor: Any, block: Any, padding: Any = "zero", node: ast.AST | None = None) -> DescriptorSpec:
    """`descriptor(fp16[M, K], block=(64, 64))`: a host-side TensorDescriptor over a tensor spec, its
    shape and strides the tensor's (what `TensorDescriptor.from_tensor` builds)."""
    node = node or ast.Constant(0)
    if not isinstance(tensor, TensorSpec):
        raise EvalError(f"descriptor() describes a tensor spec, got {kind_of(tensor)}", node)
    dims = _int_tuple(block, "a block size", node)
    label = _spec_text(tensor.dtype, tensor.shape)
    if len(dims) != len(tensor.shape):
        raise EvalError(f"the block of a descriptor over {label} needs {len(tensor.shape)} sizes, got {len(dims)}", node)
    if any(d < 1 for d in dims):
        raise EvalError(f"block sizes of a descriptor must be >= 1, got {dims}", node, False)
    if padding not in ("zero", "nan"):
        raise EvalError(f'a descriptor\'s padding is "zero" or "nan", got {padding!r}', node)
    return DescriptorSpec(tensor, dims, padding)


def as_grid(value: Any, node: ast.AST | None = None) -> tuple[int, ...]:
    """An int or a tuple of 1 to 3 ints, each in [0, 2**31-1] (0 is legal: launches nothing)."""
    dims = value if isinstance(value, tuple) else (value,)
    if not 1 <= len(dims) <= 3:
        raise EvalError(f"a grid has 1 to 3 dimensions, got {len(dims)}", node)
    for i, d in enumerate(dims):
        if isinstance(d, bool) or not isinstance(d, int):
            raise EvalError(f"grid dimension {i} must be an int, got {kind_of(d)}", node)
        if d < 0:
            raise EvalError(f"grid dimension {i} is {d}: grid sizes must be >= 0", node, False)
        if d > MAX_GRID:
            raise EvalError(f"grid dimension {i} is {short(d)}: above the 2**31-1 programs a launch can have", node, False)
    return tuple(dims)


def to_arg(value: Any, node: ast.AST | None = None) -> ArgSpec:
    """A launch argument from an evaluated value."""
    if isinstance(value, (TensorSpec, ScalarSpec, DescriptorSpec, TupleSpec)):
        return value
    if isinstance(value, bool):
        return ScalarSpec("bool", value)
    if isinstance(value, int):
        if not -(2**63) <= value < 2**64:
            raise EvalError(f"integer argument {short(value)} does not fit in 64 bits", node)
        return ScalarSpec("int", value)
    if isinstance(value, float):
        return ScalarSpec("float", value)
    if isinstance(value, str):
        return ScalarSpec("str", value)
    if value is None:
        return ScalarSpec("none", None)
    if isinstance(value, DType):  # a dtype-valued constexpr (`compute_type=bf16`): bound as tl.<dtype>
        return ScalarSpec("dtype", value.name)
    if isinstance(value, GridLambda):
        raise EvalError("a lambda is only allowed as the grid: KERNEL[lambda meta: ...](ARGS)", node)
    if isinstance(value, tuple):  # a tuple argument (`(fp16[N], fp16[N])`: per-rank pointers)
        if not value:
            raise EvalError("an empty tuple is not a launch argument", node)
        return TupleSpec(tuple(to_arg(v, node) for v in value))
    raise EvalError(f"{kind_of(value)} is not a launch argument: pass tensors and scalars", node)
