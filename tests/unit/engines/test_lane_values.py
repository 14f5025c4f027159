"""Races between lanes of one store, decided from what the lanes store (engines/enumerate/lanevalues):
floats converted exactly from known integers are known values, one loaded scalar splat over the
lanes or one element loaded by every lane is one value; anything else stays a possible race (TL006).
The expected values are the kernels' own arithmetic, done here in Python."""

from __future__ import annotations

from pathlib import Path

import pytest

from tilelens_lsp.engines import select
from tilelens_lsp.pipeline import analyze_path

HEADER = "import triton\nimport triton.language as tl\n\n\n"


def _diagnostics(tmp_path: Path, monkeypatch, body: str, launch: str) -> list:
    monkeypatch.setenv("TILELENS_CACHE_DIR", "off")
    monkeypatch.setenv(select.ENGINE_ENV, "enumerate")
    path = tmp_path / "k.py"
    path.write_text(HEADER + "@triton.jit\n" + body + "\n\n# tilelens: " + launch + "\n")
    (result,) = analyze_path(path, workspace_root=tmp_path).launches
    assert result.status == "analyzed", result.diagnostics
    return [d for d in result.diagnostics if d.code in ("TL005", "TL006")]


FLOAT_RACE = """def k(out, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out + offs // 2, offs.to(tl.{dtype}))
"""


@pytest.mark.parametrize(
    ("dtype", "tensor"), [("float32", "fp32"), ("float16", "fp16"), ("bfloat16", "bf16"), ("float64", "fp64")]
)
def test_lanes_storing_different_converted_integers_race_definitely(tmp_path, monkeypatch, dtype, tensor):
    (d,) = _diagnostics(tmp_path, monkeypatch, FLOAT_RACE.format(dtype=dtype), f"k[(1,)]({tensor}[8], BLOCK=16)")
    assert d.code == "TL005"
    assert d.witness.lane == (0,) and d.witness.element == 0
    assert "lanes [0] and [1]" in d.message and "values 0.0 and 1.0" in d.message  # lane i stores float(i)


def test_lanes_storing_one_converted_integer_do_not_race(tmp_path, monkeypatch):
    body = FLOAT_RACE.replace("offs.to(tl.{dtype})", "(offs // 2).to(tl.float32)")
    assert _diagnostics(tmp_path, monkeypatch, body, "k[(1,)](fp32[8], BLOCK=16)") == []


def test_integers_a_float_cannot_hold_exactly_stay_a_possible_race(tmp_path, monkeypatch):
    # 2048 + lane in fp16 (11 significand bits): 2049 rounds, so the values are not known exactly
    body = FLOAT_RACE.replace("offs.to(tl.{dtype})", "(offs + 2048).to(tl.float16)")
    (d,) = _diagnostics(tmp_path, monkeypatch, body, "k[(1,)](fp16[8], BLOCK=16)")
    assert d.code == "TL006"
    # nothing here is loaded: the message says the values are computed, not that they are data
    assert "with values computed per lane that are not known exactly" in d.message
    assert "loaded" not in d.message


@pytest.mark.parametrize(
    ("body", "launch"),
    [
        # a loop index is what its bounds are (constants here)
        (
            "    for i in range(2):\n        tl.store(out + offs // 2, (offs + i + 2048).to(tl.float16))",
            "k[(1,)](fp16[8], 0, BLOCK=16)",
        ),
        # a declared scalar argument is no loaded data
        ("    tl.store(out + offs // 2, (offs + n).to(tl.float16))", "k[(1,)](fp16[8], 2048, BLOCK=16)"),
    ],
    ids=["loop-index", "scalar-argument"],
)
def test_values_from_loop_indices_and_arguments_count_as_computed(tmp_path, monkeypatch, body, launch):
    source = "def k(out, n, BLOCK: tl.constexpr):\n    offs = tl.arange(0, BLOCK)\n" + body + "\n"
    (d,) = _diagnostics(tmp_path, monkeypatch, source, launch)
    assert d.code == "TL006" and "with values computed per lane that are not known exactly" in d.message, d.message


