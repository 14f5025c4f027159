"""Launch directives: `# tilelens:` comments turned into fully evaluated `LaunchSpec` records.

A kernel cannot be compiled without example arguments, so users declare launches next to it (DESIGN §2).
User text is parsed with `ast` and walked by a small whitelist evaluator: nothing it says is executed.
"""

from __future__ import annotations

import ast
import copy
import functools
import difflib
import io
import math
import operator
import re
import tokenize
from dataclasses import dataclass, replace
from typing import Any, Callable, Iterable, Mapping

from .model import ArgSpec, DirectiveError, LaunchSpec, ScalarSpec, TensorSpec
from .suppress import is_ignore

# ---------------------------------------------------------------- vocabulary

DTYPES = ("fp8e4nv", "fp8e5", "fp8e4b15", "fp8e4b8", "fp8e5b16", "fp16", "bf16", "fp32", "fp64",
          "i1", "i8", "i16", "i32", "i64", "u1", "u8", "u16", "u32", "u64")
DTYPE_ALIASES = {
    "bool": "i1", "int1": "i1", "int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64",
    "uint1": "u1", "uint8": "u8", "uint16": "u16", "uint32": "u32", "uint64": "u64",
    "float16": "fp16", "bfloat16": "bf16", "float32": "fp32", "float64": "fp64",
    "float8e4nv": "fp8e4nv", "float8e5": "fp8e5", "float8e4b15": "fp8e4b15",
    "float8e4b8": "fp8e4b8", "float8e5b16": "fp8e5b16",
}
FUNCTIONS = ("cdiv", "triton.cdiv", "min", "max", "i64", "tensor")
RESERVED = frozenset(DTYPES) | frozenset(DTYPE_ALIASES) | {"cdiv", "min", "max", "tensor", "triton", "meta"}
LIMIT = 2**64                 # magnitude bound on every integer a directive computes
MAX_GRID = 2**31 - 1          # program ids are i32
MAX_DEPTH = 64                # expression nesting
MAX_DIRECTIVE_CHARS = 20_000
_ALLOWED = ("allowed: literals, names, + - * // % **, unary -, cdiv, triton.cdiv, min, max, "
            "tuples, tensor specs")
_CALLS_MESSAGE = "only " + ", ".join(FUNCTIONS)
_STATEMENT_FORMS = "`NAME = expr` or `KERNEL[GRID](ARGS)`"


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
class _Failed:
    """A name whose binding failed: later uses say so instead of 'unknown name'."""

    line: int


class _Probe(dict):
    """Stand-in for `meta` when checking a grid lambda statically: every key reads as 1."""

    def __missing__(self, key: str) -> int:
        return 1


def _short(v: int) -> str:
    if v.bit_length() <= 64:
        return str(v)
    exact = abs(v) & (abs(v) - 1) == 0
    return f"{'-' if v < 0 else ''}{'' if exact else '~'}2**{v.bit_length() - 1}"


def _kind(v: Any) -> str:
    if isinstance(v, TensorSpec):
        return f"a tensor spec {v.dtype}[{', '.join(map(str, v.shape))}]"
    if isinstance(v, ScalarSpec):
        return f"an {v.kind}({v.value}) scalar"
    if isinstance(v, DType):
        return f"the dtype {v.name}"
    if isinstance(v, GridLambda):
        return "a lambda"
    if v is None:
        return "None"
    names = {bool: "a bool", int: "an int", float: "a float", str: "a string", tuple: "a tuple"}
    return names.get(type(v), type(v).__name__)


def _check_int(v: int, node: ast.AST | None, static: bool = False) -> int:
    if abs(v) > LIMIT:
        raise EvalError(f"the value {_short(v)} is too large: directive values are limited to 2**64 "
                        "in magnitude", node, static)
    return v


def _check_number(v: Any, node: ast.AST, sym: str) -> Any:
    if isinstance(v, complex):
        raise EvalError(f"'{sym}' gives a complex number here", node, static=False)
    if isinstance(v, float) and not math.isfinite(v):
        raise EvalError(f"'{sym}' overflows the float range", node, static=False)
    return _check_int(v, node) if isinstance(v, int) else v


def _need_int(v: Any, what: str, node: ast.AST) -> int:
    if isinstance(v, bool) or not isinstance(v, int):
        raise EvalError(f"{what} must be an int, got {_kind(v)}", node)
    return v


def _need_number(v: Any, what: str, node: ast.AST) -> Any:
    if not isinstance(v, (int, float)):
        raise EvalError(f"{what} needs numbers, got {_kind(v)}", node)
    return v


# ---------------------------------------------------------------- tensors and grids


def _spec_text(dtype: str, shape: Iterable[int]) -> str:
    return f"{dtype}[{', '.join(map(str, shape))}]"


def _int_tuple(v: Any, what: str, node: ast.AST) -> tuple[int, ...]:
    items = v if isinstance(v, tuple) else (v,)
    return tuple(_need_int(x, what, node) for x in items)


def contiguous_strides(shape: tuple[int, ...]) -> tuple[int, ...]:
    """Row-major strides as PyTorch computes them (a size-0 dimension counts as 1)."""
    strides, step = [], 1
    for size in reversed(shape):
        strides.append(step)
        step *= max(size, 1)
    return tuple(reversed(strides))


