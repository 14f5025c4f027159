"""tl.range with loop_unroll_factor and a step; tl.static_range over a constexpr count."""
import triton
import triton.language as tl


@triton.jit
def unrolled_sum_kernel(x_ptr, out_ptr, N, CHUNKS: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for c0 in tl.range(0, N, BLOCK, loop_unroll_factor=2):
        cols = c0 + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + row * N + cols, mask=cols < N, other=0.0)
    for j in tl.static_range(CHUNKS):
        tl.store(out_ptr + row * CHUNKS * BLOCK + j * BLOCK + tl.arange(0, BLOCK), acc * j)


# tilelens: unrolled_sum_kernel[(3,)](fp32[3, 70], fp32[3, 2 * 16], 70, CHUNKS=2, BLOCK=16)
# tilelens: unrolled_sum_kernel[(2,)](fp32[2, 64], fp32[2, 3 * 32], 64, CHUNKS=3, BLOCK=32)
