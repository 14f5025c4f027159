"""Staircase: program i reads the first i+1 blocks of its row, unmasked (a pid-dependent trip count
that no mask repeats: only the loop bound keeps program 0 from reading its whole row)."""
import triton
import triton.language as tl


@triton.jit
def staircase_kernel(x_ptr, out_ptr, N, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for j in range(0, pid + 1):
        acc += tl.load(x_ptr + pid * N + j * BLOCK + tl.arange(0, BLOCK))
    tl.store(out_ptr + pid * BLOCK + tl.arange(0, BLOCK), acc)


# tilelens: staircase_kernel[(4,)](fp32[4, 64], fp32[4, 16], 64, BLOCK=16)
