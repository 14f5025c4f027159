"""Launches of few programs with much work each: the grid engine answers where enumerating them would
likely run past the budget, and only where a program evaluated concretely shows each out-of-bounds.

A paged-attention decode at a serving size (`kernels/paged_decode*.py`: 8,192 programs, each looping
over up to 256 loaded block numbers) used to be enumerated until its budget ran out (about 40 s on a
laptop) and refused as `launch-too-large`. Pinned here: the correct decode is clean with bounded
footprints, each buggy twin gets its TL002 at the line and with the index value that takes it out of
its storage, and a launch whose grid bound no program reaches (`pid % 4 + (pid + 1) % 4`, which the
grid engine bounds by two intervals) is still left to the enumeration, never reported from the grid's
bound alone.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tilelens_lsp.engines import select
from tilelens_lsp.pipeline import analyze_path
from tilelens_lsp.settings import Settings

KERNELS = Path(__file__).resolve().parent / "kernels"


def _launch(path: Path, settings: Settings | None = None):
    (launch,) = analyze_path(path, workspace_root=path.parent, settings=settings).launches
    return launch


def test_a_paged_decode_at_serving_size_is_answered_clean_by_the_grid_engine():
    launch = _launch(KERNELS / "paged_decode.py")
    assert launch.grid == (256, 32, 1)
    assert (launch.engine, launch.status, launch.diagnostics) == ("grid", "analyzed", ())
    caches = [a for a in launch.accesses if a.pointer in ("k_cache", "v_cache")]
    assert len(caches) == 2
    for access in caches:
        assert not access.exact
        assert max(e for _, e in access.elements) <= 20000 * 16 * 32 * 128


@pytest.mark.parametrize(
    "name,pointer,value",
    [("paged_decode_blocks_past_cache.py", "k_cache", 20000), ("paged_decode_lens_past_table.py", "block_tables", None)],
)
def test_its_bugs_get_their_possible_out_of_bounds_from_the_grid_engine(name, pointer, value):
    launch = _launch(KERNELS / name)
    assert (launch.engine, launch.status) == ("grid", "analyzed")
    found = [d for d in launch.diagnostics if d.code == "TL002"]
    assert found and {d.code for d in launch.diagnostics} == {"TL002"}, [d.message for d in launch.diagnostics]
    assert f" of {pointer}," in found[0].message, found[0].message
    assert found[0].witness.value == value


def test_a_grid_bound_no_program_reaches_leaves_the_launch_to_the_enumeration(monkeypatch):
    # a launch out of the affine summary whose grid bound is one element loose, with a budget below its
    # size: the grid engine is tried and bounds the load past the storage; no program shows that, so
    # the enumeration answers, clean
    path = KERNELS / "loose_bound_loaded.py"
    before = select.ENGINES["grid"]
    launch = _launch(path, Settings(enumeration_budget=100))
    assert select.ENGINES["grid"] == before + 1, "the grid engine was tried"
    assert (launch.engine, launch.status, launch.diagnostics) == ("enumerate", "analyzed", ())
    monkeypatch.setenv(select.ENGINE_ENV, "grid")
    assert [d.code for d in _launch(path).diagnostics] == ["TL002"], "the grid engine's bound alone is loose"
