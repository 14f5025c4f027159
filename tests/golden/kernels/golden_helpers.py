"""@triton.jit helpers for the golden kernels (a separate file, so inlined locs carry callsite(...))."""
import triton
import triton.language as tl


@triton.jit
def block_offsets(pid, BLOCK: tl.constexpr):
    return pid * BLOCK + tl.arange(0, BLOCK)


@triton.jit
def load_masked(ptr, offs, n):
    return tl.load(ptr + offs, mask=offs < n, other=0.0)


@triton.jit(noinline=True)
def scale_block(src_ptr, dst_ptr, start, n, BLOCK: tl.constexpr):
    offs = start + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(dst_ptr + offs, tl.load(src_ptr + offs, mask=mask) * 2.0, mask=mask)
