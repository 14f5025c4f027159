"""2-D tile copy through device-side tensor descriptors (tl.make_tensor_descriptor)."""
import triton
import triton.language as tl

# tilelens: desc_copy_kernel[(cdiv(30, 16), cdiv(40, 16))](fp32[30, 40], fp32[30, 40], 30, 40, 40, BM=16, BN=16)


@triton.jit
def desc_copy_kernel(in_ptr, out_ptr, M, N, stride_in, BM: tl.constexpr, BN: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    src = tl.make_tensor_descriptor(in_ptr, shape=[M, N], strides=[stride_in, 1], block_shape=[BM, BN])
    dst = tl.make_tensor_descriptor(out_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    tile = src.load([pid_m * BM, pid_n * BN])
    dst.store([pid_m * BM, pid_n * BN], tile * 2)
