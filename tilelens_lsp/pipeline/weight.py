"""How long a launch will take, estimated from the text alone, so a pool can start the slowest first.

A launch costs one compile and one analysis per distinct autotune config (`config_counts`), and each
grows with the code Triton generates for the kernel: the statements of its body, of the `@jit`
helpers it calls (inlined), and `tl.static_range` loops unrolled, their trip counts read from the
launch's own integers (`HC=16`), the parameters' defaults, or literals. FlagGems'
`mhc_pre_generic_kernel` with `HC=16` unrolls nested `static_range(HC)` loops into some twenty-eight
thousand statements and takes seconds a config where a plain kernel takes milliseconds; counted by
its configs alone it looked like any other launch and started last. A trip count that depends on
what the text does not say counts once, so the estimate never grows from a guess.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable

from tilelens_lsp.model import LaunchSpec, ScalarSpec

SIZE_CAP = 1 << 20  # statements: past this an estimate only orders launches, which it already does
STATEMENTS_PER_UNIT = 25  # statements worth one unit of weight: about the fixed cost of a compile
UNROLLED = frozenset({"static_range"})
HELPER_DEPTH = 32  # helpers calling helpers past this depth are not counted (the walk is recursive)


def launch_weights(tree: ast.Module | None, launches: Iterable[LaunchSpec], configs: dict[str, int]) -> list[int]:
    """Per launch, its distinct configs times the units of code its kernel unrolls into (at least 1)."""
    sizer = _Sizer(tree)
    out = []
    for launch in launches:
        units = 1 + sizer.kernel(launch) // STATEMENTS_PER_UNIT
        out.append(configs.get(launch.kernel, 1) * units)
    return out


class _Sizer:
    """Statement counts of a module's functions as Triton generates them (helpers inlined, static
    loops unrolled), with the integers a launch binds."""

    def __init__(self, tree: ast.Module | None) -> None:
        self.functions: dict[str, ast.FunctionDef] = {}
        for stmt in tree.body if tree is not None else ():
            if isinstance(stmt, ast.FunctionDef):
                self.functions[stmt.name] = stmt
        self.helpers: dict[str, int] = {}  # a helper's size with its defaults alone

    def kernel(self, launch: LaunchSpec) -> int:
        fn = self.functions.get(launch.kernel)
        if fn is None:
            return 0
        env = _defaults(fn)
        params = [a.arg for a in fn.args.posonlyargs + fn.args.args]
        for name, arg in list(zip(params, launch.args)) + list(launch.kwargs):
            if isinstance(arg, ScalarSpec) and arg.kind in ("int", "i64") and type(arg.value) is int:
                env[name] = arg.value
        return self._block(fn.body, env, frozenset({fn.name}))

    def _helper(self, name: str, stack: frozenset[str]) -> int:
        if name not in self.helpers:
            fn = self.functions[name]
            self.helpers[name] = self._block(fn.body, _defaults(fn), stack | {name})
        return self.helpers[name]

    def _block(self, stmts: list[ast.stmt], env: dict[str, int], stack: frozenset[str]) -> int:
        total = 0
        for stmt in stmts:
            total = min(SIZE_CAP, total + self._stmt(stmt, env, stack))
        return total

    def _stmt(self, stmt: ast.stmt, env: dict[str, int], stack: frozenset[str]) -> int:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            return 1
        size = 1 + sum(self._calls(node, stack) for node in _own_expressions(stmt))
        if isinstance(stmt, ast.For):
            trips = _static_trips(stmt.iter, env)
            inner = {k: v for k, v in env.items() if k not in _targets(stmt.target)}
            return min(SIZE_CAP, size + trips * self._block(stmt.body, inner, stack) + self._block(stmt.orelse, env, stack))
        for field in ("body", "orelse", "finalbody"):
            size += self._block(getattr(stmt, field, []) or [], env, stack)
        for handler in getattr(stmt, "handlers", []) or []:
            size += self._block(handler.body, env, stack)
        return min(SIZE_CAP, size)

    def _calls(self, node: ast.AST, stack: frozenset[str]) -> int:
        """The inlined size of the module's functions that `node` calls (a recursive call counts once)."""
        total = 0
        for sub in ast.walk(node):
            if isinstance(sub, ast.Call) and isinstance(sub.func, ast.Name):
                name = sub.func.id
                if name in self.functions and name not in stack and len(stack) <= HELPER_DEPTH:
                    total += self._helper(name, stack)
        return total


def _own_expressions(stmt: ast.stmt) -> list[ast.AST]:
    """The expressions of `stmt` itself, not of the statements nested in it."""
    return [node for node in ast.iter_child_nodes(stmt) if not isinstance(node, (ast.stmt, ast.excepthandler))]


def _targets(target: ast.expr) -> set[str]:
    return {n.id for n in ast.walk(target) if isinstance(n, ast.Name)}


def _defaults(fn: ast.FunctionDef) -> dict[str, int]:
    """The parameters whose default is an int literal."""
    args = fn.args.posonlyargs + fn.args.args
    pairs = list(zip(args[len(args) - len(fn.args.defaults) :], fn.args.defaults))
    pairs += [(a, d) for a, d in zip(fn.args.kwonlyargs, fn.args.kw_defaults) if d is not None]
    return {a.arg: d.value for a, d in pairs if isinstance(d, ast.Constant) and type(d.value) is int}


def _static_trips(node: ast.expr, env: dict[str, int]) -> int:
    """How many times a `for` over `node` repeats its body in the generated code: a static range's
    length where its bounds are known, else 1 (a loop in the IR, or unknown)."""
    if not isinstance(node, ast.Call) or node.keywords:
        return 1
    name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
    if name not in UNROLLED or not 1 <= len(node.args) <= 3:
        return 1
    bounds = [_int(a, env) for a in node.args]
    if any(b is None for b in bounds) or (len(bounds) == 3 and bounds[2] == 0):
        return 1
    return max(1, len(range(*bounds)))  # type: ignore[arg-type]


def _int(node: ast.expr, env: dict[str, int]) -> int | None:
    """An int expression of literals and known names (+, -, *, //, %, unary -); None otherwise."""
    if isinstance(node, ast.Constant):
        return node.value if type(node.value) is int else None
    if isinstance(node, ast.Name):
        return env.get(node.id)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        value = _int(node.operand, env)
        return None if value is None else -value
    if isinstance(node, ast.BinOp):
        left, right = _int(node.left, env), _int(node.right, env)
        if left is None or right is None:
            return None
        if isinstance(node.op, ast.Add):
            return left + right
        if isinstance(node.op, ast.Sub):
            return left - right
        if isinstance(node.op, ast.Mult):
            return left * right if abs(left * right) <= SIZE_CAP else None
        if isinstance(node.op, (ast.FloorDiv, ast.Mod)) and right:
            return left // right if isinstance(node.op, ast.FloorDiv) else left % right
    return None
