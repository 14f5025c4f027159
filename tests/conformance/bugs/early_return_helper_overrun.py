"""Bug: a noinline helper returns early for programs past the data, but the store after it uses
`<=` in its mask."""
import triton
import triton.language as tl


@triton.jit(noinline=True)
def fill_block(x_ptr, pid, n, BLOCK: tl.constexpr):
    if pid * BLOCK >= n:
        return
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.full([BLOCK], 1.0, tl.float32), mask=offs <= n)


@triton.jit
def fill_kernel(x_ptr, n, BLOCK: tl.constexpr):
    fill_block(x_ptr, tl.program_id(0), n, BLOCK)


# tilelens: fill_kernel[(8,)](fp32[100], 100, BLOCK=32)
# expect: TL001 at line 12
