"""Race-free chunks of 24 elements per program, the third one stored only where pid % 7 == 3. At
500001 programs the last one (500000, pid % 7 == 4) stores two chunks, ending at element
500000 * 24 + 15, and the last program with pid % 7 == 3 (499999) ends at 499999 * 24 + 23: the
storage 500001 * 24 - 8 holds both. In bounds only through the guard: without it, program 500000's
third chunk would pass the end."""
import triton
import triton.language as tl


@triton.jit
def chunks(x, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    for k in range(0, 3):
        if (pid % 7 == 3) | (k < 2):
            tl.store(x + pid * 24 + k * BLOCK + tl.arange(0, BLOCK), 1.0)


# tilelens: chunks[(500001,)](fp32[500001 * 24 - 8], BLOCK=8)
