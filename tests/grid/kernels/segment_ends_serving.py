"""Rows of packed segments at a serving size (1,048,576 rows of 16 segments of up to 64 values): the
last value of each segment is read at the running sum of the lengths less one (`tl.cumsum`), under
`mask=lengths > 0`. A lane's mask narrows its own length; the lengths before it stay as declared."""

import triton
import triton.language as tl

# tilelens: R = 1048576
# tilelens: last_of_segments[(R,)](fp32[R, 1024], i32[R, 16].values(0, 65), fp32[R, 16], E=16)


@triton.jit
def last_of_segments(src_ptr, lengths_ptr, out_ptr, E: tl.constexpr):
    row = tl.program_id(0)
    e = tl.arange(0, E)
    lengths = tl.load(lengths_ptr + row * E + e)
    ends = tl.cumsum(lengths, 0)
    last = tl.load(src_ptr + row * 1024 + ends - 1, mask=lengths > 0, other=0.0)
    tl.store(out_ptr + row * E + e, last)
