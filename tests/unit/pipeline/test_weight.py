"""The plan's weight of a launch: its distinct configs times the code its kernel unrolls into."""

from __future__ import annotations

import textwrap

from tilelens_lsp.pipeline import plan_path
from tilelens_lsp.pipeline.weight import HELPER_DEPTH, STATEMENTS_PER_UNIT

SOURCE = textwrap.dedent("""\
    # tilelens: looping[(1,)](fp32[4096], 10, HC=16)
    # tilelens: looping[(1,)](fp32[4096], 10, 2)
    # tilelens: plain[(1,)](fp32[64])
    # tilelens: calls[(1,)](fp32[64])
    # tilelens: recursive[(1,)](fp32[64])
    # tilelens: tuned[(1,)](fp32[64])
    import triton
    import triton.language as tl

    @triton.jit
    def helper(x_ptr, R: tl.constexpr = 8):
        for r in tl.static_range(R):
            tl.store(x_ptr + r, 1.0)
            tl.store(x_ptr + r + 1, 2.0)

    @triton.jit
    def looping(x_ptr, n, HC: tl.constexpr):
        for i in tl.static_range(HC):
            for j in tl.static_range(1, HC):
                tl.store(x_ptr + i * HC + j, 1.0)
        for k in range(0, n):  # a loop in the IR: its body once
            tl.store(x_ptr + k, 0.0)

    @triton.jit
    def plain(x_ptr):
        tl.store(x_ptr, 1.0)

    @triton.jit
    def calls(x_ptr):
        helper(x_ptr)
        helper(x_ptr)

    @triton.jit
    def recursive(x_ptr):
        recursive(x_ptr)

    @triton.autotune(configs=[triton.Config({"B": 64}), triton.Config({"B": 128}), triton.Config({"B": 256})], key=[])
    @triton.jit
    def tuned(x_ptr, B: tl.constexpr):
        for i in tl.static_range(B):  # its trip count is the config's: not in the text of the launch
            tl.store(x_ptr + i, 1.0)
""")


def _weights(tmp_path) -> list[int]:
    path = tmp_path / "kernels.py"
    path.write_text(SOURCE)
    return [launch["weight"] for launch in plan_path(path, tmp_path)["launches"]]


def test_static_loops_unroll_by_the_trip_counts_the_launch_binds_and_runtime_loops_count_once(tmp_path):
    """HC=16 unrolls the inner store 16 × 15 times (259 statements); HC=2, bound by position, 7."""
    big, small, plain, *_ = _weights(tmp_path)
    assert big == 1 + (1 + 16 * (1 + 15) + 2) // STATEMENTS_PER_UNIT > 1
    assert small == plain == 1


def test_helpers_are_inlined_at_each_call_with_their_defaults_and_recursion_ends(tmp_path):
    """`calls` calls `helper` twice, each call 1 + (1 + 8 × 2) statements: 36 in all."""
    _, _, _, calls, recursive, _ = _weights(tmp_path)
    assert calls == 1 + 36 // STATEMENTS_PER_UNIT == 2
    assert recursive == 1


def test_a_trip_count_the_text_does_not_give_counts_once_and_configs_multiply(tmp_path):
    """`tuned` has three configs; its static loop's bound is a config's constexpr, so it counts once
    (a guess never raises the estimate)."""
    assert _weights(tmp_path)[-1] == 3


def test_a_chain_of_helpers_deeper_than_the_walk_goes_is_weighed_without_failing(tmp_path):
    """Two thousand helpers each calling the next (Python's recursion limit is 1000): the plan still
    weighs the launch, counting the chain as far as it goes."""
    chain = "".join(f"def h{i}(x):\n    h{i + 1}(x)\n\n" for i in range(2000)) + "def h2000(x):\n    pass\n\n"
    path = tmp_path / "deep.py"
    path.write_text(
        "# tilelens: k[(1,)](fp32[64])\nimport triton\n\n" + chain + "@triton.jit\ndef k(x_ptr):\n    h0(x_ptr)\n"
    )
    (launch,) = plan_path(path, tmp_path)["launches"]
    assert launch["weight"] == 1 + (1 + HELPER_DEPTH + 1) // STATEMENTS_PER_UNIT  # k, then the chain that deep
