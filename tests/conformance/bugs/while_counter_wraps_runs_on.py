"""Bug: a counter that starts near the top of int32 and steps by 3 while it is below n = 2**31 - 1.
It steps over n (2**31 - 9, -6, -3, then 2**31, which wraps to -2**31 at the third trip), and the
wrapped counter needs about 2**32 / 3 more trips to land on n: far past anything worth following.
Its state never repeats in that time, so the loop is refused by name 256 trips after the wrap
(TL030, wrapped-loop, at the counter's update); the store past the end of `out` at the third trip
(k = 8) is still reported (TL001)."""
import triton
import triton.language as tl


@triton.jit
def count_kernel(out_ptr, first, n, BLOCK: tl.constexpr):
    i = first
    k = 0
    while i < n:
        tl.store(out_ptr + k + tl.arange(0, BLOCK), 1.0)
        k += BLOCK
        i += 3


# tilelens: count_kernel[(1,)](fp32[8], 2**31 - 9, 2**31 - 1, BLOCK=4)
# expect: TL001 at line 16
# expect: TL030 at line 18
