"""A per-row label with a declared range decides an early return: with labels in [0, C) the
`ignore_index` test is decided (never equal), so the row's accesses stay exact except the one whose
address is the label itself (a bound inside the row)."""
import triton
import triton.language as tl


@triton.jit
def pick_logit_kernel(labels_ptr, logits_ptr, out_ptr, n_classes, ignore_index, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    y = tl.load(labels_ptr + row)
    if y == ignore_index:
        return
    cols = tl.arange(0, BLOCK)
    x = tl.load(logits_ptr + row * n_classes + cols, mask=cols < n_classes, other=0.0)
    picked = tl.load(logits_ptr + row * n_classes + y)
    tl.store(out_ptr + row, tl.max(x, axis=0) - picked)


# tilelens: pick_logit_kernel[(12,)](i32[12].values(0, 10), fp32[12, 10], fp32[12], 10, -100, BLOCK=16)
