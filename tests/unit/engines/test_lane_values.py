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
