"""Linear layer: optional bias under a constexpr `if HAS_BIAS:` and a string-constexpr activation."""
import triton
import triton.language as tl


@triton.jit
def linear_kernel(x_ptr, w_ptr, bias_ptr, y_ptr, M, N, K,
                  HAS_BIAS: tl.constexpr, ACTIVATION: tl.constexpr,
                  BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        x = tl.load(x_ptr + rm[:, None] * K + (k + rk)[None, :],
                    mask=(rm[:, None] < M) & ((k + rk)[None, :] < K), other=0.0)
        # w is (N, K): read it transposed
        w = tl.load(w_ptr + rn[None, :] * K + (k + rk)[:, None],
                    mask=(rn[None, :] < N) & ((k + rk)[:, None] < K), other=0.0)
        acc = tl.dot(x, w, acc)
    if HAS_BIAS:
        bias = tl.load(bias_ptr + rn, mask=rn < N, other=0.0)
        acc += bias[None, :].to(tl.float32)
    if ACTIVATION == "relu":
        acc = tl.maximum(acc, 0.0)
    tl.store(y_ptr + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


# tilelens: linear_kernel[(2, 3)](fp16[20, 36], fp16[40, 36], fp16[40], fp32[20, 40], 20, 40, 36, HAS_BIAS=True, ACTIVATION="relu", BM=16, BN=16, BK=16)
# tilelens: linear_kernel[(1, 2)](fp16[16, 16], fp16[30, 16], None, fp32[16, 30], 16, 30, 16, HAS_BIAS=False, ACTIVATION="none", BM=16, BN=16, BK=16)