def make_tensor(dtype: str, shape: Any, strides: Any = None, offset: Any = 0, storage: Any = None,
                node: ast.AST | None = None, values: Any = None) -> TensorSpec:
    """A checked TensorSpec; storage defaults to the minimal one covering the view."""
    node = node or ast.Constant(0)
    dims = _int_tuple(shape, "a tensor size", node)
    label = _spec_text(dtype, dims)
    for i, size in enumerate(dims):
        if size < 0:
            raise EvalError(f"negative tensor size {size} in dimension {i} of {label}", node, False)
    numel = math.prod(dims)
    _check_int(numel, node)
    steps = contiguous_strides(dims) if strides is None else _int_tuple(strides, "a stride", node)
    if len(steps) != len(dims):
        raise EvalError(f"{label} has {len(dims)} dimensions but {len(steps)} strides", node)
    if any(s < 0 for s in steps):
        raise EvalError(f"strides of {label} must be >= 0, got {steps}", node, False)
    offset = _need_int(offset, "offset", node)
    if offset < 0:
        raise EvalError(f"offset of {label} must be >= 0, got {offset}", node, False)
    span = 0 if numel == 0 else offset + sum((d - 1) * s for d, s in zip(dims, steps)) + 1
    _check_int(span, node)
    if storage is None:
        storage = span
    elif _need_int(storage, "storage", node) < span:
        raise EvalError(f"storage={storage} is smaller than the {span} elements the view {label} "
                        f"spans (offset + largest index + 1)", node, False)
    spec = TensorSpec(dtype, dims, steps, offset, _check_int(storage, node))
    return spec if values is None else with_values(spec, values, node)


def with_values(t: TensorSpec, values: Any, node: ast.AST | None = None) -> TensorSpec:
    """The spec of an integer tensor whose every element lies in [LO, HI): loads from it are values in
    that interval, so addresses built from them (embeddings, gathers, labels) get a bounded footprint."""
    node = node or ast.Constant(0)
    label = _spec_text(t.dtype, t.shape)
    if not (t.dtype.startswith(("i", "u")) and t.dtype[1:].isdigit()) and t.dtype not in ("bool", "i1"):
        raise EvalError(f"values=(LO, HI) declares the range of an integer tensor; {label} is not one", node)
    pair = values if isinstance(values, tuple) else None
    if pair is None or len(pair) != 2:
        raise EvalError(f"values of {label} must be a pair (LO, HI), got {_kind(values)}", node)
    lo, hi = (_need_int(v, "a value bound", node) for v in pair)
    if lo >= hi:
        raise EvalError(f"the value range of {label} is empty: values=({lo}, {hi}) needs LO < HI "
                        "(HI is excluded)", node, False)
    return replace(t, values=(lo, hi))


def transpose(t: TensorSpec, node: ast.AST | None = None) -> TensorSpec:
    if len(t.shape) != 2:
        raise EvalError(f"'.T' needs a 2-D tensor spec, got {len(t.shape)}-D "
                        f"{_spec_text(t.dtype, t.shape)}", node)
    return TensorSpec(t.dtype, t.shape[::-1], t.strides[::-1], t.offset, t.storage, t.values)


def as_grid(value: Any, node: ast.AST | None = None) -> tuple[int, ...]:
    """An int or a tuple of 1 to 3 ints, each in [0, 2**31-1] (0 is legal: launches nothing)."""
    dims = value if isinstance(value, tuple) else (value,)
    if not 1 <= len(dims) <= 3:
        raise EvalError(f"a grid has 1 to 3 dimensions, got {len(dims)}", node)
    for i, d in enumerate(dims):
        if isinstance(d, bool) or not isinstance(d, int):
            raise EvalError(f"grid dimension {i} must be an int, got {_kind(d)}", node)
        if d < 0:
            raise EvalError(f"grid dimension {i} is {d}: grid sizes must be >= 0", node, False)
        if d > MAX_GRID:
            raise EvalError(f"grid dimension {i} is {_short(d)}: above the 2**31-1 programs a "
                            "launch can have", node, False)
    return tuple(dims)


# ---------------------------------------------------------------- the evaluator


_BINOPS: dict[type, tuple[str, Callable[[Any, Any], Any]]] = {
    ast.Add: ("+", operator.add), ast.Sub: ("-", operator.sub), ast.Mult: ("*", operator.mul),
    ast.FloorDiv: ("//", operator.floordiv), ast.Mod: ("%", operator.mod),
    ast.Pow: ("**", operator.pow),
}
_OTHER_OPS = {ast.Div: "/", ast.MatMult: "@", ast.LShift: "<<", ast.RShift: ">>", ast.BitOr: "|",
              ast.BitAnd: "&", ast.BitXor: "^", ast.Not: "not", ast.Invert: "~"}
_NODE_WORDS = {
    "List": "a list", "Dict": "a dict", "Set": "a set", "Compare": "a comparison",
    "BoolOp": "'and'/'or'", "IfExp": "a conditional expression", "JoinedStr": "an f-string",
    "ListComp": "a comprehension", "SetComp": "a comprehension", "DictComp": "a comprehension",
    "GeneratorExp": "a generator", "NamedExpr": "':='", "Slice": "a slice",
    "Starred": "'*' unpacking", "Await": "'await'", "Yield": "'yield'", "YieldFrom": "'yield'",
}


def _call_name(func: ast.AST) -> str:
    if isinstance(func, ast.Name):
        return func.id
    try:
        text = ast.unparse(func)
    except RecursionError:
        text = type(func).__name__
    return text if len(text) <= 60 else text[:57] + "..."