ONE_VALUE = {
    "stride-0-load-then-math": """def k(src, out, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    v = tl.load(src + pid + 0 * offs)
    tl.store(out + pid + 0 * offs, v * 2.0)
""",
    "scalar-selected-on-every-lane": """def k(src, out, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    v = tl.load(src + pid)
    tl.store(out + pid + 0 * offs, tl.where(offs < 100, v, 0.0))
""",
    "masked-stride-0-load-with-other": """def k(src, out, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    v = tl.load(src + pid + 0 * offs, mask=offs < 100, other=0.0)
    tl.store(out + pid + 0 * offs, v + 1.0)
""",
    "loop-accumulating-a-loaded-scalar": """def k(src, out, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], tl.float32)
    for i in range(3):
        acc += tl.load(src + pid)
    tl.store(out + pid + 0 * offs, acc)
""",
    "branch-on-a-program-choosing-splats": """def k(src, out, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    if pid % 2 == 0:
        w = tl.load(src + pid) + tl.zeros([BLOCK], tl.float32)
    else:
        w = tl.full([BLOCK], 1.0, tl.float32)
    tl.store(out + pid + 0 * offs, w)
""",
}


@pytest.mark.parametrize("body", list(ONE_VALUE.values()), ids=list(ONE_VALUE))
def test_lanes_storing_one_loaded_value_do_not_race(tmp_path, monkeypatch, body):
    assert _diagnostics(tmp_path, monkeypatch, body, "k[(4,)](fp32[4], fp32[4], BLOCK=8)") == []


PER_LANE = {
    "per-lane-loads": """def k(src, out, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    v = tl.load(src + pid * BLOCK + offs)
    tl.store(out + pid + 0 * offs, v * 2.0)
""",
    "masked-off-lanes-undefined": """def k(src, out, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    v = tl.load(src + pid + 0 * offs, mask=offs < 4)
    tl.store(out + pid * BLOCK + tl.minimum(offs, 4), v)  # lanes 4.. (masked off above) meet
""",
    "loaded-value-plus-lane": """def k(src, out, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    v = tl.load(src + pid)
    tl.store(out + pid + 0 * offs, v + offs.to(tl.float32))
""",
    "loop-accumulating-per-lane-loads": """def k(src, out, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], tl.float32)
    for i in range(3):
        acc += tl.load(src + pid * BLOCK + offs)
    tl.store(out + pid + 0 * offs, acc)
""",
    "loop-swapping-a-splat-with-per-lane-loads": """def k(src, out, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    a = tl.zeros([BLOCK], tl.float32)
    b = tl.load(src + pid * BLOCK + offs)
    for i in range(3):
        a, b = b, a
    tl.store(out + pid + 0 * offs, a)
""",
}


# what each message says of the values: loaded data feeds the first three; a loop carries the last two,
# which the lanes' values are not followed through
PER_LANE_VALUES = {
    "per-lane-loads": "with values that depend on loaded data",
    "masked-off-lanes-undefined": "with values that depend on loaded data",
    "loaded-value-plus-lane": "with values that depend on loaded data",
    "loop-accumulating-per-lane-loads": "with values the analysis does not follow",
    "loop-swapping-a-splat-with-per-lane-loads": "with values the analysis does not follow",
}


@pytest.mark.parametrize("name", list(PER_LANE))
def test_a_possible_race_between_lanes_says_what_their_values_derive_from(tmp_path, monkeypatch, name):
    (d,) = _diagnostics(tmp_path, monkeypatch, PER_LANE[name], "k[(4,)](fp32[32], fp32[32], BLOCK=8)")
    assert d.code == "TL006" and PER_LANE_VALUES[name] in d.message, d.message


@pytest.mark.parametrize("body", list(PER_LANE.values()), ids=list(PER_LANE))
def test_lanes_storing_values_that_may_differ_stay_a_possible_race(tmp_path, monkeypatch, body):
    (d,) = _diagnostics(tmp_path, monkeypatch, body, "k[(4,)](fp32[32], fp32[32], BLOCK=8)")
    assert d.code == "TL006"


def test_a_reduced_row_broadcast_over_colliding_lanes_is_a_possible_race(tmp_path, monkeypatch):
    # Liger's mhc backward kernel with equal strides: lanes [0, 1] and [1, 0] of a 2-D store meet, and
    # what they store comes through a row reduction, expand_dims and broadcast; that chain used to
    # crash the lane check (the reduction's type was unread and taken for a scalar)
    body = """def k(x, out, S, BLOCK: tl.constexpr):
    r = tl.arange(0, BLOCK)[:, None]
    c = tl.arange(0, BLOCK)[None, :]
    v = tl.load(x + r * S + c * S)
    row_max = tl.max(v, axis=1)
    tl.store(out + r * S + c * S, v - row_max[:, None])
"""
    (d,) = _diagnostics(tmp_path, monkeypatch, body, "k[(1,)](fp32[64], fp32[64], 4, BLOCK=4)")
    assert d.code == "TL006" and "lanes [0, 1] and [1, 0]" in d.message


