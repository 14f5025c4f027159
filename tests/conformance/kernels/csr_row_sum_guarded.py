"""CSR row sums: each row reads its entries between two loaded row pointers, masked by the row's end.
The row pointers are declared in [0, NNZ], so `offs < end` keeps every read below NNZ."""
import triton
import triton.language as tl


@triton.jit
def csr_row_sum_kernel(rowptr_ptr, vals_ptr, out_ptr, MAX_NNZ: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    start = tl.load(rowptr_ptr + row)
    end = tl.load(rowptr_ptr + row + 1)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for k in range(0, MAX_NNZ, BLOCK):
        offs = start + k + tl.arange(0, BLOCK)
        mask = offs < end
        acc += tl.load(vals_ptr + offs, mask=mask, other=0.0)
    tl.store(out_ptr + row, tl.sum(acc))


# tilelens: csr_row_sum_kernel[(8,)](i32[9].values(0, 41), fp32[40], fp32[8], MAX_NNZ=40, BLOCK=16)
