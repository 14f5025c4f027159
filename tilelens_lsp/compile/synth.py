"""Launch synthesis: a launch directive for a kernel nobody declared one for, verified by compiling it.

From the kernel's signature and source alone: which parameters are pointers (they reach the address of a
`tl.load`/`tl.store`/atomic or a block pointer's base, through locals and `@triton.jit` helpers), which
integer scalars, which floats, which pointers hold indices (their loads reach an address), and a value
for each constexpr that no autotune config or heuristic supplies (its default, a literal the kernel
compares it with, a flag as False, a power of two otherwise); a pointer that a heuristic tests for None
is first passed as None. Candidates are tried in order until one compiles to TTIR on the host. The
shapes mean nothing: a synthesized launch says that the kernel compiles and that the analysis reaches
every access, not that a real launch is in bounds. Used by tools/corpus.py, and on request by TL100's
fix (suggest.py): never on open, where its compile attempts would cost too much. It sits in compile/, above
`compile_launch`, because every candidate is verified by compiling it.
"""

from __future__ import annotations

import ast
import inspect
import json
import re
import textwrap
from dataclasses import dataclass
from typing import Callable

from tilelens_lsp.compile.binding import LaunchBindingError, unwrap
from tilelens_lsp.compile.compiler import compile_launch, compiler_for
from tilelens_lsp.launches.statements import run_statements

SIZE = 1 << 22  # elements of every synthesized tensor
INT_VALUE = 128  # every integer scalar
GRID = (2, 2, 2)

_MEMORY_CALLS = {
    "load",
    "store",
    "atomic_add",
    "atomic_max",
    "atomic_min",
    "atomic_cas",
    "atomic_xchg",
    "atomic_and",
    "atomic_or",
    "atomic_xor",
    "make_block_ptr",
    "make_tensor_descriptor",
    "prefetch",
}
_PASS_THROUGH = {
    "to",
    "multiple_of",
    "max_contiguous",
    "max_constancy",
    "broadcast_to",
    "expand_dims",
    "reshape",
    "view",
    "where",
    "cast",
    "advance",
}
_POINTER_NAME = re.compile(r"(ptr|_p$|^p_|pointer|_ptrs?$)", re.IGNORECASE)
_INDEX_NAME = re.compile(
    r"(idx|index|indices|ids$|_id$|label|offsets|seqlen|cu_|lens$|count|table|perm|"
    r"expert|token|sorted|split|chunk_indices|map)",
    re.IGNORECASE,
)
_FLOAT_NAME = re.compile(
    r"(^eps|eps$|epsilon|scale|alpha|beta|temperature|^lr$|momentum|decay|dropout|"
    r"theta|softcap|threshold|smoothing|^p$|prob|lambda|^lam|coef|factor|margin|"
    r"^min_val|^max_val|value$|^gamma$|^delta$|mean$|std$|^tau$|weight_decay)",
    re.IGNORECASE,
)
_FLAG_NAME = re.compile(
    r"^(HAS|IS|USE|ENABLE|RETURN|SAVE|STORE|EVEN|APPLY|NEED|DO|WITH|CAUSAL|OUTPUT|"
    r"COMPUTE|TRANS|TRANSPOSE|REVERSE|INPLACE|BIAS|RESIDUAL|ADD|FUSE|HEAD_FIRST|"
    r"IS_VARLEN|USE_|STATIC|ATOMIC|EXCLUSIVE|CHECK|MASK|DIVISIBLE)",
    re.IGNORECASE,
)

_DTYPE_NAME = re.compile(r"dtype", re.IGNORECASE)
_ACC_NAME = re.compile(r"(ACC|ACCUM)", re.IGNORECASE)
_DTYPE_ATTRS = {
    "primitive_bitwidth",
    "is_floating",
    "is_fp16",
    "is_bf16",
    "is_fp32",
    "is_fp64",
    "is_int",
    "is_int_signed",
    "is_int_unsigned",
    "scalar",
    "itemsize",
}
_TILE_NAME = re.compile(r"(BLOCK|TILE|^B[A-Z]$|^BS$|SIZE|^CHUNK)", re.IGNORECASE)


