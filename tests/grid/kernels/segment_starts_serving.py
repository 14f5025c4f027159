"""Rows of packed segments at a serving size (1,048,576 rows of 16 segments of up to 64 values): the
first value of each segment is read at the exclusive sum of the lengths (`tl.cumsum(lengths) -
lengths`, after the row's start), under `mask=lengths > 0`. The exclusive sum is the terms before a
lane, at most 15 × 64 = 960: never past the row."""

import triton
import triton.language as tl

# tilelens: R = 1048576
# tilelens: first_of_segments[(R,)](fp32[R, 1024], i32[R, 16].values(0, 65), fp32[R, 16], E=16)


@triton.jit
def first_of_segments(src_ptr, lengths_ptr, out_ptr, E: tl.constexpr):
    row = tl.program_id(0)
    e = tl.arange(0, E)
    lengths = tl.load(lengths_ptr + row * E + e)
    starts = row * 1024 + tl.cumsum(lengths, 0) - lengths
    first = tl.load(src_ptr + starts, mask=lengths > 0, other=0.0)
    tl.store(out_ptr + row * E + e, first)
