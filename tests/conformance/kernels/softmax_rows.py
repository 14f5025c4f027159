"""Row-wise fused softmax (Triton tutorial 02): one program per row, stride arguments."""
import triton
import triton.language as tl


@triton.jit
def softmax_kernel(output_ptr, input_ptr, input_row_stride, output_row_stride, n_cols,
                   BLOCK_SIZE: tl.constexpr):
    row_idx = tl.program_id(0)
    row_start_ptr = input_ptr + row_idx * input_row_stride
    col_offsets = tl.arange(0, BLOCK_SIZE)
    input_ptrs = row_start_ptr + col_offsets
    row = tl.load(input_ptrs, mask=col_offsets < n_cols, other=-float("inf"))
    row_minus_max = row - tl.max(row, axis=0)
    numerator = tl.exp(row_minus_max)
    denominator = tl.sum(numerator, axis=0)
    softmax_output = numerator / denominator
    output_row_start_ptr = output_ptr + row_idx * output_row_stride
    output_ptrs = output_row_start_ptr + col_offsets
    tl.store(output_ptrs, softmax_output, mask=col_offsets < n_cols)


# tilelens: M = 6
# tilelens: N = 100
# tilelens: softmax_kernel[(M,)](fp32[M, N], fp32[M, N], N, N, N, BLOCK_SIZE=128)
# tilelens: LD = 136
# tilelens: softmax_kernel[(M,)](fp32[M, N], tensor(fp32, (M, N), strides=(LD, 1), storage=M * LD), LD, N, N, BLOCK_SIZE=128)
# tilelens: softmax_kernel[(3,)](fp16[3, 64], fp16[3, 64], 64, 64, 64, BLOCK_SIZE=64)
