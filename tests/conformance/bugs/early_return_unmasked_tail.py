"""Bug: the early return skips whole blocks past the data, but the last partial block is not
masked, so program 3 reads and writes elements 1000..1023."""
import triton
import triton.language as tl


@triton.jit
def add_one_kernel(x_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    if pid * BLOCK >= n:
        return
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs) + 1)


# tilelens: add_one_kernel[(8,)](fp32[1000], 1000, BLOCK=256)
# expect: TL001 at line 13
