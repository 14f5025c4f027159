"""A small real workload for `tilelens-lsp capture` on a GPU: Liger-Kernel's ops (forward and
backward) and this repository's samples, on torch tensors, including a strided view.

    tilelens-lsp capture --out gpu.toml -- python tools/gpu/workload.py

Used on the device machine only (needs torch, a CUDA GPU and liger-kernel)."""

from __future__ import annotations

import sys
import traceback
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "samples"))
dev = "cuda"
ran, failed = [], []


def run(name, fn):
    try:
        fn()
        torch.cuda.synchronize()
        ran.append(name)
    except Exception:  # noqa: BLE001 - one op's failure must not hide the others' launches
        failed.append(name)
        traceback.print_exc(limit=2)


def liger():
    from liger_kernel.transformers import (
        LigerCrossEntropyLoss,
        LigerFusedLinearCrossEntropyLoss,
        LigerLayerNorm,
        LigerRMSNorm,
        LigerSwiGLUMLP,
    )
    from liger_kernel.transformers.functional import liger_softmax

    x = torch.randn(6, 37, 256, device=dev, requires_grad=True)
    run("rms_norm", lambda: LigerRMSNorm(256).to(dev)(x).sum().backward())
    run("layer_norm", lambda: LigerLayerNorm(256).to(dev)(x).sum().backward())
    logits = torch.randn(222, 1000, device=dev, requires_grad=True)
    labels = torch.randint(0, 1000, (222,), device=dev)
    labels[::7] = -100
    run("cross_entropy", lambda: LigerCrossEntropyLoss()(logits, labels).backward())

    class Cfg:
        hidden_size, intermediate_size, hidden_act = 128, 352, "silu"

    run("swiglu", lambda: LigerSwiGLUMLP(Cfg()).to(dev)(torch.randn(4, 9, 128, device=dev)).sum().backward())
    run("softmax", lambda: liger_softmax(torch.randn(33, 515, device=dev)))
    try:
        from liger_kernel.transformers.experimental.embedding import LigerEmbedding

        ids = torch.randint(0, 500, (7, 13), device=dev)
        run("embedding", lambda: LigerEmbedding(500, 64).to(dev)(ids))
    except ImportError:
        failed.append("embedding (not in this liger-kernel)")
    h = torch.randn(64, 128, device=dev, requires_grad=True)
    w = torch.randn(1000, 128, device=dev, requires_grad=True)
    run(
        "fused_linear_cross_entropy",
        lambda: LigerFusedLinearCrossEntropyLoss()(w, h, torch.randint(0, 1000, (64,), device=dev)).backward(),
    )


def samples():
    import softmax
    import vector_add

    n = 4000
    x, y, out = (torch.randn(n, device=dev) for _ in range(3))
    run("vector_add", lambda: vector_add.add_kernel[(triton_cdiv(n, 1024),)](x, y, out, n, BLOCK_SIZE=1024))
    big = torch.randn(64, 300, device=dev)
    view = big[:, 10:250]  # a strided view of a larger storage
    o = torch.empty(64, 240, device=dev)
    run("softmax_view", lambda: softmax.softmax_kernel[(64,)](o, view, view.stride(0), o.stride(0), 64, 240, BLOCK_SIZE=256))


def triton_cdiv(a, b):
    return (a + b - 1) // b


if __name__ == "__main__":
    liger()
    samples()
    print(f"workload: ran {ran}; failed {failed}")
