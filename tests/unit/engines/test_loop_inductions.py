"""Loops over a declared range of trip counts, summed up in one evaluation instead of followed one
trip count at a time (enumerate/inductions.py, control.py's ranged loops and data-dependent while
loops).

The oracles: brute force for the closed-form hulls; for whole launches, the same engine following
every iteration (at ranges small enough for that), which must give the same verdicts and footprints
(fixtures/loop_inductions.py and the conformance corpus's ranged loops). The conformance suite holds
the long loops (10^5 trips) to Triton's interpreter.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.support import FIXTURES, REPO, codes, launch_at, line_of
from tilelens_lsp.engines.enumerate import control, inductions
from tilelens_lsp.engines.ranges import PtrSpan, RangeV
from tilelens_lsp.engines.values import IntV, PtrV
from tilelens_lsp.model import FileResult
from tilelens_lsp.pipeline import analyze_path
from tilelens_lsp.pipeline.warm import WarmState

KERNELS = FIXTURES / "loop_inductions.py"
CORPUS = REPO / "tests" / "conformance"
RANGED_LOOPS = [
    KERNELS,
    CORPUS / "kernels" / "varlen_cu_seqlens_loop.py",
    CORPUS / "kernels" / "token_count_loop.py",
    CORPUS / "kernels" / "moe_expert_loop.py",
    CORPUS / "kernels" / "while_search_cu_seqlens.py",
    CORPUS / "bugs" / "moe_loop_offsets_past_tokens.py",
    CORPUS / "bugs" / "varlen_loop_unmasked.py",
    CORPUS / "bugs" / "token_count_past_slab.py",
    CORPUS / "bugs" / "while_search_short_cu_seqlens.py",
]


def _analyse(path: Path, monkeypatch) -> FileResult:
    """A fresh analysis: no result kept from another call (the cache would answer for the setting)."""
    monkeypatch.setenv("TILELENS_CACHE_DIR", "off")
    return analyze_path(path, REPO, state=WarmState())


def _verdicts(path: Path, monkeypatch) -> list[tuple]:
    """Per launch: status, codes, and per access site its exactness and the ends of its footprint."""
    out = []
    for launch in _analyse(path, monkeypatch).launches:
        sites = sorted(
            (a.op, a.pointer, a.line, a.exact, a.elements[0][0], a.elements[-1][1]) if a.elements else (a.op, a.pointer)
            for a in launch.accesses
        )
        out.append((launch.line, launch.status, codes(launch), sites))
    return out


def _iterations(path: Path, monkeypatch) -> list[tuple]:
    """Per diagnostic: its code, line, and its witness's loop iteration and declared value."""
    return [
        (d.code, d.line, d.witness and d.witness.iteration, d.witness and d.witness.value)
        for launch in _analyse(path, monkeypatch).launches
        for d in launch.diagnostics
    ]


@pytest.mark.parametrize("path", RANGED_LOOPS, ids=lambda p: p.name)
def test_summing_a_ranged_loop_up_gives_what_following_it_gives(path, monkeypatch):
    """Same verdicts, same exactness, same ends of every footprint (inside them, summing up may leave
    out elements that following merges into one interval: j -= 2 reads every other element)."""
    followed = _verdicts(path, monkeypatch)
    monkeypatch.setattr(control, "FOLLOW_LIMIT", 0)  # sum up every ranged loop from its second iteration
    assert _verdicts(path, monkeypatch) == followed


def test_a_summed_up_loop_names_no_iteration_in_its_witness(monkeypatch):
    """The witness of a summed-up access stands for every iteration (and shows the sum was taken),
    unless its program evaluated at a declared value shows it (`engines/pinned.py`): then it is that
    evaluation's witness, iteration and value, the one following the loop finds too."""
    followed = _iterations(KERNELS, monkeypatch)
    monkeypatch.setattr(control, "FOLLOW_LIMIT", 0)
    summed = _iterations(KERNELS, monkeypatch)
    first = line_of(KERNELS, "def index_for_kernel(") + 6  # its first loop's load: a witness of each kind
    assert ("TL002", first, (32,), 33) in followed and ("TL002", first, None, None) in summed
    # every for loop's TL002 is summed up, the one whose step the loop computes (K * H) included
    named = [(line, it, value) for code, line, it, value in summed if code == "TL002" and it]
    assert named and all(value is not None for _, _, value in named)
    assert all(("TL002", line, it, value) in followed for line, it, value in named)
    assert sorted(code for code, *_ in followed) == sorted(code for code, *_ in summed)