class Evaluator:
    """Evaluates one expression over `env`; `meta_name[...]` reads `meta` inside a grid lambda."""

    def __init__(self, env: Mapping[str, Any], *, source: str = "",
                 meta: Mapping[str, Any] | None = None, meta_name: str | None = None,
                 future: Mapping[str, int] | None = None) -> None:
        self.env = env
        self.source = source
        self.meta = meta
        self.meta_name = meta_name
        self.future = future or {}
        self._depth = 0

    def eval(self, node: ast.AST) -> Any:
        self._depth += 1
        try:
            if self._depth > MAX_DEPTH:
                raise EvalError(f"expression nested too deeply (more than {MAX_DEPTH} levels)", node)
            handler = getattr(self, f"_e_{type(node).__name__}", None)
            if handler is None:
                word = _NODE_WORDS.get(type(node).__name__, f"'{type(node).__name__}'")
                raise EvalError(f"{word} is not allowed in directives ({_ALLOWED})", node)
            return handler(node)
        finally:
            self._depth -= 1

    # -- leaves

    def _e_Constant(self, node: ast.Constant) -> Any:
        v = node.value
        if v is None or isinstance(v, (bool, str)):
            return v
        if isinstance(v, int):
            return _check_int(v, node, static=True)
        if isinstance(v, float):
            if not math.isfinite(v):
                raise EvalError("float literal out of range", node)
            return v
        raise EvalError(f"{type(v).__name__} literals are not allowed in directives "
                        "(use int, float, bool, str or None)", node)

    def _e_Name(self, node: ast.Name) -> Any:
        name = node.id
        if name == self.meta_name:
            raise EvalError(f"'{name}' can only be read as {name}[\"NAME\"]", node)
        if name in self.env:
            value = self.env[name]
            if isinstance(value, _Failed):
                raise EvalError(f"'{name}' has no value: its binding on line {value.line} failed", node)
            return value
        dtype = canonical_dtype(name)
        if dtype:
            return DType(dtype)
        if name in ("cdiv", "min", "max", "tensor", "triton"):
            raise EvalError(f"'{name}' must be called here, as in {name}(...)"
                            if name != "triton" else "'triton' is only allowed as triton.cdiv(a, b)",
                            node)
        raise EvalError(self._unknown_name(name), node)

    def _unknown_name(self, name: str) -> str:
        if name in self.future:
            return (f"unknown name '{name}': it is bound on line {self.future[name]}, below this "
                    "directive (a binding applies to the directives after it)")
        names = sorted(k for k, v in self.env.items() if not isinstance(v, _Failed))
        close = difflib.get_close_matches(name, names, 1)
        guess = f"did you mean '{close[0]}'? " if close else ""
        if not names:
            return f"unknown name '{name}' (no names are bound here: bind it first with `{name} = ...`)"
        if len(names) <= 12:
            return f"unknown name '{name}' ({guess}names in scope: {', '.join(names)})"
        return f"unknown name '{name}'" + (f" ({guess.strip()})" if guess else "")

    def _e_Tuple(self, node: ast.Tuple) -> tuple[Any, ...]:
        return tuple(self.eval(e) for e in node.elts)

    # -- arithmetic

    def _e_BinOp(self, node: ast.BinOp) -> Any:
        entry = _BINOPS.get(type(node.op))
        if entry is None:
            sym = _OTHER_OPS.get(type(node.op), type(node.op).__name__)
            hint = ": use // for integer division" if sym == "/" else ""
            raise EvalError(f"operator '{sym}' is not allowed in directives{hint} "
                            "(allowed: + - * // % **)", node)
        sym, fn = entry
        left = _need_number(self.eval(node.left), f"operator '{sym}'", node)
        right = _need_number(self.eval(node.right), f"operator '{sym}'", node)
        if (sym == "**" and isinstance(left, int) and isinstance(right, int)
                and abs(left) > 1 and right > 64):
            raise EvalError(f"{_short(left)} ** {_short(right)} is too large: directive values are "
                            "limited to 2**64 in magnitude", node, static=False)
        try:
            result = fn(left, right)
        except ZeroDivisionError:
            raise EvalError(f"division by zero in '{sym}'", node, static=False) from None
        except OverflowError:
            raise EvalError(f"'{sym}' overflows the float range", node, static=False) from None
        return _check_number(result, node, sym)

    def _e_UnaryOp(self, node: ast.UnaryOp) -> Any:
        if isinstance(node.op, (ast.USub, ast.UAdd)):
            sym = "-" if isinstance(node.op, ast.USub) else "+"
            value = _need_number(self.eval(node.operand), f"unary '{sym}'", node)
            return -value if sym == "-" else +value
        raise EvalError(f"operator '{_OTHER_OPS.get(type(node.op), '?')}' is not allowed in "
                        "directives (allowed: + - * // % **)", node)

    # -- calls, tensors, attributes

    def _e_Call(self, node: ast.Call) -> Any:
        name = _call_name(node.func)
        if isinstance(node.func, ast.Attribute) and node.func.attr == "values" and name != "triton.values":
            return self._values_method(node)
        if isinstance(node.func, ast.Attribute) and name == "triton.cdiv":
            name = "cdiv"
        elif not isinstance(node.func, ast.Name) or name not in FUNCTIONS:
            raise EvalError(f"calls of '{name}' are not allowed in directives: {_CALLS_MESSAGE}", node)
        if any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
            raise EvalError(f"'*' and '**' unpacking are not allowed in {name}(...)", node)
        if name == "tensor":
            return self._tensor(node)
        if node.keywords:
            raise EvalError(f"{name}() takes no keyword arguments", node)
        args = [self.eval(a) for a in node.args]
        return getattr(self, f"_f_{name}")(args, node)

    def _values_method(self, node: ast.Call) -> TensorSpec:
        """`i32[N].values(LO, HI)`: the short form of `tensor(i32, (N,), values=(LO, HI))`."""
        spec = self.eval(node.func.value)   # type: ignore[attr-defined]
        if not isinstance(spec, TensorSpec):
            raise EvalError(f"'.values(LO, HI)' needs a tensor spec, got {_kind(spec)}", node)
        if node.keywords or len(node.args) != 2 or any(isinstance(a, ast.Starred) for a in node.args):
            raise EvalError("'.values' takes two arguments: .values(LO, HI), every element in [LO, HI)", node)
        return with_values(spec, tuple(self.eval(a) for a in node.args), node)

    def _f_cdiv(self, args: list[Any], node: ast.Call) -> int:
        if len(args) != 2:
            raise EvalError(f"cdiv takes 2 arguments, got {len(args)}", node)
        a, b = (_need_int(v, "each argument of cdiv", node) for v in args)
        if b == 0:
            raise EvalError("cdiv by zero", node, static=False)
        return _check_int((a + b - 1) // b, node)

    def _f_min(self, args: list[Any], node: ast.Call, pick: Callable = min) -> Any:
        name = pick.__name__
        if len(args) == 1 and isinstance(args[0], tuple):
            args = list(args[0])
        if not args:
            raise EvalError(f"{name}() needs at least one value", node)
        return pick(_need_number(v, f"{name}()", node) for v in args)

    def _f_max(self, args: list[Any], node: ast.Call) -> Any:
        return self._f_min(args, node, max)

    def _f_i64(self, args: list[Any], node: ast.Call) -> ScalarSpec:
        if len(args) != 1:
            raise EvalError(f"i64 takes 1 argument, got {len(args)}", node)
        v = _need_int(args[0], "the argument of i64", node)
        if not -2**63 <= v < 2**63:
            raise EvalError(f"i64({_short(v)}) does not fit in a signed 64-bit int", node, False)
        return ScalarSpec("i64", v)

    def _tensor(self, node: ast.Call) -> TensorSpec:
        params = ("dtype", "shape", "strides", "offset", "storage", "values")
        if len(node.args) > len(params):
            raise EvalError(f"tensor() takes at most {len(params)} arguments, got {len(node.args)}", node)
        given: dict[str, ast.expr] = dict(zip(params, node.args))
        for kw in node.keywords:
            if kw.arg not in params:
                raise EvalError(f"tensor() has no parameter '{kw.arg}' (parameters: "
                                f"{', '.join(params)})", kw.value)
            if kw.arg in given:
                raise EvalError(f"tensor() got '{kw.arg}' twice", kw.value)
            given[kw.arg] = kw.value
        for required in ("dtype", "shape"):
            if required not in given:
                raise EvalError(f"tensor() needs a {required}: tensor(fp16, (M, K), strides=..., "
                                "offset=..., storage=...)", node)
        dtype = self._dtype_of(given.pop("dtype"))
        values = {k: self.eval(v) for k, v in given.items()}
        return make_tensor(dtype, node=node, **values)

    def _dtype_of(self, node: ast.expr) -> str:
        if isinstance(node, ast.Name) and node.id not in self.env:
            dtype = canonical_dtype(node.id)
            if dtype is None:
                close = difflib.get_close_matches(node.id, DTYPES + tuple(DTYPE_ALIASES), 1)
                guess = f"did you mean {close[0]}? " if close else ""
                raise EvalError(f"unknown dtype '{node.id}' ({guess}Triton dtypes: "
                                f"{' '.join(DTYPES)})", node)
            return dtype
        value = self.eval(node)
        if isinstance(value, str) and canonical_dtype(value):
            return canonical_dtype(value) or ""
        if not isinstance(value, DType):
            raise EvalError(f"expected a dtype such as fp32, got {_kind(value)}", node)
        return value.name

    def _e_Subscript(self, node: ast.Subscript) -> Any:
        base = node.value
        if self.meta_name and isinstance(base, ast.Name) and base.id == self.meta_name:
            return self._meta(node)
        dtype = self._dtype_of(base)
        return make_tensor(dtype, self.eval(node.slice), node=node)

    def _meta(self, node: ast.Subscript) -> Any:
        key = self.eval(node.slice)
        if not isinstance(key, str):
            raise EvalError(f"{self.meta_name}[...] needs a string key, as in "
                            f"{self.meta_name}[\"BLOCK_SIZE\"]", node)
        assert self.meta is not None
        try:
            return self.meta[key]
        except KeyError:
            have = ", ".join(sorted(map(str, self.meta))) or "nothing"
            raise EvalError(f"the grid reads {self.meta_name}[\"{key}\"] but the launch has no "
                            f"'{key}' (it has: {have})", node, static=False) from None

    def _e_Attribute(self, node: ast.Attribute) -> Any:
        if node.attr == "T":
            value = self.eval(node.value)
            if not isinstance(value, TensorSpec):
                raise EvalError(f"'.T' needs a tensor spec, got {_kind(value)}", node)
            return transpose(value, node)
        if _call_name(node) == "triton.cdiv":
            raise EvalError("'triton.cdiv' must be called, as in triton.cdiv(a, b)", node)
        raise EvalError(f"attribute '.{node.attr}' is not allowed in directives (only '.T' on a "
                        "tensor spec and triton.cdiv)", node)

    # -- grid lambdas

    def _e_Lambda(self, node: ast.Lambda) -> GridLambda:
        if self.meta_name is not None:
            raise EvalError("a lambda inside a grid lambda is not allowed", node)
        a = node.args
        if a.posonlyargs or a.kwonlyargs or a.vararg or a.kwarg or a.defaults or len(a.args) != 1:
            raise EvalError("a grid lambda takes exactly one parameter: lambda meta: (...)", node)
        param = a.args[0].arg
        inner = Evaluator(self.env, source=self.source, meta=_Probe(), meta_name=param,
                          future=self.future)
        inner._depth = self._depth
        if not any(isinstance(n, ast.Name) and n.id == param for n in ast.walk(node.body)):
            return GridLambda(as_grid(inner.eval(node.body), node.body))
        captures = self._captures(node.body, param)
        try:
            as_grid(inner.eval(node.body), node.body)
        except EvalError as e:
            if e.static:
                raise
        return GridLambda(None, self._lambda_body(node.body, param), captures)

    def _lambda_body(self, body: ast.expr, param: str) -> str:
        if param == "meta":
            text = ast.get_source_segment(self.source, body) if self.source else None
            if text:
                return text

        class Rename(ast.NodeTransformer):
            def visit_Name(self, n: ast.Name) -> ast.Name:
                return ast.Name("meta", n.ctx) if n.id == param else n

        return ast.unparse(Rename().visit(copy.deepcopy(body)))

    def _captures(self, body: ast.expr, param: str) -> tuple[tuple[str, Any], ...]:
        out: dict[str, Any] = {}
        for n in ast.walk(body):
            if isinstance(n, ast.Name) and n.id != param and n.id in self.env:
                value = self.env[n.id]
                if not isinstance(value, (int, float, str)):
                    raise EvalError(f"a grid lambda can only use int, float, bool or str names; "
                                    f"'{n.id}' is {_kind(value)}", n)
                out[n.id] = value
        return tuple(sorted(out.items()))


def eval_grid(grid_expr: str, grid_env: Mapping[str, Any] | Iterable[tuple[str, Any]],
              meta: Mapping[str, Any]) -> tuple[int, ...]:
    """Evaluate a grid lambda's body (`LaunchSpec.grid_expr`) once the meta-parameters are known.

    Raises EvalError with a precise message for anything not a grid of 1 to 3 ints >= 0.
    """
    if len(grid_expr) > MAX_DIRECTIVE_CHARS:
        raise EvalError(f"grid expression too long ({len(grid_expr)} characters)")
    try:
        tree = ast.parse(f"(\n{grid_expr}\n)", mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError) as e:
        raise EvalError(f"cannot parse the grid expression: {e}") from None
    env = dict(grid_env.items() if isinstance(grid_env, Mapping) else grid_env)
    value = Evaluator(env, meta=dict(meta), meta_name="meta").eval(tree.body)
    return as_grid(value, tree.body)


def to_arg(value: Any, node: ast.AST | None = None) -> ArgSpec:
    """A launch argument from an evaluated value."""
    if isinstance(value, (TensorSpec, ScalarSpec)):
        return value
    if isinstance(value, bool):
        return ScalarSpec("bool", value)
    if isinstance(value, int):
        if not -2**63 <= value < 2**64:
            raise EvalError(f"integer argument {_short(value)} does not fit in 64 bits", node)
        return ScalarSpec("int", value)
    if isinstance(value, float):
        return ScalarSpec("float", value)
    if isinstance(value, str):
        return ScalarSpec("str", value)
    if value is None:
        return ScalarSpec("none", None)
    if isinstance(value, DType):
        raise EvalError(f"a bare dtype is not an argument: write {value.name}[N] for a tensor "
                        "(dtype-valued constexprs are not supported)", node)
    if isinstance(value, GridLambda):
        raise EvalError("a lambda is only allowed as the grid: KERNEL[lambda meta: ...](ARGS)", node)
    raise EvalError(f"{_kind(value)} is not a launch argument: pass tensors and scalars", node)


# ---------------------------------------------------------------- statements


Locate = Callable[[int, int], tuple[int, int]]  # (1-based line in text, 0-based char col) → file (line, col)


class _Brackets:
    """Brackets left open, fed one line at a time, so a directive's continuation lines are scanned
    once each (re-scanning the whole block per added line was quadratic in the block's size)."""

    _PAIRS = {"(": ")", "[": "]", "{": "}"}

    def __init__(self) -> None:
        self.stack: list[tuple[str, int, int]] = []
        self.mismatched = False
        self.lineno = 0

    def feed(self, line: str) -> None:
        self.lineno += 1
        if self.mismatched:
            return
        quote, i = "", 0
        while i < len(line):
            c = line[i]
            if quote:
                if c == "\\":
                    i += 1
                elif c == quote:
                    quote = ""
            elif c in "'\"":
                quote = c
            elif c == "#":
                break
            elif c in self._PAIRS:
                self.stack.append((c, self.lineno, i))
            elif c in ")]}":
                if not self.stack or self._PAIRS[self.stack[-1][0]] != c:
                    self.mismatched = True  # the parser says which
                    return
                self.stack.pop()
            i += 1

    def innermost(self) -> tuple[str, int, int] | None:
        return None if self.mismatched or not self.stack else self.stack[-1]


def _unclosed(text: str) -> tuple[str, int, int] | None:
    """The innermost bracket left open in `text` (char, 1-based line, 0-based col), if any."""
    brackets = _Brackets()
    for line in text.split("\n"):
        brackets.feed(line)
    return brackets.innermost()


def _source_of(text: str, node: ast.AST) -> str:
    segment = ast.get_source_segment(text, node) or ""
    joined = " ".join(part.strip() for part in segment.splitlines())
    return re.sub(r"\s+([)\]}])", r"\1", re.sub(r"([(\[{])\s+", r"\1", joined))


def _bind(stmt: ast.Assign, ev: Evaluator, env: dict[str, Any]) -> None:
    if len(stmt.targets) != 1:
        raise EvalError("bind one name at a time: NAME = expr", stmt)
    target = stmt.targets[0]
    names = target.elts if isinstance(target, ast.Tuple) else [target]
    for n in names:
        if not isinstance(n, ast.Name):
            raise EvalError("only plain names can be bound: NAME = expr", n)
        if n.id in RESERVED:
            raise EvalError(f"'{n.id}' is reserved in directives (a dtype or function name): "
                            "choose another name", n)
    value = ev.eval(stmt.value)
    if isinstance(target, ast.Tuple):
        if not isinstance(value, tuple) or len(value) != len(names):
            raise EvalError(f"cannot unpack {_kind(value)} into {len(names)} names", stmt.value)
        env.update({n.id: v for n, v in zip(names, value)})  # type: ignore[attr-defined]
    else:
        env[target.id] = value  # type: ignore[attr-defined]


def _assigned_names(stmt: ast.stmt) -> list[str]:
    if not isinstance(stmt, ast.Assign):
        return []
    out = []
    for t in stmt.targets:
        for n in (t.elts if isinstance(t, ast.Tuple) else [t]):
            if isinstance(n, ast.Name):
                out.append(n.id)
    return out


class _LaunchErrors(Exception):
    """Every bad part of one launch (grid, each argument), reported together."""

    def __init__(self, errors: list[EvalError]) -> None:
        super().__init__(errors[0].message)
        self.errors = errors


def _launch(call: ast.Call, ev: Evaluator, known: set[str] | None, line: int, text: str,
            origin: str) -> LaunchSpec:
    func = call.func
    if isinstance(func, ast.Name):
        error = EvalError(f"launch of '{func.id}' has no grid: write {func.id}[GRID](ARGS)", call)
        error.kernel = func.id
        raise error
    if not (isinstance(func, ast.Subscript) and isinstance(func.value, ast.Name)):
        raise EvalError(f"expected a launch KERNEL[GRID](ARGS), got a call of '{_call_name(func)}'", call)
    kernel = func.value.id
    errors: list[EvalError] = []

    def report(e: EvalError) -> None:
        e.kernel = kernel
        if all(e.message != seen.message for seen in errors):  # one report per distinct problem
            errors.append(e)

    def attempt(fn: Callable[[], Any]) -> Any:
        try:
            return fn()
        except EvalError as e:
            report(e)
            return None

    if known and kernel not in known:
        close = difflib.get_close_matches(kernel, sorted(known), 1)
        guess = f"; did you mean '{close[0]}'?" if close else ""
        report(EvalError(f"unknown kernel '{kernel}' (kernels in this file: "
                         f"{', '.join(sorted(known))}){guess}", func.value))
    grid = attempt(lambda: _grid(ev.eval(func.slice), func.slice))
    if any(k.arg is None for k in call.keywords):
        report(EvalError("'**' unpacking is not allowed in a launch", call))
    args = [attempt(lambda a=a: to_arg(ev.eval(a), a)) for a in call.args]
    kwargs = [(k.arg, attempt(lambda k=k: to_arg(ev.eval(k.value), k.value))) for k in call.keywords]
    if errors:
        raise _LaunchErrors(errors)
    return LaunchSpec(kernel=kernel, line=line, args=tuple(args), kwargs=tuple(kwargs),
                      grid=grid[0], grid_expr=grid[1], grid_env=grid[2],
                      source=_source_of(text, call), origin=origin)


def _grid(value: Any, node: ast.AST) -> tuple[tuple[int, ...] | None, str | None, tuple]:
    """(grid, grid_expr, grid_env) for a launch."""
    if isinstance(value, GridLambda):
        return value.grid, value.body or None, value.env
    return as_grid(value, node), None, ()


def _describe_statement(stmt: ast.stmt) -> str:
    if isinstance(stmt, ast.Expr):
        if isinstance(stmt.value, ast.Call):
            return "a launch"
        return _NODE_WORDS.get(type(stmt.value).__name__, "an expression")
    if isinstance(stmt, ast.Assign):
        return "a binding"
    return f"a '{type(stmt).__name__}' statement"


def _syntax_message(e: SyntaxError) -> str:
    msg = e.msg or "invalid syntax"
    if msg == "invalid syntax":
        msg += f": expected {_STATEMENT_FORMS}"
    return f"syntax error: {msg}"


def run_statements(text: str, env: dict[str, Any], *, locate: Locate, end_line: int,
                   origin: str = "comment", known_kernels: set[str] | None = None,
                   future: Mapping[str, int] | None = None, mode: str = "any",
                   ) -> tuple[list[LaunchSpec], list[DirectiveError]]:
    """Run the bindings and launches of one directive (or one toml string) against `env`.

    `mode` is `any`, `bindings` (a toml `let`) or `launch` (a toml `launch`: exactly one launch).
    Bindings update `env` in place; a failed binding poisons its names.
    """
    launches: list[LaunchSpec] = []
    errors: list[DirectiveError] = []
    lines = text.split("\n")

    def fail(message: str, lineno: int = 1, col: int = 0, kernel: str | None = None) -> None:
        line, column = locate(lineno, col)
        errors.append(DirectiveError(line, column, message, max(end_line, line), kernel))

    def fail_at(e: EvalError, default: ast.AST) -> None:
        node = e.node if getattr(e.node, "lineno", None) else default
        lineno = min(max(node.lineno, 1), len(lines))  # type: ignore[attr-defined]
        prefix = lines[lineno - 1].encode()[:node.col_offset]  # type: ignore[attr-defined]
        col = len(prefix.decode("utf-8", "ignore"))  # ast columns are UTF-8 byte offsets
        fail(e.message, lineno, col, e.kernel)

    if len(text) > MAX_DIRECTIVE_CHARS:
        fail(f"directive too long ({len(text)} characters; at most {MAX_DIRECTIVE_CHARS})")
        return launches, errors
    tree = _parse(text, origin, fail)
    if tree is None:
        return launches, errors
    if mode == "launch" and (len(tree.body) != 1 or not isinstance(tree.body[0], ast.Expr)):
        fail("`launch` must hold exactly one KERNEL[GRID](ARGS) expression (put bindings in `let`)")
        return launches, errors
    ev = Evaluator(env, source=text, future=future)
    for stmt in tree.body:
        try:
            if isinstance(stmt, ast.Assign) and mode != "launch":
                _bind(stmt, ev, env)
            elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) and mode != "bindings":
                line = locate(stmt.lineno, 0)[0]
                launches.append(_launch(stmt.value, ev, known_kernels, line, text, origin))
            else:
                forms = {"bindings": "`NAME = expr` bindings", "launch": "one `KERNEL[GRID](ARGS)`"}
                raise EvalError(f"expected {forms.get(mode, _STATEMENT_FORMS)}, got "
                                f"{_describe_statement(stmt)}", stmt)
        except EvalError as e:
            fail_at(e, stmt)
        except _LaunchErrors as e:
            for error in e.errors:
                fail_at(error, stmt)
        except (RecursionError, MemoryError):
            fail_at(EvalError("expression too complex"), stmt)
        except Exception as e:  # never let one directive stop the others
            fail_at(EvalError(f"internal error reading this directive: {type(e).__name__}: {e}"), stmt)
        else:
            continue
        for name in _assigned_names(stmt):
            env[name] = _Failed(locate(stmt.lineno, 0)[0])
    return launches, errors


