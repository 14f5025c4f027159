"""Autotuned elementwise kernel: three block sizes, the grid reads meta["BLOCK"]."""
import triton
import triton.language as tl


@triton.autotune(
    configs=[
        triton.Config({"BLOCK": 16}),
        triton.Config({"BLOCK": 32}),
        triton.Config({"BLOCK": 64}),
    ],
    key=["n"],
)
@triton.jit
def autotune_relu_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(y_ptr + offs, tl.maximum(x, 0.0), mask=mask)


# tilelens: autotune_relu_kernel[lambda meta: (cdiv(100, meta["BLOCK"]),)](fp32[100], fp32[100], 100)
# tilelens: autotune_relu_kernel[lambda meta: (triton.cdiv(64, meta["BLOCK"]),)](fp16[64], fp16[64], 64)
