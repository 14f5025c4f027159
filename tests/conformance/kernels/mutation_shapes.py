"""Conformance-style kernels for survivors of tools/mutation/mutate.py: permute3d_kernel catches
trans-order-ignored, second_half_kernel make-range-start-ignored; repeat_rows_kernel makes
broadcast-identity crash (a TL050 refusal, caught only once refusals are pinned). All agree with the
interpreter on the current product.
"""
import triton
import triton.language as tl


@triton.jit
def permute3d_kernel(x_ptr, y_ptr, M, N, B: tl.constexpr):
    b = tl.arange(0, B)
    i = tl.arange(0, B)
    j = tl.arange(0, B)
    mask = (i[None, :, None] < M) & (j[None, None, :] < N)
    t = tl.load(x_ptr + b[:, None, None] * M * N + i[None, :, None] * N + j[None, None, :], mask=mask)
    # y[b, j, i] = x[b, i, j]
    tl.store(y_ptr + b[:, None, None] * N * M + i[None, :, None] * M + j[None, None, :],
             tl.permute(t, (0, 2, 1)), mask=tl.permute(mask, (0, 2, 1)))


@triton.jit
def second_half_kernel(x_ptr, y_ptr, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(BLOCK, 2 * BLOCK)
    v = tl.load(x_ptr + row * 2 * BLOCK + cols)
    tl.store(y_ptr + row * BLOCK + cols - BLOCK, v)


@triton.jit
def repeat_rows_kernel(x_ptr, y_ptr, R: tl.constexpr):
    rows = tl.program_id(0) * R + tl.arange(0, R)
    idx = tl.reshape(tl.broadcast_to(rows[:, None], (R, 4)), (4 * R,))    # each row index 4 times
    base = tl.reshape(tl.full((R, 4), 0, tl.int32) + tl.program_id(0), (4 * R,))
    out = tl.program_id(0) * 4 * R + tl.arange(0, 4 * R)
    tl.store(y_ptr + out, tl.load(x_ptr + idx + base * 0))


# tilelens: permute3d_kernel[(1,)](fp32[4, 3, 2], fp32[4, 2, 3], 3, 2, B=4)
# tilelens: second_half_kernel[(3,)](fp32[3, 32], fp32[3, 16], BLOCK=16)
# tilelens: repeat_rows_kernel[(2,)](fp32[16], fp32[64], R=8)
