"""Bug: the grid-stride loop carries its row offset in int32: `off += step` wraps past 2**31 elements
and the last row is read and written at a negative offset."""
import triton
import triton.language as tl


@triton.jit
def rows_copy_kernel(out_ptr, in_ptr, NC, L, BLOCK: tl.constexpr):
    nc_iter = tl.program_id(1)
    nc_stride = tl.num_programs(1)
    col = (tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)) % BLOCK
    off = nc_iter * L
    while nc_iter < NC:
        data = tl.load(in_ptr + off + col)
        tl.store(out_ptr + off + col, data)
        off += nc_stride * L
        nc_iter += nc_stride


# rows of 2**28 elements: row 8 starts at 2**31
# tilelens: rows_copy_kernel[(1, 3)](fp32[9, 2**28], fp32[9, 2**28], 9, 2**28, BLOCK=16)
# expect: TL001 at line 14
# expect: TL001 at line 15
