"""Differential fuzzing of guards over declared-range loads against Triton's interpreter: random
kernels load an index with a declared range (an interval, or a union with an ignore index) and use it
as an address under a guard: the access's own mask, a `tl.where` select (and its negation), a branch
on a per-program index (`if`/`else`), an early return, `!=` on a declared point, the mask of a load
whose pointer a loop advances. The bounds are drawn
on both sides of the table, so about half the kernels really read past it.

Every footprint the product reports must cover what `TRITON_INTERPRET=1` touched (the oracle records
reads past the table, in its guard zones): a guard applied on the wrong lanes, on the wrong edge or
after its join makes the product miss elements and fails here. A kernel that really reads past the
table must not be clean. `TILELENS_FUZZ_EXAMPLES` sets how many kernels (default 60)."""

from __future__ import annotations

import random

import pytest

from tests.support.fuzz import bounds_fuzz, examples, kernel_files, kernel_text, oracle_runs
from tilelens_lsp.engines import select

EXAMPLES = examples(60)
SEED = 20261201
T = 24  # table rows

CMP = ["<", "<=", ">", ">=", "!="]
GUARDS = [
    # the access's own mask
    "g = m & (idx {c1} {A}) & (idx {c2} {B})\nv = tl.load(t_ptr + idx + {S}, mask=g, other=0.0)",
    # a select, and a select on the negated condition
    "j = tl.where((idx {c1} {A}) & (idx {c2} {B}), idx, {C})\nv = tl.load(t_ptr + j, mask=m, other=0.0)",
    "j = tl.where(idx {c1} {A}, {C}, idx + {S})\nv = tl.load(t_ptr + j, mask=m, other=0.0)",
    # a branch on a per-program index, both sides
    "s = tl.load(idx_ptr + pid)\nv = tl.zeros([BLOCK], dtype=tl.float32)\n"
    "if (s {c1} {A}) & (s {c2} {B}):\n    v += tl.load(t_ptr + s + {S})\nelse:\n    v += tl.load(t_ptr + {C})",
    # a branch whose narrowing must not outlive it
    "s = tl.load(idx_ptr + pid)\nv = tl.zeros([BLOCK], dtype=tl.float32)\n"
    "if s {c1} {A}:\n    v += tl.load(t_ptr + s)\nv += tl.load(t_ptr + s + {S})",
    # an early return
    "s = tl.load(idx_ptr + pid)\nif s {c1} {A}:\n    return\nv = tl.zeros([BLOCK], dtype=tl.float32) + tl.load(t_ptr + s)",
    # the access's own mask on a pointer a loop advances (vLLM's fused MoE)
    "p = t_ptr + idx + {S}\nv = tl.zeros([BLOCK], dtype=tl.float32)\nfor q in range({R}):\n"
    "    v += tl.load(p, mask=m & (idx {c1} {A}) & (idx {c2} {B}), other=0.0)\n    p += {D}",
]


def kernel_source(rng: random.Random) -> str:
    c1, a = rng.choice(CMP), rng.randint(-3, T + 3)
    if rng.random() < 0.3:
        point = rng.choice([-1, -100, T])
        values = f"[(0, {T}), {point}]"
        if rng.random() < 0.6:  # the guard excludes the declared point (or, wrongly, another)
            c1, a = "!=", rng.choice([point, point, 0, T - 1])
    else:
        values = f"{rng.randint(-4, 2)}, {rng.randint(T - 2, T + 4)}"
    guard = rng.choice(GUARDS).format(
        c1=c1,
        c2=rng.choice(CMP),
        A=a,
        B=rng.randint(-3, T + 3),
        C=rng.randint(0, T - 1),
        S=rng.choice([0, 0, 1, -1]),
        R=rng.randint(1, 3),
        D=rng.choice([0, 1, 2, -1]),
    )
    grid, block = rng.randint(1, 4), rng.choice([16, 32])
    n_idx = rng.randint(T + 8, max(T + 8, grid * block))
    body = "\n".join(
        [
            "pid = tl.program_id(0)",
            "offs = pid * BLOCK + tl.arange(0, BLOCK)",
            "m = offs < n_idx",
            "idx = tl.load(idx_ptr + offs, mask=m, other=0)",
            guard,
            "tl.store(out_ptr + offs, v + idx.to(tl.float32), mask=m)",
        ]
    )
    return kernel_text(
        "k(idx_ptr, t_ptr, out_ptr, n_idx, BLOCK: tl.constexpr)",
        body,
        f"k[({grid},)](i32[{n_idx}].values({values}), fp32[{T}], fp32[{grid * block}], {n_idx}, BLOCK={block})",
    )


fuzz_files = kernel_files("guard_fuzz", EXAMPLES, SEED, kernel_source)


@pytest.fixture(scope="module")
def oracle(fuzz_files) -> dict:
    return oracle_runs(fuzz_files)


@pytest.mark.parametrize("engine", ["auto", "grid"])
def test_guarded_footprints_cover_the_interpreter(fuzz_files, oracle, engine, monkeypatch):
    """`auto`: the engine a launch of this size gets (the enumeration); `grid`: the grid engine forced,
    whose branches (`engines/grid/branches.py`) and lane facts (`engines/grid/lanes.py`) answer the same
    guards at production size (a select of loaded data it bounds without narrowing)."""
    monkeypatch.setenv("TILELENS_CACHE_DIR", "off")
    if engine == "auto":
        monkeypatch.delenv(select.ENGINE_ENV, raising=False)
    else:
        monkeypatch.setenv(select.ENGINE_ENV, engine)
    # an undefined lane's index is refused by name
    refusable = frozenset({"indirect-address"})
    tally = bounds_fuzz(
        fuzz_files, "t_ptr", T, "the table", refusable, oracle=oracle, engine=None if engine == "auto" else engine
    )
    compared, past, refused = tally.compared, tally.past, tally.refused
    print(
        f"guard fuzz ({engine}): {len(fuzz_files)} kernels, {compared} compared with the interpreter, {past} read past "
        f"the table (all flagged: {past}), {tally.clean} clean of the {compared - past} in bounds, "
        f"{refused} refused (indirect-address)"
    )
    assert not tally.problems, tally.problems[0]
    assert compared + refused == len(fuzz_files) and compared >= len(fuzz_files) * 2 // 3