def _parse(text: str, origin: str, fail: Callable[..., None]) -> ast.Module | None:
    open_ = _unclosed(text)
    if open_ is not None:
        char, lineno, col = open_
        closer = {"(": ")", "[": "]", "{": "}"}[char]
        hint = " (continue a directive on the next line with '# tilelens:')" if origin == "comment" else ""
        fail(f"syntax error: '{char}' is never closed: expected '{closer}'{hint}", lineno, col)
        return None
    try:
        return ast.parse(text, mode="exec")
    except SyntaxError as e:
        fail(_syntax_message(e), e.lineno or 1, max((e.offset or 1) - 1, 0))
    except (RecursionError, MemoryError):
        fail("syntax error: expression nested too deeply")
    except ValueError as e:
        fail(f"syntax error: {e}")
    return None


# ---------------------------------------------------------------- comment directives


_DIRECTIVE = re.compile(r"^[ \t]*#[ \t]*tilelens:(.*)$")
_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_BINDING_START = re.compile(r"(?:^|;)\s*([A-Za-z_]\w*)\s*=(?!=)")


@dataclass(frozen=True)
class _Piece:
    line: int   # 1-based line in the file
    col: int    # 0-based column where `text` starts
    text: str


@dataclass(frozen=True)
class _Block:
    """One directive: a `# tilelens:` line and the continuation lines its open brackets pull in."""

    pieces: tuple[_Piece, ...]

    @property
    def text(self) -> str:
        return "\n".join(p.text for p in self.pieces)

    def locate(self, lineno: int, col: int) -> tuple[int, int]:
        piece = self.pieces[min(max(lineno, 1), len(self.pieces)) - 1]
        return piece.line, piece.col + col + 1


