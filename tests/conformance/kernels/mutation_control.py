"""Conformance-style kernels for survivors of tools/mutation/mutate.py: ragged_walk_kernel catches
for-blend-ignored, halo_start_kernel if-results-then-only, unmasked_grid_stride_kernel
while-body-ignores-condition, flag_branch_kernel data-branch-exact; tail_data_mask_kernel gives two TL002
under unknown-mask-bound-dropped (a unit test asserting no diagnostics catches it). All agree with the
interpreter on the current product.
"""
import triton
import triton.language as tl


@triton.jit
def ragged_walk_kernel(x_ptr, y_ptr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    pos = pid * 0
    for k in range(0, pid + 1):          # program p takes p + 1 steps
        pos += 2
    lanes = tl.arange(0, BLOCK)
    tl.store(y_ptr + pid * BLOCK + lanes, tl.load(x_ptr + pos + lanes))


@triton.jit
def halo_start_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    if pid > 0:
        lo = pid * BLOCK - 1
        tl.store(y_ptr + pid, 1.0)
    else:
        lo = pid * 0
        tl.store(y_ptr + pid, 2.0)
    offs = lo + tl.arange(0, BLOCK)
    # each program stores its own block (a store at the halo start too would race with the neighbour)
    outs = pid * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + 8 + outs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


@triton.jit
def unmasked_grid_stride_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    start = tl.program_id(0) * BLOCK
    step = tl.num_programs(0) * BLOCK
    while start < n:
        offs = start + tl.arange(0, BLOCK)
        tl.store(y_ptr + offs, tl.load(x_ptr + offs) * 2)
        start += step


@triton.jit
def flag_branch_kernel(flag_ptr, x_ptr, y_ptr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    if tl.load(flag_ptr + pid) > 0:
        tl.store(y_ptr + offs, tl.load(x_ptr + offs))


@triton.jit
def tail_data_mask_kernel(x_ptr, keep_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    inb = offs < n
    keep = (tl.load(keep_ptr + offs, mask=inb, other=0) != 0) & inb
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=keep), mask=keep)


# tilelens: ragged_walk_kernel[(3,)](fp32[32], fp32[3, 16], BLOCK=16)
# tilelens: halo_start_kernel[(3,)](fp32[48], fp32[56], 48, BLOCK=16)
# tilelens: unmasked_grid_stride_kernel[(3,)](fp32[160], fp32[160], 160, BLOCK=32)
# tilelens: flag_branch_kernel[(8,)](fp32[8], fp32[128], fp32[128], BLOCK=16)
# tilelens: tail_data_mask_kernel[(4,)](fp32[50], i8[50], fp32[50], 50, BLOCK=16)
