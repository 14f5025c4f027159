"""Runs inside the captured program's Python processes: records every Triton kernel launch.

`tilelens-lsp capture` puts a copy of this file (with a `sitecustomize.py` that imports it) first on
the child processes' PYTHONPATH. It imports nothing from tilelens_lsp (the program may run in another
environment) and nothing from Triton until the program does: it waits for `triton.runtime.jit` to
be imported, then wraps the `run` of the JIT, the interpreter, autotuners and heuristics (what
`kernel[grid](...)` and direct `kernel.run(...)` calls reach) and records only the outermost call of
a launch, so an autotuned kernel is recorded with the user's own arguments and grid, never with the
configs it expands. (Triton's launch-enter hooks see compiled launches without the arguments' views,
so they cannot give a launch's storage, offset or value range.)
Each launch becomes one JSON line in `$TILELENS_CAPTURE_DIR/<pid>.jsonl`. Recording never changes
what the program computes or prints: a failure to record is counted and skipped.
"""

from __future__ import annotations

import ast
import importlib.abc
import importlib.machinery
import importlib.util
import inspect
import json
import os
import sys
import textwrap
import threading

_DIR = os.environ.get("TILELENS_CAPTURE_DIR", "")
_LOCK = threading.Lock()
_STATE = {"patched": False, "failures": 0}
_DTYPES = {  # torch / numpy / triton dtype names -> directive dtype names
    "float16": "fp16", "half": "fp16", "bfloat16": "bf16", "float32": "fp32", "float": "fp32",
    "float64": "fp64", "double": "fp64", "int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64",
    "uint8": "u8", "uint16": "u16", "uint32": "u32", "uint64": "u64", "bool": "i1",
    "float8_e4m3fn": "fp8e4nv", "float8_e5m2": "fp8e5", "fp16": "fp16", "bf16": "bf16", "fp32": "fp32",
    "fp64": "fp64", "int1": "i1", "fp8e4nv": "fp8e4nv", "fp8e5": "fp8e5",
}


def _dtype_name(dtype) -> str | None:
    name = getattr(dtype, "name", None) or str(dtype)
    name = name.replace("torch.", "")
    return _DTYPES.get(name)


