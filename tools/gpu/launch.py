"""Run a kernel file's declared launches on a real GPU with torch tensors built from the directives.

    python tools/gpu/launch.py FILE [FILE ...]

Each tensor spec becomes a view (`as_strided`) of a zero-filled storage of exactly the declared size
(an integer tensor with `.values(LO, HI)` holds LO, LO+1, ..., HI-1, LO, ...), so an access past the
storage is past the allocation, where compute-sanitizer's memcheck can see it. Prints one line per
launch; `tools/gpu/confirm.sh` runs it under compute-sanitizer. Needs torch and a CUDA GPU; used on
the device machine only, never by the test suite.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from tilelens_lsp.compile.binding import grid_of  # noqa: E402
from tilelens_lsp.launches.scanner import parse_directives  # noqa: E402
from tilelens_lsp.model import ScalarSpec, TensorSpec  # noqa: E402

DTYPES = {
    "fp16": torch.float16,
    "bf16": torch.bfloat16,
    "fp32": torch.float32,
    "fp64": torch.float64,
    "i8": torch.int8,
    "i16": torch.int16,
    "i32": torch.int32,
    "i64": torch.int64,
    "u8": torch.uint8,
    "i1": torch.bool,
}


def tensor(spec: TensorSpec) -> torch.Tensor:
    """The view, placed so that its storage ends exactly where its own cudaMalloc block ends (run with
    PYTORCH_NO_CUDA_MEMORY_CACHING=1): one element past the storage is past the allocation."""
    dtype = DTYPES[spec.dtype]
    size = torch.empty(0, dtype=dtype).element_size()
    pad = (-(spec.storage * size)) % 512 // size
    buf = torch.zeros(spec.storage + pad, dtype=dtype, device="cuda")
    if spec.values:
        lo, hi = spec.values
        buf[pad:].copy_((lo + torch.arange(spec.storage, device="cuda") % (hi - lo)).to(dtype))
    return buf.as_strided(spec.shape, spec.strides, pad + spec.offset)


_SPACERS: list[torch.Tensor] = []


def value(arg):
    if isinstance(arg, TensorSpec):
        t = tensor(arg)
        # a 1 MiB allocation after each tensor, freed before the launch: the next tensor does not
        # start where this one ends, so reading past it reads unallocated memory memcheck reports
        _SPACERS.append(torch.empty(1 << 20, dtype=torch.uint8, device="cuda"))
        return t
    return arg.value if isinstance(arg, ScalarSpec) else arg


def main(paths: list[str]) -> int:
    for raw in paths:
        path = Path(raw).resolve()
        spec = importlib.util.spec_from_file_location(f"gpu_{path.stem}", path)
        module = importlib.util.module_from_spec(spec)
        sys.path.insert(0, str(path.parent))
        spec.loader.exec_module(module)
        launches, errors = parse_directives(path.read_text())
        for launch in launches:
            kernel = getattr(module, launch.kernel)
            args = [value(a) for a in launch.args]
            kwargs = {k: value(v) for k, v in launch.kwargs}
            _SPACERS.clear()
            torch.cuda.synchronize()
            kernel[lambda meta, launch=launch: grid_of(launch, meta)](*args, **kwargs)
            torch.cuda.synchronize()
            print(f"launched {path.name}:{launch.line} {launch.kernel}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
