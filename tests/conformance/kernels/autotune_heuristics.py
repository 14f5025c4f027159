"""Autotune over BLOCK_N with a heuristic that flags whether N divides evenly by it."""
import triton
import triton.language as tl


@triton.autotune(
    configs=[triton.Config({"BLOCK_N": 16}), triton.Config({"BLOCK_N": 32})],
    key=["N"],
)
@triton.heuristics({"EVEN_N": lambda args: args["N"] % args["BLOCK_N"] == 0})
@triton.jit
def at_heur_kernel(x_ptr, y_ptr, N, stride, BLOCK_N: tl.constexpr, EVEN_N: tl.constexpr):
    row = tl.program_id(0)
    for c0 in range(0, N, BLOCK_N):
        cols = c0 + tl.arange(0, BLOCK_N)
        if EVEN_N:
            x = tl.load(x_ptr + row * stride + cols)
        else:
            x = tl.load(x_ptr + row * stride + cols, mask=cols < N, other=0.0)
        tl.store(y_ptr + row * N + cols, x + 0.5, mask=cols < N)


# tilelens: at_heur_kernel[(3,)](fp32[3, 48], fp32[3, 48], 48, 48)
# tilelens: at_heur_kernel[(2,)](tensor(fp32, (2, 40), strides=(64, 1), storage=128), fp32[2, 40], 40, 64)
