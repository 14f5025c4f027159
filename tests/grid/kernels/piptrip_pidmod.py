"""A loop of pid % 6 trips at 2000003 programs (past the grid answer's exact retry): program p stores
chunks 0 .. p % 6 - 1 of its 32 elements. The last element written is program 2000002's (p % 6 == 4)
fourth chunk end, 2000002 * 32 + 31 = 64000095; a box over pid // 6, pid % 6 and the iteration would
pair the last program with the last iteration of remainder 5."""
import triton
import triton.language as tl


@triton.jit
def piptrip6(x, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    p = x + pid * 32 + tl.arange(0, BLOCK)
    for k in range(0, pid % 6):
        tl.store(p, 1.0)
        p += BLOCK


# tilelens: piptrip6[(2000003,)](fp32[64000096], BLOCK=8)
