"""Bug: lanes 2k and 2k + 1 store float(2k) and float(2k + 1) to element k of `out` in one store:
which one lands is not defined. The values are integers converted exactly to fp32, so the race is
definite (TL005), not a possible one from unknown values."""
import triton
import triton.language as tl


@triton.jit
def pairs_kernel(out, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out + offs // 2, offs.to(tl.float32))


# tilelens: pairs_kernel[(1,)](fp32[8], BLOCK=16)
# expect: TL005 at line 11
