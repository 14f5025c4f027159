"""Bug: the grid has twice the row tiles the matrix has, and the row tile wraps with `%`, so two
programs compute and store the same C tile without an atomic: a race between programs."""
import triton
import triton.language as tl


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid_m = tl.program_id(0) % (M // BM)
    pid_n = tl.program_id(1)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        rk = k + tl.arange(0, BK)
        acc += tl.dot(tl.load(a_ptr + rm[:, None] * K + rk[None, :]), tl.load(b_ptr + rk[:, None] * N + rn[None, :]))
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc)


# tilelens: matmul_kernel[(4, 2)](fp16[64, 64], fp16[64, 64], fp32[64, 64], 64, 64, 64, BM=32, BN=32, BK=32)
# expect: TL005 at line 17
