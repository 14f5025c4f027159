"""Row copy out of a padded view: leading dimension LD > N and a non-zero storage offset."""
import triton
import triton.language as tl


@triton.jit
def padded_copy_kernel(src_ptr, dst_ptr, N, ld_src, ld_dst, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cb = tl.program_id(1)
    cols = cb * BLOCK + tl.arange(0, BLOCK)
    mask = cols < N
    v = tl.load(src_ptr + row * ld_src + cols, mask=mask)
    tl.store(dst_ptr + row * ld_dst + cols, v, mask=mask)


# tilelens: M = 5
# tilelens: N = 45
# tilelens: LD = 64
# tilelens: padded_copy_kernel[(M, cdiv(N, 16))](tensor(fp32, (M, N), strides=(LD, 1), offset=3, storage=3 + M * LD), fp32[M, N], N, LD, N, BLOCK=16)
# tilelens: padded_copy_kernel[(M, 1)](fp32[M, N], tensor(fp32, (M, N), strides=(LD, 1), offset=LD, storage=(M + 1) * LD), N, N, LD, BLOCK=64)
