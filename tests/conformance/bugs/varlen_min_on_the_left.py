"""Bug: a minimum on the smaller side of `<` says only that one of its operands is below: the mask
`tl.minimum(offs, 4) < eos - bos` lets every lane through once a sequence is longer than 4 tokens, so
a sequence of 5 ending at T reads up to element T + 58. Taking it for `offs < eos - bos` would call
the load clean."""
import triton
import triton.language as tl


@triton.jit
def head_of_sequence_kernel(x, y, cu, N: tl.constexpr):
    s = tl.program_id(0)
    bos = tl.load(cu + s)
    eos = tl.load(cu + s + 1)
    offs = tl.arange(0, N)
    keep = tl.minimum(offs, 4) < eos - bos
    v = tl.load(x + bos + offs, mask=keep, other=0.0)
    tl.store(y + s * N + offs, v)


# tilelens: T = 300
# tilelens: S = 4
# tilelens: head_of_sequence_kernel[(S,)](fp32[T], fp32[S, 64], i32[S + 1].values(0, T + 1), N=64)
# expect: TL002 at line 16