@dataclass(frozen=True)
class Synthesized:
    """A verified launch directive, or why none was found (`launch` is None).

    `fails_alike`: no candidate compiled and every one failed with the same message: the error does not
    depend on our guesses (a kernel that no launch can compile on this Triton), so `launch` holds the
    first candidate, whose analysis will report that compile error (TL010), as it should."""

    kernel: str
    launch: str | None
    tried: int
    error: str = ""
    fails_alike: bool = False


# ---------------------------------------------------------------- which parameters are pointers


def _source_ast(jit) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    try:
        src = textwrap.dedent(getattr(jit, "src", None) or inspect.getsource(jit.fn))
        tree = ast.parse(src)
    except (OSError, TypeError, SyntaxError, ValueError):
        return None
    return next((n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))), None)


def _call_name(node: ast.Call) -> str:
    f = node.func
    return f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")


def _bases(expr: ast.AST | None, through=None) -> set[str]:
    """Names an address expression may take its base pointer from (not its offsets). `through(call)`
    names the arguments of a call whose value the call returns (a @jit helper's `return p + step`)."""
    if expr is None:
        return set()
    if isinstance(expr, ast.Name):
        return {expr.id}
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, (ast.Add, ast.Sub)):
        left, right = _bases(expr.left, through), _bases(expr.right, through)
        hinted = {n for n in left | right if _POINTER_NAME.search(n)}
        return hinted or (left | right)
    if isinstance(expr, ast.Subscript):
        return _bases(expr.value, through)
    if isinstance(expr, ast.IfExp):
        return _bases(expr.body, through) | _bases(expr.orelse, through)
    if isinstance(expr, ast.Call) and _call_name(expr) in _PASS_THROUGH:
        if isinstance(expr.func, ast.Attribute) and _call_name(expr) in ("to", "advance", "view", "reshape"):
            return _bases(expr.func.value, through)
        return set().union(*(_bases(a, through) for a in expr.args[: 2 if _call_name(expr) == "where" else 1]))
    if isinstance(expr, ast.Call) and through is not None:
        return set().union(set(), *(_bases(a, through) for a in through(expr)))
    if isinstance(expr, ast.Tuple):
        return set().union(*(_bases(e, through) for e in expr.elts)) if expr.elts else set()
    return set()


