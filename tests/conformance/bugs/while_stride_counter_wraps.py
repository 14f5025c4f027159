"""Bug: a stride loop whose int32 counter wraps. `i += step` passes 2**31 - 1 at its second step, and
the wrapped `i` (negative) is still below `n`, so the loop never ends on a GPU: i cycles through 0,
2**30, -2**31, -2**30, 0, ... The counter is the address, so its wrap is a TL003 (add gives 2**31),
the unmasked copy at i = 2**30 was already out of bounds (TL001), and the loop is refused once its
counter comes back to a value it had (TL030, non-terminating) instead of after 65,536 iterations."""
import triton
import triton.language as tl


@triton.jit
def stride_wrap_kernel(x_ptr, y_ptr, n, step, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK
    while i < n:
        offs = i + tl.arange(0, BLOCK)
        tl.store(y_ptr + offs, tl.load(x_ptr + offs))
        i += step


# tilelens: stride_wrap_kernel[(1,)](fp32[100], fp32[100], 2**31 - 1, 2**30, BLOCK=64)
# expect: TL001 at line 15
# expect: TL003 at line 16
# expect: TL030 at line 13
