"""Triton's own interpreter as the footprint oracle of the conformance suite.

Runs one declared launch under `TRITON_INTERPRET=1` on numpy-backed fake tensors (no torch, no GPU)
and records, for every load, store and atomic, the elements its mask-true lanes touch, keyed by
(op, source path, line, pointer argument). It only observes: it never judges in-bounds-ness.

The interpreter must be on before the kernel module is imported (`triton.jit` picks the interpreter
at decoration time), so this module is meant to run in its own process: `python oracle.py FILE...`
prints one JSON document; `run_oracle.py` and the conformance test start it that way. Importing it
in a process without `TRITON_INTERPRET=1` is harmless but `run_launch` refuses to run there.

Hooks (class attributes of `triton.runtime.interpreter.InterpreterBuilder`, patched once):
`create_masked_load` / `create_masked_store` (every plain, masked, tensor-descriptor, atomic-load
and atomic-store access funnels through these two), `create_atomic_rmw`, `create_atomic_cas`.
`GridExecutor._init_args_hst` / `_restore_args_dev` are bypassed: they copy torch storages.
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

import numpy as np

HERE = Path(__file__).resolve().parent
KERNELS_DIR = HERE.parent / "conformance" / "kernels"
BUGS_DIR = HERE.parent / "conformance" / "bugs"

# directive dtype names (docs/directives.md) -> Triton dtype names (Triton's own names are accepted as they are).
_DTYPE_ALIASES = {
    "i1": "int1",
    "bool": "int1",
    "i8": "int8",
    "i16": "int16",
    "i32": "int32",
    "i64": "int64",
    "u8": "uint8",
    "u16": "uint16",
    "u32": "uint32",
    "u64": "uint64",
    "f16": "fp16",
    "f32": "fp32",
    "f64": "fp64",
    "float16": "fp16",
    "float32": "fp32",
    "float64": "fp64",
    "bfloat16": "bf16",
}

Key = tuple  # (op, path, line, pointer)


def triton_dtype(name: str):
    import triton.language as tl

    name = _DTYPE_ALIASES.get(name, name)
    return tl.dtype(name)


def _declared_cycle(values, n: int) -> np.ndarray:
    """n values cycling through a declared set: `(LO, HI)` gives LO, LO+1, ..., HI-1, LO, ...; a union
    `((LO, HI), ...)` gives the ends of every part first (each occurs when n allows), then the rest."""
    if isinstance(values[0], int):
        lo, hi = values
        return lo + np.arange(n, dtype=np.int64) % (hi - lo)
    ends = [v for lo, hi in values for v in dict.fromkeys((lo, hi - 1))]
    rest = [v for lo, hi in values for v in range(lo + 1, min(hi - 1, lo + 1 + n))]
    pool = np.array(ends + [v for v in rest if v not in ends][:n], dtype=np.int64)
    return pool[np.arange(n) % pool.size]


def _numpy_fill(
    tdt, n: int, rng: np.random.Generator, modulus: int | None, values: tuple[int, int] | None = None
) -> np.ndarray:
    """Deterministic values for a storage of `n` elements of Triton dtype `tdt` (raw bit patterns).
    A declared value range [LO, HI) fills LO, LO+1, ..., HI-1, LO, ...: both ends occur when the
    storage holds at least HI - LO elements."""
    name = tdt.name
    if name == "int1":
        return np.zeros(n, np.uint8)
    if tdt.is_int():
        width = tdt.primitive_bitwidth
        np_t = np.dtype(f"{'u' if tdt.is_int_unsigned() else ''}int{width}")
        if values:
            return _declared_cycle(values, n).astype(np_t)
        if modulus:  # index tensors: small in-range values
            return (np.arange(n, dtype=np.int64) % modulus).astype(np_t)
        return np.zeros(n, np_t)  # counters and locks start at 0
    values = rng.uniform(-1.0, 1.0, n).astype(np.float32)
    if name == "fp32":
        return values
    if name == "fp64":
        return values.astype(np.float64)
    if name == "fp16":
        return values.astype(np.float16)
    if name == "bf16":
        return (values.view(np.uint32) >> 16).astype(np.uint16)
    # fp8 variants: small positive normal values in every format (exponent bits set low, no NaN).
    return rng.integers(0x20, 0x38, n, dtype=np.uint8)


class FakeTensor:
    """A strided view into a numpy storage, with large guard zones on both sides.

    Offers what kernels and launch code call on a torch tensor: `dtype` (a Triton dtype), `data_ptr()`,
    `shape`, `stride()`, `numel()`, `element_size()`, `dim()`, `size()`, `storage_offset()`.
    """

    ALIGN = 256

    def __init__(self, name: str, spec, rng: np.random.Generator, modulus: int | None = None):
        self.name = name
        self.spec = spec
        self.dtype = triton_dtype(spec.dtype)
        self.elsize = max(1, self.dtype.primitive_bitwidth // 8)
        self.shape = tuple(int(s) for s in spec.shape)
        self.strides = tuple(int(s) for s in spec.strides)
        self.offset = int(spec.offset)
        storage = int(spec.storage) or _min_storage(self.shape, self.strides, self.offset)
        self.storage = storage
        self.guard = min(max(4096, storage), 1 << 22)  # elements on each side
        total = (2 * self.guard + storage) * self.elsize + self.ALIGN
        self._buf = np.zeros(total, np.uint8)
        raw = self._buf.ctypes.data
        start = raw + self.guard * self.elsize
        start += (-start) % self.ALIGN
        self.storage_base = start
        first = start - raw
        values = _numpy_fill(self.dtype, storage, rng, modulus, getattr(spec, "values", None))
        self._buf[first : first + storage * self.elsize] = values.view(np.uint8)
        self.lo = self.storage_base - self.guard * self.elsize
        self.hi = self.storage_base + (storage + self.guard) * self.elsize
        assert raw <= self.lo and self.hi <= raw + total

    def data_ptr(self) -> int:
        return self.storage_base + self.offset * self.elsize

    def stride(self, dim: int | None = None):
        return self.strides if dim is None else self.strides[dim]

    def size(self, dim: int | None = None):
        return self.shape if dim is None else self.shape[dim]

    def numel(self) -> int:
        n = 1
        for s in self.shape:
            n *= s
        return n

    def element_size(self) -> int:
        return self.elsize

    def dim(self) -> int:
        return len(self.shape)

    ndim = property(dim)

    def storage_offset(self) -> int:
        return self.offset

    def __repr__(self) -> str:
        return f"FakeTensor({self.name}: {self.spec.dtype}{list(self.shape)} strides={self.strides})"


def _min_storage(shape, strides, offset) -> int:
    if any(s == 0 for s in shape):
        return offset
    return offset + sum((s - 1) * abs(st) for s, st in zip(shape, strides)) + 1


# ---------------------------------------------------------------- recording


@dataclass
class _Arg:
    name: str
    lo: int
    hi: int
    base: int
    elsize: int
    first: int = 0  # first valid element index relative to data_ptr (-offset)
    end: int = 0  # one past the last valid element index (storage - offset)


class _Recorder:
    """Accumulates mask-true addresses per (op, path, line, pointer) while a launch runs."""

    def __init__(self) -> None:
        self.active = False
        self.args: list[_Arg] = []
        self.parts: dict[Key, list[np.ndarray]] = {}
        self.unattributed: dict[tuple, int] = {}
        self.triton_dir = ""

    def start(self, args: list[_Arg]) -> None:
        self.args = sorted(args, key=lambda a: a.lo)
        self.parts = {}
        self.unattributed = {}
        self.active = True

    def stop(self) -> dict[Key, np.ndarray]:
        self.active = False
        out = {}
        for key, parts in self.parts.items():
            out[key] = np.unique(np.concatenate(parts)).astype(np.int64)
        return out

    def _user_frame(self) -> tuple[str, int]:
        frame = sys._getframe(2)  # noqa: SLF001 - CPython's frame access: the interpreter oracle reads the kernel's caller
        here = __file__
        while frame is not None:
            fname = frame.f_code.co_filename
            if not (fname.startswith(self.triton_dir) or fname == here or fname.startswith("<")):
                return os.path.abspath(fname), frame.f_lineno
            frame = frame.f_back
        return "<unknown>", 0

    def record(self, op: str, ptrs, mask) -> None:
        if not self.active:
            return
        data = np.asarray(ptrs.data)
        if mask is None:
            addrs = data.reshape(-1)
        else:
            m = np.broadcast_to(np.asarray(mask.data, dtype=bool), data.shape)
            addrs = data[m]
        if addrs.size == 0:
            return
        path, line = self._user_frame()
        addrs = addrs.astype(np.uint64).astype(np.int64)
        los = np.array([a.lo for a in self.args], dtype=np.int64)
        idx = np.searchsorted(los, addrs, side="right") - 1
        for i in np.unique(idx):
            sel = addrs[idx == i]
            if i < 0:
                self.unattributed[(op, path, line)] = self.unattributed.get((op, path, line), 0) + sel.size
                continue
            arg = self.args[i]
            inside = sel < arg.hi
            if not inside.all():
                key = (op, path, line)
                self.unattributed[key] = self.unattributed.get(key, 0) + int((~inside).sum())
                sel = sel[inside]
            delta = sel - arg.base
            if (delta % arg.elsize).any():
                raise AssertionError(f"misaligned access to {arg.name} at {path}:{line}")
            self.parts.setdefault((op, path, line, arg.name), []).append(delta // arg.elsize)


_RECORDER = _Recorder()
_INSTALLED = False


def install_hooks() -> None:
    """Patch the interpreter once: record accesses, skip the torch-only argument copies."""
    global _INSTALLED
    if _INSTALLED:
        return
    import triton
    from triton.runtime import interpreter as interp

    _RECORDER.triton_dir = os.path.dirname(os.path.abspath(triton.__file__)) + os.sep
    builder = interp.InterpreterBuilder
    orig_load = builder.create_masked_load
    orig_store = builder.create_masked_store
    orig_rmw = builder.create_atomic_rmw
    orig_cas = builder.create_atomic_cas

    def create_masked_load(self, ptrs, mask, other, *args, **kwargs):
        _RECORDER.record("load", ptrs, mask)
        return orig_load(self, ptrs, mask, other, *args, **kwargs)

    def create_masked_store(self, ptrs, value, mask, *args, **kwargs):
        _RECORDER.record("store", ptrs, mask)
        return orig_store(self, ptrs, value, mask, *args, **kwargs)

    def create_atomic_rmw(self, rmw_op, ptr, val, mask, *args, **kwargs):
        _RECORDER.record("atomic", ptr, mask)
        return orig_rmw(self, rmw_op, ptr, val, mask, *args, **kwargs)

    def create_atomic_cas(self, ptr, cmp, val, *args, **kwargs):
        _RECORDER.record("atomic", ptr, None)
        return orig_cas(self, ptr, cmp, val, *args, **kwargs)

    builder.create_masked_load = create_masked_load
    builder.create_masked_store = create_masked_store
    builder.create_atomic_rmw = create_atomic_rmw
    builder.create_atomic_cas = create_atomic_cas
    # The fake tensors live in host memory already: no copy in, no copy back.
    interp.GridExecutor._init_args_hst = lambda self, args, kwargs: (list(args), dict(kwargs))  # noqa: SLF001 - Triton's launcher hooks: the host-side argument setup a GPU-less run replaces
    interp.GridExecutor._restore_args_dev = lambda self, *a, **k: None  # noqa: SLF001 - Triton's launcher hooks: the host-side argument setup a GPU-less run replaces
    _INSTALLED = True


# ---------------------------------------------------------------- kernels, configs, launches


def load_module(path: Path):
    """Import a kernel file by path, its folder on sys.path (so `helpers` imports resolve)."""
    path = Path(path).resolve()
    folder = str(path.parent)
    if folder not in sys.path:
        sys.path.insert(0, folder)
    name = "tilelens_conformance_" + path.stem
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def unwrap(kernel) -> tuple[Any, list[dict], list[dict]]:
    """(innermost jit function, autotune configs' kwargs, heuristics layers outer->inner)."""
    from triton.runtime.autotuner import Autotuner, Heuristics

    configs: list[dict] = []
    heuristics: list[dict] = []
    obj = kernel
    while isinstance(obj, (Autotuner, Heuristics)):
        if isinstance(obj, Autotuner):
            for cfg in obj.configs:
                kw = dict(cfg.kwargs)
                if kw not in configs:
                    configs.append(kw)
        else:
            heuristics.append(dict(obj.values))
        obj = obj.fn
    return obj, configs, heuristics


def kernel_configs(kernel) -> list[dict]:
    """Every distinct autotune config's kwargs ([{}] for a kernel without autotune)."""
    _, configs, _ = unwrap(kernel)
    return configs or [{}]


def scalar_value(spec):
    kind, value = spec.kind, spec.value
    if kind == "none":
        return None
    if kind == "i64":
        return int(value)
    if kind == "int":
        return int(value)
    if kind == "float":
        return float(value)
    if kind == "bool":
        return bool(value)
    if kind == "dtype":  # a dtype-valued constexpr: the tl.dtype a real caller passes
        return triton_dtype(value)
    return value


def _eval_grid(launch, meta: dict) -> tuple[int, ...]:
    if launch.grid is not None:
        return tuple(int(g) for g in launch.grid)
    try:
        from tilelens_lsp.launches.evaluator import eval_grid  # the product's whitelist evaluator
    except ImportError:
        from directives_fallback import eval_grid  # type: ignore[no-redef]
    grid = eval_grid(launch.grid_expr, launch.grid_env, meta)
    if isinstance(grid, int):
        grid = (grid,)
    return tuple(int(g) for g in grid)


@dataclass
class OracleRun:
    grid: tuple[int, ...]
    accesses: dict[Key, np.ndarray]
    unattributed: dict[tuple, int]
    seconds: float
    bounds: dict[str, tuple[int, int]]  # pointer -> valid element range relative to data_ptr


def run_launch(
    kernel, launch, config: dict | None = None, *, seed: int = 0, fills: dict[str, int] | None = None
) -> OracleRun:
    """Run `launch` (a tilelens_lsp.model.LaunchSpec) of `kernel` under the interpreter.

    `kernel` is the module attribute (JIT function, Autotuner or Heuristics); `config` the kwargs of
    one autotune config. `fills` maps a tensor argument's name to a modulus: that integer tensor is
    filled with `i % modulus` (in-range indices) instead of zeros.
    """
    import triton.language as tl
    from triton.runtime.interpreter import InterpretedFunction, TensorHandle

    from tilelens_lsp.model import TensorSpec

    install_hooks()
    fn, _, heuristics = unwrap(kernel)
    if not isinstance(fn, InterpretedFunction):
        raise RuntimeError("the oracle needs TRITON_INTERPRET=1 before the kernel module is imported")
    names = list(fn.arg_names)
    rng = np.random.default_rng(seed)
    fills = fills or {}

    bound: dict[str, Any] = {}
    specs: dict[str, Any] = {}
    if len(launch.args) > len(names):
        raise TypeError(f"{launch.kernel}: {len(launch.args)} positional arguments for {len(names)} parameters")
    for name, spec in list(zip(names, launch.args)) + list(launch.kwargs):
        specs[name] = spec
    tensors: list[FakeTensor] = []
    for name, spec in specs.items():
        if isinstance(spec, TensorSpec):
            t = FakeTensor(name, spec, rng, fills.get(name))
            tensors.append(t)
            bound[name] = t
        else:
            bound[name] = scalar_value(spec)
    meta = dict(bound)
    meta.update(config or {})
    for layer in heuristics:
        for key, fn_h in layer.items():
            meta[key] = fn_h(dict(meta))
    grid = _eval_grid(launch, meta)

    call = dict(meta)
    for name, spec in specs.items():  # forced 64-bit scalars: hand the interpreter an int64 handle
        if not isinstance(spec, TensorSpec) and spec.kind == "i64":
            call[name] = tl.tensor(TensorHandle(np.array([int(spec.value)], np.int64), tl.int64), tl.int64)
    call = {k: v for k, v in call.items() if k in names}

    _RECORDER.start([_Arg(t.name, t.lo, t.hi, t.data_ptr(), t.elsize, -t.offset, t.storage - t.offset) for t in tensors])
    t0 = time.perf_counter()
    try:
        fn.run(grid=grid, warmup=False, **call)
    finally:
        accesses = _RECORDER.stop()
    bounds = {t.name: (-t.offset, t.storage - t.offset) for t in tensors}
    return OracleRun(grid, accesses, dict(_RECORDER.unattributed), time.perf_counter() - t0, bounds)


# ---------------------------------------------------------------- files and the JSON protocol


def parse_launches(text: str):
    """The product's directive parser; the test-only fallback only while the product lacks one."""
    try:
        from tilelens_lsp.launches.scanner import parse_directives
    except ImportError:
        sys.path.insert(0, str(HERE))
        from directives_fallback import parse_directives  # type: ignore[no-redef]
    return parse_directives(text)


def to_intervals(elements: np.ndarray) -> list[list[int]]:
    """Sorted unique element indices -> merged half-open intervals."""
    if elements.size == 0:
        return []
    breaks = np.nonzero(np.diff(elements) != 1)[0]
    starts = np.concatenate(([elements[0]], elements[breaks + 1]))
    ends = np.concatenate((elements[breaks], [elements[-1]])) + 1
    return [[int(s), int(e)] for s, e in zip(starts, ends)]


def run_file(path: Path) -> dict[str, Any]:
    """Every declared launch x autotune config of one kernel file, as JSON-ready records."""
    path = Path(path).resolve()
    text = path.read_text()
    launches, errors = parse_launches(text)
    out: dict[str, Any] = {"path": str(path), "errors": [e.message for e in errors], "runs": []}
    module = load_module(path)
    fills = getattr(module, "TILELENS_ORACLE_FILL", {})
    for launch in launches:
        kernel = getattr(module, launch.kernel)
        for config in kernel_configs(kernel):
            rec: dict[str, Any] = {"kernel": launch.kernel, "line": launch.line, "config": config}
            try:
                run = run_launch(kernel, launch, config, fills=fills)
            except Exception as exc:  # reported, never swallowed: the caller fails on it
                rec["error"] = f"{type(exc).__name__}: {exc}"
                out["runs"].append(rec)
                continue
            rec["grid"] = list(run.grid)
            rec["seconds"] = round(run.seconds, 3)
            rec["accesses"] = [
                {
                    "op": op,
                    "path": p,
                    "line": line,
                    "pointer": ptr,
                    "elements": to_intervals(elems),
                    "count": int(elems.size),
                    "out_of_bounds": int(((elems < run.bounds[ptr][0]) | (elems >= run.bounds[ptr][1])).sum()),
                }
                for (op, p, line, ptr), elems in sorted(run.accesses.items(), key=lambda kv: str(kv[0]))
            ]
            rec["unattributed"] = [[*k, n] for k, n in run.unattributed.items()]
            out["runs"].append(rec)
    return out


def _jsonable(value):
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    return repr(value)


def main(argv: Iterable[str]) -> int:
    if os.environ.get("TRITON_INTERPRET") != "1":
        os.environ["TRITON_INTERPRET"] = "1"
    sys.path.insert(0, str(HERE.parent.parent))  # the repository root: tilelens_lsp
    results = []
    for arg in argv:
        try:
            results.append(run_file(Path(arg)))
        except Exception as exc:
            results.append({"path": str(Path(arg).resolve()), "errors": [f"{type(exc).__name__}: {exc}"], "runs": []})
    json.dump(_jsonable(results), sys.stdout)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