def test_lanes_whose_loaded_operands_swap_places_may_race(tmp_path, monkeypatch):
    """Lanes 0 and 1 store x[0] + y[1] and x[1] + y[0] to one element: each operand's class is known,
    and the pairs differ, so the values may differ (no pair of classes may be merged into one key)."""
    body = """def k(x, y, out):
    offs = tl.arange(0, 2)
    a = tl.load(x + offs)
    b = tl.load(y + 1 - offs)
    tl.store(out + offs // 2, a * b)
"""
    (d,) = _diagnostics(tmp_path, monkeypatch, body, "k[(1,)](fp32[2], fp32[2], fp32[1])")
    assert d.code == "TL006" and "lanes [0] and [1]" in d.message
    same = body.replace("y + 1 - offs", "y + offs * 0")  # the same y for both: still x[0] against x[1]
    (d,) = _diagnostics(tmp_path, monkeypatch, same, "k[(1,)](fp32[2], fp32[2], fp32[1])")
    assert d.code == "TL006"
    one = body.replace("x + offs", "x + offs * 0").replace("y + 1 - offs", "y + offs * 0")
    assert _diagnostics(tmp_path, monkeypatch, one, "k[(1,)](fp32[2], fp32[2], fp32[1])") == []  # one value


COUNTED = """def k(x_ptr, out, N: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + row * N + offs)
    keep = (x > 0).to(tl.int32)
    tl.store(out + {where}, x, mask=keep > 0)
"""


def test_lanes_at_running_sums_of_conditions_are_said_unchecked_not_a_race(tmp_path, monkeypatch):
    """A compaction's exclusive sums are distinct on the lanes that store, which per-lane bounds cannot
    show, and no declared range is there to blame: a note, never a TL006 between its lanes."""
    body = COUNTED.format(where="row * N + tl.cumsum(keep, 0) - keep")
    assert _diagnostics(tmp_path, monkeypatch, body, "k[(2,)](fp32[2, 16], fp32[2, 16], N=16)") == []
    (result,) = analyze_path(tmp_path / "k.py", workspace_root=tmp_path).launches
    assert any(n.startswith("races between lanes of one store to out not checked") for n in result.notes)


def test_programs_meeting_at_counts_of_conditions_race_for_some_loaded_data(tmp_path, monkeypatch):
    """Every program packs to the front of one shared row: two programs may store one element. No
    declared range made those addresses, so the warning says it is loaded data, not declared values."""
    body = COUNTED.format(where="tl.cumsum(keep, 0) - keep")
    (d,) = _diagnostics(tmp_path, monkeypatch, body, "k[(2,)](fp32[2, 16], fp32[16], N=16)")
    assert d.code == "TL006" and "program (0, 0, 0)" in d.message and "program (1, 0, 0)" in d.message
    assert "for some loaded data" in d.message and "declared ranges" not in d.message


@pytest.mark.parametrize("engine", ["enumerate", "grid"])
def test_a_kept_lane_counts_itself_in_its_running_sum(tmp_path, monkeypatch, engine):
    """FlagGems' single-pass `masked_select` stores at `tl.cumsum(mask.to(tl.int32)) - 1` under the
    mask: where the mask holds, the lane's own term is 1, so nothing is stored below element 0. Before,
    the model did not know that `mask` true makes `mask.to(tl.int32)` 1, and said element -1."""
    monkeypatch.setenv("TILELENS_CACHE_DIR", "off")
    monkeypatch.setenv(select.ENGINE_ENV, engine)
    body = """def k(inp_ptr, mask_ptr, out_ptr, N, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    inp = tl.load(inp_ptr + offsets, mask=offsets < N)
    mask = tl.load(mask_ptr + offsets, mask=offsets < N).to(tl.int1)
    out_offsets = tl.cumsum(mask.to(tl.int32), axis=0){minus}
    tl.store(out_ptr + out_offsets, inp, mask=(offsets < N) & {keep})
"""
    found = {}
    for minus, keep in ((" - 1", "mask"), ("", "mask"), (" - 1", "~mask")):
        path = tmp_path / "k.py"
        path.write_text(
            HEADER
            + "@triton.jit\n"
            + body.format(minus=minus, keep=keep)
            + "\n\n# tilelens: k[(1,)](fp32[100], i1[100], fp32[100], 100, BLOCK=128)\n"
        )
        (result,) = analyze_path(path, workspace_root=tmp_path).launches
        found[minus, keep] = [(d.code, d.witness.element if d.witness else None) for d in result.diagnostics]
    assert found[" - 1", "mask"] == []
    assert found["", "mask"] == [("TL002", 100)]  # the last of 100 kept values, one past the output
    # the lanes left out store: the first of them counts nothing before it, and stores at -1
    assert found[" - 1", "~mask"] == [("TL002", -1)]


