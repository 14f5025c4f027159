"""The oracle itself, pinned against footprints worked out by hand (independent of the product)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.support.oracle import to_intervals
from tests.support.oracle_runner import KERNELS_DIR


def _runs(oracle_results, name: str, line: int) -> list[dict]:
    record = oracle_results[str(KERNELS_DIR / name)]
    runs = [r for r in record["runs"] if r["line"] == line]
    assert runs and all("error" not in r for r in runs), record
    return runs


def _access(run: dict, op: str, pointer: str, line: int | None = None) -> dict:
    found = [a for a in run["accesses"] if a["op"] == op and a["pointer"] == pointer and (line is None or a["line"] == line)]
    assert len(found) == 1, (op, pointer, line, run["accesses"])
    return found[0]


def test_intervals_merge_consecutive_indices():
    assert to_intervals(np.array([0, 1, 2, 5, 7, 8])) == [[0, 3], [5, 6], [7, 9]]
    assert to_intervals(np.array([], dtype=np.int64)) == []


def test_masked_tail_stops_at_n(oracle_results):
    (run,) = _runs(oracle_results, "vec_add.py", 20)
    assert run["grid"] == [3]
    for op, ptr in [("load", "x_ptr"), ("load", "y_ptr"), ("store", "out_ptr")]:
        assert _access(run, op, ptr)["elements"] == [[0, 77]]


def test_strided_view_elements_are_relative_to_the_view_start(oracle_results):
    (run,) = _runs(oracle_results, "vec_strided.py", 16)  # 50 elements, stride 2, offset 7
    assert _access(run, "load", "x_ptr")["elements"] == [[2 * i, 2 * i + 1] for i in range(50)]


def test_tensor_descriptor_clips_to_its_shape(oracle_results):
    (run,) = _runs(oracle_results, "desc_copy.py", 18)  # (20, 24) view with row stride 32
    want = to_intervals(np.array([r * 32 + c for r in range(20) for c in range(24)]))
    assert _access(run, "load", "in_ptr")["elements"] == want
    assert _access(run, "store", "out_ptr")["elements"] == [[0, 480]]


def test_pid_dependent_trip_count_covers_the_lower_triangle(oracle_results):
    (run,) = _runs(oracle_results, "causal_lower_tri.py", 19)
    want = to_intervals(np.array([r * 40 + c for r in range(40) for c in range(r + 1)]))
    assert _access(run, "load", "x_ptr")["elements"] == want


def test_helper_accesses_carry_the_helper_file(oracle_results):
    (run,) = _runs(oracle_results, "helper_memops.py", 16)
    load = _access(run, "load", "x_ptr")
    assert (Path(load["path"]).name, load["line"]) == ("memops.py", 9)
    assert load["elements"] == [[0, 20], [24, 44], [48, 68]]


def test_atomics_and_derived_pointers_are_attributed_to_their_argument(oracle_results):
    (run,) = _runs(oracle_results, "layernorm_bwd_dx.py", 52)  # Count = Lock + GROUP_SIZE_M
    assert _access(run, "atomic", "Lock", 35)["elements"] == [[0, 4]]  # atomic_cas on Lock
    assert _access(run, "atomic", "Lock", 39)["elements"] == [[4, 8]]  # atomic_xchg on Count
    assert _access(run, "load", "Lock", 37)["elements"] == [[4, 8]]  # tl.load(Count)


def test_every_autotune_config_runs_with_its_own_grid(oracle_results):
    runs = _runs(oracle_results, "autotune_vec.py", 22)
    assert [(r["config"]["BLOCK"], r["grid"]) for r in runs] == [(16, [7]), (32, [4]), (64, [2])]


def test_heuristics_values_are_computed_from_the_arguments(oracle_results):
    (even,) = _runs(oracle_results, "heuristics_even.py", 21)  # n = 128: EVEN branch, line 14
    (tail,) = _runs(oracle_results, "heuristics_even.py", 20)  # n = 100: masked branch, line 17
    assert {a["line"] for a in even["accesses"]} == {14}
    assert {a["line"] for a in tail["accesses"]} == {17}


@pytest.mark.parametrize("name", sorted(p.name for p in KERNELS_DIR.glob("*.py")))
def test_corpus_kernel_runs_in_bounds_under_the_interpreter(oracle_results, name):
    record = oracle_results[str(KERNELS_DIR / name)]
    assert not record["errors"], record["errors"]
    for run in record["runs"]:
        assert "error" not in run, run["error"]
        assert not run.get("unattributed"), run["unattributed"]
        oob = [(a["op"], a["line"], a["pointer"], a["out_of_bounds"]) for a in run["accesses"] if a["out_of_bounds"]]
        assert not oob, f"line {run['line']}: the corpus kernel itself is out of bounds: {oob}"
