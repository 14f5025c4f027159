"""3-D grid over a 3-D tensor: program_id(0), program_id(1), program_id(2) each pick an axis."""
import triton
import triton.language as tl


@triton.jit
def copy3d_kernel(x_ptr, y_ptr, D0, D1, D2, sx0, sx1, sx2, sy0, sy1, sy2, BLOCK: tl.constexpr):
    i = tl.program_id(0)
    j = tl.program_id(1)
    kb = tl.program_id(2)
    k = kb * BLOCK + tl.arange(0, BLOCK)
    mask = k < D2
    v = tl.load(x_ptr + i * sx0 + j * sx1 + k * sx2, mask=mask)
    tl.store(y_ptr + i * sy0 + j * sy1 + k * sy2, v, mask=mask)


# tilelens: copy3d_kernel[(3, 4, cdiv(20, 16))](fp32[3, 4, 20], fp32[3, 4, 20], 3, 4, 20, 80, 20, 1, 80, 20, 1, BLOCK=16)
# tilelens: copy3d_kernel[(2, 3, 1)](tensor(fp32, (2, 3, 10), strides=(1, 2, 6), storage=60), fp32[2, 3, 10], 2, 3, 10, 1, 2, 6, 30, 10, 1, BLOCK=16)
# tilelens: copy3d_kernel[(3, 4, cdiv(20, 16))](tensor(fp32, (3, 4, 20), strides=(96, 24, 1), storage=288), fp32[3, 4, 20], 3, 4, 20, 96, 24, 1, 80, 20, 1, BLOCK=16)
