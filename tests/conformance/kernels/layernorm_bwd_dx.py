"""Layer norm backward, dx fused with partial dW/dB under a spin lock (Triton tutorial 05)."""
import triton
import triton.language as tl


@triton.jit
def layer_norm_bwd_dx_fused(DX, DY, DW, DB, X, W, Mean, Rstd, Lock, stride, N,
                            GROUP_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_SIZE_N)
    mask = cols < N
    X += row * stride
    DY += row * stride
    DX += row * stride
    lock_id = row % GROUP_SIZE_M
    Lock += lock_id
    Count = Lock + GROUP_SIZE_M
    DW = DW + lock_id * N + cols
    DB = DB + lock_id * N + cols
    x = tl.load(X + cols, mask=mask, other=0).to(tl.float32)
    dy = tl.load(DY + cols, mask=mask, other=0).to(tl.float32)
    w = tl.load(W + cols, mask=mask).to(tl.float32)
    mean = tl.load(Mean + row)
    rstd = tl.load(Rstd + row)
    xhat = (x - mean) * rstd
    wdy = w * dy
    xhat = tl.where(mask, xhat, 0.)
    wdy = tl.where(mask, wdy, 0.)
    c1 = tl.sum(xhat * wdy, axis=0) / N
    c2 = tl.sum(wdy, axis=0) / N
    dx = (wdy - (xhat * c1 + c2)) * rstd
    tl.store(DX + cols, dx, mask=mask)
    partial_dw = (dy * xhat).to(w.dtype)
    partial_db = (dy).to(w.dtype)
    while tl.atomic_cas(Lock, 0, 1) == 1:
        pass
    count = tl.load(Count)
    if count == 0:
        tl.atomic_xchg(Count, 1)
    else:
        partial_dw += tl.load(DW, mask=mask)
        partial_db += tl.load(DB, mask=mask)
    tl.store(DW, partial_dw, mask=mask)
    tl.store(DB, partial_db, mask=mask)
    tl.debug_barrier()
    tl.atomic_xchg(Lock, 0)


# tilelens: M = 6
# tilelens: N = 40
# tilelens: G = 4
# tilelens: layer_norm_bwd_dx_fused[(M,)](fp32[M, N], fp32[M, N], fp32[G, N], fp32[G, N], fp32[M, N], fp32[N], fp32[M], fp32[M], i32[2 * G], N, N, GROUP_SIZE_M=G, BLOCK_SIZE_N=64)
# tilelens: layer_norm_bwd_dx_fused[(3,)](fp32[3, 32], fp32[3, 32], fp32[2, 32], fp32[2, 32], fp32[3, 32], fp32[32], fp32[3], fp32[3], i32[4], 32, 32, GROUP_SIZE_M=2, BLOCK_SIZE_N=32)
