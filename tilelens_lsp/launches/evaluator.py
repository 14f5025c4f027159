"""The whitelist evaluator: one directive expression (an `ast` node) → a value, with nothing executed.

Walks the tree itself and allows only literals, names, + - * // % **, cdiv/min/max/i64, tuples, tensor
specs and grid lambdas; everything else is an `EvalError` that says what is allowed. It never calls
`eval`, imports nothing of the user's, and knows nothing of comments, toml or kernels.
"""

from __future__ import annotations

import ast
import copy
import difflib
import math
import operator
from typing import Any, Callable, Iterable, Mapping

from tilelens_lsp.launches.specs import (
    DTYPE_ALIASES,
    DTYPE_MODULES,
    DTYPES,
    FUNCTIONS,
    MAX_DEPTH,
    MAX_DIRECTIVE_CHARS,
    DType,
    EvalError,
    Failed,
    GridLambda,
    ValueList,
    as_grid,
    canonical_dtype,
    check_int,
    check_number,
    kind_of,
    make_descriptor,
    make_tensor,
    need_int,
    need_number,
    short,
    transpose,
    with_values,
)
from tilelens_lsp.model import ScalarSpec, TensorSpec

_ALLOWED = "allowed: literals, names, + - * // % **, unary -, cdiv, triton.cdiv, min, max, tuples, tensor specs"
_CALLS_MESSAGE = "only " + ", ".join(FUNCTIONS)
_BINOPS: dict[type, tuple[str, Callable[[Any, Any], Any]]] = {
    ast.Add: ("+", operator.add),
    ast.Sub: ("-", operator.sub),
    ast.Mult: ("*", operator.mul),
    ast.FloorDiv: ("//", operator.floordiv),
    ast.Mod: ("%", operator.mod),
    ast.Pow: ("**", operator.pow),
}
_OTHER_OPS = {
    ast.Div: "/",
    ast.MatMult: "@",
    ast.LShift: "<<",
    ast.RShift: ">>",
    ast.BitOr: "|",
    ast.BitAnd: "&",
    ast.BitXor: "^",
    ast.Not: "not",
    ast.Invert: "~",
}
NODE_WORDS = {
    "List": "a list",
    "Dict": "a dict",
    "Set": "a set",
    "Compare": "a comparison",
    "BoolOp": "'and'/'or'",
    "IfExp": "a conditional expression",
    "JoinedStr": "an f-string",
    "ListComp": "a comprehension",
    "SetComp": "a comprehension",
    "DictComp": "a comprehension",
    "GeneratorExp": "a generator",
    "NamedExpr": "':='",
    "Slice": "a slice",
    "Starred": "'*' unpacking",
    "Await": "'await'",
    "Yield": "'yield'",
    "YieldFrom": "'yield'",
}


def call_name(func: ast.AST) -> str:
    if isinstance(func, ast.Name):
        return func.id
    try:
        text = ast.unparse(func)
    except RecursionError:
        text = type(func).__name__
    return text if len(text) <= 60 else text[:57] + "..."


