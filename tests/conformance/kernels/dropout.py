"""Seeded dropout (Triton tutorial 04): tl.rand from a seed argument and the element offsets."""
import triton
import triton.language as tl


@triton.jit
def seeded_dropout_kernel(x_ptr, output_ptr, n_elements, p, seed, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    block_start = pid * BLOCK_SIZE
    offsets = block_start + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    random = tl.rand(seed, offsets)
    x_keep = random > p
    output = tl.where(x_keep, x / (1 - p), 0.0)
    tl.store(output_ptr + offsets, output, mask=mask)


# tilelens: seeded_dropout_kernel[(cdiv(1000, 128),)](fp32[1000], fp32[1000], 1000, 0.5, 123, BLOCK_SIZE=128)
# tilelens: seeded_dropout_kernel[(2,)](fp16[60], fp16[60], 60, 0.25, 7, BLOCK_SIZE=32)
