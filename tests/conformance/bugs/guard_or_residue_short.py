"""Bug: the storage of guard_or_residue's `chunks` sized as if no program stored a third chunk:
program 52 (pid % 7 == 3) stores its third chunk, elements 1264..1271, past the end."""
import triton
import triton.language as tl


@triton.jit
def chunks(x, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    for k in range(0, 3):
        if (pid % 7 == 3) | (k < 2):
            tl.store(x + pid * 24 + k * BLOCK + tl.arange(0, BLOCK), 1.0)


# tilelens: chunks[(53,)](fp32[53 * 24 - 8], BLOCK=8)
# expect: TL001 at line 12
