"""Bug: a `while k < n` loop whose counter doubles each trip. With n = 2**31 - 1 the counter reaches
2**30, then 2**31 wraps to -2**31 and the next doubling to 0, which stays 0 and below n: the loop
never ends on a GPU. The counter feeds no address, so there is no TL003: the loop is refused by name
(TL030, non-terminating) as soon as its counter repeats, and the unmasked load past the end of x at
the first trip (TL001) is still reported."""
import triton
import triton.language as tl


@triton.jit
def doubling_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    k = 1
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    while k < n:
        acc += tl.load(x_ptr + tl.arange(0, BLOCK))
        k *= 2
    tl.store(out_ptr + tl.arange(0, BLOCK), acc)


# tilelens: doubling_kernel[(1,)](fp32[32], fp32[64], 2**31 - 1, BLOCK=64)
# expect: TL001 at line 15
# expect: TL030 at line 14
