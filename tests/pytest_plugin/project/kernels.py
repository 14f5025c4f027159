"""A user's kernels, and the numpy-backed tensors their tests launch them on under TRITON_INTERPRET=1."""
import numpy as np
import triton
import triton.language as tl
from triton.runtime import interpreter as interp

# the interpreter copies torch tensors to the host and back; these are host arrays already
interp.GridExecutor._init_args_hst = lambda self, args, kwargs: (list(args), dict(kwargs))  # noqa: SLF001 - Triton's launcher hooks: the host-side argument setup a GPU-less run replaces
interp.GridExecutor._restore_args_dev = lambda self, *a, **k: None  # noqa: SLF001 - Triton's launcher hooks: the host-side argument setup a GPU-less run replaces

_NP = {"fp32": (np.float32, tl.float32), "i32": (np.int32, tl.int32)}


class Tensor:
    """A contiguous numpy storage with guard zones on both sides (an out-of-bounds lane of the
    interpreter lands in a guard, as on a GPU it would land in a neighbour's memory)."""

    def __init__(self, dtype, n, fill=None):
        np_t, self.dtype = _NP[dtype]
        self.shape, self.strides, self.guard = (n,), (1,), 1024
        self.buf = np.zeros(n + 2 * self.guard, np_t)
        if fill is not None:
            self.buf[self.guard:self.guard + n] = fill
        self.itemsize = self.buf.itemsize

    def data_ptr(self):
        return self.buf.ctypes.data + self.guard * self.itemsize

    def stride(self, dim=None):
        return self.strides if dim is None else self.strides[dim]

    def storage_offset(self):
        return 0

    def element_size(self):
        return self.itemsize

    def view(self):
        return self.buf[self.guard:self.guard + self.shape[0]]

    def min(self):
        return self.view().min()

    def max(self):
        return self.view().max()


@triton.jit
def copy_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


@triton.jit
def tail_kernel(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs <= n) * 2, mask=offs < n)   # bug: <= reads one past


@triton.jit
def gather_kernel(ids_ptr, src_ptr, out_ptr, D: tl.constexpr):
    row = tl.load(ids_ptr + tl.program_id(0))
    cols = tl.arange(0, D)
    tl.store(out_ptr + tl.program_id(0) * D + cols, tl.load(src_ptr + row * D + cols))


@triton.jit
def histogram_kernel(x_ptr, hist_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    bucket = tl.load(x_ptr + offs, mask=offs < n, other=0.0).to(tl.int32)    # an index from float data
    tl.atomic_add(hist_ptr + bucket, 1.0, mask=offs < n)
