"""A loop whose last chunk only programs with pid % 7 == 3 store (`a | b` on a residue and the loop
index), and rows of 5 programs laid out with padding (pid // 5, pid % 5) at a grid that is no
multiple of 5: each storage ends where the last program really writes."""
import triton
import triton.language as tl


@triton.jit
def chunks(x, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    for k in range(0, 3):
        if (pid % 7 == 3) | (k < 2):
            tl.store(x + pid * 24 + k * BLOCK + tl.arange(0, BLOCK), 1.0)


@triton.jit
def rows_padded(x, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    tl.store(x + (pid // 5) * 100 + (pid % 5) * 16 + tl.arange(0, BLOCK), 1.0)


# tilelens: chunks[(54,)](fp32[54 * 24 - 8], BLOCK=8)
# tilelens: chunks[(53,)](fp32[52 * 24 + 24], BLOCK=8)
# tilelens: rows_padded[(11,)](fp32[2 * 100 + 16], BLOCK=16)