def index_pointers(jit, pointers: set[str]) -> set[str]:
    """Pointer parameters whose loaded values feed an address (labels, gathers, block tables): integers."""
    fn = _source_ast(jit)
    if fn is None:
        return set()
    loaded: dict[str, set[str]] = {}

    def sources_of(expr) -> set[str]:
        """The pointers whose loaded values `expr` is, through index arithmetic only (not tl.dot, exp...)."""
        if isinstance(expr, ast.Call):
            if _call_name(expr) == "load" and expr.args:
                return _bases(expr.args[0])
            if _call_name(expr) in ("to", "cast") and isinstance(expr.func, ast.Attribute):
                return sources_of(expr.func.value)
            if _call_name(expr) in ("minimum", "maximum", "min", "max"):
                return set().union(set(), *(sources_of(a) for a in expr.args))
            return set()
        if isinstance(expr, ast.Name):
            return loaded.get(expr.id, set())
        if isinstance(expr, ast.BinOp) and isinstance(expr.op, (ast.Add, ast.Sub, ast.Mult, ast.FloorDiv, ast.Mod)):
            return sources_of(expr.left) | sources_of(expr.right)
        if isinstance(expr, (ast.Subscript, ast.UnaryOp)):
            return sources_of(expr.value if isinstance(expr, ast.Subscript) else expr.operand)
        if isinstance(expr, ast.Tuple):
            return set().union(set(), *(sources_of(e) for e in expr.elts))
        return set()

    for node in ast.walk(fn):
        if isinstance(node, ast.Assign):
            sources = sources_of(node.value)
            if sources:
                for t in node.targets:
                    for n in ast.walk(t):
                        if isinstance(n, ast.Name):
                            loaded[n.id] = loaded.get(n.id, set()) | sources
    names = _flow(jit, {})[0]  # every pointer name, locals included
    addresses: list[ast.AST] = []  # expressions that compute addresses
    for node in ast.walk(fn):
        if isinstance(node, ast.Call) and _call_name(node) in _MEMORY_CALLS and node.args:
            addresses.append(node.args[0])
        elif (
            isinstance(node, ast.AugAssign)
            and isinstance(node.target, ast.Name)
            and (node.target.id in names or _POINTER_NAME.search(node.target.id))
        ):
            addresses.append(node.value)  # `weight_ptr += row_idx * N`
        elif isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and (t.id in names or _POINTER_NAME.search(t.id)) for t in node.targets
        ):
            addresses.append(node.value)  # `src = helper(table, i * stride)`
    out: set[str] = set()
    for expr in addresses:
        bases = _bases(expr)
        for n in ast.walk(expr):
            if isinstance(n, ast.Name) and n.id in loaded and n.id not in bases:
                out |= loaded[n.id]
    # a load through a local pointer (`tgt_ptrs = tgt_ptr + offs; tgt = tl.load(tgt_ptrs)`) is a load of
    # the parameter it derives from
    derived: dict[str, set[str]] = {}
    for node in ast.walk(fn):
        if isinstance(node, ast.Assign):
            for t in node.targets:
                if isinstance(t, ast.Name):
                    derived.setdefault(t.id, set()).update(_bases(node.value))
    roots: set[str] = set()
    todo, seen = list(out), set()
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        if name in pointers:
            roots.add(name)
        todo.extend(derived.get(name, ()))
    return roots


def dtype_params(jit) -> set[str]:
    """Constexpr parameters that hold a dtype: named so (`OUT_DTYPE`, `X_dtype`, `compute_type`) or used as
    one in the kernel (`x.to(NAME)`, `dtype=NAME`, `NAME.primitive_bitwidth`)."""
    constexprs = {p.name for p in jit.params if p.is_constexpr}
    out = {n for n in constexprs if _DTYPE_NAME.search(n)}
    fn = _source_ast(jit)
    for node in ast.walk(fn) if fn is not None else ():
        used: list[ast.AST] = []
        if isinstance(node, ast.Call):
            if _call_name(node) in ("to", "cast") and isinstance(node.func, ast.Attribute):
                used += node.args[:1] if _call_name(node) == "to" else node.args[1:2]
            used += [k.value for k in node.keywords if k.arg == "dtype"]
        elif isinstance(node, ast.Attribute) and node.attr in _DTYPE_ATTRS:
            used.append(node.value)
        out |= {u.id for u in used if isinstance(u, ast.Name) and u.id in constexprs}
    return out


_DESCRIPTOR_METHODS = {
    "load",
    "store",
    "gather",
    "scatter",
    "atomic_add",
    "atomic_min",
    "atomic_max",
    "atomic_and",
    "atomic_or",
    "atomic_xor",
    "reduce",
}


def descriptor_params(jit) -> dict[str, int]:
    """Parameters used as tensor descriptors (`desc.load([i, j])`, `desc.store(...)`), with their rank (the
    length of the offsets list; 2 for gather/scatter)."""
    params = {p.name for p in jit.params if not p.is_constexpr}
    fn = _source_ast(jit)
    out: dict[str, int] = {}
    for node in ast.walk(fn) if fn is not None else ():
        if not (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id in params
            and node.func.attr in _DESCRIPTOR_METHODS
            and node.args
        ):
            continue
        first = node.args[0]
        if isinstance(first, (ast.List, ast.Tuple)):
            out[node.func.value.id] = len(first.elts)
        elif node.func.attr in ("gather", "scatter"):
            out.setdefault(node.func.value.id, 2)
    return out


