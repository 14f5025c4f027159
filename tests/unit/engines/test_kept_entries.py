"""What the enumeration keeps per loop iteration is bounded by counts (never seconds or bytes):
grid-stride `while` loops whose lanes repeat elements (fixtures/gridstride_kernels.py).

A repeated element is one element of a program's run (not a run per lane and iteration); past the
count of runs kept for the race check, races are noted as not checked and the footprint still
answers; past the count of footprint intervals the footprints are merged, and a launch whose
intervals still do not fit is refused by name (launch-too-large), keeping a definite finding already
made.
"""

from __future__ import annotations

import pytest

from tests.support import FIXTURES, codes, launch_at, line_of
from tilelens_lsp.engines import select
from tilelens_lsp.engines.enumerate import recording
from tilelens_lsp.pipeline import analyze_path

KERNELS = FIXTURES / "gridstride_kernels.py"
GAPS = FIXTURES / "gridstride_gaps_kernel.py"


@pytest.fixture(autouse=True)
def _no_cache(monkeypatch):
    """The limits below are patched in: a cached result of the same launch must not answer instead."""
    monkeypatch.setenv("TILELENS_CACHE_DIR", "off")


def _launch(needle: str, path=KERNELS):
    return launch_at(analyze_path(path, FIXTURES), line_of(path, needle))


def _runs(monkeypatch) -> list[int]:
    """The per-program runs each site keeps, read off the enumeration of the clean launch."""
    kept: list[int] = []
    original = recording.SiteRecorder.keep_runs

    def spy(self, site, starts, ends, progs):
        original(self, site, starts, ends, progs)
        kept.append(int(starts.size))

    monkeypatch.setattr(recording.SiteRecorder, "keep_runs", spy)
    return kept


def test_lanes_repeating_an_element_keep_one_run_per_program_and_iteration(monkeypatch):
    kept = _runs(monkeypatch)
    monkeypatch.setenv(select.ENGINE_ENV, "enumerate")
    launch = _launch("# tilelens: stride_copy_kernel[")
    assert (launch.status, codes(launch)) == ("analyzed", [])
    # both programs run together: per launch of the file (2), iteration (32) and site (2) one run of
    # 16 elements per program (64 lanes read each of them 4 times: a run per lane would be 2 * 64)
    assert (len(kept), set(kept)) == (2 * 32 * 2, {2})


def test_past_the_runs_kept_races_are_a_note_and_the_footprint_still_answers(monkeypatch):
    monkeypatch.setenv(select.ENGINE_ENV, "enumerate")
    monkeypatch.setattr(recording, "KEPT_RUNS", 8)
    launch = _launch("# tilelens: stride_copy_kernel[")
    assert (launch.status, codes(launch)) == ("analyzed", [])
    assert [(a.op, a.exact, a.elements) for a in launch.accesses] == [
        ("load", True, ((0, 1024),)),
        ("store", True, ((0, 1024),)),
    ]
    assert any("races on out_ptr not checked" in n and "per-program runs" in n for n in launch.notes)


def test_past_the_intervals_kept_the_launch_is_refused_by_name(monkeypatch):
    monkeypatch.setenv(select.ENGINE_ENV, "enumerate")
    monkeypatch.setattr(recording, "KEPT_INTERVALS", 8)
    launch = _launch("# tilelens: stride_gaps_kernel[", GAPS)
    assert launch.status != "analyzed"
    refusals = [d for d in launch.diagnostics if d.code == "TL030"]
    assert refusals and all("launch-too-large" in d.message and "declare a smaller launch" in d.message for d in refusals)


def test_past_the_intervals_kept_a_footprint_that_merges_into_few_still_answers(monkeypatch):
    # every iteration adds a row's interval per site; merged, each site's footprint is one interval
    monkeypatch.setenv(select.ENGINE_ENV, "enumerate")
    monkeypatch.setattr(recording, "KEPT_INTERVALS", 8)
    launch = _launch("# tilelens: stride_copy_kernel[")
    assert (launch.status, codes(launch)) == ("analyzed", [])
    assert [(a.op, a.exact, a.elements) for a in launch.accesses] == [
        ("load", True, ((0, 1024),)),
        ("store", True, ((0, 1024),)),
    ]


@pytest.mark.parametrize("limit", [1, 8])  # 1: the store of iteration 0 itself crosses the limit
def test_a_definite_out_of_bounds_found_before_the_refusal_is_kept(limit, monkeypatch):
    monkeypatch.setenv(select.ENGINE_ENV, "enumerate")
    monkeypatch.setattr(recording, "KEPT_INTERVALS", limit)
    launch = _launch("# tilelens: stride_early_oob_kernel[")
    assert "TL001" in codes(launch)


@pytest.mark.parametrize(
    "needle,path",
    [
        ("# tilelens: stride_copy_kernel[", KERNELS),
        ("# tilelens: stride_early_oob_kernel[", KERNELS),
        ("# tilelens: stride_gaps_kernel[", GAPS),
    ],
)
def test_the_fixture_launches_answer_without_the_limits(needle, path):
    launch = _launch(needle, path)
    assert launch.status == "analyzed"
    assert codes(launch) == (["TL001"] if "oob" in needle else [])
