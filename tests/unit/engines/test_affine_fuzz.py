"""Differential fuzzing of the two engines: random kernels built from the address shapes real kernels
use (program tiles, swizzles, strided, wrapped and clamped lanes, lane selects, 2-D tiles, masks,
loops with carried pointers and program-dependent trip counts) are compiled and analysed with both engines, which must
agree on every launch the affine summary answers (`TILELENS_ENGINE=compare`: a disagreement is a
TL050)."""

from __future__ import annotations

import itertools
import os
import textwrap

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tilelens_lsp.engines import select
from tilelens_lsp.engines.affine import summary
from tilelens_lsp.pipeline import analyze_path

PIDS = ["pid * {S}", "pid * {S} + {C}", "(pid % {G}) * {S} + (pid // {G}) * {S2}", "(pid // {G}) * {S}", "{C}"]
LANES_1D = [
    "r",
    "r * {A}",
    "(r % {D}) * {A}",
    "(r // {D}) * {A} + r % {D}",
    "r + {C}",
    "({base} + r) % {M}",
    "tl.minimum(r * {A}, {X})",
    "tl.maximum(r - {C}, 0) * {A}",
    "tl.where(r < {X}, r, {X} + {A} * r)",
    "tl.where((r >= {D}) & (r < {X}), r * {A}, 0)",
    "tl.minimum({base} + r, {M}) - {base}",
]
MASKS = [
    "None",
    "offs < n",
    "offs >= {L}",
    "(r < {X}) & (offs < n)",
    "(offs < n) & (offs >= {L})",
    "r * {A} < {X}",
    "offs == {L}",
]
LOOPS = ["", "{T}", "pid % 3 + 1", "pid + 1"]

_files = itertools.count()
_stats = {"examples": 0, "summarized": 0}


@st.composite
def kernels(draw) -> str:
    nums = {
        k: draw(st.integers(lo, hi))
        for k, lo, hi in (
            ("S", 1, 96),
            ("S2", 1, 300),
            ("C", 0, 40),
            ("G", 1, 4),
            ("A", 1, 5),
            ("D", 1, 8),
            ("M", 1, 200),
            ("L", 0, 60),
            ("X", 1, 40),
            ("T", 1, 4),
        )
    }
    two_d = draw(st.booleans())
    base = draw(st.sampled_from(PIDS)).format(**nums)
    if two_d:
        lanes = "r[:, None] * {W} + r2[None, :]".format(W=draw(st.integers(1, 48)))
        mask = draw(
            st.sampled_from(["None", "offs < n", "(r[:, None] < {X}) & (r2[None, :] < {Y})", "r2[None, :] <= r[:, None]"])
        ).format(Y=draw(st.integers(1, 8)), **nums)
        offs = f"{base} + {lanes}"
    else:
        lanes = draw(st.sampled_from(LANES_1D)).format(base=base, **nums)
        offs = lanes if lanes.startswith(f"({base}") else f"{base} + {lanes}"
        mask = draw(st.sampled_from(MASKS)).format(**nums)
    loop = draw(st.sampled_from(LOOPS)).format(**nums)
    step = draw(st.integers(0, 64))
    grid = draw(st.integers(1, 9))
    block = draw(st.sampled_from([8, 16, 32]))
    n = draw(st.integers(1, 3000))
    mask_arg = "" if mask == "None" else ", mask=mask"
    body = [f"offs = {offs}", f"mask = {mask}"]
    access = [
        f"v = tl.load(x_ptr + offs + j * {step}{mask_arg}{', other=0.0' if mask_arg else ''})",
        f"tl.store(y_ptr + offs + j * {step}, v{mask_arg})",
    ]
    carried = draw(st.booleans())
    if loop and carried:  # loop-carried pointers advanced by a step, as in a K loop
        other = ", other=0.0" if mask_arg else ""
        body += [
            "px = x_ptr + offs",
            "py = y_ptr + offs",
            f"for j in range(0, {loop}):",
            f"    v = tl.load(px{mask_arg}{other})",
            f"    tl.store(py, v{mask_arg})",
            f"    px += {step}",
            f"    py += {step}",
        ]
    elif loop:
        body += [f"for j in range(0, {loop}):"] + ["    " + a for a in access]
    else:
        body += ["j = 0"] + access
    src = f"""
        import triton
        import triton.language as tl

        # tilelens: k[({grid},)](fp32[65536], fp32[65536], {n}, BLOCK={block})
        @triton.jit
        def k(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
            pid = tl.program_id(0)
            r = tl.arange(0, BLOCK)
            r2 = tl.arange(0, 8)
    """
    return textwrap.dedent(src) + "".join(f"    {line}\n" for line in body)


@pytest.mark.slow
@pytest.mark.parametrize("programs", ["arrays", "variables"])
@settings(
    max_examples=int(os.environ.get("TILELENS_FUZZ_EXAMPLES", "60")),
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(kernels())
def test_both_engines_agree_on_random_kernels(tmp_path_factory, monkeypatch, programs, source):
    """`programs`: per-program constants as arrays (the usual), or program ids as box variables (what
    grids past SUMMARY_ARRAY_PROGRAMS get), forced here on small grids so the enumeration can check it."""
    if programs == "variables":
        monkeypatch.setattr(summary, "SUMMARY_ARRAY_PROGRAMS", 0)
    folder = tmp_path_factory.mktemp("affine-fuzz", numbered=True)
    path = folder / f"k{next(_files)}.py"
    path.write_text(source)
    monkeypatch.setenv("TILELENS_CACHE_DIR", "off")
    monkeypatch.setenv(select.ENGINE_ENV, "compare")
    before = select.ENGINES["summary"]
    result = analyze_path(path, workspace_root=folder)
    crashes = [d.message for d in result.all_diagnostics() if d.code in ("TL050", "TL020", "TL010")]
    assert not crashes, f"{crashes}\n{source}"
    _stats["examples"] += 1
    _stats["summarized"] += select.ENGINES["summary"] - before


def test_the_fuzzer_mostly_reaches_the_summary():
    if not _stats["examples"]:
        pytest.skip("the fuzz test did not run in this session")
    assert _stats["summarized"] >= _stats["examples"] // 2, _stats
    print(f"affine fuzz: {_stats['examples']} kernels, {_stats['summarized']} summarized and compared")
