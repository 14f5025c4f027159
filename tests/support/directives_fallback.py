"""Throwaway stand-in for the product's directive reader (`tilelens_lsp.launches`), used only while
the product's parser is missing.

Parses the `# tilelens:` comment form (docs/directives.md) into `LaunchSpec`s with a small whitelist
evaluator over `ast` (never `eval`). It exists so the oracle can run the corpus before the product's
parser lands; the conformance test itself always uses the product's parser.
"""

from __future__ import annotations

import ast
import re

from tilelens_lsp.model import DirectiveError, LaunchSpec, ScalarSpec, TensorSpec

_PREFIX = re.compile(r"^\s*#\s*tilelens:\s?(.*)$")
DTYPES = {
    "fp16",
    "bf16",
    "fp32",
    "fp64",
    "i1",
    "i8",
    "i16",
    "i32",
    "i64",
    "u8",
    "u16",
    "u32",
    "u64",
    "fp8e4nv",
    "fp8e5",
    "fp8e4b15",
    "fp8e4b8",
    "fp8e5b16",
}


class _Tensor:
    def __init__(self, dtype, shape, strides, offset=0, storage=0, values=None):
        self.dtype, self.shape, self.strides = dtype, tuple(shape), tuple(strides)
        self.offset = offset
        self.storage = storage or (offset + sum((s - 1) * st for s, st in zip(shape, strides)) + 1)
        self.values_range = tuple(values) if values is not None else None

    @property
    def T(self):
        return _Tensor(self.dtype, self.shape[::-1], self.strides[::-1], self.offset, self.storage, self.values_range)

    def values(self, *parts):
        return _Tensor(self.dtype, self.shape, self.strides, self.offset, self.storage, _value_set(parts))

    def spec(self):
        return TensorSpec(self.dtype, self.shape, self.strides, self.offset, self.storage, self.values_range)


def _value_set(parts):
    """(LO, HI) for two bounds; a union of intervals and points as sorted merged pairs otherwise."""
    if len(parts) == 2 and all(isinstance(p, int) for p in parts):
        return tuple(parts)
    items = parts[0] if len(parts) == 1 and isinstance(parts[0], list) else parts
    pairs = sorted((p, p + 1) if isinstance(p, int) else tuple(p) for p in items)
    out = []
    for lo, hi in pairs:
        if out and lo <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], hi))
        else:
            out.append((lo, hi))
    return out[0] if len(out) == 1 else tuple(out)


class _I64(int):
    pass


class _DType(str):
    """A dtype name used as a value (a dtype-valued constexpr), not as a tensor spec's element type."""


_DTYPE_WORDS = {
    "float16": "fp16",
    "bfloat16": "bf16",
    "float32": "fp32",
    "float64": "fp64",
    "int1": "i1",
    "int8": "i8",
    "int16": "i16",
    "int32": "i32",
    "int64": "i64",
    "uint8": "u8",
    "uint16": "u16",
    "uint32": "u32",
    "uint64": "u64",
}


def _contiguous(shape):
    strides, acc = [], 1
    for s in reversed(shape):
        strides.append(acc)
        acc *= s
    return tuple(reversed(strides))