def _tensor(value) -> dict | None:
    """A tensor-like argument (torch, or anything with dtype/shape/stride/data_ptr) as a view spec."""
    if not hasattr(value, "data_ptr") or not hasattr(value, "dtype"):
        return None
    dtype = _dtype_name(value.dtype)
    if dtype is None:
        return None
    shape = [int(s) for s in value.shape]
    strides = [int(s) for s in value.stride()]
    offset = int(value.storage_offset()) if hasattr(value, "storage_offset") else 0
    span = offset + sum((n - 1) * s for n, s in zip(shape, strides)) + 1 if all(shape) else offset
    storage = span
    try:
        size = value.element_size()
        storage = max(span, int(value.untyped_storage().nbytes()) // size)
    except Exception:  # noqa: BLE001 - not a torch tensor: the view's own span
        storage = max(span, int(getattr(value, "storage", span) or span))
    spec = {"dtype": dtype, "shape": shape, "strides": strides, "offset": offset, "storage": storage}
    if dtype[0] in "iu" and dtype != "i1" and all(shape):
        try:     # the values this launch saw: an index tensor's range (embedding ids, block tables)
            lo, hi = int(value.min()), int(value.max())
            spec["values"] = [lo, hi + 1]
        except Exception:  # noqa: BLE001 - e.g. a tensor on a device without min/max
            pass
    return spec


def _scalar(value):
    if isinstance(value, bool) or value is None or isinstance(value, (int, float, str)):
        return value
    if hasattr(value, "item") and getattr(value, "ndim", 1) == 0:
        return value.item()
    return _Unsupported(type(value).__name__)


class _Unsupported:
    def __init__(self, what: str) -> None:
        self.what = what


def _chain(kernel):
    """The JITFunction under any wrapper, and the Python function under it."""
    seen = 0
    obj = kernel
    while obj is not None and seen < 16:
        if type(obj).__name__ == "JITFunction" or hasattr(obj, "arg_names") and hasattr(obj, "fn") \
                and callable(getattr(obj, "fn", None)) and hasattr(obj.fn, "__code__"):
            return obj, obj.fn
        obj = getattr(obj, "fn", None)
        seen += 1
    return None, None


def _importable(module: str, source: str) -> bool:
    """Whether `import module` finds this very file (not a module loaded by path under a made-up name)."""
    parent, _, leaf = module.rpartition(".")
    try:     # look on the import path, not in sys.modules (a file imported by path sits there too)
        where = getattr(sys.modules.get(parent), "__path__", None) if parent else None
        if parent and where is None:
            return False
        spec = importlib.machinery.PathFinder.find_spec(module if not parent else module, where)
    except (ImportError, ValueError):
        return False
    return spec is not None and spec.origin is not None and os.path.abspath(spec.origin) == os.path.abspath(source)


def _binding_name(kernel, fn) -> str:
    module = sys.modules.get(getattr(fn, "__module__", ""), None)
    for name, value in (vars(module).items() if module else ()):
        if value is kernel:
            return name
    return fn.__name__


def _grid(grid, kernel, args, kwargs, jit) -> dict:
    """The grid as data: concrete dims, or a lambda's source with the values it reads."""
    if isinstance(grid, int):
        return {"dims": [grid]}
    if isinstance(grid, (tuple, list)):
        return {"dims": [int(g) for g in grid]}
    if callable(grid):
        out: dict = {}
        lam = _lambda_source(grid)
        if lam is not None:
            out["lambda"], out["names"] = lam
        try:      # its value for the arguments as launched (a plain kernel has no configs to expand)
            meta = dict(zip(jit.arg_names, args))
            meta.update(kwargs)
            out["dims"] = [int(g) for g in grid(meta)]
        except Exception:  # noqa: BLE001 - autotuned: the lambda reads config values
            pass
        return out
    return {}


def _lambda_source(fn):
    """(`lambda meta: ...` source, {name: value} it reads), or None."""
    code = getattr(fn, "__code__", None)
    if code is None or fn.__name__ != "<lambda>":
        return None
    try:
        lines, first = inspect.getsourcelines(fn)
    except (OSError, TypeError):
        return None
    text = textwrap.dedent("".join(lines))
    tree = None
    for candidate in (text, "(\n" + text + "\n)"):
        try:
            tree = ast.parse(candidate)
            break
        except SyntaxError:
            continue
    if tree is None:
        return None
    lambdas = [n for n in ast.walk(tree) if isinstance(n, ast.Lambda) and len(n.args.args) == 1]
    if len(lambdas) != 1:
        return None
    names: dict = {}
    closure = dict(zip(code.co_freevars, (c.cell_contents for c in fn.__closure__ or ())))
    param = lambdas[0].args.args[0].arg
    for node in ast.walk(lambdas[0].body):
        if isinstance(node, ast.Name) and node.id != param and node.id not in ("triton", "cdiv", "min", "max"):
            value = closure.get(node.id, fn.__globals__.get(node.id, _Unsupported("")))
            if isinstance(value, bool) or not isinstance(value, int):
                return None
            names[node.id] = value
    return ast.unparse(lambdas[0]), names


def record(kernel, grid, args, kwargs) -> None:
    jit, fn = _chain(kernel)
    if jit is None:
        return
    params = list(jit.arg_names)
    arg_specs = []
    for value in args:
        spec = _tensor(value)
        arg_specs.append({"tensor": spec} if spec is not None else {"scalar": _scalar(value)})
    kw_specs = {}
    for name, value in kwargs.items():
        if name not in params:
            continue     # launch options (num_warps, num_stages, ...) do not change the TTIR
        spec = _tensor(value)
        kw_specs[name] = {"tensor": spec} if spec is not None else {"scalar": _scalar(value)}
    for spec in list(arg_specs) + list(kw_specs.values()):
        if isinstance(spec.get("scalar"), _Unsupported):
            raise TypeError(f"an argument of type {spec['scalar'].what}")
    try:
        source = inspect.getsourcefile(fn) or fn.__code__.co_filename
    except TypeError:
        source = fn.__code__.co_filename
    line = {"module": fn.__module__, "file": os.path.abspath(source), "kernel": _binding_name(kernel, fn),
            "importable": _importable(fn.__module__, source),
            "params": params, "grid": _grid(grid, kernel, args, kwargs, jit), "args": arg_specs,
            "kwargs": kw_specs, "wrapped": kernel is not jit}
    with _LOCK:
        with open(os.path.join(_DIR, f"{os.getpid()}.jsonl"), "a", encoding="utf-8") as f:
            f.write(json.dumps(line) + "\n")


_LOCAL = threading.local()
_CLASSES = {  # module -> classes whose `run` launches a kernel (the outermost call is the user's)
    "triton.runtime.jit": ("JITFunction",),
    "triton.runtime.interpreter": ("InterpretedFunction",),
    "triton.runtime.autotuner": ("Autotuner", "Heuristics"),
}


def _patch(module) -> None:
    for name in _CLASSES.get(module.__name__, ()):
        cls = getattr(module, name, None)
        if cls is None or getattr(cls.run, "_tilelens_capture", False):
            continue
        cls.run = _wrap(cls.run)


def _wrap(run):
    def wrapped(self, *args, grid=None, warmup=False, **kwargs):
        depth = getattr(_LOCAL, "depth", 0)
        if depth == 0 and not warmup:
            try:
                record(self, grid, args, kwargs)
            except Exception:  # noqa: BLE001 - capture must never change what the program does
                _STATE["failures"] += 1
        _LOCAL.depth = depth + 1
        try:
            return run(self, *args, grid=grid, warmup=warmup, **kwargs)
        finally:
            _LOCAL.depth = depth

    wrapped._tilelens_capture = True
    wrapped.__wrapped__ = run
    return wrapped


def failures() -> int:
    """How many launches could not be recorded (the pytest plugin reports it)."""
    return _STATE["failures"]


class _Finder(importlib.abc.MetaPathFinder):
    """Patches the launching classes right after the program imports their modules."""

    def find_spec(self, name, path=None, target=None):
        if name not in _CLASSES:
            return None
        sys.meta_path.remove(self)
        try:
            spec = importlib.util.find_spec(name)
        finally:
            sys.meta_path.insert(0, self)
        if spec is None or spec.loader is None:
            return None
        loader = spec.loader
        exec_module = loader.exec_module

        def patched_exec(module):
            exec_module(module)
            _patch(module)
        loader.exec_module = patched_exec
        return spec


def install() -> None:
    if not _DIR:
        return
    for name in _CLASSES:
        if name in sys.modules:
            _patch(sys.modules[name])
    sys.meta_path.insert(0, _Finder())