def _descriptor_arg(dtype: str, rank: int) -> str:
    """A placeholder descriptor of `rank` dimensions (about SIZE elements); its block is a guess that an
    autotune pre_hook replaces, as it does for a real launch."""
    side = 1 << max(4, (SIZE.bit_length() - 1) // rank)
    shape = ", ".join([str(side)] * rank)
    block = ", ".join(["1"] * (rank - 2) + ["16"] * min(rank, 2))
    return f"descriptor({dtype}[{shape}], block=({block}{',' if rank == 1 else ''}))"


def compared_literals(jit) -> dict[str, object]:
    """For each name, the first literal the kernel compares it with (`MODE == "mean"`, `K == 0`)."""
    fn = _source_ast(jit)
    out: dict[str, object] = {}
    if fn is None:
        return out
    for node in ast.walk(fn):
        if isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], (ast.Eq, ast.NotEq)):
            left, right = node.left, node.comparators[0]
            for a, b in ((left, right), (right, left)):
                if (
                    isinstance(a, ast.Name)
                    and isinstance(b, ast.Constant)
                    and a.id not in out
                    and isinstance(b.value, (str, int, float))
                    and not isinstance(b.value, bool)
                ):
                    out[a.id] = b.value
    return out


def pointer_params(jit) -> set[str]:
    """The parameters of `jit` that are used as memory addresses (through locals and jit helpers)."""
    return _flow(jit, {})[0] & {p.name for p in jit.params}


def _flow(jit, seen: dict) -> tuple[set[str], set[str]]:
    """(every name of `jit` used as an address base, the parameters whose value it returns)."""
    from triton.runtime.jit import JITFunction  # lazy: Triton start-up cost

    if id(jit) in seen:
        return seen[id(jit)]
    seen[id(jit)] = (set(), set())
    fn = _source_ast(jit)
    params = [p.name for p in jit.params]
    if fn is None:
        seen[id(jit)] = ({p for p in params if _POINTER_NAME.search(p)}, set())
        return seen[id(jit)]
    globals_ = getattr(jit.fn, "__globals__", {})

    def helper_of(call: ast.Call):
        if isinstance(call.func, ast.Name):
            h = globals_.get(call.func.id)
            if isinstance(h, JITFunction) and h is not jit:
                return h
        return None

    def through(call: ast.Call) -> list[ast.expr]:
        helper = helper_of(call)
        if helper is None:
            return []
        returned = _flow(helper, seen)[1]
        names = [p.name for p in helper.params]
        return [a for i, a in enumerate(call.args) if i < len(names) and names[i] in returned] + [
            k.value for k in call.keywords if k.arg in returned
        ]

    pointers: set[str] = set()
    returns: set[str] = set()
    assigns: list[tuple[set[str], ast.AST]] = []
    for node in ast.walk(fn):
        if isinstance(node, ast.Call):
            if _call_name(node) in _MEMORY_CALLS:
                first = (
                    node.args[0]
                    if node.args
                    else next((k.value for k in node.keywords if k.arg in ("pointer", "base")), None)
                )
                pointers |= _bases(first, through)
            elif helper_of(node) is not None:
                helper = helper_of(node)
                inner = _flow(helper, seen)[0]
                names = [p.name for p in helper.params]
                for i, arg in enumerate(node.args):
                    if i < len(names) and names[i] in inner:
                        pointers |= _bases(arg, through)
                for kw in node.keywords:
                    if kw.arg in inner:
                        pointers |= _bases(kw.value, through)
        elif isinstance(node, ast.Assign):
            targets: set[str] = set()
            for t in node.targets:
                targets |= {n.id for n in ast.walk(t) if isinstance(n, ast.Name)}
            assigns.append((targets, node.value))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
            assigns.append(({node.target.id}, node.value))
        elif isinstance(node, ast.Return) and node.value is not None:
            returns |= _bases(node.value, through)
    changed = True
    while changed:
        changed = False
        for targets, value in assigns:
            for tracked in (pointers, returns):
                if targets & tracked:
                    new = _bases(value, through) - tracked
                    if new:
                        tracked |= new
                        changed = True
    seen[id(jit)] = (pointers, returns & set(params))
    return seen[id(jit)]


