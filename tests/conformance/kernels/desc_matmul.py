"""Matmul whose operands are read through tensor descriptors, stepping the K offset in a loop."""
import triton
import triton.language as tl


@triton.jit
def desc_matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                       BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    a_desc = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[K, 1], block_shape=[BM, BK])
    b_desc = tl.make_tensor_descriptor(b_ptr, shape=[K, N], strides=[N, 1], block_shape=[BK, BN])
    c_desc = tl.make_tensor_descriptor(c_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        a = a_desc.load([pid_m * BM, k * BK])
        b = b_desc.load([k * BK, pid_n * BN])
        acc = tl.dot(a, b, acc)
    c_desc.store([pid_m * BM, pid_n * BN], acc.to(tl.float16))


# tilelens: desc_matmul_kernel[(cdiv(40, 16), cdiv(24, 16))](fp16[40, 56], fp16[56, 24], fp16[40, 24], 40, 24, 56, BM=16, BN=16, BK=32)
# tilelens: desc_matmul_kernel[(2, 1)](fp16[32, 16], fp16[16, 16], fp16[32, 16], 32, 16, 16, BM=16, BN=16, BK=16)
