"""Relational guards: `o_t < eos - bos` keeps `bos + o_t` below eos, and nothing looser passes for it.

The varlen kernels are the conformance corpus's (run under Triton's interpreter there, where the
product's bounds must cover every element touched); here their verdicts are pinned: clean, and each
buggy twin TL002 at the first element past the storage (the bound is tight, not merely finite).
`linear.upper` is held to brute force over every value of its atoms."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support import FIXTURES, REPO, line_of
from tilelens_lsp.engines import linear
from tilelens_lsp.pipeline import analyze_path

KERNELS = REPO / "tests" / "conformance" / "kernels"
BUGS = REPO / "tests" / "conformance" / "bugs"
# segments_split_chunks.py: a loop from `start + c·chunk` to `tl.minimum(lo + chunk, end)` starts at or
# past `start` wherever it runs (its trips' running, not a mask, bounds the scalar kernel's reads)
# split_kv_loaded_splits.py: the same with the split's length divided by a loaded split count (its
# loop runs at most that length over its step: the trips follow the relation, not the intervals)
CLEAN = [
    "varlen_rows_masked.py",
    "varlen_chunk_indices.py",
    "varlen_rows_reversed.py",
    "segments_split_chunks.py",
    "split_kv_loaded_splits.py",
]
TWINS = {  # element the witness names (the first one past the storage), and the offset that reaches it
    "varlen_rows_mask_off_by_one.py": (1600, 100),
    "varlen_rows_one_short.py": (1584, 100),
    "varlen_rows_shifted_by_one.py": (1600, 100),
    "varlen_rows_offsets_past_rows.py": (1600, 101),
    "varlen_rows_reversed_past_start.py": (-8, 0),  # below the storage: row -1 when bos is 0
    # a chunk's end, or start, one element off: no one offset names the element (two atoms reach it)
    "segments_split_chunks_past_end.py": (700, None),
    "segments_split_chunks_scalar_past_end.py": (700, None),
    "segments_split_chunks_before_start.py": (-1, None),
    "split_kv_loaded_splits_mask_past_end.py": (300, None),
}


@pytest.fixture(autouse=True)
def _no_cache(monkeypatch):
    monkeypatch.setenv("TILELENS_CACHE_DIR", "off")


def _launches(path):
    return analyze_path(path, workspace_root=path.parent).launches


@pytest.mark.parametrize("name", CLEAN)
def test_a_varlen_kernel_masked_by_its_sequence_length_is_clean(name):
    for launch in _launches(KERNELS / name):
        assert launch.status == "analyzed", launch.diagnostics
        assert [d.message for d in launch.diagnostics] == []
        assert any(not a.exact and a.in_bounds for a in launch.accesses), "the bound rests on the ranges"


@pytest.mark.parametrize("name", sorted(TWINS))
def test_its_buggy_twin_still_leaves_the_storage_at_the_first_element_past_it(name):
    (launch,) = _launches(BUGS / name)
    assert launch.status == "analyzed"
    found = [d for d in launch.diagnostics if d.code == "TL002"]
    assert found and {d.code for d in launch.diagnostics} == {"TL002"}, launch.diagnostics
    assert {(d.witness.element, d.witness.value) for d in found} == {TWINS[name]}, [d.message for d in found]


def test_a_guard_joined_by_or_or_bounding_the_wrong_way_does_not_narrow():
    path = FIXTURES / "relational_guards.py"
    by = {launch.kernel: launch for launch in _launches(path)}
    for kernel, marker in (("or_guard_kernel", "lane 0 reads row bos"), ("wrong_sign_kernel", "below eos + bos")):
        codes = [(d.code, d.line, d.witness.element) for d in by[kernel].diagnostics]
        assert codes == [("TL002", line_of(path, marker), 100)], by[kernel].diagnostics


def test_an_address_whose_arithmetic_may_wrap_is_not_narrowed_by_the_relation():
    launch = {x.kernel: x for x in _launches(FIXTURES / "relational_guards.py")}["wrapping_rows_kernel"]
    assert launch.status == "refused"
    assert {d.code for d in launch.diagnostics} == {"TL003", "TL030"}, launch.diagnostics


# ---------------------------------------------------------------- linear.upper against brute force

ATOMS = ("a", "b", "c")
small = st.integers(-3, 3)


@st.composite
def problems(draw):
    lanes = 3
    box = {}
    for name in ATOMS:
        lo = draw(st.integers(-4, 4))
        box[name] = (np.array([lo]), np.array([lo + draw(st.integers(0, 4))]))

    def form():
        c = np.array([[draw(st.integers(-6, 6)) for _ in range(lanes)]])
        k = tuple((n, np.array([[draw(small)] * lanes])) for n in ATOMS if draw(st.booleans()))
        return linear.Form(c, k)

    return form(), form(), draw(st.sampled_from([-1, 0])), box


def _value(form: linear.Form, point: dict) -> np.ndarray:
    return form.c + sum((k * point[n] for n, k in form.k), np.zeros_like(form.c))


@settings(max_examples=300, deadline=None)
@given(problems())
def test_upper_bounds_the_index_wherever_the_fact_holds(problem):
    index, fact, slack, box = problem
    got = linear.upper(index, fact, slack, box)
    if got is None:
        return
    bound = got.hi
    for values in itertools.product(*(range(int(box[n][0][0]), int(box[n][1][0]) + 1) for n in ATOMS)):
        point = dict(zip(ATOMS, values))
        holds = _value(fact, point) <= slack
        assert (_value(index, point)[holds] <= np.broadcast_to(bound, holds.shape)[holds]).all(), point


def test_upper_reads_the_varlen_bound_off_the_sequence_end():
    # index bos + o_t, fact o_t - (eos - bos) <= -1, eos in [0, 100]: index <= 99 on every lane
    o_t = np.arange(4)[None]
    index = linear.combine(linear.atom("bos"), linear.constant(o_t))
    fact = linear.combine(linear.combine(linear.constant(o_t), linear.atom("eos"), -1), linear.atom("bos"))
    box = {"bos": (np.array([0]), np.array([100])), "eos": (np.array([0]), np.array([100]))}
    strict = linear.upper(index, fact, -1, box)
    assert strict.hi.tolist() == [[99, 99, 99, 99]]
    assert strict.atoms[int(strict.atom.reshape(-1)[0])] == "eos" and int(strict.value.reshape(-1)[0]) == 100
    assert linear.upper(index, fact, 0, box).hi.tolist() == [[100, 100, 100, 100]]  # `<=`: one further


def test_a_split_loop_runs_at_most_its_length_over_its_step_not_what_the_intervals_allow(monkeypatch):
    # the split's start `per_split * split` reaches far below zero by its interval (a declared range lets
    # a sequence end before it starts), which alone would follow some hundred trips a program; the end
    # `tl.minimum(start + per_split, seq_len)` keeps every trip count at most per_split / BLOCK
    from tilelens_lsp.engines.enumerate import AccessGraph, relational

    spent: list[int] = []
    run = AccessGraph.run

    def counted(graph: AccessGraph) -> None:
        run(graph)
        spent.append(graph.work)

    monkeypatch.setattr(AccessGraph, "run", counted)
    monkeypatch.setenv("TILELENS_ENGINE", "enumerate")
    path = KERNELS / "split_kv_loaded_splits.py"
    related = [(r.status, r.diagnostics) for r in _launches(path)]
    with_relation = sum(spent)
    spent.clear()
    monkeypatch.setattr(relational, "most_trips", lambda *args: None)
    unrelated = [(r.status, r.diagnostics) for r in _launches(path)]
    assert related == unrelated == [("analyzed", ())] * 2  # the same verdicts ...
    assert with_relation * 2 < sum(spent), (with_relation, sum(spent))  # ... for under half the work
