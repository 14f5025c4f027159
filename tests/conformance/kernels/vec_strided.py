"""Gather every `stride`-th element of a strided 1-D view into a contiguous output."""
import triton
import triton.language as tl


@triton.jit
def strided_copy_kernel(x_ptr, out_ptr, n, stride, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    v = tl.load(x_ptr + offs * stride, mask=mask)
    tl.store(out_ptr + offs, v, mask=mask)


# tilelens: N = 100
# tilelens: strided_copy_kernel[(cdiv(N, 32),)](tensor(fp32, (N,), strides=(3,), storage=3 * N), fp32[N], N, 3, BLOCK=32)
# tilelens: strided_copy_kernel[(2,)](tensor(fp32, (50,), strides=(2,), offset=7, storage=120), fp32[50], 50, 2, BLOCK=32)
