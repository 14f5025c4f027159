"""Plain matmul on a 2-D grid (program_id(0) rows, program_id(1) columns), masks on all edges."""
import triton
import triton.language as tl


@triton.jit
def matmul2d_kernel(a_ptr, b_ptr, c_ptr, M, N, K, lda, ldb, ldc,
                    BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BM + tl.arange(0, BM)
    offs_n = pid_n * BN + tl.arange(0, BN)
    offs_k = tl.arange(0, BK)
    a_ptrs = a_ptr + offs_m[:, None] * lda + offs_k[None, :]
    b_ptrs = b_ptr + offs_k[:, None] * ldb + offs_n[None, :]
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        k_left = K - k * BK
        a = tl.load(a_ptrs, mask=(offs_m[:, None] < M) & (offs_k[None, :] < k_left), other=0.0)
        b = tl.load(b_ptrs, mask=(offs_k[:, None] < k_left) & (offs_n[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BK
        b_ptrs += BK * ldb
    c_ptrs = c_ptr + offs_m[:, None] * ldc + offs_n[None, :]
    tl.store(c_ptrs, acc.to(tl.float16), mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


# tilelens: matmul2d_kernel[(cdiv(50, 16), cdiv(30, 16))](fp16[50, 40], fp16[40, 30], fp16[50, 30], 50, 30, 40, 40, 30, 30, BM=16, BN=16, BK=16)
# tilelens: matmul2d_kernel[(2, 2)](
# tilelens:     tensor(fp16, (32, 20), strides=(24, 1), storage=32 * 24), fp16[20, 32],
# tilelens:     tensor(fp16, (32, 32), strides=(40, 1), offset=8, storage=8 + 32 * 40),
# tilelens:     32, 32, 20, 24, 32, 40, BM=16, BN=16, BK=32)
