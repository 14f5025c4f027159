"""Gathered rows masked by `tok < n` (ids padded with n), read in chunks by two nested loops that
advance the row pointers: the mask bounds the pointers on every iteration of both."""
import triton
import triton.language as tl


@triton.jit
def gather_rows_nested_kernel(a_ptr, out_ptr, ids_ptr, n, BLOCK_M: tl.constexpr):
    pid = tl.program_id(0)
    rows = pid * BLOCK_M + tl.arange(0, BLOCK_M)
    tok = tl.load(ids_ptr + rows)
    ok = tok < n
    p = a_ptr + tok[:, None] * 64 + tl.arange(0, 8)[None, :]
    acc = tl.zeros((BLOCK_M, 8), dtype=tl.float32)
    for j in range(2):
        q = p
        for k in range(4):
            acc += tl.load(q, mask=ok[:, None], other=0.0)
            q += 8
        p += 32
    tl.store(out_ptr + rows[:, None] * 8 + tl.arange(0, 8)[None, :], acc)


# tilelens: gather_rows_nested_kernel[(4,)](fp32[24, 64], fp32[64, 8], i32[64].values(0, 25), 24, BLOCK_M=16)
