"""Grid-stride `while` loop over rows, the shape of FlagGems' upsample_nearest1d: program (x, y) copies
rows y, y + num_programs(1), ... of NC rows; the row pointers are carried and advance by a
program-uniform stride, the lanes repeat the L columns of a row (`idx % L`)."""
import triton
import triton.language as tl


@triton.jit
def rows_copy_kernel(out_ptr, in_ptr, NC, L, BLOCK: tl.constexpr):
    nc_iter = tl.program_id(1)
    nc_stride = tl.num_programs(1)
    col = (tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)) % L
    ptr_i = in_ptr + nc_iter * L
    ptr_o = out_ptr + nc_iter * L
    while nc_iter < NC:
        data = tl.load(ptr_i + col)
        tl.store(ptr_o + col, data)
        ptr_i += nc_stride * L
        ptr_o += nc_stride * L
        nc_iter += nc_stride


# tilelens: rows_copy_kernel[(1, 3)](fp32[20, 16], fp32[20, 16], 20, 16, BLOCK=64)
# tilelens: rows_copy_kernel[(1, 4)](fp32[8, 32], fp32[8, 32], 8, 32, BLOCK=32)
# more programs than rows: programs 5 and 6 never enter the loop
# tilelens: rows_copy_kernel[(1, 7)](fp32[5, 16], fp32[5, 16], 5, 16, BLOCK=16)
