"""Split-K matmul: program_id(1) picks a K slice; partial tiles meet in C through masked atomic_add."""
import triton
import triton.language as tl


@triton.jit
def split_k_kernel(a_ptr, b_ptr, c_ptr, M, N, K, K_PER_SPLIT,
                   BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid = tl.program_id(0)
    pid_k = tl.program_id(1)
    grid_n = tl.cdiv(N, BN)
    rm = (pid // grid_n) * BM + tl.arange(0, BM)
    rn = (pid % grid_n) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    k_start = pid_k * K_PER_SPLIT
    for k in range(k_start, k_start + K_PER_SPLIT, BK):
        kk = k + rk
        a = tl.load(a_ptr + rm[:, None] * K + kk[None, :],
                    mask=(rm[:, None] < M) & (kk[None, :] < K), other=0.0)
        b = tl.load(b_ptr + kk[:, None] * N + rn[None, :],
                    mask=(kk[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc += tl.dot(a, b)
    tl.atomic_add(c_ptr + rm[:, None] * N + rn[None, :], acc,
                  mask=(rm[:, None] < M) & (rn[None, :] < N))


# tilelens: split_k_kernel[(cdiv(20, 16) * cdiv(24, 16), 3)](fp16[20, 90], fp16[90, 24], fp32[20, 24], 20, 24, 90, 32, BM=16, BN=16, BK=16)
# tilelens: split_k_kernel[(1, 2)](fp16[16, 64], fp16[64, 16], fp32[16, 16], 16, 16, 64, 32, BM=16, BN=16, BK=32)
