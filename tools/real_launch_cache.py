#!/usr/bin/env python3
"""Fill a Triton cache with the TTIR of *real* launches, on a machine with a GPU and torch.

    TRITON_CACHE_DIR=/tmp/cache python tools/real_launch_cache.py tests/conformance/kernels tests/golden/kernels
    tools/bulk_align.py /tmp/cache          # then, anywhere with the same Triton release

Every `# tilelens:` launch of every kernel file is launched for real through the JIT (zero-filled
torch tensors shaped as declared, strided views of a storage as declared; autotuners benchmark
every config, so every config compiles). Each file runs in its own subprocess with a time limit.
Nothing is checked here: the point is a cache of TTIR that real launches compiled, for the reader's
bulk alignment (`tools/bulk_align.py`). Prints one line per launch: ok, or the error.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO_ROOT = HERE.parent

_TORCH_DTYPES = {
    "i1": "bool",
    "bool": "bool",
    "int1": "bool",
    "i8": "int8",
    "i16": "int16",
    "i32": "int32",
    "i64": "int64",
    "u8": "uint8",
    "u16": "uint16",
    "u32": "uint32",
    "u64": "uint64",
    "fp16": "float16",
    "bf16": "bfloat16",
    "fp32": "float32",
    "fp64": "float64",
    "fp8e4nv": "float8_e4m3fn",
    "fp8e5": "float8_e5m2",
}


def _tensor(spec, torch):
    dtype = getattr(torch, _TORCH_DTYPES.get(spec.dtype, spec.dtype))
    storage = max(int(spec.storage), 1)
    base = torch.zeros(storage, dtype=dtype, device="cuda")
    return base.as_strided(tuple(spec.shape), tuple(spec.strides), int(spec.offset))


def run_file(path: Path) -> int:
    import torch
    import triton

    from tilelens_lsp.launches.evaluator import eval_grid
    from tilelens_lsp.launches.kernels import find_kernels
    from tilelens_lsp.launches.scanner import parse_directives
    from tilelens_lsp.model import ScalarSpec, TensorSpec
    from tilelens_lsp.pipeline import import_module

    triton.set_allocator(lambda size, align, stream: torch.empty(size, dtype=torch.int8, device="cuda"))
    text = path.read_text(encoding="utf-8")
    known = {k.name for k in find_kernels(text)}
    launches, _errors = parse_directives(text, known or None)
    if not launches:
        return 0
    module = import_module(path.resolve(), REPO_ROOT)
    failed = 0
    for launch in launches:
        label = f"{path.name}:{launch.line} {launch.kernel}"

        def value(arg):
            if isinstance(arg, TensorSpec):
                return _tensor(arg, torch)
            assert isinstance(arg, ScalarSpec)
            return arg.value

        try:
            args = [value(a) for a in launch.args]
            kwargs = {k: value(a) for k, a in launch.kwargs}
            if launch.grid is not None:
                grid = tuple(launch.grid)
            else:
                expr, env = launch.grid_expr or "", dict(launch.grid_env)

                def grid(meta, expr=expr, env=env):
                    return eval_grid(expr, env, meta)

            getattr(module, launch.kernel)[grid](*args, **kwargs)
            torch.cuda.synchronize()
            print(f"ok     {label}", flush=True)
        except Exception as exc:  # noqa: BLE001 - report and go on
            failed += 1
            first = (str(exc).strip().splitlines() or [""])[-1][:200]
            print(f"failed {label}: {type(exc).__name__}: {first}", flush=True)
    return 1 if failed else 0


def main(argv: list[str]) -> int:
    if len(argv) == 2 and argv[0] == "--one":
        return run_file(Path(argv[1]))
    sys.path.insert(0, str(HERE))
    import triton
    from ttir_corpus import file_releases, kernel_files

    from tilelens_lsp.releases import release_of

    release = release_of(triton.__version__)
    status = 0
    for f in kernel_files([Path(a) for a in argv]):
        allowed = file_releases(f.read_text(encoding="utf-8"))
        if allowed is not None and release not in allowed:
            continue
        try:
            proc = subprocess.run(
                [sys.executable, __file__, "--one", str(f)],
                capture_output=True,
                text=True,
                timeout=float(os.environ.get("REAL_LAUNCH_TIMEOUT", "120")),
                cwd=REPO_ROOT,
            )
            sys.stdout.write(proc.stdout)
            if proc.returncode:
                status = 1
                if not proc.stdout.strip():
                    tail = (proc.stderr.strip().splitlines() or [""])[-1][:200]
                    print(f"failed {f.name}: exit {proc.returncode}: {tail}")
        except subprocess.TimeoutExpired:
            status = 1
            print(f"failed {f.name}: timed out")
    return status


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
