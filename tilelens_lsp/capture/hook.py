"""Runs inside the captured program's Python processes: records every Triton kernel launch.

`tilelens-lsp capture` puts a copy of this file (with a `sitecustomize.py` that imports it) first on
the child processes' PYTHONPATH. It imports nothing from tilelens_lsp (the program may run in another
environment) and nothing from Triton until the program does: it waits for `triton.runtime.jit` to
be imported, then wraps the `run` of the JIT, the interpreter, autotuners and heuristics (what
`kernel[grid](...)` and direct `kernel.run(...)` calls reach) and records only the outermost call of
a launch, so an autotuned kernel is recorded with the user's own arguments and grid, never with the
configs it expands. (Triton's launch-enter hooks see compiled launches without the arguments' views,
so they cannot give a launch's storage, offset or value range.)
Each distinct launch becomes one JSON line in `$TILELENS_CAPTURE_DIR/<pid>.jsonl` (repeats and those
past `$TILELENS_CAPTURE_PER_KERNEL` per kernel are only counted, in a summary line at exit). Recording
never changes what the program computes or prints: the user's grid function is called only by the
launch itself, value ranges are not read while a CUDA stream captures a graph, and a launch that
cannot be recorded is written as its reason.
"""

from __future__ import annotations

import ast
import atexit
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
_STATE = {"patched": False, "failures": 0, "keep_all": False}
# Records are deduplicated and capped as they are made (a training loop launches the same kernel
# millions of times): at most _KEEP distinct launches per kernel, the rest only counted.
_KEEP = int(os.environ.get("TILELENS_CAPTURE_PER_KERNEL", "") or 32)
_COUNTS = {"duplicates": 0, "capped": 0, "failures": 0}
_SEEN: set = set()
_PER: dict = {}
_STATIC: dict = {}  # id(launched object) -> (the object, what never changes between its launches)
_OUT: list = [None, 0]  # the open records file and the pid it belongs to (a fork opens its own)
_DTYPES = {  # torch / numpy / triton dtype names -> directive dtype names
    "float16": "fp16",
    "half": "fp16",
    "bfloat16": "bf16",
    "float32": "fp32",
    "float": "fp32",
    "float64": "fp64",
    "double": "fp64",
    "int8": "i8",
    "int16": "i16",
    "int32": "i32",
    "int64": "i64",
    "uint8": "u8",
    "uint16": "u16",
    "uint32": "u32",
    "uint64": "u64",
    "bool": "i1",
    "float8_e4m3fn": "fp8e4nv",
    "float8_e5m2": "fp8e5",
    "fp16": "fp16",
    "bf16": "bf16",
    "fp32": "fp32",
    "fp64": "fp64",
    "int1": "i1",
    "fp8e4nv": "fp8e4nv",
    "fp8e5": "fp8e5",
    "fp8e4b15": "fp8e4b15",
    "fp8e4b8": "fp8e4b8",
    "fp8e5b16": "fp8e5b16",
    "uint1": "u1",
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
        if not hasattr(value, "untyped_storage"):
            raise TypeError("not a torch tensor")
        size = value.element_size()
        storage = max(span, int(value.untyped_storage().nbytes()) // size)
    except Exception:  # noqa: BLE001 - not a torch tensor: the view's own span
        storage = max(span, int(getattr(value, "storage", span) or span))
    spec = {"dtype": dtype, "shape": shape, "strides": strides, "offset": offset, "storage": storage}
    if dtype[0] in "iu" and dtype != "i1" and all(shape) and _graph_capturing(value):
        spec["values_skipped"] = "CUDA graph capture"  # min()/max() would sync the host mid-capture
    elif dtype[0] in "iu" and dtype != "i1" and all(shape):
        try:  # the values this launch saw: an index tensor's range (embedding ids, block tables)
            spec["values"] = observed_values(value)
        except Exception:  # noqa: BLE001 - e.g. a tensor on a device without min/max
            pass
    return spec


def _graph_capturing(value) -> bool:
    """Whether `value` is a CUDA tensor and the current stream is capturing a CUDA graph."""
    if not getattr(value, "is_cuda", False):
        return False
    torch = sys.modules.get("torch")
    if torch is None:
        return False
    try:
        return bool(torch.cuda.is_current_stream_capturing())
    except Exception:  # noqa: BLE001 - no torch, no CUDA: nothing is capturing
        return False


VALUE_GAP = 64  # observed values this far apart are recorded as separate parts
VALUE_PARTS = 4  # at most this many parts; more are recorded as one interval
VALUE_SCAN = 1 << 20  # elements read to find the parts (a larger tensor: its min and max only)


def observed_values(value) -> list:
    """[LO, HI) of the values seen, or the few separate parts of them ([[-100, -99], [0, 996]] for
    labels with an ignore index) when the tensor is small enough to read and they are few. An object
    that declares its values (`check_launch`'s stand-in for a spec) gives them itself, exactly."""
    declared = getattr(value, "tilelens_values", None)
    if callable(declared):
        return declared()
    lo, hi = int(value.min()), int(value.max())
    if hi - lo < VALUE_GAP or int(value.numel()) > VALUE_SCAN:
        return [lo, hi + 1]
    # a tensor's own unique(); else the distinct values of its flattened list (a set has no tolist())
    distinct = value.unique().tolist() if hasattr(value, "unique") else set(value.flatten().tolist())
    seen = sorted(int(v) for v in distinct)
    parts = [[seen[0], seen[0] + 1]]
    for v in seen[1:]:
        if v - parts[-1][1] >= VALUE_GAP:
            parts.append([v, v + 1])
        else:
            parts[-1][1] = v + 1
    if len(parts) == 1 or len(parts) > VALUE_PARTS:
        return [lo, hi + 1]
    return parts


def _triton_dtype(value) -> str | None:
    """The directive name of a `tl.dtype` argument (a dtype-valued constexpr such as `compute_type`)."""
    cls = type(value)
    if cls.__name__ != "dtype" or not cls.__module__.startswith("triton"):
        return None
    return _dtype_name(value)


def _arg(value) -> dict:
    spec = _tensor(value)
    if spec is not None:
        return {"tensor": spec}
    dtype = _triton_dtype(value)
    if dtype is not None:
        return {"dtype": dtype}
    desc = _descriptor(value)
    if desc is not None:
        return {"descriptor": desc}
    if isinstance(value, tuple) and value:
        return {"tuple": [_arg(v) for v in value]}
    return {"scalar": _scalar(value)}


def _descriptor(value) -> dict | None:
    """A host-side TensorDescriptor: the view it describes (its own shape and strides from its base
    tensor's first element, in that tensor's storage), its block shape and padding."""
    if type(value).__name__ != "TensorDescriptor" or not hasattr(value, "block_shape"):
        return None
    base = _tensor(getattr(value, "base", None))
    if base is None:
        return None
    shape = [int(s) for s in value.shape]
    strides = [int(s) for s in value.strides]
    span = base["offset"] + sum((n - 1) * st for n, st in zip(shape, strides)) + 1 if all(shape) else base["offset"]
    view = {
        "dtype": base["dtype"],
        "shape": shape,
        "strides": strides,
        "offset": base["offset"],
        "storage": max(base["storage"], span),
    }
    return {"tensor": view, "block": [int(b) for b in value.block_shape], "padding": str(getattr(value, "padding", "zero"))}


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
        if (
            type(obj).__name__ == "JITFunction"
            or hasattr(obj, "arg_names")
            and hasattr(obj, "fn")
            and callable(getattr(obj, "fn", None))
            and hasattr(obj.fn, "__code__")
        ):
            return obj, obj.fn
        obj = getattr(obj, "fn", None)
        seen += 1
    return None, None


def _importable(module: str, source: str) -> bool:
    """Whether `import module` finds this very file (not a module loaded by path under a made-up name)."""
    parent, _, leaf = module.rpartition(".")
    try:  # look on the import path, not in sys.modules (a file imported by path sits there too)
        where = getattr(sys.modules.get(parent), "__path__", None) if parent else None
        if parent and where is None:
            return False
        spec = importlib.machinery.PathFinder.find_spec(module if not parent else module, where)
    except (ImportError, ValueError):
        return False
    return spec is not None and spec.origin is not None and os.path.abspath(spec.origin) == os.path.abspath(source)


def _binding_name(kernel, fn) -> tuple[str | None, str]:
    """(the module-level name the checker will find this very kernel under, or None; why not).

    A kernel is identified by its code object, not its name: a test's local `k` that shadows the
    module's `k` must never be recorded as a launch of the module's one."""
    qualname = getattr(fn, "__qualname__", fn.__name__)
    module = sys.modules.get(getattr(fn, "__module__", ""), None)
    values = list(vars(module).items()) if module else []
    for name, value in values:
        if value is kernel:
            return name, ""
    for name, value in values:  # the launched object is inside a wrapper the module holds
        try:
            if _chain(value)[1] is fn or getattr(_chain(value)[1], "__code__", None) is fn.__code__:
                return name, ""
        except Exception:  # noqa: BLE001 - a module attribute that misbehaves on getattr
            continue
    if "<locals>" in qualname:
        where = qualname.split(".<locals>")[0]
        return None, f"defined inside {where}(), where the checker cannot reach it"
    return None, f"no module-level name of {getattr(fn, '__module__', '?')} holds it"


def _grid(grid, seen: list) -> dict:
    """The grid as data: concrete dims, or a lambda's source with the values it reads, plus the dims
    the launch itself computed from it (`seen`: the hook never calls the user's grid function)."""
    if isinstance(grid, int):
        return {"dims": [grid]}
    if isinstance(grid, (tuple, list)):
        return {"dims": [int(g) for g in grid]}
    if callable(grid):
        out: dict = {}
        lam = _lambda_source(grid)
        if lam is not None:
            out["lambda"], out["names"] = lam
        if seen:
            try:
                out["dims"] = [int(g) for g in (seen[0] if isinstance(seen[0], (tuple, list)) else (seen[0],))]
            except (TypeError, ValueError):
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


def _static(kernel):
    """What never changes between launches of `kernel` (its file, name, parameters), found once."""
    hit = _STATIC.get(id(kernel))
    if hit is not None and hit[0] is kernel:
        return hit[1]
    jit, fn = _chain(kernel)
    info = None
    if jit is not None:
        try:
            source = inspect.getsourcefile(fn) or fn.__code__.co_filename
        except TypeError:
            source = fn.__code__.co_filename
        name, why = _binding_name(kernel, fn)
        info = {
            "jit": jit,
            "fn": fn,
            "params": list(jit.arg_names),
            "unlocatable": why if name is None else "",
            "base": {
                "module": fn.__module__,
                "file": os.path.abspath(source),
                "kernel": name or fn.__name__,
                "qualname": getattr(fn, "__qualname__", fn.__name__),
                "importable": _importable(fn.__module__, source),
                "params": list(jit.arg_names),
                "wrapped": kernel is not jit,
            },
        }
    if len(_STATIC) > 4096:
        _STATIC.clear()
    _STATIC[id(kernel)] = (kernel, info)
    return info


def _check_recordable(spec: dict) -> None:
    """Raise for an argument (or a tuple's item) the hook cannot write as a directive."""
    if isinstance(spec.get("scalar"), _Unsupported):
        raise TypeError(f"an argument of type {spec['scalar'].what}, which the hook cannot record")
    for item in spec.get("tuple", ()):
        _check_recordable(item)


def prepare(kernel, args, kwargs) -> dict | None:
    """The launch's record but its grid, taken before the launch (the value ranges it sees)."""
    info = _static(kernel)
    if info is None:
        return None
    base = info["base"]
    if not _STATE["keep_all"] and _PER.get((base["file"], base["qualname"], base["kernel"]), 0) >= _KEEP:
        _COUNTS["capped"] += 1  # its kernel has all it keeps: no specs, no value ranges to read
        return None
    params = info["params"]
    arg_specs = [_arg(value) for value in args]
    kw_specs = {}
    for name, value in kwargs.items():
        if name not in params:
            continue  # launch options (num_warps, num_stages, ...) do not change the TTIR
        kw_specs[name] = _arg(value)
    specs = list(arg_specs) + list(kw_specs.values())
    for spec in specs:
        _check_recordable(spec)
    line = dict(info["base"])
    line.update(args=arg_specs, kwargs=kw_specs)
    if info["unlocatable"]:
        line["unlocatable"] = info["unlocatable"]
    if any("values_skipped" in (spec.get("tensor") or {}) for spec in specs):
        line["values_skipped"] = True
    return line


def finish(line: dict, grid, seen: list) -> None:
    """Add the grid and write the record, unless it repeats one or its kernel has _KEEP already."""
    line["grid"] = _grid(grid, seen if not line["wrapped"] else [])
    key = repr((line["file"], line["qualname"], line["kernel"], line["args"], line["kwargs"], line["grid"]))
    kernel = (line["file"], line["qualname"], line["kernel"])
    with _LOCK:
        if _STATE["keep_all"]:
            pass  # an in-process recorder credits every launch to its test: nothing dropped
        elif key in _SEEN:
            _COUNTS["duplicates"] += 1
            return
        elif _PER.get(kernel, 0) >= _KEEP:
            _COUNTS["capped"] += 1
            return
        _SEEN.add(key)
        _PER[kernel] = _PER.get(kernel, 0) + 1
    _emit(line)


def record(kernel, grid, args, kwargs) -> None:
    """One launch, recorded at once (for callers outside the patched `run`s)."""
    line = prepare(kernel, args, kwargs)
    if line is not None:
        finish(line, grid, [])


def _failed(kernel, exc: Exception) -> None:
    """A launch the hook could not record: counted, and its reason written once per kernel."""
    with _LOCK:
        _COUNTS["failures"] += 1
        _STATE["failures"] += 1
    try:
        name = getattr(_chain(kernel)[1], "__name__", None) or type(kernel).__name__
        reason = str(exc) or type(exc).__name__
        key = ("failed", name, reason)
        with _LOCK:
            if key in _SEEN:
                return
            _SEEN.add(key)
        _emit({"kernel": name, "unrecordable": reason})
    except Exception:  # noqa: BLE001 - recording must never change what the program does
        pass


def _emit(line: dict) -> None:
    with _LOCK:
        if _OUT[0] is None or _OUT[1] != os.getpid():
            _OUT[0] = open(os.path.join(_DIR, f"{os.getpid()}.jsonl"), "a", encoding="utf-8", buffering=1)
            _OUT[1] = os.getpid()
        _OUT[0].write(json.dumps(line) + "\n")


def _summary() -> None:
    if _DIR and (_COUNTS["duplicates"] or _COUNTS["capped"]) and _OUT[1] == os.getpid():
        try:
            _emit({"summary": dict(_COUNTS)})
        except Exception:  # noqa: BLE001 - at exit: nothing left to protect but the exit itself
            pass


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
        pending, seen, call_grid = None, [], grid
        if depth == 0 and not warmup:
            try:
                pending = prepare(self, args, kwargs)
            except Exception as exc:  # noqa: BLE001 - capture must never change what the program does
                _failed(self, exc)
        if pending is not None and callable(grid):

            def call_grid(meta, _user_grid=grid):  # the launch's own call, watched, never repeated
                dims = _user_grid(meta)
                if not seen:
                    seen.append(dims)
                return dims

        _LOCAL.depth = depth + 1
        try:
            return run(self, *args, grid=call_grid, warmup=warmup, **kwargs)
        finally:
            _LOCAL.depth = depth
            if pending is not None:
                try:
                    finish(pending, grid, seen)
                except Exception as exc:  # noqa: BLE001
                    _failed(self, exc)

    wrapped._tilelens_capture = True  # noqa: SLF001 - our marker on the run we put in Triton's class
    wrapped.__wrapped__ = run
    return wrapped


def keep_all() -> None:
    """Record every launch, repeats too (an in-process recorder such as the pytest plugin or
    `check_launch` dedupes itself, and needs each launch to name the test that made it)."""
    _STATE["keep_all"] = True


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
    atexit.register(_summary)
    for name in _CLASSES:
        if name in sys.modules:
            _patch(sys.modules[name])
    sys.meta_path.insert(0, _Finder())
