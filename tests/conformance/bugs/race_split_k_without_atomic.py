"""Bug: a split-K matmul whose K slices store their partial products with a plain store: the programs
of one row tile overwrite each other (the fix is tl.atomic_add)."""
import triton
import triton.language as tl


@triton.jit
def splitk_kernel(a_ptr, b_ptr, c_ptr, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rk = tl.program_id(1) * BK + tl.arange(0, BK)
    rn = tl.arange(0, BN)
    partial = tl.dot(tl.load(a_ptr + rm[:, None] * K + rk[None, :]), tl.load(b_ptr + rk[:, None] * N + rn[None, :]))
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], partial)


# tilelens: splitk_kernel[(2, 2)](fp16[64, 64], fp16[64, 32], fp32[64, 32], 32, 64, BM=32, BN=32, BK=32)
# expect: TL005 at line 13
