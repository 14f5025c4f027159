"""Bug: the first value of each segment read at `tl.cumsum(lengths)` (where the segment ends) for
`tl.cumsum(lengths) - lengths` (where it starts): a full last segment's end is one past its row, and
past the tensor in the last row."""
import triton
import triton.language as tl


@triton.jit
def segment_starts_by_exclusive_sum(src_ptr, lengths_ptr, out_ptr, W: tl.constexpr, E: tl.constexpr):
    row = tl.program_id(0)
    e = tl.arange(0, E)
    lengths = tl.load(lengths_ptr + row * E + e)
    row_start = row * W + tl.cumsum(lengths, 0)
    first = tl.load(src_ptr + row_start, mask=lengths > 0, other=0.0)
    tl.store(out_ptr + row * E + e, first)


# tilelens: segment_starts_by_exclusive_sum[(3,)](fp32[3, 32], i32[3, 8].values(0, 5), fp32[3, 8], W=32, E=8)
# expect: TL002 at line 14