def _comment_lines(text: str) -> tuple[set[int], float]:
    """Lines holding a comment token, and the line after which tokenizing failed (trust regex there).

    A file that parses needs no tokenizing: a line that starts with `#` is a comment unless a string
    literal spans it, and the syntax tree (parsed once for `find_kernels` too) shows those."""
    tree = _parse_file(text)
    if tree is not None:
        inside: set[int] = set()
        for n in ast.walk(tree):
            if isinstance(n, (ast.Constant, ast.JoinedStr)) and (n.end_lineno or 0) > n.lineno:
                if isinstance(n, ast.JoinedStr) or isinstance(n.value, (str, bytes)):
                    inside.update(range(n.lineno + 1, n.end_lineno + 1))
        lines = text.split("\n")
        return {i for i, line in enumerate(lines, 1) if "#" in line and i not in inside}, math.inf
    found: set[int] = set()
    last = 0
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            last = tok.end[0]
            if tok.type == tokenize.COMMENT:
                found.add(tok.start[0])
    except Exception:
        return found, last
    return found, math.inf


def _directive_blocks(text: str) -> list[_Block]:
    lines = _LINE_BREAK.split(text)
    comments, trusted_after = _comment_lines("\n".join(lines))
    pieces: dict[int, _Piece] = {}
    for number, line in enumerate(lines, 1):
        m = _DIRECTIVE.match(line)
        if m and is_ignore(m.group(1)):
            continue   # a suppression comment (suppress.py), not a launch
        if m and (number in comments or number > trusted_after):
            content = m.group(1)
            lead = len(content) - len(content.lstrip())
            pieces[number] = _Piece(number, m.start(1) + lead, content.strip())
    blocks, used = [], set()
    for number in sorted(pieces):
        if number in used or not pieces[number].text:
            continue
        block = [pieces[number]]
        size = len(block[0].text)
        brackets = _Brackets()
        brackets.feed(block[0].text)
        while (number + len(block) in pieces and size < MAX_DIRECTIVE_CHARS
               and brackets.innermost()):
            block.append(pieces[number + len(block)])
            brackets.feed(block[-1].text)
            used.add(block[-1].line)
            size += len(block[-1].text) + 1
        blocks.append(_Block(tuple(block)))
    return blocks


