"""Bug: the K loop has no mask while K is not a multiple of BLOCK_K."""
import triton
import triton.language as tl


@triton.jit
def matmul_nokmask_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                          BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :], mask=rm[:, None] < M)
        b = tl.load(b_ptr + (k + rk)[:, None] * N + rn[None, :], mask=rn[None, :] < N)
        acc = tl.dot(a, b, acc)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


# tilelens: matmul_nokmask_kernel[(2, 2)](fp16[32, 40], fp16[40, 32], fp32[32, 32], 32, 32, 40, BM=16, BN=16, BK=16)
# expect: TL001 at line 14
# expect: TL001 at line 15
