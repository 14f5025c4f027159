"""The affine summary of grid-stride `while` loops (`while iv < bound: ...; iv += step`): answered in
closed form like a for loop, checked against the enumeration (`TILELENS_ENGINE=compare` runs both on
every summarized launch and insists on the same footprints); the conformance suite checks the same
kernels against Triton's interpreter. Loops outside the shape, or whose values may wrap, are left
to the enumeration."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support import REPO, codes
from tilelens_lsp.engines import select
from tilelens_lsp.pipeline import analyze_path

KERNELS = REPO / "tests" / "conformance" / "kernels"
BUGS = REPO / "tests" / "conformance" / "bugs"


@pytest.fixture(autouse=True)
def _no_cache(monkeypatch):
    monkeypatch.setenv("TILELENS_CACHE_DIR", "off")


def _run(path: Path, engine: str, monkeypatch) -> tuple[list, dict[str, int]]:
    monkeypatch.setenv(select.ENGINE_ENV, engine)
    before = dict(select.ENGINES)
    launches = analyze_path(path, workspace_root=path.parent).launches
    used = {k: select.ENGINES[k] - before.get(k, 0) for k in ("summary", "enumeration")}
    return launches, used


def _verdicts(launches) -> list[tuple]:
    return [(launch.status, codes(launch), [(a.op, a.exact, a.elements) for a in launch.accesses]) for launch in launches]


@pytest.mark.parametrize("name", ["while_grid_stride_rows.py", "while_grid_stride.py"])
def test_clean_grid_stride_loops_are_summarized_and_agree_with_the_enumeration(name, monkeypatch):
    summarized, used = _run(KERNELS / name, "compare", monkeypatch)
    assert used == {"summary": len(summarized), "enumeration": 0}
    enumerated, _ = _run(KERNELS / name, "enumerate", monkeypatch)
    assert _verdicts(summarized) == _verdicts(enumerated)
    assert all(status == "analyzed" and found == [] for status, found, _ in _verdicts(summarized))


@pytest.mark.parametrize("name", ["while_grid_stride_inclusive.py", "while_grid_stride_short_output.py"])
def test_the_summary_itself_finds_the_buggy_twins(name, monkeypatch):
    # the out-of-bounds launch is not handed to the enumeration for its witness: the summary answers
    monkeypatch.setattr(select, "WITNESS_SHARE", 1 << 62)
    summarized, used = _run(BUGS / name, "compare", monkeypatch)
    assert used["summary"] == len(summarized) == 1
    enumerated, _ = _run(BUGS / name, "enumerate", monkeypatch)
    assert "TL001" in codes(summarized[0])
    assert _verdicts(summarized) == _verdicts(enumerated)


def test_a_carried_offset_that_may_wrap_is_left_to_the_enumeration(monkeypatch):
    monkeypatch.setattr(select, "WITNESS_SHARE", 1 << 62)
    launches, used = _run(BUGS / "while_grid_stride_offset_wraps.py", "auto", monkeypatch)
    assert used == {"summary": 0, "enumeration": 1}
    assert "TL001" in codes(launches[0])


WRAPPING_IV = """
import triton
import triton.language as tl


@triton.jit
def count_kernel(out_ptr, first, n, BLOCK: tl.constexpr):
    i = first + tl.program_id(0)
    k = tl.program_id(0) * BLOCK
    while i < n:
        tl.store(out_ptr + k + tl.arange(0, BLOCK), 1.0)
        k += tl.num_programs(0) * BLOCK
        i += {step}


# tilelens: count_kernel[(2,)](fp32[{size}], {first}, {n}, BLOCK=4)
"""


def test_an_induction_whose_last_step_wraps_int32_is_not_summarized(tmp_path, monkeypatch):
    # i reaches 2**31 - 2 and 2**31 - 1 (< n), then i + 2 leaves int32: the loop never ends on a GPU
    path = tmp_path / "wrap.py"
    path.write_text(WRAPPING_IV.format(step=2, size=64, first=2**31 - 6, n=2**31 - 1))
    monkeypatch.setattr("tilelens_lsp.engines.enumerate.control.WHILE_LIMIT", 64)
    launches, used = _run(path, "auto", monkeypatch)
    assert used["summary"] == 0
    # the enumeration follows the wrapped i, which stays below n: never clean, refused by name; the
    # stores past the 64 elements (k keeps growing after i wrapped) were made before it and are kept
    (launch,) = launches
    assert (launch.status, codes(launch)) == ("refused", ["TL001", "TL030"])
    refusal = next(d for d in launch.diagnostics if d.code == "TL030")
    assert "control-flow" in refusal.message and "wraps at iteration 2" in refusal.message


def test_the_same_loop_below_the_int32_edge_is_summarized(tmp_path, monkeypatch):
    path = tmp_path / "nowrap.py"
    path.write_text(WRAPPING_IV.format(step=2, size=64, first=2**31 - 20, n=2**31 - 4))
    launches, used = _run(path, "compare", monkeypatch)
    assert used == {"summary": 1, "enumeration": 0}
    # program 0: i = 2**31 - 20, -18, ..., -6: 8 iterations; program 1 from -19: 8 too; k by 8
    assert _verdicts(launches) == [("analyzed", [], [("store", True, ((0, 64),))])]
