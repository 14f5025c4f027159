"""The capture hook's per-launch overhead, measured side by side in one run (issue 24, item 12).

Two measurements, each printed as a ratio against the same launches without the hook:
- the hook alone: a stand-in JIT class whose `run` does nothing, patched by each hook version, so
  the time is the hook's own (argument specs, value ranges, dedupe, the write);
- end to end under TRITON_INTERPRET=1: a real 1-D kernel on numpy-backed tensors.
`--old PATH` adds another hook file (e.g. `git show REV:tilelens_lsp/capture/hook.py > old.py`).
Host only: no GPU was used; a GPU launch costs ~20 µs, the interpreter's far more.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve()
NEW = HERE.parents[2] / "tilelens_lsp" / "capture" / "hook.py"


def load(path: Path, name: str, out: str):
    os.environ["TILELENS_CAPTURE_DIR"] = out
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class Tensor:
    def __init__(self, dtype: str, n: int) -> None:
        import numpy as np

        self.dtype = dtype
        self.shape = (n,)
        self.buf = np.arange(n, dtype=np.int32 if dtype == "int32" else np.float32)

    def data_ptr(self):
        return self.buf.ctypes.data

    def stride(self):
        return (1,)

    def storage_offset(self):
        return 0

    def element_size(self):
        return self.buf.itemsize

    def min(self):
        return self.buf.min()

    def max(self):
        return self.buf.max()


def _kernel(ids_ptr, x_ptr, out_ptr, n, BLOCK):
    return None


def stand_in(hook):
    class JITFunction:
        arg_names = ["ids_ptr", "x_ptr", "out_ptr", "n", "BLOCK"]
        fn = staticmethod(_kernel)

        def run(self, *args, grid=None, warmup=False, **kwargs):
            return None

    if hook is not None:
        JITFunction.run = hook._wrap(JITFunction.run)  # noqa: SLF001 - the capture hook's run wrapper, timed on its own
    return JITFunction()


def time_stand_in(hook, launches: int, distinct: int) -> float:
    k = stand_in(hook)
    globals()["BENCH_KERNEL"] = k
    ids, x, out = Tensor("int32", 4096), Tensor("float32", 4096), Tensor("float32", 4096)
    t0 = time.perf_counter()
    for i in range(launches):
        k.run(ids, x, out, i % distinct, grid=(16,), BLOCK=256)
    return (time.perf_counter() - t0) / launches


def time_interpreted(hooks: dict, launches: int, repeat: int) -> dict[str, float]:
    """Per-launch time of a real kernel under TRITON_INTERPRET=1, with each hook patched in turn."""
    os.environ["TRITON_INTERPRET"] = "1"
    import triton
    import triton.language as tl
    from triton.runtime import interpreter as interp

    interp.GridExecutor._init_args_hst = lambda self, args, kwargs: (list(args), dict(kwargs))  # noqa: SLF001 - Triton's launcher hooks: the host-side argument setup a GPU-less run replaces
    interp.GridExecutor._restore_args_dev = lambda self, *a, **k: None  # noqa: SLF001 - Triton's launcher hooks: the host-side argument setup a GPU-less run replaces

    @triton.jit
    def add_one(ids_ptr, x_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) + 1.0, mask=offs < n)

    globals()["add_one"] = add_one
    plain = interp.InterpretedFunction.run
    ids, x, out = Tensor("int32", 256), Tensor("float32", 256), Tensor("float32", 256)
    times: dict[str, list[float]] = {name: [] for name in hooks}
    for _ in range(repeat):
        for name, hook in hooks.items():
            interp.InterpretedFunction.run = plain if hook is None else hook._wrap(plain)  # noqa: SLF001 - the capture hook's run wrapper, timed on its own
            t0 = time.perf_counter()
            for i in range(launches):
                add_one[(1,)](ids, x, out, 200 + i % 50, BLOCK=256)
            times[name].append((time.perf_counter() - t0) / launches)
    interp.InterpretedFunction.run = plain
    return {name: statistics.median(t) for name, t in times.items()}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--old", type=Path, help="an older hook.py to compare")
    parser.add_argument("--launches", type=int, default=20000)
    parser.add_argument("--distinct", type=int, default=50, help="distinct launches among them")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    outs = {name: tempfile.mkdtemp(prefix=f"tilelens-bench-capture-{name}-") for name in ("new", "old")}
    hooks = {"none": None, "new": load(NEW, "hook_new", outs["new"])}
    if args.old:
        hooks["old"] = load(args.old, "hook_old", outs["old"])
    results: dict[str, list[float]] = {name: [] for name in hooks}
    for _ in range(args.repeat):
        for name, hook in hooks.items():
            results[name].append(time_stand_in(hook, args.launches, args.distinct))
    base = statistics.median(results["none"])
    print(f"stand-in launches ({args.launches}, {args.distinct} distinct), median of {args.repeat}:")
    for name, times in results.items():
        med = statistics.median(times)
        print(f"  {name:5s} {med * 1e6:8.2f} µs/launch  hook cost {max(med - base, 0) * 1e6:8.2f} µs")
    if "old" in results:
        old = statistics.median(results["old"]) - base
        new = statistics.median(results["new"]) - base
        print(f"  hook cost old/new: {old / new:.1f}x")
    interpreted = time_interpreted(hooks, max(args.launches // 50, 20), args.repeat)
    print(f"TRITON_INTERPRET=1 launches of a 256-lane kernel, median of {args.repeat}:")
    for name, per in interpreted.items():
        print(f"  {name:5s} {per * 1e6:8.1f} µs/launch  ({per / interpreted['none']:.2f}x without the hook)")
    for name in hooks:
        if name != "none":
            size = sum(p.stat().st_size for p in Path(outs[name]).glob("*.jsonl"))
            print(f"  {name}: records on disk after all runs: {size / 1024:.1f} KiB")


if __name__ == "__main__":
    sys.exit(main())
