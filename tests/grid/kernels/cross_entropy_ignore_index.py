"""Liger's cross entropy at a training size (32 sequences of 4,096 tokens, Llama 3's vocabulary): one
program per row, labels in {-100} ∪ [0, V); the rows of ignored tokens are zeroed and the kernel
returns early, so the label's logit is read only for a class. Clean."""
import triton
import triton.language as tl

# tilelens: BT = 131072
# tilelens: V = 128256
# tilelens: cross_entropy_kernel[(BT,)](fp32[BT, V], V, i64[BT].values([(0, V), -100]), fp32[BT], V, -100, BLOCK_SIZE=4096)


@triton.jit
def cross_entropy_kernel(X_ptr, X_stride, Y_ptr, loss_ptr, n_cols, ignore_index, BLOCK_SIZE: tl.constexpr):
    program_id = tl.program_id(0).to(tl.int64)
    X_ptr += program_id * X_stride
    y = tl.load(Y_ptr + program_id)
    if y == ignore_index:
        for i in range(0, n_cols, BLOCK_SIZE):
            offs = i + tl.arange(0, BLOCK_SIZE)
            tl.store(X_ptr + offs, 0.0, mask=offs < n_cols)
        return
    x_y = tl.load(X_ptr + y)  # the label's logit
    m = float("-inf")
    for i in range(0, n_cols, BLOCK_SIZE):
        offs = i + tl.arange(0, BLOCK_SIZE)
        x = tl.load(X_ptr + offs, mask=offs < n_cols, other=float("-inf"))
        m = tl.maximum(m, tl.max(x))
    tl.store(loss_ptr + program_id, m - x_y)
