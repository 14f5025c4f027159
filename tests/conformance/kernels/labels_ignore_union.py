"""Cross-entropy's label pick: labels are a class in [0, C) or the ignore index -100, and a row
whose label is -100 returns early, so the label addresses its row only where it is a class."""
import triton
import triton.language as tl


@triton.jit
def ce_pick_kernel(X_ptr, X_stride, Y_ptr, loss_ptr, n_cols, ignore_index, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)
    y = tl.load(Y_ptr + pid)
    X_ptr += pid * X_stride
    if y == ignore_index:
        for i in range(0, n_cols, BLOCK_SIZE):
            offs = i + tl.arange(0, BLOCK_SIZE)
            tl.store(X_ptr + offs, 0.0, mask=offs < n_cols)
        return
    x_y = tl.load(X_ptr + y)
    tl.store(loss_ptr + pid, -x_y)


# tilelens: ce_pick_kernel[(16,)](fp32[16, 100], 100, i64[16].values([(0, 100), -100]), fp32[16], 100, -100, BLOCK_SIZE=64)
