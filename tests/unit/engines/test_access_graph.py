"""AccessGraph and its clients on small kernels whose answers are known by hand (fixtures/graph_kernels.py).

Each fixture launch's comment says what the right answer is; these tests hold the engine to it.
"""

from __future__ import annotations

import pytest

from tests.support import FIXTURES, access, codes, compile_file, launch_at, line_of, only
from tilelens_lsp.clients import CLIENTS
from tilelens_lsp.model import Witness
from tilelens_lsp.pipeline import analyze_path

KERNELS = FIXTURES / "graph_kernels.py"


@pytest.fixture(scope="module")
def result():
    return analyze_path(KERNELS, FIXTURES)


def at(result, needle: str):
    return launch_at(result, line_of(KERNELS, needle))


# ---------------------------------------------------------------- masks and tails


def test_unmasked_tail_store_is_a_definite_out_of_bounds(result):
    launch = at(result, "tail_kernel[")
    assert codes(launch) == ["TL001"]


def test_unmasked_tail_witness_names_program_lane_and_element(result):
    diag = only(at(result, "tail_kernel["), "TL001")
    assert diag.witness == Witness(pid=(3, 0, 0), lane=(4,), iteration=None, element=100)


def test_unmasked_tail_verdict_is_on_the_store_line(result):
    diag = only(at(result, "tail_kernel["), "TL001")
    assert (diag.line, diag.column) == (line_of(KERNELS, "no mask: the tail block"), 5)


def test_masked_tail_load_stays_in_bounds_while_the_unmasked_store_does_not(result):
    launch = at(result, "tail_kernel[")
    assert (access(launch, "load", "x_ptr").in_bounds, access(launch, "store", "out_ptr").in_bounds) == (True, False)


def test_masked_kernel_is_clean(result):
    launch = at(result, "masked_kernel[")
    assert (launch.status, launch.diagnostics) == ("analyzed", ())


def test_masked_kernel_footprint_is_exactly_the_vector(result):
    launch = at(result, "masked_kernel[")
    assert [(a.op, a.pointer, a.exact, a.elements) for a in launch.accesses] == [
        ("load", "x_ptr", True, ((0, 100),)),
        ("store", "out_ptr", True, ((0, 100),)),
    ]


# ---------------------------------------------------------------- integer widths


def test_i32_row_offset_overflow_is_tl003(result):
    assert "TL003" in codes(at(result, "row_i32_kernel["))


def test_i32_overflow_witness_is_the_first_overflowing_program_and_value(result):
    diag = only(at(result, "row_i32_kernel["), "TL003")
    assert (diag.witness.pid, diag.witness.value) == ((2, 0, 0), 2**31)


def test_i32_overflow_is_reported_on_the_multiplication_line(result):
    diag = only(at(result, "row_i32_kernel["), "TL003")
    assert (diag.line, diag.column) == (line_of(KERNELS, "i32 * i32: wraps"), 13)


def test_int64_row_offset_has_no_overflow(result):
    launch = at(result, "row_i64_kernel[")
    assert (launch.status, launch.diagnostics) == ("analyzed", ())


def test_int64_row_offsets_reach_past_two_to_the_31(result):
    store = access(at(result, "row_i64_kernel["), "store", "x_ptr")
    assert store.elements == ((0, 16), (2**30, 2**30 + 16), (2**31, 2**31 + 16))


# ---------------------------------------------------------------- loops and branches


def test_loop_carried_pointer_footprint_covers_every_iteration_of_every_program(result):
    load = access(at(result, "loop_ptr_kernel[(2,)](fp32[192]"), "load", "x_ptr")
    assert load.elements == ((0, 16), (32, 48), (64, 80), (96, 112), (128, 144), (160, 176))


def test_loop_carried_pointer_out_of_bounds_witness_names_the_iteration(result):
    diag = only(at(result, "loop_ptr_kernel[(2,)](fp32[170]"), "TL001")
    assert diag.witness == Witness(pid=(1, 0, 0), lane=(10,), iteration=(2,), element=170)


def test_branch_on_program_zero_limits_the_store_to_program_zero(result):
    launch = at(result, "first_program_kernel[")
    assert (access(launch, "store", "first_ptr").elements, launch.diagnostics) == (((0, 16),), ())


