"""A loop whose trip count grows with the program (a causal pattern): program p sums the rows named
by the first p // 16 + 1 entries of a loaded index, 512 programs of 4,096 lanes. The enumeration visits
the last programs first, and they loop longest: what they cost says nothing of the programs before
them. Clean.
"""
import triton
import triton.language as tl

# tilelens: P = 512
# tilelens: rows_growing[(P,)](fp32[P, 4096], i32[P].values(0, P), fp32[P, 4096], BLOCK=4096)
@triton.jit
def rows_growing(x, idx, y, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for i in range(0, pid // 16 + 1):
        row = tl.load(idx + i)
        acc += tl.load(x + row * BLOCK + offs)
    tl.store(y + pid * BLOCK + offs, acc)
