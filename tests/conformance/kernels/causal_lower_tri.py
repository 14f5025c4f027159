"""Lower-triangular block sum: program i loops over blocks 0..i (pid-dependent trip count)."""
import triton
import triton.language as tl


@triton.jit
def lower_tri_kernel(x_ptr, out_ptr, N, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    rows = pid * BLOCK + tl.arange(0, BLOCK)
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for j in range(0, pid + 1):
        cols = j * BLOCK + tl.arange(0, BLOCK)
        mask = (rows[:, None] < N) & (cols[None, :] < N) & (cols[None, :] <= rows[:, None])
        tile = tl.load(x_ptr + rows[:, None] * N + cols[None, :], mask=mask, other=0.0)
        acc += tl.sum(tile, axis=1)
    tl.store(out_ptr + rows, acc, mask=rows < N)


# tilelens: lower_tri_kernel[(cdiv(40, 16),)](fp32[40, 40], fp32[40], 40, BLOCK=16)
# tilelens: lower_tri_kernel[(2,)](fp32[32, 32], fp32[32], 32, BLOCK=16)
