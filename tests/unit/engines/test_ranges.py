"""Declared value ranges: the directive forms, and interval arithmetic held to brute force (every
value the operation can give lies in the interval it reports, for every value the range allows)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tilelens_lsp.engines import ranges
from tilelens_lsp.engines.values import IntV, tdiv, trem
from tilelens_lsp.launches.scanner import parse_directives


def _spec(text: str):
    launches, errors = parse_directives(text)
    assert not errors, errors
    return launches[0].args[0]


def test_the_short_and_long_forms_declare_the_same_range():
    short = _spec("# tilelens: k[(1,)](i32[8].values(0, 100))")
    long = _spec("# tilelens: k[(1,)](tensor(i32, (8,), values=(0, 100)))")
    assert short == long and short.values == (0, 100)


@pytest.mark.parametrize(
    "text, message",
    [
        ("# tilelens: k[(1,)](fp32[8].values(0, 1))", "is not one"),
        ("# tilelens: k[(1,)](i32[8].values(3, 3))", "is empty"),
        ("# tilelens: k[(1,)](i32[8].values(3))", "two arguments"),
        ("# tilelens: k[(1,)](tensor(i32, (8,), values=7))", "must be a pair"),
    ],
)
def test_a_bad_range_is_a_precise_directive_error(text, message):
    _, errors = parse_directives(text)
    assert len(errors) == 1 and message in errors[0].message


OPS = {
    "arith.addi": lambda a, b: a + b,
    "arith.subi": lambda a, b: a - b,
    "arith.muli": lambda a, b: a * b,
    "arith.divsi": lambda a, b: tdiv(np.array(a), np.array(b), 64),
    "arith.floordivsi": lambda a, b: a // b,
    "arith.remsi": lambda a, b: trem(np.array(a), np.array(b), 64),
    "arith.shli": lambda a, b: a << b,
    "arith.shrsi": lambda a, b: a >> b,
    "arith.minsi": min,
    "arith.maxsi": max,
    "arith.andi": lambda a, b: a & b,
}


@pytest.mark.slow
@settings(max_examples=400, deadline=None, derandomize=True)
@given(st.sampled_from(sorted(OPS)), st.integers(-50, 50), st.integers(0, 40), st.integers(-9, 9), st.booleans())
def test_interval_arithmetic_covers_every_value(name, lo, width, c, ranged_left):
    hi = lo + width
    r = ranges.RangeV(np.array([lo]), np.array([hi]), 32)
    k = IntV(np.array([c]), 32)
    a, b = (r, k) if ranged_left else (k, r)
    out = ranges.binary(name, a, b, 32)
    if out is None:
        return  # no bound: the engine treats the value as loaded data
    for x in range(lo, hi + 1):
        if name in ("arith.divsi", "arith.floordivsi", "arith.remsi", "arith.shli", "arith.shrsi") and not ranged_left:
            continue
        try:
            v = int(OPS[name](x, c) if ranged_left else OPS[name](c, x))
        except (ZeroDivisionError, ValueError):
            continue
        assert out.lo[0] <= v <= out.hi[0], (name, lo, hi, c, ranged_left, v, out)


@settings(max_examples=300, deadline=None, derandomize=True)
@given(
    st.sampled_from(["arith.divsi", "arith.floordivsi", "arith.ceildivsi", "arith.divui"]),
    st.integers(-60, 60),
    st.integers(0, 40),
    st.integers(-3, 6),
    st.integers(0, 6),
)
def test_a_division_by_a_declared_range_covers_every_quotient(name, lo, width, dlo, dwidth):
    # a split count loaded per sequence divides its length: bounded only where every divisor is positive
    a = ranges.RangeV(np.array([lo]), np.array([lo + width]), 32)
    d = ranges.RangeV(np.array([dlo]), np.array([dlo + dwidth]), 32)
    out = ranges.binary(name, a, d, 32)
    if out is None:
        assert dlo <= 0 or name == "arith.divui"
        return
    assert dlo > 0 and name != "arith.divui"
    fn = {
        "arith.divsi": lambda x, y: int(tdiv(np.array(x), np.array(y), 64)),
        "arith.floordivsi": lambda x, y: x // y,
        "arith.ceildivsi": lambda x, y: -((-x) // y),
    }[name]
    quotients = {fn(x, y) for x in range(lo, lo + width + 1) for y in range(dlo, dlo + dwidth + 1)}
    assert (out.lo[0], out.hi[0]) == (min(quotients), max(quotients))  # covers every one, and tightly


@settings(max_examples=300, deadline=None, derandomize=True)
@given(
    st.sampled_from(["slt", "sle", "sgt", "sge", "eq", "ne"]), st.integers(-20, 20), st.integers(0, 10), st.integers(-25, 25)
)
def test_a_comparison_is_decided_only_where_every_value_agrees(pred, lo, width, c):
    r = ranges.RangeV(np.array([lo]), np.array([lo + width]), 32)
    always, never = ranges.compare(pred, r, IntV(np.array([c]), 32))
    fn = {"slt": int.__lt__, "sle": int.__le__, "sgt": int.__gt__, "sge": int.__ge__, "eq": int.__eq__, "ne": int.__ne__}[
        pred
    ]
    outcomes = {fn(x, c) for x in range(lo, lo + width + 1)}
    assert bool(always[0]) == (outcomes == {True})
    assert bool(never[0]) == (outcomes == {False})


def test_a_masked_load_without_other_leaves_its_masked_off_lanes_undefined():
    r = ranges.loaded(((0, 10),), (1, 4), 32, "ids", np.array([[True, True, False, False]]), None)
    assert r.undef.tolist() == [[False, False, True, True]]
    with_other = ranges.loaded(((0, 10),), (1, 4), 32, "ids", np.array([[True, False, True, False]]), np.array([-1]))
    assert with_other.undef is None and with_other.lo.tolist() == [[0, -1, 0, -1]]


def test_the_remainder_of_a_range_within_one_quotient_is_the_ends_remainders_and_keeps_its_source():
    # a paged cache's slot 1600..1603 in blocks of 16: offsets 0..3 of block 100, from slots 1600..1603
    slot = ranges.RangeV(np.array([1600]), np.array([1603]), 64, None, (np.array([1600]), np.array([1603]), "slots"))
    out = ranges.binary("arith.remsi", slot, IntV(np.array([16]), 64), 64)
    assert (out.lo.tolist(), out.hi.tolist(), out.src[2]) == ([0], [3], "slots")
    across = ranges.RangeV(np.array([1598]), np.array([1603]), 64)  # two quotients: any remainder
    out = ranges.binary("arith.remsi", across, IntV(np.array([16]), 64), 64)
    assert (out.lo.tolist(), out.hi.tolist()) == ([0], [15])


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(-50, 50), st.integers(0, 40), st.integers(0, 40), st.integers(0, 40)), min_size=1, max_size=7
    ),
    st.booleans(),
    st.booleans(),
    st.randoms(use_true_random=False),
)
def test_a_running_sum_narrows_each_lane_by_its_own_term_only(lanes, reverse, uniform, rnd):
    """Every vector inside the declared bounds whose lane i lies in its narrowed term has a running sum
    at lane i inside the bounds given for lane i, and the extremes are reached."""
    n = len(lanes)
    xl = np.array([lo for lo, _, _, _ in lanes], dtype=np.int64)
    xh = xl + np.array([w for _, w, _, _ in lanes], dtype=np.int64)
    nl = np.minimum(xl + np.array([a for _, _, a, _ in lanes]), xh)
    nh = np.maximum(nl, xh - np.array([b for _, _, _, b in lanes]))
    if uniform:  # one bound standing for every lane, as a broadcast array
        xl, xh = xl[:1], xh[:1]
        nl, nh = np.maximum(nl[:1], xl), np.minimum(nh[:1], xh)
        nh = np.maximum(nl, nh)
    got = ranges.running_sum_narrowed((xl[None], xh[None]), (nl[None], nh[None]), (n,), 1, reverse, 32)
    assert got is not None
    lo, hi = got.lo[0], got.hi[0]
    XL, XH, NL, NH = (np.broadcast_to(a, (n,)) for a in (xl, xh, nl, nh))
    order = list(range(n))[::-1] if reverse else list(range(n))
    for i in range(n):
        before = order[: order.index(i)]
        assert lo[i] == sum(int(XL[j]) for j in before) + int(NL[i])
        assert hi[i] == sum(int(XH[j]) for j in before) + int(NH[i])
        for _ in range(5):
            v = [rnd.randint(int(XL[j]), int(XH[j])) for j in range(n)]
            v[i] = rnd.randint(int(NL[i]), int(NH[i]))
            total = sum(v[j] for j in before) + v[i]
            assert lo[i] <= total <= hi[i]


def test_a_running_sum_that_may_leave_its_width_is_not_bounded():
    big = np.array([[1 << 30] * 4], dtype=np.int64)
    assert ranges.running_sum_narrowed((big, big), (big, big), (4,), 1, False, 32) is None
    assert ranges.running_sum_narrowed((big, big), (big, big), (4,), 1, False, 64) is not None


def test_a_value_less_the_very_term_it_was_built_on_is_its_rest():
    """`start + tl.cumsum(c) - c`: the running sum carries (c, the exclusive sums); adding a start moves
    the rest, and subtracting that same c leaves the rest, not the difference of two intervals."""
    c = ranges.RangeV(np.zeros((1, 4), np.int64), np.full((1, 4), 9, np.int64), 32)
    rest = (np.array([[0, 0, 0, 0]]), np.array([[0, 9, 18, 27]]))
    summed = ranges.RangeV(rest[0] + c.lo, rest[1] + c.hi, 32, term=(c, *rest))
    start = IntV(np.array([[100]]), 32)
    shifted = ranges.binary("arith.addi", start, summed, 32)
    assert shifted is not None and shifted.term is not None
    exclusive = ranges.binary("arith.subi", shifted, c, 32)
    assert exclusive is not None
    assert exclusive.lo.tolist() == [[100, 100, 100, 100]] and exclusive.hi.tolist() == [[100, 109, 118, 127]]
    # the start on either side of the sum
    after = ranges.binary("arith.subi", ranges.binary("arith.addi", summed, start, 32), c, 32)
    assert after is not None and after.lo.tolist() == exclusive.lo.tolist() and after.hi.tolist() == exclusive.hi.tolist()
    # another value with the same bounds is not the same lanes: the plain interval difference
    twin = ranges.RangeV(c.lo.copy(), c.hi.copy(), 32)
    loose = ranges.binary("arith.subi", shifted, twin, 32)
    assert loose is not None and loose.lo.tolist() == [[91, 91, 91, 91]]
    # a product carries no term
    doubled = ranges.binary("arith.muli", summed, IntV(np.array([[2]]), 32), 32)
    assert doubled is not None and doubled.term is None


def test_counts_that_sum_to_a_total_bound_the_sums_before_each_lane():
    """A histogram's bins each lie in [0, 64] and sum to at most 64: the terms before a lane leave room
    for the lane's own term, at least its low end (1 where a mask narrowed it), and no sum passes 64."""
    counts = (np.zeros((1, 4), np.int64), np.full((1, 4), 64, np.int64))
    sums = ranges.running_sums(counts, (1, 4), 1, False)
    assert sums.before_hi.tolist() == [[0, 64, 128, 192]] and sums.hi.tolist() == [[64, 128, 192, 256]]
    sums = ranges.running_sums(counts, (1, 4), 1, False, total=64)
    assert sums.before_lo.tolist() == [[0, 0, 0, 0]] and sums.before_hi.tolist() == [[0, 64, 64, 64]]
    assert sums.lo.tolist() == [[0, 0, 0, 0]] and sums.hi.tolist() == [[64, 64, 64, 64]]
    narrowed = (np.ones((1, 4), np.int64), counts[1])
    sums = ranges.running_sums(counts, (1, 4), 1, False, total=64, own=narrowed)
    assert sums.before_hi.tolist() == [[0, 63, 63, 63]]
    got = ranges.running_sum_narrowed(counts, narrowed, (4,), 1, True, 32, total=64)
    assert got is not None and got.lo.tolist() == [[1, 1, 1, 1]] and got.hi.tolist() == [[64, 64, 64, 64]]


def test_running_sums_past_int64_are_summed_without_wrapping():
    """Terms of 2**61 over eight lanes sum past 2**63: as int64 they would wrap to small numbers that fit
    a 64-bit width; summed without wrapping they do not fit, so no bound is given."""
    big = np.full((1, 8), 1 << 61, dtype=np.int64)
    assert ranges.running_sum_narrowed((big, big), (big, big), (8,), 1, False, 64) is None
    sums = ranges.running_sums((big, big), (1, 8), 1, False)
    assert int(sums.before_hi[0, -1]) == 7 << 61 and int(sums.hi[0, -1]) == 8 << 61
    assert not sums.within(64)
