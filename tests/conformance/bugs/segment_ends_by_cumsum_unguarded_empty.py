"""Bug: `mask=lengths >= 0` for `lengths > 0`: an empty first segment ends at 0, and its last value is
read at element -1 of the row, before the tensor when the row is the first."""
import triton
import triton.language as tl


@triton.jit
def segment_ends_by_cumsum(src_ptr, lengths_ptr, out_ptr, W: tl.constexpr, E: tl.constexpr):
    row = tl.program_id(0)
    e = tl.arange(0, E)
    lengths = tl.load(lengths_ptr + row * E + e)
    ends = tl.cumsum(lengths, 0)
    last = tl.load(src_ptr + row * W + ends - 1, mask=lengths >= 0, other=0.0)
    tl.store(out_ptr + row * E + e, last)


# tilelens: segment_ends_by_cumsum[(3,)](fp32[3, 32], i32[3, 8].values(0, 5), fp32[3, 8], W=32, E=8)
# expect: TL002 at line 13
