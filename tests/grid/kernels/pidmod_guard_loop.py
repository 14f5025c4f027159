"""The third chunk is stored only by programs with pid % 7 == 3; at 500000 programs the last one
(499999 = 7 * 71428 + 3) is such a program, and its third chunk ends at element 8000007, inside the
storage. A box over pid's quotient and remainder by 7 (q <= 71428, r <= 6) would reach program
7 * 71428 + 6 = 500002, which does not exist. Neighbouring programs overlap by one chunk (a real race
between programs, which the grid engine leaves undecided at this size)."""
import triton
import triton.language as tl


@triton.jit
def condloop(x, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    for k in range(0, 3):
        if (pid % 7 == 3) | (k < 2):
            tl.store(x + pid * 16 + k * BLOCK + tl.arange(0, BLOCK), 1.0)


# tilelens: condloop[(500000,)](fp32[500000 * 16 + 8], BLOCK=8)
