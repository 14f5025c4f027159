"""Bug: cu_seqlens is declared with num_seqs entries instead of num_seqs + 1: the last sequence's end
is read past it."""
import triton
import triton.language as tl


@triton.jit
def find_seq_idx(cu_ptr, target, num_seqs):
    left = 0
    right = num_seqs
    while left < right:
        mid = (left + right) // 2
        val = tl.load(cu_ptr + mid)
        if val <= target:
            left = mid + 1
        else:
            right = mid
    return left - 1


@triton.jit
def token_offset_kernel(cu_ptr, out_ptr, num_seqs):
    tok = tl.program_id(0)
    seq = tl.maximum(find_seq_idx(cu_ptr, tok, num_seqs), 0)
    start = tl.load(cu_ptr + seq)
    end = tl.load(cu_ptr + seq + 1)
    tl.store(out_ptr + tok, tl.minimum(tok - start, end - start))


# tilelens: token_offset_kernel[(32,)](i32[4].values(0, 33), i32[32], 4)
# expect: TL002 at line 26
