"""Split-KV decode, as sglang's stage 1 splits a sequence (one program a (sequence, split)): the
number of splits is loaded per sequence (declared in [1, MAX_SPLITS]), each split covers
`cdiv(cdiv(seq_len, splits), MIN_KV) * MIN_KV` tokens from `split * that`, and ends at
`tl.minimum(start + per_split, seq_len)`. Its loop's bounds divide by a loaded value; the trips run
only where the split's length is positive, so every read stays inside the sequence's own indices."""
import triton
import triton.language as tl


@triton.jit
def split_kv_kernel(kv_indptr, kv_indices, num_splits, k_buf, out, MAX_SPLITS: tl.constexpr,
                    MIN_KV: tl.constexpr, BLOCK: tl.constexpr, D: tl.constexpr):
    b = tl.program_id(0)
    split = tl.program_id(1)
    first = tl.load(kv_indptr + b)
    seq_len = tl.load(kv_indptr + b + 1) - first
    splits = tl.load(num_splits + b)
    per_split = tl.cdiv(tl.cdiv(seq_len, splits), MIN_KV) * MIN_KV
    start = per_split * split
    end = tl.minimum(start + per_split, seq_len)
    acc = tl.zeros([D], dtype=tl.float32)
    if end > start:
        for n in range(start, end, BLOCK):
            offs = n + tl.arange(0, BLOCK)
            loc = tl.load(kv_indices + first + offs, mask=offs < end, other=0)
            k = tl.load(k_buf + loc[:, None] * D + tl.arange(0, D)[None, :], mask=(offs < end)[:, None], other=0.0)
            acc += tl.sum(k, 0)
    tl.store(out + (b * MAX_SPLITS + split) * D + tl.arange(0, D), acc)


# tilelens: TOK = 300
# tilelens: B = 3
# tilelens: split_kv_kernel[(B, 4)](i32[B + 1].values(0, TOK + 1), i32[TOK].values(0, TOK), i32[B].values(1, 5), fp32[TOK, 16], fp32[B, 4, 16], MAX_SPLITS=4, MIN_KV=8, BLOCK=16, D=16)
# sequences of 40, 0 and 260 tokens, split 3, 1 and 4 ways
# tilelens: split_kv_kernel[(B, 4)](i32[B + 1].values([0, 40, 40, TOK]), i32[TOK].values(0, TOK), i32[B].values([3, 1, 4]), fp32[TOK, 16], fp32[B, 4, 16], MAX_SPLITS=4, MIN_KV=8, BLOCK=16, D=16)