def test_branch_on_program_zero_compiles_to_an_scf_if():
    compiled = [c for c in compile_file(KERNELS, FIXTURES) if c.launch.kernel == "first_program_kernel"]
    assert "scf.if" in compiled[0].text


def test_nested_loops_with_program_dependent_trip_counts_are_followed_exactly(result):
    store = access(at(result, "triangle_kernel["), "store", "x_ptr")
    assert (store.exact, store.elements) == (True, ((110, 111), (210, 211), (220, 222)))


# ---------------------------------------------------------------- what the model cannot know


def test_gather_address_is_refused_as_indirect_address(result):
    diag = only(at(result, "gather_kernel["), "TL030")
    assert diag.kind == "indirect-address"


def test_gather_launch_is_never_reported_clean(result):
    launch = at(result, "gather_kernel[")
    assert launch.status == "refused"


def test_gather_refusal_is_on_the_gathering_load(result):
    diag = only(at(result, "gather_kernel["), "TL030")
    assert diag.line == line_of(KERNELS, "x = tl.load(x_ptr + tl.load(idx_ptr + offs))")


def test_data_dependent_mask_makes_the_footprint_inexact(result):
    launch = at(result, "data_mask_kernel[(4,)](fp32[64], i8[64], fp32[64]")
    assert [a.exact for a in launch.accesses if a.pointer in ("x_ptr", "out_ptr")] == [False, False]


def test_data_dependent_mask_footprint_is_a_superset_of_every_possible_run(result):
    # with every mask bit set, the kernel touches all 64 elements: the bound must contain them
    load = access(at(result, "data_mask_kernel[(4,)](fp32[64], i8[64], fp32[64]"), "load", "x_ptr")
    assert all(any(lo <= e < hi for lo, hi in load.elements) for e in range(64))


def test_known_conjunct_of_a_data_dependent_mask_bounds_the_access(result):
    launch = at(result, "bounded_data_mask_kernel[")
    assert codes(launch) == []
    store = next(a for a in launch.accesses if a.op == "store")
    assert not store.exact and store.elements == ((0, 50),)


def test_data_dependent_mask_past_the_end_is_only_a_possible_out_of_bounds(result):
    assert codes(at(result, "data_mask_kernel[(4,)](fp32[64], i8[64], fp32[63]")) == ["TL002"]


# ---------------------------------------------------------------- strided views


def test_strided_view_read_past_its_shape_but_inside_its_storage_is_outside_its_view_not_out_of_bounds(result):
    # each row reads 16 columns of a 10-column view whose rows are 16 apart: columns 10..15 are the
    # next row's padding, inside the storage (no TL001) but outside the view (TL004)
    launch = at(result, "storage=64), fp32[64]")
    diag = only(launch, "TL004")
    assert diag.witness == Witness(pid=(0, 0, 0), lane=(10,), iteration=None, element=10)


def test_strided_view_read_past_its_storage_is_out_of_bounds(result):
    diag = only(at(result, "storage=58), fp32[64]"), "TL001")
    assert diag.witness == Witness(pid=(3, 0, 0), lane=(10,), iteration=None, element=58)


# ---------------------------------------------------------------- clients fail alone


@pytest.fixture
def broken_overflow_client(monkeypatch):
    def boom(self, analysis):
        raise RuntimeError("boom")

    monkeypatch.setattr(CLIENTS["overflow"], "run", boom)
    monkeypatch.setenv("TILELENS_CACHE_DIR", "off")
    # and analyze_path without a WarmState keeps no result in memory between calls


def test_a_failing_client_is_a_tl050_naming_it(broken_overflow_client):
    launch = at(analyze_path(KERNELS, FIXTURES), "tail_kernel[")
    diag = only(launch, "TL050")
    assert (diag.kind, "overflow" in diag.message) == ("overflow", True)


def test_a_failing_client_keeps_the_other_clients_verdicts(broken_overflow_client):
    launch = at(analyze_path(KERNELS, FIXTURES), "tail_kernel[")
    assert (codes(launch), len(launch.accesses)) == (["TL001", "TL050"], 2)
