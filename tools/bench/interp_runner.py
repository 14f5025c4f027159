"""Runs one declared launch under Triton's interpreter (`TRITON_INTERPRET=1`) on numpy-backed tensors.

Used by `bench.py` (metric d): `python interp_runner.py FILE [--launch I] [--repeat N] [--record]`
prints one JSON line: the run times in seconds (launch only: no import, no allocation) and, with
`--record`, the elements every mask-true lane touched, per (op, line, pointer), as merged half-open
intervals relative to the pointer argument (the same shape as the `--format json` footprint).

No torch and no GPU: a tensor is an object with `dtype` (a Triton dtype) and `data_ptr()` (the
address of a numpy buffer). `GridExecutor._init_args_hst` / `_restore_args_dev`, which copy torch
storages to and from the host, are replaced by an identity and a no-op.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
import time
from pathlib import Path

if os.environ.get("TRITON_INTERPRET") != "1":  # must be set before triton.jit decorates the kernel
    os.environ["TRITON_INTERPRET"] = "1"

import numpy as np  # noqa: E402

_NP = {
    "fp16": np.float16,
    "bf16": np.uint16,
    "fp32": np.float32,
    "fp64": np.float64,
    "i8": np.int8,
    "i16": np.int16,
    "i32": np.int32,
    "i64": np.int64,
    "u8": np.uint8,
    "u16": np.uint16,
    "u32": np.uint32,
    "u64": np.uint64,
    "i1": np.uint8,
}


class NumpyTensor:
    """What the interpreter reads from a torch tensor: `dtype` and `data_ptr()`, plus shape helpers."""

    def __init__(self, name: str, spec) -> None:
        from tilelens_lsp.compile.binding import triton_dtype

        self.name = name
        self.spec = spec
        self.dtype = triton_dtype(spec.dtype)
        np_dtype = _NP.get(spec.dtype, np.uint8)
        self.buf = np.zeros(int(spec.storage), dtype=np_dtype)
        if np.issubdtype(np_dtype, np.floating):
            self.buf[:] = np.random.default_rng(0).uniform(-1, 1, self.buf.size).astype(np_dtype)
        self.itemsize = self.buf.itemsize
        self.base = self.buf.ctypes.data
        self.shape = tuple(spec.shape)

    def data_ptr(self) -> int:
        return self.base + int(spec_offset(self.spec)) * self.itemsize

    def stride(self, dim=None):
        return self.spec.strides if dim is None else self.spec.strides[dim]

    def size(self, dim=None):
        return self.shape if dim is None else self.shape[dim]

    def numel(self) -> int:
        return int(np.prod(self.shape))

    def element_size(self) -> int:
        return self.itemsize


def spec_offset(spec) -> int:
    return getattr(spec, "offset", 0) or 0


class Recorder:
    def __init__(self) -> None:
        self.tensors: list[NumpyTensor] = []
        self.parts: dict[tuple, list[np.ndarray]] = {}
        self.path = ""
        self.on = False
        self.unattributed = 0

    def record(self, op: str, ptrs, mask) -> None:
        if not self.on:
            return
        data = np.asarray(ptrs.data).astype(np.uint64).astype(np.int64)
        if mask is not None:
            data = data[np.broadcast_to(np.asarray(mask.data, dtype=bool), data.shape)]
        data = data.reshape(-1)
        if data.size == 0:
            return
        frame, line = sys._getframe(2), 0  # noqa: SLF001 - CPython's frame access: the interpreter oracle reads the kernel's caller
        while frame is not None:
            if os.path.abspath(frame.f_code.co_filename) == self.path:
                line = frame.f_lineno
                break
            frame = frame.f_back
        for t in self.tensors:  # attribution by storage: an access outside every buffer is counted apart
            lo, hi = t.base, t.base + t.buf.nbytes
            inside = (data >= lo) & (data < hi)
            if inside.any():
                elems = (data[inside] - t.data_ptr()) // t.itemsize
                self.parts.setdefault((op, line, t.name), []).append(elems)
            data = data[~inside]
        self.unattributed += int(data.size)

    def intervals(self) -> list[dict]:
        out = []
        for (op, line, name), parts in sorted(self.parts.items()):
            e = np.unique(np.concatenate(parts))
            breaks = np.nonzero(np.diff(e) != 1)[0]
            starts = np.concatenate([[e[0]], e[breaks + 1]])
            ends = np.concatenate([e[breaks], [e[-1]]]) + 1
            out.append(
                {"op": op, "line": line, "pointer": name, "elements": [[int(a), int(b)] for a, b in zip(starts, ends)]}
            )
        return out


RECORDER = Recorder()


def patch_interpreter(record: bool) -> None:
    from triton.runtime import interpreter as interp

    interp.GridExecutor._init_args_hst = lambda self, args, kwargs: (list(args), dict(kwargs))  # noqa: SLF001 - Triton's launcher hooks: the host-side argument setup a GPU-less run replaces
    interp.GridExecutor._restore_args_dev = lambda self, *a, **k: None  # noqa: SLF001 - Triton's launcher hooks: the host-side argument setup a GPU-less run replaces
    if not record:
        return
    b = interp.InterpreterBuilder
    load, store = b.create_masked_load, b.create_masked_store

    def create_masked_load(self, ptrs, mask, other, *args, **kwargs):
        RECORDER.record("load", ptrs, mask)
        return load(self, ptrs, mask, other, *args, **kwargs)

    def create_masked_store(self, ptrs, value, mask, *args, **kwargs):
        RECORDER.record("store", ptrs, mask)
        return store(self, ptrs, value, mask, *args, **kwargs)

    b.create_masked_load, b.create_masked_store = create_masked_load, create_masked_store


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("file")
    ap.add_argument("--launch", type=int, default=0)
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--record", action="store_true", help="also record the footprint (one more run)")
    args = ap.parse_args()

    from tilelens_lsp.launches.evaluator import eval_grid
    from tilelens_lsp.launches.kernels import find_kernels
    from tilelens_lsp.launches.scanner import parse_directives
    from tilelens_lsp.model import TensorSpec

    path = Path(args.file).resolve()
    text = path.read_text()
    known = {k.name for k in find_kernels(text)}
    launches, errors = parse_directives(text, known)
    if errors or not launches:
        print(json.dumps({"error": f"directives: {errors or 'no launch'}"}))
        return 1
    launch = launches[args.launch]
    patch_interpreter(args.record)
    spec = importlib.util.spec_from_file_location("bench_interp_" + path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    fn = getattr(module, launch.kernel)
    names = list(fn.arg_names)
    call: dict = {}
    tensors: list[NumpyTensor] = []
    for name, a in list(zip(names, launch.args)) + list(launch.kwargs):
        if isinstance(a, TensorSpec):
            t = NumpyTensor(name, a)
            tensors.append(t)
            call[name] = t
        else:
            call[name] = a.value
    if launch.grid is not None:
        grid = tuple(launch.grid)
    else:
        grid = tuple(eval_grid(launch.grid_expr, dict(launch.grid_env), call))
    fn.run(grid=grid, warmup=False, **call)  # warm-up: the interpreter rewrites the kernel's AST once
    times = []
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        fn.run(grid=grid, warmup=False, **call)
        times.append(time.perf_counter() - t0)
    footprint = None
    if args.record:
        RECORDER.tensors, RECORDER.path, RECORDER.on = tensors, str(path), True
        fn.run(grid=grid, warmup=False, **call)
        RECORDER.on = False
        footprint = RECORDER.intervals()
    print(json.dumps({"times": times, "grid": list(grid), "footprint": footprint, "unattributed": RECORDER.unattributed}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
