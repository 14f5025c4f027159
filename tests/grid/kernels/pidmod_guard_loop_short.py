"""pidmod_guard_loop.py with its storage one chunk short: program 499999 (pid % 7 == 3) stores its
third chunk, elements 8000000..8000007, past the 8000000 elements there are."""
import triton
import triton.language as tl


@triton.jit
def condloop(x, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    for k in range(0, 3):
        if (pid % 7 == 3) | (k < 2):
            tl.store(x + pid * 16 + k * BLOCK + tl.arange(0, BLOCK), 1.0)


# tilelens: condloop[(500000,)](fp32[500000 * 16], BLOCK=8)