class Evaluator:
    """Evaluates one expression over `env`; `meta_name[...]` reads `meta` inside a grid lambda."""

    def __init__(
        self,
        env: Mapping[str, Any],
        *,
        source: str = "",
        meta: Mapping[str, Any] | None = None,
        meta_name: str | None = None,
        future: Mapping[str, int] | None = None,
        depth: int = 0,
    ) -> None:
        self.env = env
        self.source = source
        self.meta = meta
        self.meta_name = meta_name
        self.future = future or {}
        self.depth = depth  # nesting so far (a grid lambda's body continues its launch's count)

    def eval(self, node: ast.AST) -> Any:
        self.depth += 1
        try:
            if self.depth > MAX_DEPTH:
                raise EvalError(f"expression nested too deeply (more than {MAX_DEPTH} levels)", node)
            handler = getattr(self, f"_e_{type(node).__name__}", None)
            if handler is None:
                word = NODE_WORDS.get(type(node).__name__, f"'{type(node).__name__}'")
                raise EvalError(f"{word} is not allowed in directives ({_ALLOWED})", node)
            return handler(node)
        finally:
            self.depth -= 1

    # -- leaves

    def _e_Constant(self, node: ast.Constant) -> Any:
        v = node.value
        if v is None or isinstance(v, (bool, str)):
            return v
        if isinstance(v, int):
            return check_int(v, node, static=True)
        if isinstance(v, float):
            if not math.isfinite(v):
                raise EvalError("float literal out of range", node)
            return v
        raise EvalError(
            f"{type(v).__name__} literals are not allowed in directives (use int, float, bool, str or None)", node
        )

    def _e_Name(self, node: ast.Name) -> Any:
        name = node.id
        if name == self.meta_name:
            raise EvalError(f"'{name}' can only be read as {name}[\"NAME\"]", node)
        if name in self.env:
            value = self.env[name]
            if isinstance(value, Failed):
                raise EvalError(f"'{name}' has no value: its binding on line {value.line} failed", node)
            return value
        dtype = canonical_dtype(name)
        if dtype:
            return DType(dtype)
        if name in ("cdiv", "min", "max", "tensor", "triton"):
            raise EvalError(
                f"'{name}' must be called here, as in {name}(...)"
                if name != "triton"
                else "'triton' is only allowed as triton.cdiv(a, b)",
                node,
            )
        raise EvalError(self._unknown_name(name), node)

    def _unknown_name(self, name: str) -> str:
        if name in self.future:
            return (
                f"unknown name '{name}': it is bound on line {self.future[name]}, below this "
                "directive (a binding applies to the directives after it)"
            )
        names = sorted(k for k, v in self.env.items() if not isinstance(v, Failed))
        close = difflib.get_close_matches(name, names, 1)
        guess = f"did you mean '{close[0]}'? " if close else ""
        if not names:
            return f"unknown name '{name}' (no names are bound here: bind it first with `{name} = ...`)"
        if len(names) <= 12:
            return f"unknown name '{name}' ({guess}names in scope: {', '.join(names)})"
        return f"unknown name '{name}'" + (f" ({guess.strip()})" if guess else "")

    def _e_Tuple(self, node: ast.Tuple) -> tuple[Any, ...]:
        return tuple(self.eval(e) for e in node.elts)

    def _values_arg(self, node: ast.expr) -> Any:
        """A value set's argument: a list literal is allowed here only (`[(0, V), -100]`)."""
        if isinstance(node, ast.List):
            return ValueList(self.eval(e) for e in node.elts)
        return self.eval(node)

    # -- arithmetic

    def _e_BinOp(self, node: ast.BinOp) -> Any:
        entry = _BINOPS.get(type(node.op))
        if entry is None:
            sym = _OTHER_OPS.get(type(node.op), type(node.op).__name__)
            hint = ": use // for integer division" if sym == "/" else ""
            raise EvalError(f"operator '{sym}' is not allowed in directives{hint} (allowed: + - * // % **)", node)
        sym, fn = entry
        left = need_number(self.eval(node.left), f"operator '{sym}'", node)
        right = need_number(self.eval(node.right), f"operator '{sym}'", node)
        if sym == "**" and isinstance(left, int) and isinstance(right, int) and abs(left) > 1 and right > 64:
            raise EvalError(
                f"{short(left)} ** {short(right)} is too large: directive values are limited to 2**64 in magnitude",
                node,
                static=False,
            )
        try:
            result = fn(left, right)
        except ZeroDivisionError:
            raise EvalError(f"division by zero in '{sym}'", node, static=False) from None
        except OverflowError:
            raise EvalError(f"'{sym}' overflows the float range", node, static=False) from None
        return check_number(result, node, sym)

    def _e_UnaryOp(self, node: ast.UnaryOp) -> Any:
        if isinstance(node.op, (ast.USub, ast.UAdd)):
            sym = "-" if isinstance(node.op, ast.USub) else "+"
            value = need_number(self.eval(node.operand), f"unary '{sym}'", node)
            return -value if sym == "-" else +value
        raise EvalError(
            f"operator '{_OTHER_OPS.get(type(node.op), '?')}' is not allowed in directives (allowed: + - * // % **)", node
        )

    # -- calls, tensors, attributes

    def _e_Call(self, node: ast.Call) -> Any:
        name = call_name(node.func)
        if isinstance(node.func, ast.Attribute) and node.func.attr == "values" and name != "triton.values":
            return self._values_method(node, node.func.value)
        if isinstance(node.func, ast.Attribute) and name == "triton.cdiv":
            name = "cdiv"
        elif not isinstance(node.func, ast.Name) or name not in FUNCTIONS:
            raise EvalError(f"calls of '{name}' are not allowed in directives: {_CALLS_MESSAGE}", node)
        if any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
            raise EvalError(f"'*' and '**' unpacking are not allowed in {name}(...)", node)
        if name == "tensor":
            return self._tensor(node)
        if name == "descriptor":
            return self._descriptor(node)
        if node.keywords:
            raise EvalError(f"{name}() takes no keyword arguments", node)
        args = [self.eval(a) for a in node.args]
        return getattr(self, f"_f_{name}")(args, node)

    def _values_method(self, node: ast.Call, receiver: ast.expr) -> TensorSpec:
        """`i32[N].values(LO, HI)`: the short form of `tensor(i32, (N,), values=(LO, HI))`; `receiver`
        is the `i32[N]` the method is called on."""
        spec = self.eval(receiver)
        if not isinstance(spec, TensorSpec):
            raise EvalError(f"'.values(LO, HI)' needs a tensor spec, got {kind_of(spec)}", node)
        if node.keywords or not node.args or any(isinstance(a, ast.Starred) for a in node.args):
            raise EvalError(
                "'.values' takes .values(LO, HI), every element in [LO, HI), or a list of "
                "intervals and points: .values([(0, V), -100])",
                node,
            )
        args = tuple(self._values_arg(a) for a in node.args)
        if len(args) == 1 and isinstance(args[0], tuple):  # a list, or one (LO, HI) pair
            return with_values(spec, args[0], node)
        if len(args) == 1:
            raise EvalError(
                f"'.values' takes two arguments .values(LO, HI) or one list .values([(0, V), -100]), got {kind_of(args[0])}",
                node,
            )
        return with_values(spec, args if len(args) == 2 else ValueList(args), node)

    def _f_cdiv(self, args: list[Any], node: ast.Call) -> int:
        if len(args) != 2:
            raise EvalError(f"cdiv takes 2 arguments, got {len(args)}", node)
        a, b = (need_int(v, "each argument of cdiv", node) for v in args)
        if b == 0:
            raise EvalError("cdiv by zero", node, static=False)
        return check_int((a + b - 1) // b, node)

    def _f_min(self, args: list[Any], node: ast.Call, pick: Callable = min) -> Any:
        name = pick.__name__
        if len(args) == 1 and isinstance(args[0], tuple):
            args = list(args[0])
        if not args:
            raise EvalError(f"{name}() needs at least one value", node)
        return pick(need_number(v, f"{name}()", node) for v in args)

    def _f_max(self, args: list[Any], node: ast.Call) -> Any:
        return self._f_min(args, node, max)

    def _f_i64(self, args: list[Any], node: ast.Call) -> ScalarSpec:
        if len(args) != 1:
            raise EvalError(f"i64 takes 1 argument, got {len(args)}", node)
        v = need_int(args[0], "the argument of i64", node)
        if not -(2**63) <= v < 2**63:
            raise EvalError(f"i64({short(v)}) does not fit in a signed 64-bit int", node, False)
        return ScalarSpec("i64", v)

    def _tensor(self, node: ast.Call) -> TensorSpec:
        params = ("dtype", "shape", "strides", "offset", "storage", "values")
        if len(node.args) > len(params):
            raise EvalError(f"tensor() takes at most {len(params)} arguments, got {len(node.args)}", node)
        given: dict[str, ast.expr] = dict(zip(params, node.args))
        for kw in node.keywords:
            if kw.arg not in params:
                raise EvalError(f"tensor() has no parameter '{kw.arg}' (parameters: {', '.join(params)})", kw.value)
            if kw.arg in given:
                raise EvalError(f"tensor() got '{kw.arg}' twice", kw.value)
            given[kw.arg] = kw.value
        for required in ("dtype", "shape"):
            if required not in given:
                raise EvalError(
                    f"tensor() needs a {required}: tensor(fp16, (M, K), strides=..., offset=..., storage=...)", node
                )
        dtype = self._dtype_of(given.pop("dtype"))
        values = {k: self._values_arg(v) if k == "values" else self.eval(v) for k, v in given.items()}
        return make_tensor(dtype, node=node, **values)

    def _descriptor(self, node: ast.Call):
        """`descriptor(TENSOR, block=(B0, B1, ...), padding="zero")`: a host-side TensorDescriptor."""
        params = ("tensor", "block", "padding")
        if len(node.args) > len(params):
            raise EvalError(f"descriptor() takes at most {len(params)} arguments, got {len(node.args)}", node)
        given: dict[str, ast.expr] = dict(zip(params, node.args))
        for kw in node.keywords:
            if kw.arg not in params or kw.arg in given:
                raise EvalError(
                    f"descriptor() has no parameter '{kw.arg}' or got it twice (parameters: {', '.join(params)})", kw.value
                )
            given[kw.arg] = kw.value
        for required in ("tensor", "block"):
            if required not in given:
                raise EvalError(f"descriptor() needs a {required}: descriptor(fp16[M, K], block=(64, 64))", node)
        values = {k: self.eval(v) for k, v in given.items()}
        return make_descriptor(node=node, **values)

    def _dtype_of(self, node: ast.expr) -> str:
        if isinstance(node, ast.Name) and node.id not in self.env:
            dtype = canonical_dtype(node.id)
            if dtype is None:
                close = difflib.get_close_matches(node.id, DTYPES + tuple(DTYPE_ALIASES), 1)
                guess = f"did you mean {close[0]}? " if close else ""
                raise EvalError(f"unknown dtype '{node.id}' ({guess}Triton dtypes: {' '.join(DTYPES)})", node)
            return dtype
        value = self.eval(node)
        if isinstance(value, str) and canonical_dtype(value):
            return canonical_dtype(value) or ""
        if not isinstance(value, DType):
            raise EvalError(f"expected a dtype such as fp32, got {kind_of(value)}", node)
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
            raise EvalError(f'{self.meta_name}[...] needs a string key, as in {self.meta_name}["BLOCK_SIZE"]', node)
        assert self.meta is not None
        try:
            return self.meta[key]
        except KeyError:
            have = ", ".join(sorted(map(str, self.meta))) or "nothing"
            raise EvalError(
                f"the grid reads {self.meta_name}[\"{key}\"] but the launch has no '{key}' (it has: {have})",
                node,
                static=False,
            ) from None

    def _e_Attribute(self, node: ast.Attribute) -> Any:
        if node.attr == "T":
            value = self.eval(node.value)
            if not isinstance(value, TensorSpec):
                raise EvalError(f"'.T' needs a tensor spec, got {kind_of(value)}", node)
            return transpose(value, node)
        if call_name(node) == "triton.cdiv":
            raise EvalError("'triton.cdiv' must be called, as in triton.cdiv(a, b)", node)
        owner = call_name(node.value)
        if owner in DTYPE_MODULES and not (isinstance(node.value, ast.Name) and node.value.id in self.env):
            dtype = canonical_dtype(node.attr)
            if dtype is None:
                close = difflib.get_close_matches(node.attr, DTYPES + tuple(DTYPE_ALIASES), 1)
                guess = f"did you mean {owner}.{close[0]}? " if close else ""
                raise EvalError(f"unknown dtype '{owner}.{node.attr}' ({guess}Triton dtypes: {' '.join(DTYPES)})", node)
            return DType(dtype)
        raise EvalError(
            f"attribute '.{node.attr}' is not allowed in directives (only '.T' on a "
            "tensor spec, tl.<dtype> and triton.cdiv)",
            node,
        )

    # -- grid lambdas (read by `_GridLambdaReader`, which evaluates the body with an inner evaluator)

    def _e_Lambda(self, node: ast.Lambda) -> GridLambda:
        if self.meta_name is not None:
            raise EvalError("a lambda inside a grid lambda is not allowed", node)
        return _GridLambdaReader(self).read(node)


class _GridLambdaReader:
    """`lambda meta: ...` as a grid: evaluated now when it does not read `meta`, else checked against a
    probe (every key reads as 1: only errors that do not depend on the values are reported) and kept as
    source with the names it captures."""

    def __init__(self, outer: Evaluator) -> None:
        self.outer = outer

    def read(self, node: ast.Lambda) -> GridLambda:
        a = node.args
        if a.posonlyargs or a.kwonlyargs or a.vararg or a.kwarg or a.defaults or len(a.args) != 1:
            raise EvalError("a grid lambda takes exactly one parameter: lambda meta: (...)", node)
        param = a.args[0].arg
        outer = self.outer
        inner = Evaluator(
            outer.env, source=outer.source, meta=_Probe(), meta_name=param, future=outer.future, depth=outer.depth
        )
        if not any(isinstance(n, ast.Name) and n.id == param for n in ast.walk(node.body)):
            return GridLambda(as_grid(inner.eval(node.body), node.body))
        captures = self._captures(node.body, param)
        try:
            as_grid(inner.eval(node.body), node.body)
        except EvalError as e:
            if e.static:
                raise
        return GridLambda(None, self._body(node.body, param), captures)

    def _body(self, body: ast.expr, param: str) -> str:
        if param == "meta":
            source = self.outer.source
            text = ast.get_source_segment(source, body) if source else None
            if text:
                return text

        class Rename(ast.NodeTransformer):
            def visit_Name(self, n: ast.Name) -> ast.Name:
                return ast.Name("meta", n.ctx) if n.id == param else n

        return ast.unparse(Rename().visit(copy.deepcopy(body)))

    def _captures(self, body: ast.expr, param: str) -> tuple[tuple[str, Any], ...]:
        out: dict[str, Any] = {}
        env = self.outer.env
        for n in ast.walk(body):
            if isinstance(n, ast.Name) and n.id != param and n.id in env:
                value = env[n.id]
                if not isinstance(value, (int, float, str)):
                    raise EvalError(
                        f"a grid lambda can only use int, float, bool or str names; '{n.id}' is {kind_of(value)}", n
                    )
                out[n.id] = value
        return tuple(sorted(out.items()))


class _Probe(dict):
    """Stand-in for `meta` when checking a grid lambda statically: every key reads as 1."""

    def __missing__(self, key: str) -> int:
        return 1


def eval_grid(
    grid_expr: str, grid_env: Mapping[str, Any] | Iterable[tuple[str, Any]], meta: Mapping[str, Any]
) -> tuple[int, ...]:
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
