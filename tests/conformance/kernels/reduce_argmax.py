"""Row argmax (a reduction with indices, no cumsum), stored as int32 per row."""
import triton
import triton.language as tl


@triton.jit
def argmax_kernel(x_ptr, idx_ptr, val_ptr, N, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * stride + cols, mask=cols < N, other=-float("inf"))
    tl.store(idx_ptr + row, tl.argmax(x, axis=0).to(tl.int32))
    tl.store(val_ptr + row, tl.max(x, axis=0))


# tilelens: argmax_kernel[(5,)](fp32[5, 27], i32[5], fp32[5], 27, 27, BLOCK=32)
# tilelens: argmax_kernel[(3,)](fp16[3, 64], i32[3], fp16[3], 64, 64, BLOCK=64)
# tilelens: argmax_kernel[(5,)](tensor(fp32, (5, 27), strides=(32, 1), offset=4, storage=4 + 5 * 32), i32[5], fp32[5], 27, 32, BLOCK=32)
