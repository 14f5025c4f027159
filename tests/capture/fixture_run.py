"""A user's script: launches three kernels under the interpreter on numpy-backed tensors."""

import os
import sys

os.environ["TRITON_INTERPRET"] = "1"
import numpy as np
import triton
import triton.language as tl
from triton.runtime import interpreter as interp

interp.GridExecutor._init_args_hst = lambda self, args, kwargs: (list(args), dict(kwargs))  # noqa: SLF001 - Triton's launcher hooks: the host-side argument setup a GPU-less run replaces
interp.GridExecutor._restore_args_dev = lambda self, *a, **k: None  # noqa: SLF001 - Triton's launcher hooks: the host-side argument setup a GPU-less run replaces

_NP = {"fp32": (np.float32, tl.float32), "i32": (np.int32, tl.int32)}


class Tensor:
    """A strided view of a numpy storage with guard zones (what the interpreter needs of a tensor)."""

    def __init__(self, dtype, shape, strides=None, offset=0, storage=None, fill=None):
        np_t, self.dtype = _NP[dtype]
        self.shape = tuple(shape)
        if strides is None:
            strides, step = [], 1
            for n in reversed(shape):
                strides.insert(0, step)
                step *= n
        self.strides = tuple(strides)
        self.offset = offset
        span = offset + sum((n - 1) * s for n, s in zip(shape, strides)) + 1
        self.storage = storage or span
        self.guard = 1024
        self.buf = np.zeros(self.storage + 2 * self.guard, np_t)
        if fill is not None:
            self.buf[self.guard : self.guard + self.storage] = fill
        self.itemsize = self.buf.itemsize

    def data_ptr(self):
        return self.buf.ctypes.data + (self.guard + self.offset) * self.itemsize

    def stride(self, dim=None):
        return self.strides if dim is None else self.strides[dim]

    def storage_offset(self):
        return self.offset

    def element_size(self):
        return self.itemsize

    def _view(self):
        idx = self.offset + sum(
            np.arange(n).reshape([-1 if i == d else 1 for i in range(len(self.shape))]) * s
            for d, (n, s) in enumerate(zip(self.shape, self.strides))
        )
        return self.buf[self.guard + idx]

    def min(self):
        return self._view().min()

    def max(self):
        return self._view().max()


sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fixture_kernels import gather_kernel, row_copy_kernel, scale_kernel  # noqa: E402

x = Tensor("fp32", (4, 48), strides=(64, 1), storage=256)  # a slice x[:, :48] of a (4, 64) tensor
y = Tensor("fp32", (4, 48))
row_copy_kernel[(4,)](x, y, 64, 48, BLOCK=64)
v = Tensor("fp32", (1000,))
# the interpreter has no benchmarker on a host without a GPU driver: each config runs once
scale_kernel.do_bench = lambda call, quantiles: (call(), [0.0, 0.0, 0.0])[1]
scale_kernel[lambda meta: (triton.cdiv(1000, meta["BLOCK"]),)](v, 1000)
ids = Tensor("i32", (16,), fill=np.arange(16) % 10)
table = Tensor("fp32", (10, 32))
out = Tensor("fp32", (16, 32))
gather_kernel[(16,)](ids, table, out, 2**33, D=32)
print("done")
