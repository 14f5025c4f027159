"""Batched matmul on a 3-D grid: program_id(2) is the batch, with per-batch strides."""
import triton
import triton.language as tl


@triton.jit
def bmm_kernel(a_ptr, b_ptr, c_ptr, M, N, K, sab, sam, sak, sbb, sbk, sbn, scb, scm, scn,
               BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pm = tl.program_id(0)
    pn = tl.program_id(1)
    bz = tl.program_id(2)
    rm = pm * BM + tl.arange(0, BM)
    rn = pn * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a_ptrs = a_ptr + bz * sab + rm[:, None] * sam + rk[None, :] * sak
    b_ptrs = b_ptr + bz * sbb + rk[:, None] * sbk + rn[None, :] * sbn
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptrs, mask=(rm[:, None] < M) & (rk[None, :] + k < K), other=0.0)
        b = tl.load(b_ptrs, mask=(rk[:, None] + k < K) & (rn[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BK * sak
        b_ptrs += BK * sbk
    tl.store(c_ptr + bz * scb + rm[:, None] * scm + rn[None, :] * scn, acc,
             mask=(rm[:, None] < M) & (rn[None, :] < N))


# tilelens: bmm_kernel[(cdiv(20, 16), cdiv(18, 16), 3)](fp16[3, 20, 24], fp16[3, 24, 18], fp32[3, 20, 18], 20, 18, 24, 480, 24, 1, 432, 18, 1, 360, 18, 1, BM=16, BN=16, BK=16)
# tilelens: bmm_kernel[(1, 1, 2)](fp16[2, 16, 16], tensor(fp16, (2, 16, 16), strides=(256, 1, 16)), fp32[2, 16, 16], 16, 16, 16, 256, 16, 1, 256, 1, 16, 256, 16, 1, BM=16, BN=16, BK=16)
# tilelens: bmm_kernel[(cdiv(20, 16), cdiv(18, 16), 3)](fp16[3, 20, 24], fp16[3, 24, 18], tensor(fp32, (3, 20, 18), strides=(400, 20, 1), storage=1200), 20, 18, 24, 480, 24, 1, 432, 18, 1, 400, 20, 1, BM=16, BN=16, BK=16)
