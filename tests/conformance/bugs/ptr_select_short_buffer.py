"""Bug: odd programs write `b`, which is shorter than `a`; the mask is sized for `a`."""
import triton
import triton.language as tl


@triton.jit
def even_odd_kernel(a_ptr, b_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    p = tl.where(pid % 2 == 0, a_ptr, b_ptr)
    offs = (pid // 2) * BLOCK + tl.arange(0, BLOCK)
    tl.store(p + offs, tl.full([BLOCK], 3.0, tl.float32), mask=offs < n)


# tilelens: even_odd_kernel[(8,)](fp32[100], fp32[90], 100, BLOCK=32)
# expect: TL001 at line 11
