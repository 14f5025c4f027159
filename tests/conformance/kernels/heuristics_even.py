"""@triton.heuristics derives BLOCK (next power of two) and EVEN (no tail) from the arguments."""
import triton
import triton.language as tl


@triton.heuristics({
    "BLOCK": lambda args: min(triton.next_power_of_2(args["n"]), 64),
    "EVEN": lambda args: args["n"] % min(triton.next_power_of_2(args["n"]), 64) == 0,
})
@triton.jit
def heuristic_copy_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr, EVEN: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    if EVEN:
        tl.store(y_ptr + offs, tl.load(x_ptr + offs))
    else:
        mask = offs < n
        tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask), mask=mask)


# tilelens: heuristic_copy_kernel[(cdiv(100, 64),)](fp32[100], fp32[100], 100)
# tilelens: heuristic_copy_kernel[(2,)](fp32[128], fp32[128], 128)
# tilelens: heuristic_copy_kernel[(1,)](fp32[20], fp32[20], 20)
