"""Bug twin of `segment_ends_serving.py`: lengths declared up to 65 (`values(0, 66)`), so sixteen
full segments end at 1040, past the row of 1024 and, in the last row, past the tensor."""

import triton
import triton.language as tl

# tilelens: R = 1048576
# tilelens: last_of_segments[(R,)](fp32[R, 1024], i32[R, 16].values(0, 66), fp32[R, 16], E=16)


@triton.jit
def last_of_segments(src_ptr, lengths_ptr, out_ptr, E: tl.constexpr):
    row = tl.program_id(0)
    e = tl.arange(0, E)
    lengths = tl.load(lengths_ptr + row * E + e)
    ends = tl.cumsum(lengths, 0)
    last = tl.load(src_ptr + row * 1024 + ends - 1, mask=lengths > 0, other=0.0)
    tl.store(out_ptr + row * E + e, last)
