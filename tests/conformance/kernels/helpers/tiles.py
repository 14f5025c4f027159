"""Offset and mask helpers shared by conformance kernels (inlined @triton.jit functions)."""
import triton
import triton.language as tl


@triton.jit
def block_offsets(pid, BLOCK: tl.constexpr):
    return pid * BLOCK + tl.arange(0, BLOCK)


@triton.jit
def tail_mask(offs, n):
    return offs < n


@triton.jit
def tile_rows_cols(row0, col0, BM: tl.constexpr, BN: tl.constexpr):
    rows = row0 + tl.arange(0, BM)
    cols = col0 + tl.arange(0, BN)
    return rows, cols


@triton.jit
def tile_mask(rows, cols, M, N):
    return (rows[:, None] < M) & (cols[None, :] < N)


@triton.jit
def tile_offsets(rows, cols, stride_r, stride_c):
    return rows[:, None] * stride_r + cols[None, :] * stride_c
