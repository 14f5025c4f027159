"""An access's mask narrows the lanes of a loaded vector in the grid engine, as in the enumeration.

vLLM's fused MoE GEMM at a serving size (`kernels/fused_moe_serving*.py`: 4,352 programs, each
looping over K) reads token rows through a vector of sorted ids padded with `num_valid_tokens`, under
`mask=offs_token < num_valid_tokens`. Enumerating it runs past the budget; the grid engine kept the
loaded ids as per-lane intervals and bounded the padding id's row past the activations. Pinned here:
the correct kernel is clean with the activations' footprint ending at their last row (the bound is
the mask's); `<=` for `<` keeps its TL002 on the load and the store at the padding id; and on the
fixtures of the enumeration's lane facts (a fact reaches an address only through the lanes its mask
stands for, and through a pointer its loop advances; a `tl.where` narrows each side on its own lanes),
the forced grid engine gives the same verdicts.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support import FIXTURES, line_of, verdicts_by_kernel
from tilelens_lsp.engines import select
from tilelens_lsp.pipeline import analyze_path

KERNELS = Path(__file__).resolve().parent / "kernels"
T, K, TOPK, N = 4096, 1024, 2, 2048


def _launch(path: Path):
    (launch,) = analyze_path(path, workspace_root=path.parent).launches
    return launch


def test_the_fused_moe_gemm_at_a_serving_size_is_clean_to_the_last_row():
    launch = _launch(KERNELS / "fused_moe_serving.py")
    assert launch.grid == (136, 32, 1)
    assert (launch.engine, launch.status, launch.diagnostics) == ("grid", "analyzed", ())
    ends = {a.pointer: max(e for _, e in a.elements) for a in launch.accesses}
    assert ends["a_ptr"] == T * K and ends["c_ptr"] == T * TOPK * N
    # rows stored through loaded ids: which programs share one is not known at this size, and it says so
    (note,) = [n for n in launch.notes if n.startswith("races on c_ptr not checked")]
    assert "loaded data, bounded over all 4,352 programs at once" in note and "a smaller launch" in note, note


def test_a_mask_that_lets_the_padding_id_through_keeps_its_possible_out_of_bounds():
    path = KERNELS / "fused_moe_serving_mask_off_by_one.py"
    launch = _launch(path)
    assert (launch.engine, launch.status) == ("grid", "analyzed")
    found = sorted((d.code, d.line, d.witness.value) for d in launch.diagnostics)
    assert found == [
        ("TL002", line_of(path, "a = tl.load(a_ptrs"), T * TOPK),
        ("TL002", line_of(path, "tl.store(c_ptrs"), T * TOPK),
    ]


@pytest.mark.parametrize(
    "name,kernels",
    [
        ("guard_scopes.py", ["transposed_guard_kernel", "where_guard_kernel"]),
        ("loop_guard_kernels.py", ["g_ok", "g_off_by_one", "g_nested", "g_nested_bad"]),
    ],
)
def test_the_grid_engine_reads_lane_facts_as_the_enumeration_does(name, kernels, monkeypatch):
    path = FIXTURES / name
    monkeypatch.setenv(select.ENGINE_ENV, "enumerate")
    enumerated = verdicts_by_kernel(path)
    monkeypatch.setenv(select.ENGINE_ENV, "grid")
    gridded = verdicts_by_kernel(path)
    for kernel in kernels:
        assert gridded[kernel] == enumerated[kernel], kernel


@pytest.mark.parametrize("engine", ["auto", "grid"])
def test_two_tokens_at_one_slot_of_a_cache_are_a_possible_race_shown_at_that_slot(engine, monkeypatch):
    monkeypatch.setenv(select.ENGINE_ENV, engine)
    path = KERNELS / "kv_cache_scatter.py"
    launch = _launch(path)
    slots, cache = 60000 * 16, 60000 * 16 * 8 * 128
    (cache_access,) = [a for a in launch.accesses if a.pointer == "cache_ptr"]
    assert cache_access.elements == ((0, cache),) and not cache_access.exact
    # before: a note that the races were not checked (at this size the footprints are one bound over
    # all 8,192 programs, or past the enumeration's budget of per-lane bounds); a launch of 64 tokens
    # said TL006. Now programs 0 and 1 evaluated with every slot at one declared value store one
    # element: some data in the declared range makes them meet
    (race,) = [d for d in launch.diagnostics if d.code == "TL006"]
    assert race.line == line_of(path, "tl.store(cache_ptr")
    assert -1 <= race.witness.value < slots and 0 <= race.witness.element < cache
    assert "programs (0, 0, 0) and (1, 0, 0) both store element" in race.message, race.message
    assert f"when every element of slots_ptr holds {race.witness.value}" in race.message
    assert not [n for n in launch.notes if n.startswith("races on cache_ptr")]


def test_rows_written_at_loaded_offsets_never_meet_and_keep_their_race_note(monkeypatch):
    monkeypatch.setenv(select.ENGINE_ENV, "grid")
    launch = _launch(KERNELS / "rows_at_loaded_offsets.py")
    assert (launch.status, launch.diagnostics) == ("analyzed", ())
    # the values are declared: the note never asks for them, and names the smaller launch that checks
    (note,) = [n for n in launch.notes if n.startswith("races on out_ptr not checked")]
    assert "an address from loaded data, bounded over all 8,192 programs at once" in note, note
    assert "a smaller launch checks them" in note and ".values" not in note, note


@pytest.mark.parametrize("engine", ["auto", "grid"])
def test_a_slot_past_the_cache_is_shown_at_that_slot_writing_the_first_element_past_the_cache(engine, monkeypatch):
    monkeypatch.setenv(select.ENGINE_ENV, engine)
    path = KERNELS / "kv_cache_scatter_past_cache.py"
    launch = _launch(path)
    (found,) = [d for d in launch.diagnostics if d.code in ("TL001", "TL002")]
    slots, cache = 60000 * 16, 60000 * 16 * 8 * 128
    # before: "program (0, 0, 0), lane [0] writes element 983055360", the bound of block and offset
    # taken apart (the last block's last offset), which no slot gives, and no slot named
    assert (found.code, found.line) == ("TL002", line_of(path, "tl.store(cache_ptr"))
    assert (found.witness.value, found.witness.element) == (slots, cache), found.message
    assert f"when slots_ptr holds {slots}" in found.message and f"writes element {cache} " in found.message


def test_a_segment_found_by_counting_its_ends_is_bounded_at_a_serving_size():
    # before: refused (`tt.reduce is not modelled`; in the enumeration, an address from a comparison)
    path = KERNELS / "segment_by_count_serving.py"
    launch = _launch(path)
    assert (launch.engine, launch.status, launch.diagnostics) == ("grid", "analyzed", ())
    (out,) = [a for a in launch.accesses if a.pointer == "out_ptr"]
    assert out.elements == ((0, 32),)
    bad = KERNELS / "segment_by_count_serving_off_by_one.py"
    (found,) = _launch(bad).diagnostics
    assert (found.code, found.line, found.witness.element) == ("TL002", line_of(bad, "tl.atomic_add("), 32)
    assert "when cu_ptr holds 0" in found.message, found.message


@pytest.mark.parametrize("engine", ["auto", "grid", "enumerate"])
def test_segment_ends_from_a_running_sum_are_narrowed_by_each_lanes_own_length(engine, monkeypatch):
    # before: refused by the grid engine (`tt.scan is not modelled`), and a TL002 at element -1 from
    # the enumeration: `mask=lengths > 0` narrowed no lane of `tl.cumsum(lengths)`
    monkeypatch.setenv(select.ENGINE_ENV, engine)
    rows, width = 1 << 20, 1024
    launch = _launch(KERNELS / "segment_ends_serving.py")
    assert (launch.status, launch.diagnostics) == ("analyzed", ())
    (src,) = [a for a in launch.accesses if a.pointer == "src_ptr"]
    assert src.elements == ((0, rows * width),)
    # `>= 0` lets an empty first segment read before its row; lengths up to 65 run past the last row
    for name, element, value, program in (
        ("segment_ends_serving_unguarded.py", -1, 0, (0, 0, 0)),
        ("segment_ends_serving_too_long.py", rows * width + 15, 65, (rows - 1, 0, 0)),
    ):
        path = KERNELS / name
        (found,) = _launch(path).diagnostics
        assert (found.code, found.line) == ("TL002", line_of(path, "last = tl.load(")), found.message
        assert (found.witness.element, found.witness.value, found.witness.pid) == (element, value, program)


@pytest.mark.parametrize("engine", ["auto", "grid", "enumerate"])
def test_segment_starts_at_the_exclusive_sum_of_the_lengths_stay_inside_their_rows(engine, monkeypatch):
    # before: a TL002 at element -64 (the interval `tl.cumsum(lengths) - lengths` takes the sum's low
    # end less the length's high end); the exclusive sum is the terms before a lane, at most 960
    monkeypatch.setenv(select.ENGINE_ENV, engine)
    rows, width = 1 << 20, 1024
    launch = _launch(KERNELS / "segment_starts_serving.py")
    assert (launch.status, launch.diagnostics) == ("analyzed", ())
    (src,) = [a for a in launch.accesses if a.pointer == "src_ptr"]
    assert src.elements[0][0] == 0 and src.elements[-1][1] == (rows - 1) * width + 15 * 64 + 1
    # read at the end of each segment instead: sixteen full segments end one past the row
    path = KERNELS / "segment_starts_serving_at_the_end.py"
    (found,) = _launch(path).diagnostics
    assert (found.code, found.line) == ("TL002", line_of(path, "first = tl.load(")), found.message
    assert (found.witness.element, found.witness.value, found.witness.pid) == (rows * width, 64, (rows - 1, 0, 0))


@pytest.mark.parametrize("engine", ["auto", "grid", "enumerate"])
def test_bucket_starts_from_a_histogram_stay_inside_their_rows(engine, monkeypatch):
    # before: refused in both engines (`tt.histogram is not modelled`); with each count bounded alone
    # by 64, the start of the sixteenth bucket would be 15 × 64: the counts' sum bounds it instead
    monkeypatch.setenv(select.ENGINE_ENV, engine)
    rows = 1 << 20
    launch = _launch(KERNELS / "bucket_starts_serving.py")
    assert (launch.status, launch.diagnostics) == ("analyzed", ())
    (src,) = [a for a in launch.accesses if a.pointer == "src_ptr"]
    assert src.elements == ((0, rows * 64),)


@pytest.mark.parametrize("engine", ["auto", "grid"])
def test_a_bucket_counted_from_float_comparisons_is_at_most_the_number_of_edges(engine, monkeypatch):
    # before: refused (indirect-address through `arith.cmpf`); a comparison widened to an integer is
    # 0 or 1 whatever it compares, so a sum of 16 of them is a bucket in [0, 16]
    monkeypatch.setenv(select.ENGINE_ENV, engine)
    launch = _launch(KERNELS / "bucket_counts_serving.py")
    assert (launch.status, launch.diagnostics) == ("analyzed", ())
    (hist,) = [a for a in launch.accesses if a.pointer == "hist_ptr"]
    assert hist.elements == ((0, 17),)
    path = KERNELS / "bucket_counts_serving_one_short.py"
    (found,) = _launch(path).diagnostics
    assert (found.code, found.line) == ("TL002", line_of(path, "tl.atomic_add(")), found.message
    assert found.witness.element == 16


@pytest.mark.parametrize("engine", ["auto", "grid"])
def test_a_compaction_at_the_exclusive_sum_of_kept_lanes_stays_in_its_row(engine, monkeypatch):
    # before: refused; now each row's kept values land in its own row, and races are said unchecked
    monkeypatch.setenv(select.ENGINE_ENV, engine)
    launch = _launch(KERNELS / "compaction_serving.py")
    assert (launch.status, launch.diagnostics) == ("analyzed", ())
    (out,) = [a for a in launch.accesses if a.pointer == "out_ptr"]
    assert out.elements[0][0] == 0 and out.elements[-1][1] == (1 << 20) * 64
    assert any("races" in note and "not checked" in note for note in launch.notes)
