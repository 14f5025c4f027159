"""Bug: the grid-stride loop runs while `nc_iter <= NC`, one row past the last."""
import triton
import triton.language as tl


@triton.jit
def rows_copy_kernel(out_ptr, in_ptr, NC, L, BLOCK: tl.constexpr):
    nc_iter = tl.program_id(1)
    nc_stride = tl.num_programs(1)
    col = (tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)) % L
    ptr_i = in_ptr + nc_iter * L
    ptr_o = out_ptr + nc_iter * L
    while nc_iter <= NC:
        data = tl.load(ptr_i + col)
        tl.store(ptr_o + col, data)
        ptr_i += nc_stride * L
        ptr_o += nc_stride * L
        nc_iter += nc_stride


# tilelens: rows_copy_kernel[(1, 3)](fp32[20, 16], fp32[20, 16], 20, 16, BLOCK=64)
# expect: TL001 at line 14
# expect: TL001 at line 15