def directive_blocks(text: str) -> list[tuple[tuple[int, int, str], ...]]:
    """Each directive of a file as its lines `(1-based line, 0-based column where its text starts, text)`,
    continuation lines included, exactly as `parse_directives` reads them (for completion and go to
    definition, which must agree with the parser on what a directive is)."""
    return [tuple((p.line, p.col, p.text) for p in block.pieces) for block in _directive_blocks(text)]


def parse_directives(text: str, known_kernels: set[str] | None = None,
                     ) -> tuple[list[LaunchSpec], list[DirectiveError]]:
    """Every `# tilelens:` launch of a file, evaluated; bad directives become DirectiveErrors."""
    blocks = _directive_blocks(text)
    bound_at: dict[str, int] = {}
    for block in blocks:
        for m in _BINDING_START.finditer(block.text.split("\n")[0]):
            bound_at.setdefault(m.group(1), block.pieces[0].line)
    env: dict[str, Any] = {}
    launches: list[LaunchSpec] = []
    errors: list[DirectiveError] = []
    for block in blocks:
        first = block.pieces[0].line
        future = {n: line for n, line in bound_at.items() if line > first}
        found, failed = run_statements(block.text, env, locate=block.locate,
                                       end_line=block.pieces[-1].line, origin="comment",
                                       known_kernels=known_kernels, future=future)
        launches.extend(found)
        errors.extend(failed)
    return launches, errors