# ---------------------------------------------------------------- candidates


def _supplied(layers) -> set[str]:
    """Constexprs that an autotuner's configs or a heuristic supply: a launch must leave them out."""
    from triton.runtime.autotuner import Autotuner, Heuristics  # lazy: Triton start-up cost

    out: set[str] = set()
    for layer in layers:
        if isinstance(layer, Autotuner):
            for cfg in layer.configs:
                out |= set(cfg.kwargs)
        elif isinstance(layer, Heuristics):
            out |= set(layer.values)
    return out


def _optional(layers) -> set[str]:
    """Pointers that a heuristic tests for None (`args["cu_seqlens"] is not None`): optional inputs whose
    absence is the common launch (fixed-length batches, no initial state)."""
    from triton.runtime.autotuner import Heuristics  # lazy: Triton start-up cost

    out: set[str] = set()
    for layer in layers:
        if isinstance(layer, Heuristics):
            for fn in layer.values.values():
                try:
                    src = inspect.getsource(fn)
                except (OSError, TypeError):
                    continue
                out |= set(re.findall(r"""args\[['"](\w+)['"]\]\s+is\s+(?:not\s+)?None""", src))
    return out


def _constexpr_value(param, flags: bool, size: int, literals: dict[str, object]) -> str | None:
    """None: leave it to its default."""
    if param.default is not inspect.Parameter.empty:
        return None
    name = param.name
    if name in literals:
        return json.dumps(literals[name]) if isinstance(literals[name], str) else repr(literals[name])
    annotation = str(getattr(param, "annotation", "") or "")
    if "bool" in annotation or _FLAG_NAME.match(name):
        return "True" if flags else "False"
    if _TILE_NAME.search(name):
        return str(size)
    if re.match(r"(MAX_|NUM_|N_|NB$|GROUP)", name, re.IGNORECASE):
        return "4"  # counts, unroll depths, group sizes: small (a static_range of 32 x 32 compiles for minutes)
    return "16"  # a dimension (D, K, HEAD_DIM): tl.dot wants at least 16


def layout_strides(params: list[str]) -> dict[str, int]:
    """Row-major values for stride parameters: in each run of strides of one tensor (`stride_am`,
    `stride_ak`: one name but its last letter), the last is 1 and each earlier one INT_VALUE times the
    next, so a placeholder launch does not alias its own rows (which the race check would report)."""
    out: dict[str, int] = {}
    groups: dict[str, list[str]] = {}
    for p in params:
        if "stride" in p.lower():
            groups.setdefault(p[:-1] if re.search(r"stride_?\w", p, re.I) else p, []).append(p)
    for names in groups.values():
        if len(names) < 2:
            continue
        value = 1
        for p in reversed(names):
            out[p] = value
            value *= INT_VALUE
    return out


