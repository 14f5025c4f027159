"""2-D tile copy through block pointers (tl.make_block_ptr / tl.advance): removed in Triton 3.9."""
import triton
import triton.language as tl

# golden: releases 3.6 3.7 3.8
# tilelens: block_copy_kernel[(cdiv(30, 16), 1)](fp16[30, 40], fp16[30, 40], 30, 40, 40, 40, BM=16, BN=16)


@triton.jit
def block_copy_kernel(in_ptr, out_ptr, M, N, stride_in, stride_out, BM: tl.constexpr, BN: tl.constexpr):
    pid_m = tl.program_id(0)
    src = tl.make_block_ptr(in_ptr, shape=(M, N), strides=(stride_in, 1), offsets=(pid_m * BM, 0),
                            block_shape=(BM, BN), order=(1, 0))
    dst = tl.make_block_ptr(out_ptr, shape=(M, N), strides=(stride_out, 1), offsets=(pid_m * BM, 0),
                            block_shape=(BM, BN), order=(1, 0))
    for _ in range(0, tl.cdiv(N, BN)):
        tile = tl.load(src, boundary_check=(0, 1), padding_option="zero")
        tl.store(dst, tile, boundary_check=(0, 1))
        src = tl.advance(src, (0, BN))
        dst = tl.advance(dst, (0, BN))
