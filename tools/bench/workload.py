"""The benchmark's kernels: Triton's tutorial kernels, each read from its one copy in the repository and
given the benchmark's own launches (sizes large enough to time), written to a temporary folder.

The kernel bodies come from samples/ (vector add, softmax; what the README runs) and from the
conformance corpus (grouped matmul, layer norm, attention; the copies the interpreter checks). Their
own `# tilelens:` lines are dropped: the benchmark's launches below replace them, so the sizes timed do
not change when a sample or a corpus kernel gains a launch. The matmul is the corpus's (no autotune:
fixed 64x64x32 blocks as launch arguments, one config per launch), which
tests/unit/engines/test_affine.py launches the same way up to M = N = K = 16384.
Not a test corpus: nothing here says what a verdict should be.
"""

from __future__ import annotations

from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
CORPUS = REPO / "tests" / "conformance" / "kernels"

_LAUNCHES = {
    "vector_add": """\
# tilelens: N = 98432
# tilelens: add_kernel[(cdiv(N, 1024),)](fp32[N], fp32[N], fp32[N], N, BLOCK_SIZE=1024)
""",
    "softmax": """\
# tilelens: R = 1823
# tilelens: C = 781
# tilelens: softmax_kernel[(R,)](fp32[R, C], fp32[R, C], C, C, R, C, BLOCK_SIZE=1024)
""",
    "matmul": """\
# tilelens: M = 512
# tilelens: N = 512
# tilelens: K = 512
# tilelens: matmul_kernel[(cdiv(M, 64) * cdiv(N, 64),)](
# tilelens:     fp16[M, K], fp16[K, N], fp16[M, N], M, N, K, K, 1, N, 1, N, 1,
# tilelens:     BLOCK_M=64, BLOCK_N=64, BLOCK_K=32, GROUP_M=8)
""",
    "layernorm": """\
# tilelens: M = 1151
# tilelens: N = 8192
# tilelens: layer_norm_fwd[(M,)](fp16[M, N], fp16[M, N], fp16[N], fp16[N], fp32[M], fp32[M], N, N, 1e-5,
# tilelens:                      BLOCK_SIZE=1024)
""",
    "attention_fwd": """\
# tilelens: Z = 1
# tilelens: H = 2
# tilelens: S = 256
# tilelens: D = 64
# tilelens: attn_fwd_kernel[(cdiv(S, 64), Z * H)](
# tilelens:     fp16[Z, H, S, D], fp16[Z, H, S, D], fp16[Z, H, S, D], fp16[Z, H, S, D], 0.125,
# tilelens:     H * S * D, S * D, D, 1, H * S * D, S * D, D, 1,
# tilelens:     H * S * D, S * D, D, 1, H * S * D, S * D, D, 1,
# tilelens:     H, S, HEAD_DIM=D, BLOCK_M=64, BLOCK_N=64, CAUSAL=False)
""",
}
SOURCES = {
    "vector_add": REPO / "samples" / "vector_add.py",
    "softmax": REPO / "samples" / "softmax.py",
    "matmul": CORPUS / "matmul_grouped.py",
    "layernorm": CORPUS / "layernorm_fwd.py",
    "attention_fwd": CORPUS / "attention_fwd.py",
}


def kernel_source(name: str) -> str:
    """The text of bench kernel `name`: its source file with the benchmark's launches instead of its own."""
    text = SOURCES[name].read_text()
    body = [line for line in text.splitlines() if not line.lstrip().startswith("# tilelens:")]
    while body and (not body[-1].strip() or body[-1].lstrip().startswith("#")):  # a comment on a dropped launch
        body.pop()
    return "\n".join(body) + "\n\n\n" + _LAUNCHES[name]


def materialize(folder: Path) -> Path:
    """Write every bench kernel to `folder` as NAME.py; returns `folder`."""
    folder.mkdir(parents=True, exist_ok=True)
    for name in SOURCES:
        (folder / f"{name}.py").write_text(kernel_source(name))
    return folder
