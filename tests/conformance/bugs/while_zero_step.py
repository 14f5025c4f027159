"""Bug: a grid-stride loop whose stride is `pid * step`, so program 0 never advances: it runs forever
on a GPU (no int32 wrap: its counter simply stays 0). Program 1 strides past `n` and ends. The loop is
refused by name as soon as its state repeats (TL030, non-terminating), and the row program 1 reads
past the end of x on its one trip (elements 24 to 39 of 32) is still reported (TL001)."""
import triton
import triton.language as tl


@triton.jit
def zero_step_kernel(x_ptr, out_ptr, n, step, BLOCK: tl.constexpr):
    i = tl.program_id(0)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    while i < n:
        acc += tl.load(x_ptr + i * BLOCK + tl.arange(0, BLOCK) + 8)
        i += tl.program_id(0) * step
    tl.store(out_ptr + tl.program_id(0) * BLOCK + tl.arange(0, BLOCK), acc)


# tilelens: zero_step_kernel[(2,)](fp32[2 * 16], fp32[2 * 16], 2, 4, BLOCK=16)
# expect: TL001 at line 14
# expect: TL030 at line 13
