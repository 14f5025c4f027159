"""An early `return` decided by loaded data (a per-row skip flag, like an ignored label): the
accesses after it may or may not run, so their footprints are proven bounds (`exact: false`)."""
import triton
import triton.language as tl

TILELENS_ORACLE_FILL = {"flags_ptr": 2}   # flags i % 2: odd rows run, even rows return


@triton.jit
def skip_rows_kernel(flags_ptr, x_ptr, y_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    flag = tl.load(flags_ptr + row)
    if flag == 0:
        return
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    v = tl.load(x_ptr + row * n_cols + cols, mask=mask)
    tl.store(y_ptr + row * n_cols + cols, v * 2, mask=mask)


# tilelens: skip_rows_kernel[(6,)](i32[6], fp32[6, 50], fp32[6, 50], 50, BLOCK=64)
