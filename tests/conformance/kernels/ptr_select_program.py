"""A pointer chosen per program (`p = a if pid % 2 == 0 else b`, an `arith.select` between two
arguments): each candidate is checked against its own storage, on the programs that pick it."""
import triton
import triton.language as tl


@triton.jit
def even_odd_kernel(a_ptr, b_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    if pid % 2 == 0:
        p = a_ptr
    else:
        p = b_ptr
    offs = (pid // 2) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(p + offs, tl.full([BLOCK], 3.0, tl.float32), mask=mask)


# tilelens: even_odd_kernel[(8,)](fp32[100], fp32[100], 100, BLOCK=32)
