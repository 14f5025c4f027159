"""Layer norm backward, second stage: reduce the partial dW/dB rows column block by column block."""
import triton
import triton.language as tl


@triton.jit
def layer_norm_bwd_dwdb(DW, DB, FINAL_DW, FINAL_DB, M, N,
                        BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr):
    pid = tl.program_id(0)
    cols = pid * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    dw = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    db = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    for i in range(0, M, BLOCK_SIZE_M):
        rows = i + tl.arange(0, BLOCK_SIZE_M)
        mask = (rows[:, None] < M) & (cols[None, :] < N)
        offs = rows[:, None] * N + cols[None, :]
        dw += tl.load(DW + offs, mask=mask, other=0.)
        db += tl.load(DB + offs, mask=mask, other=0.)
    sum_dw = tl.sum(dw, axis=0)
    sum_db = tl.sum(db, axis=0)
    tl.store(FINAL_DW + cols, sum_dw, mask=cols < N)
    tl.store(FINAL_DB + cols, sum_db, mask=cols < N)


# tilelens: layer_norm_bwd_dwdb[(cdiv(50, 16),)](fp32[10, 50], fp32[10, 50], fp32[50], fp32[50], 10, 50, BLOCK_SIZE_M=4, BLOCK_SIZE_N=16)
# tilelens: layer_norm_bwd_dwdb[(2,)](fp32[8, 64], fp32[8, 64], fp32[64], fp32[64], 8, 64, BLOCK_SIZE_M=8, BLOCK_SIZE_N=32)
