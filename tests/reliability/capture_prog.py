"""What the capture reliability tests' programs import: Triton's interpreter on numpy-backed tensors.

A program run under `tilelens-lsp capture` does `from capture_prog import Tensor, triton, tl` (this
folder on its PYTHONPATH); importing this sets TRITON_INTERPRET=1 first, as a user's script would.
"""

import os

os.environ["TRITON_INTERPRET"] = "1"

import numpy as np  # noqa: E402
import triton  # noqa: E402,F401
import triton.language as tl  # noqa: E402,F401
from triton.runtime import interpreter as interp  # noqa: E402

interp.GridExecutor._init_args_hst = lambda self, args, kwargs: (list(args), dict(kwargs))  # noqa: SLF001 - Triton's launcher hooks: the host-side argument setup a GPU-less run replaces
interp.GridExecutor._restore_args_dev = lambda self, *a, **k: None  # noqa: SLF001 - Triton's launcher hooks: the host-side argument setup a GPU-less run replaces


class Tensor:
    """A contiguous fp32 or i32 numpy array with guard zones, shaped like a torch tensor for the hook."""

    def __init__(self, dtype: str, n: int, fill=None) -> None:
        self.dtype = {"fp32": tl.float32, "i32": tl.int32}[dtype]
        self.shape = (n,)
        self.guard = 1024
        self.buf = np.zeros(n + 2 * self.guard, np.float32 if dtype == "fp32" else np.int32)
        if fill is not None:
            self.buf[self.guard : self.guard + n] = fill
        self.itemsize = self.buf.itemsize

    def data_ptr(self):
        return self.buf.ctypes.data + self.guard * self.itemsize

    def stride(self, dim=None):
        return (1,) if dim is None else 1

    def storage_offset(self):
        return 0

    def element_size(self):
        return self.itemsize

    def min(self):
        return self.buf[self.guard : self.guard + self.shape[0]].min()

    def max(self):
        return self.buf[self.guard : self.guard + self.shape[0]].max()
