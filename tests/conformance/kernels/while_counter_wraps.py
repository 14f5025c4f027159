"""A `while` loop whose counter wraps int32 and still ends: `i += step` passes 2**31 - 1 three times
before it lands at or above `n` (i: 0, 1.5e9, -1.29e9, ..., 6.2e8, then 2.12e9 >= n: 10 trips, the
same on a GPU and under the interpreter). The counter feeds no address (the loads step by `j`), so
there is nothing to report: the analysis follows the wrapped values past the wrap and the loop ends."""
import triton
import triton.language as tl


@triton.jit
def wrapping_count_kernel(x_ptr, out_ptr, n, step, BLOCK: tl.constexpr):
    i = tl.program_id(0)
    j = 0
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    while i < n:
        acc += tl.load(x_ptr + j * BLOCK + tl.arange(0, BLOCK))
        j += 1
        i += step
    tl.store(out_ptr + tl.program_id(0) * BLOCK + tl.arange(0, BLOCK), acc)


# tilelens: wrapping_count_kernel[(2,)](fp32[10 * 16], fp32[2 * 16], 2000000000, 1500000000, BLOCK=16)