# ---------------------------------------------------------------- kernels in the file


@dataclass(frozen=True)
class KernelDef:
    name: str
    line: int                 # 1-based line of the `def`
    column: int               # 1-based column of the `def`
    params: tuple[str, ...]
    is_helper: bool           # a @jit function only called from other @jit functions


def _is_jit(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    for dec in fn.decorator_list:
        target = dec.func if isinstance(dec, ast.Call) else dec
        name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
        if name == "jit":
            return True
    return False


_SEGMENT_CONTINUES = re.compile(r"(else|elif|except|finally)\b")


@functools.lru_cache(maxsize=2)
def _parse_file(text: str) -> ast.Module | None:
    """The file's syntax tree (shared by the kernel finder and the comment finder; read-only)."""
    try:
        return ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def _modules(text: str) -> list[ast.Module]:
    """The whole module, or on a syntax error every top-level statement that parses on its own."""
    tree = _parse_file(text)
    if tree is not None:
        return [tree]
    lines = _LINE_BREAK.split(text)
    starts, after_decorator = [], False
    for i, line in enumerate(lines):
        if not line or line[0] in " \t#)]}" or _SEGMENT_CONTINUES.match(line):
            continue
        is_def = re.match(r"(async\s+def|def|class)\b", line) is not None
        if not (after_decorator and (is_def or line.startswith("@"))):
            starts.append(i)
        after_decorator = line.startswith("@")
    modules = []
    for start, end in zip(starts, starts[1:] + [len(lines)]):
        try:
            modules.append(ast.parse("\n" * start + "\n".join(lines[start:end])))
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
    return modules


def find_kernels(text: str) -> list[KernelDef]:
    """The @jit functions of a file, in source order; never raises on broken source."""
    fns, launched = [], set()
    for m in _modules(text):
        for n in ast.walk(m):
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and _is_jit(n):
                fns.append(n)
            elif isinstance(n, ast.Call) and isinstance(n.func, ast.Subscript) and isinstance(n.func.value, ast.Name):
                launched.add(n.func.value.id)
    names = {fn.name for fn in fns}
    called: set[str] = set()
    for fn in fns:
        for n in ast.walk(fn):
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id != fn.name:
                called.add(n.func.id)
    out = []
    for fn in sorted(fns, key=lambda f: (f.lineno, f.col_offset)):
        a = fn.args
        params = tuple(p.arg for p in a.posonlyargs + a.args + a.kwonlyargs)
        helper = fn.name in called and fn.name in names and fn.name not in launched
        out.append(KernelDef(fn.name, fn.lineno, fn.col_offset + 1, params, helper))
    return out + _assigned_kernels(text, out, called, launched)


def _module_level(body: list[ast.stmt]):
    """Statements at module level, including those inside module-level if/try blocks."""
    for stmt in body:
        yield stmt
        if isinstance(stmt, (ast.If, ast.Try)):
            for block in (stmt.body, stmt.orelse, getattr(stmt, "finalbody", []),
                          *[h.body for h in getattr(stmt, "handlers", [])]):
                yield from _module_level(block)


def _assigned_kernels(text: str, defs: list[KernelDef], called: set[str], launched: set[str]) -> list[KernelDef]:
    """Kernels bound by assignment: an alias (`k = k_fast`), a wrapper around one
    (`k = libentry()(k_impl)`), or `k = triton.jit(fn)`; the line is the assignment's."""
    by_name = {k.name: k for k in defs}
    out: list[KernelDef] = []
    for m in _modules(text):
        plain = {n.name: n for n in ast.walk(m) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
        for stmt in _module_level(m.body):
            if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1
                    and isinstance(stmt.targets[0], ast.Name)):
                continue
            name = stmt.targets[0].id
            if name in by_name:
                continue
            params: tuple[str, ...] | None = None
            jit_call = any(isinstance(c, ast.Call) and (getattr(c.func, "attr", None) == "jit"
                                                        or getattr(c.func, "id", None) == "jit")
                           for c in ast.walk(stmt.value))
            for n in ast.walk(stmt.value):
                if isinstance(n, ast.Name) and n.id in by_name:
                    params = by_name[n.id].params
                    break
                if jit_call and isinstance(n, ast.Name) and n.id in plain:
                    a = plain[n.id].args
                    params = tuple(p.arg for p in a.posonlyargs + a.args + a.kwonlyargs)
                    break
            if params is None:
                continue
            kernel = KernelDef(name, stmt.lineno, stmt.col_offset + 1, params,
                               name in called and name not in launched)
            by_name[name] = kernel
            out.append(kernel)
    return out
