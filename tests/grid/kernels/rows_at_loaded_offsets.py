"""Each program writes a block of its own row at an offset it loads (a ragged copy into padded rows):
8,192 rows of 4,096, the offsets declared in [0, 4096 - 256], so a program never leaves its row and
no two programs meet. At this size the grid engine keeps the stores' addresses as one bound over
every program; two programs evaluated at one offset do not meet, so the race note stands."""

import triton
import triton.language as tl

# tilelens: R = 8192
# tilelens: W = 4096
# tilelens: rows_at_loaded_offsets[(R,)](fp32[R, 256], fp32[R, W], i32[R].values(0, W - 256 + 1), W, BLOCK=256)


@triton.jit
def rows_at_loaded_offsets(src_ptr, out_ptr, offsets_ptr, width, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    start = tl.load(offsets_ptr + row)
    cols = tl.arange(0, BLOCK)
    values = tl.load(src_ptr + row * BLOCK + cols)
    tl.store(out_ptr + row * width + start + cols, values)