def _cdiv(a, b):
    return -(-a // b)


_FUNCS = {"cdiv": _cdiv, "min": min, "max": max, "next_power_of_2": lambda n: 1 << (n - 1).bit_length()}


def _eval(node, env):
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name):
        if node.id in env:
            return env[node.id]
        if node.id in DTYPES:
            return _DType(node.id)
        raise NameError(node.id)
    if isinstance(node, ast.Tuple):
        return tuple(_eval(e, env) for e in node.elts)
    if isinstance(node, ast.List):
        return [_eval(e, env) for e in node.elts]
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -_eval(node.operand, env)
    if isinstance(node, ast.BinOp):
        a, b = _eval(node.left, env), _eval(node.right, env)
        ops = {
            ast.Add: lambda: a + b,
            ast.Sub: lambda: a - b,
            ast.Mult: lambda: a * b,
            ast.FloorDiv: lambda: a // b,
            ast.Mod: lambda: a % b,
            ast.Pow: lambda: a**b,
        }
        return ops[type(node.op)]()
    if isinstance(node, ast.Subscript):
        base = node.value
        if isinstance(base, ast.Name) and base.id in DTYPES and base.id not in env:
            idx = _eval(node.slice, env)
            shape = idx if isinstance(idx, tuple) else (idx,)
            return _Tensor(base.id, shape, _contiguous(shape))
        return _eval(base, env)[_eval(node.slice, env)]
    if isinstance(node, ast.Attribute):
        if node.attr == "T":
            return _eval(node.value, env).T
        if isinstance(node.value, ast.Name) and node.value.id == "triton" and node.attr in _FUNCS:
            return _FUNCS[node.attr]
        owner = ast.unparse(node.value)
        if owner in ("tl", "triton.language"):
            name = _DTYPE_WORDS.get(node.attr, node.attr)
            if name in DTYPES:
                return _DType(name)
        raise ValueError(f"unsupported attribute {node.attr}")
    if isinstance(node, ast.Call):
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr == "values":
            return _eval(func.value, env).values(*[_eval(a, env) for a in node.args])
        name = func.id if isinstance(func, ast.Name) else (func.attr if isinstance(func, ast.Attribute) else None)
        args = [_eval(a, env) for a in node.args]
        kwargs = {k.arg: _eval(k.value, env) for k in node.keywords}
        if name == "tensor":
            dtype, shape = args[0], tuple(args[1])
            strides = tuple(kwargs.get("strides") or _contiguous(shape))
            values = kwargs.get("values")
            return _Tensor(
                dtype,
                shape,
                strides,
                kwargs.get("offset", 0),
                kwargs.get("storage", 0),
                None if values is None else _value_set((values,) if isinstance(values, list) else values),
            )
        if name == "i64":
            return _I64(args[0])
        if name in _FUNCS:
            return _FUNCS[name](*args)
        raise ValueError(f"unsupported call {name}")
    raise ValueError(f"unsupported expression {ast.dump(node)}")


def _arg_spec(value):
    if isinstance(value, _Tensor):
        return value.spec()
    if value is None:
        return ScalarSpec("none", None)
    if isinstance(value, bool):
        return ScalarSpec("bool", value)
    if isinstance(value, _I64):
        return ScalarSpec("i64", int(value))
    if isinstance(value, int):
        return ScalarSpec("int", value)
    if isinstance(value, float):
        return ScalarSpec("float", value)
    if isinstance(value, _DType):
        return ScalarSpec("dtype", str(value))
    if isinstance(value, str):
        return ScalarSpec("str", value)
    raise ValueError(f"unsupported argument {value!r}")


def _statements(text):
    """(line, source) of each directive statement, continuation lines joined while brackets are open."""
    pending, start = [], 0
    for lineno, raw in enumerate(text.splitlines(), 1):
        m = _PREFIX.match(raw)
        if not m:
            if pending:
                yield start, " ".join(pending)
                pending = []
            continue
        if not pending:
            start = lineno
        pending.append(m.group(1).strip())
        joined = " ".join(pending)
        depth = sum(joined.count(c) for c in "([{") - sum(joined.count(c) for c in ")]}")
        if depth <= 0:
            yield start, joined
            pending = []
    if pending:
        yield start, " ".join(pending)


def parse_directives(text):
    env, launches, errors = {}, [], []
    for line, src in _statements(text):
        try:
            tree = ast.parse(src, mode="exec").body[0]
            if isinstance(tree, ast.Assign):
                env[tree.targets[0].id] = _eval(tree.value, env)
                continue
            call = tree.value
            sub = call.func
            kernel = sub.value.id
            grid_node = sub.slice
            grid = grid_expr = None
            if isinstance(grid_node, ast.Lambda):
                grid_expr = ast.unparse(grid_node.body)
            else:
                g = _eval(grid_node, env)
                grid = g if isinstance(g, tuple) else (g,)
            args = tuple(_arg_spec(_eval(a, env)) for a in call.args)
            kwargs = tuple((k.arg, _arg_spec(_eval(k.value, env))) for k in call.keywords)
            launches.append(
                LaunchSpec(
                    kernel,
                    line,
                    args,
                    kwargs,
                    grid,
                    grid_expr,
                    tuple((k, v) for k, v in env.items() if isinstance(v, (int, float))),
                    src,
                )
            )
        except Exception as exc:
            errors.append(DirectiveError(line, 1, f"{type(exc).__name__}: {exc}"))
    return launches, errors


def eval_grid(grid_expr, grid_env, meta):
    env = dict(grid_env)
    env["meta"] = meta
    env.update({"cdiv": _cdiv})
    return _eval(ast.parse(grid_expr, mode="eval").body, env)
