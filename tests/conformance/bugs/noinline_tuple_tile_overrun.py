"""Bug: a noinline helper returns the program's (row, column) tile as a tuple (its function header
ends `-> (i32, i32)`), and the load of the last row block has no mask."""

import triton
import triton.language as tl


@triton.jit(noinline=True)
def tile_of(tile_id, N, BLOCK_N: tl.constexpr):
    grid_n = tl.cdiv(N, BLOCK_N)
    return tile_id // grid_n, tile_id % grid_n


@triton.jit
def tile_copy_kernel(x_ptr, y_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    pid_m, pid_n = tile_of(tl.program_id(0), N, BLOCK_N)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)[:, None]
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)[None, :]
    v = tl.load(x_ptr + rm * N + rn)
    tl.store(y_ptr + rm * N + rn, v, mask=(rm < M) & (rn < N))


# tilelens: tile_copy_kernel[(8,)](fp32[100, 64], fp32[100, 64], 100, 64, BLOCK_M=32, BLOCK_N=32)
# expect: TL001 at line 19