def _within(inner: list[tuple], outer: list[tuple]) -> bool:
    """Same launches, statuses, codes and access sites; each footprint of `inner` inside `outer`'s ends."""
    if [v[:3] for v in inner] != [v[:3] for v in outer]:
        return False
    for (*_, a_sites), (*_, b_sites) in zip(inner, outer):
        if [x[:4] for x in a_sites] != [y[:4] for y in b_sites]:
            return False
        if any(len(x) > 4 and not (y[4] <= x[4] and x[5] <= y[5]) for x, y in zip(a_sites, b_sites)):
            return False
    return True


@pytest.mark.parametrize("path", RANGED_LOOPS, ids=lambda p: p.name)
def test_widening_a_while_loops_inductions_gives_what_settling_them_gives(path, monkeypatch):
    """Where settling alone answers: the same verdicts, footprints inside (the closed form knows that
    `i += 3` below 30 stops at 27). The paired loop (j += 2 beside the counter) never settles without
    the closed forms and is refused."""
    widened = _verdicts(path, monkeypatch)
    monkeypatch.setattr(control, "WIDEN_INDUCTIONS", False)
    settled = _verdicts(path, monkeypatch)
    paired = {line_of(KERNELS, "paired_while_kernel[(2,)](i32[2].values(0, 21)") + i for i in (0, 1)}
    kept = [v for v in widened if path != KERNELS or v[0] not in paired]
    assert _within(kept, [v for v in settled if path != KERNELS or v[0] not in paired])
    assert all(v[1] == "refused" for v in settled if path == KERNELS and v[0] in paired)


def test_a_while_loop_stepping_by_three_reads_no_further_than_its_last_step(monkeypatch):
    """`i += 3` while `i < n`, n <= 30: i reaches 27 at most (the condition alone says 29)."""
    result = _analyse(KERNELS, monkeypatch)
    launch = launch_at(result, line_of(KERNELS, "while_step_kernel[(2,)](i32[2].values(0, 31), fp32[30]"))
    (tab,) = [a for a in launch.accesses if a.pointer == "tab_ptr"]
    assert (tab.exact, tab.elements[0][0], tab.elements[-1][1]) == (False, 0, 28)


def test_the_fixture_launches_say_what_their_comments_say(monkeypatch):
    result = _analyse(KERNELS, monkeypatch)
    expected = {
        "index_for_kernel[(3,)](i32[3].values(0, 33)": [],
        "index_for_kernel[(3,)](i32[3].values(0, 34)": ["TL002"],
        "falling_for_kernel[(2,)](i32[2].values(0, 21)": [],
        "falling_for_kernel[(2,)](i32[2].values(0, 22)": ["TL002", "TL002"],
        "# tilelens: loaded_step_kernel[": [],
        "while_step_kernel[(2,)](i32[2].values(0, 31), fp32[30]": [],
        "while_step_kernel[(2,)](i32[2].values(0, 31), fp32[27]": ["TL002"],
        "paired_while_kernel[(2,)](i32[2].values(0, 21)": [],
        "paired_while_kernel[(2,)](i32[2].values(0, 22)": ["TL002"],
        "runtime_step_kernel[(2,)](i32[2].values(0, 9)": [],
        "runtime_step_kernel[(2,)](i32[2].values(0, 10)": ["TL002"],
        "late_race_kernel[(2,)](i32[2].values(0, 17), fp32[40], 5)": ["TL006"],
        "late_race_kernel[(2,)](i32[2].values(0, 17), fp32[40], 20)": [],
    }
    for needle, want in expected.items():
        launch = launch_at(result, line_of(KERNELS, needle))
        assert (launch.status, codes(launch)) == ("analyzed", want), needle


def test_an_unsettled_while_loop_over_ranged_tensors_is_refused_without_asking_for_ranges(monkeypatch):
    result = _analyse(KERNELS, monkeypatch)
    launch = launch_at(result, line_of(KERNELS, "while_loaded_step_kernel["))
    (diag,) = launch.diagnostics
    assert (diag.code, diag.kind) == ("TL030", "data-dependent-bound")
    assert "not inductions" in diag.message
    assert ".values(" not in diag.message  # every integer tensor of the launch already declares one


def test_loops_of_100000_trips_are_answered_clean_and_their_one_past_the_end_twins_warn(monkeypatch):
    """Before the loops were summed up, these ran out of time or were refused (TL030)."""
    result = _analyse(CORPUS / "kernels" / "loaded_trip_long.py", monkeypatch)
    assert [(l.status, codes(l)) for l in result.launches] == [("analyzed", [])] * len(result.launches)
    bugs = _analyse(CORPUS / "bugs" / "loaded_trip_long_past_end.py", monkeypatch)
    assert [codes(l) for l in bugs.launches] == [["TL002"]] * 4
    monkeypatch.setattr(control, "WIDEN_INDUCTIONS", False)  # settling alone: 512 iterations, then refused
    unwidened = _analyse(CORPUS / "kernels" / "loaded_trip_long.py", monkeypatch)
    assert [l.status for l in unwidened.launches if l.kernel == "long_trip_while_kernel"][0] == "refused"