@pytest.mark.parametrize("engine", ["enumerate", "grid"])
def test_a_value_named_i1_is_not_an_i1(tmp_path, monkeypatch, engine):
    """`arith.extsi %i1 : i32 to i64`: the operand is named after the variable `i1`, its type is i32.
    Read from the text it looked like an i1 widened, and the load got a TL002 at element -1."""
    monkeypatch.setenv("TILELENS_CACHE_DIR", "off")
    monkeypatch.setenv(select.ENGINE_ENV, engine)
    path = tmp_path / "k.py"
    path.write_text(
        HEADER
        + """@triton.jit
def k(ids_ptr, table_ptr, out_ptr):
    i1 = tl.load(ids_ptr)
    tl.store(out_ptr, tl.load(table_ptr + i1.to(tl.int64)))


# tilelens: k[(1,)](i32[1], fp32[4], fp32[1])
"""
    )
    (result,) = analyze_path(path, workspace_root=tmp_path).launches
    assert result.status == "refused" and [d.code for d in result.diagnostics] == ["TL030"]


@pytest.mark.parametrize("engine", ["enumerate", "grid"])
def test_only_an_i1_widened_is_zero_or_one(tmp_path, monkeypatch, engine):
    """An index loaded without a declared range and widened to 64 bits is any value: refused, where a
    condition widened the same way would be 0 or 1."""
    monkeypatch.setenv("TILELENS_CACHE_DIR", "off")
    monkeypatch.setenv(select.ENGINE_ENV, engine)
    path = tmp_path / "k.py"
    path.write_text(
        HEADER
        + """@triton.jit
def k(ids_ptr, table_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    row = tl.load(ids_ptr + offs).to(tl.int64)
    tl.store(out_ptr + offs, tl.load(table_ptr + row))


# tilelens: k[(1,)](i32[16], fp32[4], fp32[16], BLOCK=16)
"""
    )
    (result,) = analyze_path(path, workspace_root=tmp_path).launches
    assert result.status == "refused" and [d.code for d in result.diagnostics] == ["TL030"]


def test_a_count_in_a_loop_that_data_ends_is_at_most_its_lanes(tmp_path, monkeypatch):
    """A segment found by counting ends in chunks of 32, in a `while` whose exit loaded data decides:
    run as the hull of its iterations, each counted lane is 0 or 1, so 64 ends count at most 64."""
    monkeypatch.setenv("TILELENS_CACHE_DIR", "off")
    body = """def k(cu_ptr, vals_ptr, out_ptr, nseg, BLOCK: tl.constexpr):
    tok = tl.program_id(0)
    seg = 0
    start = 0
    go = True
    while go:
        offs = start + tl.arange(0, BLOCK)
        ends = tl.load(cu_ptr + 1 + offs, mask=offs < nseg, other=1 << 30)
        seg += tl.sum((ends <= tok).to(tl.int32))
        start += BLOCK
        go = (start < nseg) & (tl.max(ends) <= tok)
    tl.store(out_ptr + tok, tl.load(vals_ptr + seg))
"""
    found = {}
    for n in (65, 64):
        path = tmp_path / "k.py"
        launch = f"k[(100,)](i32[65].values(0, 100), fp32[{n}], fp32[100], 64, BLOCK=32)"
        path.write_text(HEADER + "@triton.jit\n" + body + "\n\n# tilelens: " + launch + "\n")
        (result,) = analyze_path(path, workspace_root=tmp_path).launches
        found[n] = (result.status, [(d.code, d.witness.element if d.witness else None) for d in result.diagnostics])
    assert found[65] == ("analyzed", [])
    assert found[64] == ("analyzed", [("TL002", 64)])
