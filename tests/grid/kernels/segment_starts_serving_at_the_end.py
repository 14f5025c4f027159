"""Bug twin of `segment_starts_serving.py`: the first value read at `tl.cumsum(lengths)` (the end)
for the exclusive sum (the start): sixteen full segments end at 1024, one past the row, and past the
tensor in the last row."""

import triton
import triton.language as tl

# tilelens: R = 1048576
# tilelens: first_of_segments[(R,)](fp32[R, 1024], i32[R, 16].values(0, 65), fp32[R, 16], E=16)


@triton.jit
def first_of_segments(src_ptr, lengths_ptr, out_ptr, E: tl.constexpr):
    row = tl.program_id(0)
    e = tl.arange(0, E)
    lengths = tl.load(lengths_ptr + row * E + e)
    starts = row * 1024 + tl.cumsum(lengths, 0)
    first = tl.load(src_ptr + starts, mask=lengths > 0, other=0.0)
    tl.store(out_ptr + row * E + e, first)
