"""Split-K matmul done right: each K slice adds its partial product with tl.atomic_add, so the
programs that share a C tile do not race."""
import triton
import triton.language as tl


@triton.jit
def splitk_kernel(a_ptr, b_ptr, c_ptr, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rk = tl.program_id(1) * BK + tl.arange(0, BK)
    rn = tl.arange(0, BN)
    a = tl.load(a_ptr + rm[:, None] * K + rk[None, :])
    b = tl.load(b_ptr + rk[:, None] * N + rn[None, :])
    tl.atomic_add(c_ptr + rm[:, None] * N + rn[None, :], tl.sum(a[:, :, None] * b[None, :, :], axis=1))


# tilelens: splitk_kernel[(2, 2)](fp32[32, 32], fp32[32, 16], fp32[32, 16], 16, 32, BM=16, BN=16, BK=16)
