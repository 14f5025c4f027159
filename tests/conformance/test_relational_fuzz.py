"""Differential fuzzing of relational guards (varlen masks) against Triton's interpreter: random
kernels read two offsets `bos`, `eos` out of a ranged `cu_seqlens` and address rows `bos + o_t` (or
their mirror `eos - 1 - o_t`) under a mask relating them: `o_t < eos - bos` and its spellings, the
off-by-one `<=`, a shifted address, an `|` that must not narrow, casts to 64 bits. The offsets are a
declared set of points, shuffled, whose largest is drawn on both sides of the rows, so sequences run
backwards (empty) and some kernels really read past x.

Every footprint the product reports must cover what `TRITON_INTERPRET=1` touched; a kernel that really
reads past x must not be clean. Each kernel is analysed twice: by the engine its size gets (the
enumeration) and by the grid engine, forced. `TILELENS_FUZZ_EXAMPLES` sets how many kernels (default 40)."""

from __future__ import annotations

import random

import pytest

from tests.support.fuzz import bounds_fuzz, examples, kernel_files, kernel_text, oracle_runs
from tilelens_lsp.engines import select

EXAMPLES = examples(40)
SEED = 20261202
N = 40  # rows of x
D = 4  # elements per row

MASKS = [
    "o_t < T",
    "o_t <= T",
    "o_t + bos < eos",
    "bos + o_t <= eos - 1",
    "eos > o_t + bos",
    "o_t - T < {S}",
    "(o_t < T) | (o_t == 0)",
    "(o_t < T) & (o_t >= 0)",
]
ADDRESSES = ["(bos + o_t + {S}) * D", "(o_t + bos) * D + {S}", "(eos - 1 - o_t) * D"]


def kernel_source(rng: random.Random) -> str:
    top = rng.choice([N - 1, N, N, N, N + 1])
    points = sorted({top, *(rng.randint(0, top) for _ in range(rng.randint(2, 4)))})
    rng.shuffle(points)
    cast = rng.random() < 0.3
    body = [
        "i_t = tl.program_id(0)",
        "i_n = tl.program_id(1)",
        "bos = tl.load(cu_ptr + i_n)" + (".to(tl.int64)" if cast else ""),
        "eos = tl.load(cu_ptr + i_n + 1)" + (".to(tl.int64)" if cast else ""),
        "T = eos - bos",
        "o_t = i_t * BT + tl.arange(0, BT)",
        "m_t = " + rng.choice(MASKS).format(S=rng.choice([0, 1, -1])),
        "o_d = tl.arange(0, D)",
        "p = (" + rng.choice(ADDRESSES).format(S=rng.choice([0, 0, 1, -1])) + ")[:, None] + o_d[None, :]",
        "v = tl.load(x_ptr + p, mask=m_t[:, None], other=0.0)",
        "tl.store(y_ptr + (i_n * GT + i_t) * BT * D + tl.arange(0, BT)[:, None] * D + o_d[None, :], v)",
    ]
    bt, n_seq = rng.choice([4, 8, 16]), len(points) - 1
    gt = -(-N // bt) + rng.randint(0, 1)
    return kernel_text(
        "k(cu_ptr, x_ptr, y_ptr, GT: tl.constexpr, D: tl.constexpr, BT: tl.constexpr)",
        "\n".join(body),
        f"k[({gt}, {n_seq})](i32[{n_seq + 1}].values({points}), fp32[{N}, {D}], "
        f"fp32[{gt * bt * n_seq}, {D}], GT={gt}, D={D}, BT={bt})",
    )


fuzz_files = kernel_files("relational_fuzz", EXAMPLES, SEED, kernel_source)


@pytest.fixture(scope="module")
def oracle(fuzz_files) -> dict:
    return oracle_runs(fuzz_files)


@pytest.mark.parametrize("engine", ["auto", "grid"])
def test_relational_footprints_cover_the_interpreter(fuzz_files, oracle, engine, monkeypatch):
    """`auto`: the engine a launch of this size gets (the enumeration); `grid`: the grid engine forced,
    whose relational bound (`engines/grid/relational.py`) answers the same kernels at production size."""
    monkeypatch.setenv("TILELENS_CACHE_DIR", "off")
    if engine == "auto":
        monkeypatch.delenv(select.ENGINE_ENV, raising=False)
    else:
        monkeypatch.setenv(select.ENGINE_ENV, engine)
    tally = bounds_fuzz(fuzz_files, "x_ptr", N * D, "x", oracle=oracle, engine=None if engine == "auto" else engine)
    compared, past, clean = tally.compared, tally.past, tally.clean
    print(
        f"relational fuzz ({engine}): {len(fuzz_files)} kernels, {compared} compared with the interpreter, {past} read "
        f"past x (all flagged), {clean} clean of the {compared - past} in bounds"
    )
    assert not tally.problems, tally.problems[0]
    assert compared == len(fuzz_files)
    assert clean >= len(fuzz_files) // 5, "the relation proves no kernel clean: the fuzz tests nothing"