# ---------------------------------------------------------------- closed forms by brute force

CASES = [
    # start lo, start hi, step, sign, first, last
    (0, 0, 1, 1, 0, 99_999),
    (5, 9, 3, 1, 2, 40),
    (100, 100, 2, -1, 1, 30),
    (-7, 4, -5, 1, 0, 13),
    (3, 3, 0, 1, 0, 10),
]


@pytest.mark.parametrize("lo,hi,step,sign,first,last", CASES)
def test_an_induction_hull_holds_every_iteration_and_no_more(lo, hi, step, sign, first, last):
    start = IntV(np.array([lo]), 32) if lo == hi else RangeV(np.array([lo]), np.array([hi]), 32)
    h = inductions.hull(start, IntV(np.array([step]), 32), sign, np.array([first]), np.array([last]))
    values = [s + sign * step * t for s in range(lo, hi + 1) for t in range(first, last + 1)]
    assert isinstance(h, RangeV)
    assert (int(h.lo[0]), int(h.hi[0])) == (min(values), max(values))


def test_a_ranged_step_takes_the_corners_of_steps_and_iterations():
    h = inductions.hull(IntV(np.array([0]), 32), RangeV(np.array([1]), np.array([3]), 32), 1, np.array([2]), np.array([10]))
    values = [s * t for s in range(1, 4) for t in range(2, 11)]
    assert (int(h.lo[0]), int(h.hi[0])) == (min(values), max(values))


def test_a_pointer_induction_steps_in_elements_of_its_pointee():
    p = PtrV("x", np.array([[0, 4, 8, 12]], dtype=np.int64), 4)  # four fp32 lanes
    h = inductions.hull(p, IntV(np.array([4]), 32), 1, np.array([0]), np.array([9]))
    assert isinstance(h, PtrSpan) and h.arg == "x"
    assert h.lo.tolist() == [[0, 4, 8, 12]] and h.hi.tolist() == [[144, 148, 152, 156]]


def test_an_induction_that_would_wrap_its_width_is_not_summed_up():
    start = IntV(np.array([2**31 - 10]), 32)
    assert inductions.hull(start, IntV(np.array([1]), 32), 1, np.array([0]), np.array([20])) is None


def test_a_while_hull_stops_one_step_past_the_conditions_limit():
    # i from 0 by 3 while i < n, n <= 30: i at the head is at most 27 + 3 = 30 <= 29 + 3
    h = inductions.while_hull(IntV(np.array([0]), 32), (np.array([3]), np.array([3])), IntV(np.array([29]), 32))
    reach = [i for i in range(0, 40, 3) if i - 3 < 30]
    assert int(h.lo[0]) == 0 and int(h.hi[0]) >= max(reach)
    # falling: i from 50 by -4 while i > n, n >= 10: the head sees down to 11 - 4 = 7
    h = inductions.while_hull(IntV(np.array([50]), 32), (np.array([-4]), np.array([-4])), IntV(np.array([11]), 32))
    assert (int(h.lo[0]), int(h.hi[0])) == (7, 50)


@pytest.mark.parametrize("start,step,limit", [(0, 1, 19), (5, 3, 29), (0, 4, -1), (40, -3, 11)])
def test_a_while_loop_runs_its_body_at_most_the_counted_times(start, step, limit):
    """Brute force: `while i < n` (rising, limit = highest n - 1) or `while i > n` (falling, limit =
    lowest n + 1), i from `start` by `step`."""
    runs, i = 0, start
    while (i <= limit) if step > 0 else (i >= limit):
        runs, i = runs + 1, i + step
    steps = (np.array([step]), np.array([step]))
    most = inductions.while_trips(IntV(np.array([start]), 32), steps, IntV(np.array([limit]), 32))
    assert int(most[0]) == runs


def test_a_value_loaded_without_other_is_never_summed_up():
    start = RangeV(np.array([0]), np.array([5]), 32, undef=np.array([True]))
    assert inductions.hull(start, IntV(np.array([1]), 32), 1, np.array([0]), np.array([9])) is None
    assert inductions.while_trips(start, (np.array([1]), np.array([1])), IntV(np.array([9]), 32)) is None
