"""Helpers that issue the memory accesses themselves: the access's line lies in this file."""
import triton
import triton.language as tl


@triton.jit
def load_row(ptr, row, stride, n, BLOCK: tl.constexpr):
    cols = tl.arange(0, BLOCK)
    return tl.load(ptr + row * stride + cols, mask=cols < n, other=0.0)


@triton.jit
def store_row(ptr, row, stride, n, value, BLOCK: tl.constexpr):
    cols = tl.arange(0, BLOCK)
    tl.store(ptr + row * stride + cols, value, mask=cols < n)


@triton.jit(noinline=True)
def scaled_copy_block(src_ptr, dst_ptr, start, n, BLOCK: tl.constexpr):
    offs = start + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(src_ptr + offs, mask=mask, other=0.0)
    tl.store(dst_ptr + offs, x * 2.0, mask=mask)


@triton.jit(noinline=True)
def accumulate(ptr, index, value):
    tl.atomic_add(ptr + index, value)
