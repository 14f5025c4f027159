"""Varlen sums: sequence s owns the tokens cu_seqlens[s] .. cu_seqlens[s + 1] - 1, and walks them in
blocks from its start to its end, a loop whose trip count is loaded data (declared in [0, T])."""
import triton
import triton.language as tl


@triton.jit
def varlen_sum_kernel(cu_ptr, x_ptr, out_ptr, BLOCK: tl.constexpr):
    seq = tl.program_id(0)
    start = tl.load(cu_ptr + seq)
    end = tl.load(cu_ptr + seq + 1)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for t in range(start, end, BLOCK):
        offs = t + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + offs, mask=offs < end, other=0.0)
    tl.store(out_ptr + seq, tl.sum(acc))


# tilelens: varlen_sum_kernel[(4,)](i32[5].values(0, 51), fp32[50], fp32[4], BLOCK=16)