def candidates(jit, layers, name: str, layout: bool = False, int_value: int = INT_VALUE) -> list[str]:
    """Launch directives to try, most likely first. `layout`: strides as `layout_strides` gives them,
    not all INT_VALUE (the editor's suggestion; the corpus keeps the plain form it was measured with);
    `int_value`: the other integer scalars (sizes, counts)."""
    pointers = pointer_params(jit)
    indices = index_pointers(jit, pointers)
    literals = compared_literals(jit)
    supplied = _supplied(layers)
    optional = _optional(layers) & pointers
    strides = layout_strides([p.name for p in jit.params if not p.is_constexpr]) if layout else {}
    dtyped = dtype_params(jit)
    descriptors = descriptor_params(jit)
    variants = [
        ("fp32", False, 32),
        ("fp16", False, 32),
        ("fp32", True, 32),
        ("fp32", False, 64),
        ("fp16", True, 64),
        ("fp32", False, 16),
        ("i32", False, 32),
    ]  # last: integer kernels
    out: list[str] = []
    for (dtype, flags, size), none in [(v, True) for v in variants[:2]] + [(v, False) for v in variants]:
        if none and not optional:
            continue
        args: list[str] = []
        for p in jit.params:
            if p.is_constexpr:
                if p.name in supplied:
                    continue
                if p.name in dtyped and p.default is inspect.Parameter.empty:
                    # a dtype-valued constexpr: the tensors' own dtype (an accumulator's: fp32)
                    args.append(f"{p.name}={'fp32' if _ACC_NAME.search(p.name) else dtype}")
                    continue
                value = _constexpr_value(p, flags, size, literals)
                if value is not None:
                    args.append(f"{p.name}={value}")
                continue
            if none and p.name in optional:
                args.append(f"{p.name}=None")
            elif p.name in descriptors:
                args.append(f"{p.name}={_descriptor_arg(dtype, descriptors[p.name])}")
            elif p.name in pointers or (_POINTER_NAME.search(p.name) and not p.name.lower().endswith("_p")):
                kind = "i32" if _INDEX_NAME.search(p.name) or p.name in indices else dtype
                args.append(f"{p.name}={kind}[{SIZE}]")
            elif _FLOAT_NAME.search(p.name) and not re.search(r"(stride|^n_|_n$|num|size|len|dim)", p.name, re.I):
                args.append(f"{p.name}=1.0")
            else:
                args.append(f"{p.name}={strides.get(p.name, int_value)}")
        text = f"{name}[{GRID}]({', '.join(args)})"
        if text not in out:
            out.append(text)
    return out


def synthesize(
    kernel_obj, name: str, compiles: Callable[[str], str | None], layout: bool = False, int_value: int = INT_VALUE
) -> Synthesized:
    """The first candidate for which `compiles(directive)` returns None (no error); `layout` and
    `int_value`: see `candidates`."""
    try:
        chain = unwrap(kernel_obj)
    except LaunchBindingError as exc:
        return Synthesized(name, None, 0, str(exc))
    tried = candidates(chain.jit, chain.layers, name, layout, int_value)
    errors: list[str] = []
    for i, text in enumerate(tried, 1):
        error = compiles(text)
        if error is None:
            return Synthesized(name, text, i)
        errors.append(error)
    if len(errors) > 1 and len(set(errors)) == 1 and errors[0].startswith("CompilationError"):
        return Synthesized(name, tried[0], len(tried), errors[0], fails_alike=True)
    return Synthesized(name, None, len(tried), errors[0] if errors else "no candidate")


def compile_check(module, target: str = "cuda:89") -> Callable[[str], str | None]:
    """A `compiles` for `synthesize`: bind and compile the launch's first config to TTIR."""
    compiler_for(target)  # warm before the first candidate, as the compiles that follow use it

    def compiles(text: str) -> str | None:
        launches, errors = run_statements(text, {}, locate=lambda line, col: (line, col), end_line=1, mode="launch")
        if errors or not launches:
            return f"directive: {errors[0].message if errors else 'no launch'}"
        launch = launches[0]
        try:
            first = next(compile_launch(getattr(module, launch.kernel), launch, target))
            if first.error is not None:
                raise first.error
        except Exception as exc:  # noqa: BLE001 - any failure means: try the next candidate
            inner: BaseException = exc  # an error inside an inlined helper is re-raised at the call `from` the helper's
            while inner.__cause__ is not None and inner.__cause__ is not inner:
                inner = inner.__cause__
            message = (
                getattr(inner, "error_message", None)
                or getattr(exc, "error_message", None)
                or next((line for line in reversed(str(inner).strip().splitlines()) if line.strip(" ^")), "")
            )
            return f"{type(exc).__name__}: {str(message).strip()}"
        return None

    return compiles
