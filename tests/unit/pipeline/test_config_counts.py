"""The plan's cost estimate of a launch: the compiles its autotune configs ask for."""

from __future__ import annotations

import textwrap

from tilelens_lsp.pipeline.directives import UNKNOWN_CONFIGS, config_counts


def test_a_config_is_weighed_by_what_it_compiles_not_by_its_launch_options():
    """Configs that differ only in warps or stages bind to one TTIR (the analysis compiles it once):
    the weight counts the distinct constexpr dicts a list or comprehension yields, and falls back to
    UNKNOWN_CONFIGS where the source does not say how many there are."""
    src = textwrap.dedent("""\
        import triton
        BKS = [32, 64, 128]
        TWICE = [1]
        TWICE = [1, 2]

        def tune(configs):
            return triton.autotune(configs=configs, key=[])

        @triton.autotune(configs=[
            triton.Config({'BT': bt}, num_warps=w, num_stages=s)
            for bt in [16, 32, 64, 128] for w in [2, 4, 8] for s in [1, 2, 3, 4]], key=[])
        @triton.jit
        def by_block(x): pass

        @triton.autotune(configs=[triton.Config({'BK': bk, 'BV': bv}) for bk in BKS for bv in range(2)], key=[])
        @triton.jit
        def by_constant(x): pass

        @triton.autotune(configs=[triton.Config({'BK': bk}) for bk in TWICE], key=[])
        @triton.jit
        def rebound(x): pass

        @triton.autotune(configs=[triton.Config({'BK': bk}) for bk in pick()], key=[])
        @triton.jit
        def computed_range(x): pass

        @triton.autotune(configs=[triton.Config({'BK': bk}, num_warps=w) for w in [4, 8] for bk in [w * 8]], key=[])
        @triton.jit
        def through_a_later_range(x): pass

        @triton.autotune(configs=[triton.Config(kwargs={'B': 1}, num_warps=4), triton.Config({'B': 1}, num_warps=8)], key=[])
        @triton.jit
        def same_dict(x): pass

        @triton.autotune(configs=get_configs(), key=[])
        @triton.jit
        def at_run_time(x): pass
    """)
    assert config_counts(src) == {
        "by_block": 4,
        "by_constant": 6,
        "rebound": UNKNOWN_CONFIGS,
        "computed_range": UNKNOWN_CONFIGS,
        "through_a_later_range": 2,
        "same_dict": 1,
        "at_run_time": UNKNOWN_CONFIGS,
    }
