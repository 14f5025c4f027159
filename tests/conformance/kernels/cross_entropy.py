"""Cross-entropy forward: logsumexp over the row, then the target logit at a loaded label.
The label feeds an address (indirect access)."""
# expect-refusal: indirect-address  (the address is built from loaded indices)
import triton
import triton.language as tl

TILELENS_ORACLE_FILL = {"labels_ptr": 7}


@triton.jit
def cross_entropy_kernel(logits_ptr, labels_ptr, loss_ptr, stride, V, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    logits = tl.load(logits_ptr + row * stride + cols, mask=cols < V, other=-float("inf"))
    m = tl.max(logits, axis=0)
    lse = m + tl.log(tl.sum(tl.exp(logits - m), axis=0))
    label = tl.load(labels_ptr + row)
    target = tl.load(logits_ptr + row * stride + label)
    tl.store(loss_ptr + row, lse - target)


# tilelens: cross_entropy_kernel[(4,)](fp32[4, 20], i32[4], fp32[4], 20, 20, BLOCK=32)
# tilelens: cross_entropy_kernel[(2,)](fp32[2, 64], i64[2], fp32[2], 64, 64, BLOCK=64)
