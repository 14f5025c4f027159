"""Register-level ops that feed addresses: `tl.gather` takes a lane of its source, so its value lies in
the hull of the source's lanes, but only while its index stays inside the source (Triton leaves any
other read undefined)."""

from __future__ import annotations

import pytest

from tests.support import FIXTURES, line_of
from tilelens_lsp.engines import select
from tilelens_lsp.pipeline import analyze_path


@pytest.mark.parametrize("engine", ["enumerate", "grid"])
def test_a_gather_whose_index_may_leave_its_source_is_refused_not_bounded(engine, monkeypatch):
    monkeypatch.setenv(select.ENGINE_ENV, engine)
    path = FIXTURES / "gather_index_may_leave.py"
    (launch,) = analyze_path(path, workspace_root=path.parent).launches
    assert launch.status == "refused", launch.diagnostics
    (note,) = [d for d in launch.diagnostics if d.code == "TL030"]
    assert note.line == line_of(path, "x = tl.load(src_ptr") and "indirect-address" in note.message


@pytest.mark.parametrize("engine", ["enumerate", "grid"])
def test_a_gathered_lane_lies_anywhere_in_the_hull_of_the_table_lanes(engine, monkeypatch):
    monkeypatch.setenv(select.ENGINE_ENV, engine)
    path = FIXTURES / "gather_lane_table.py"
    (launch,) = analyze_path(path, workspace_root=path.parent).launches
    assert (launch.engine, launch.status, launch.diagnostics) == (engine, "analyzed", ())
    (src,) = [a for a in launch.accesses if a.pointer == "src_ptr"]
    # the last row's lanes reach its element 30 (lane 15 of the table at its highest), never past it
    assert (src.elements[0][0], src.elements[-1][1]) == (0, 2 * 32 + 31) and not src.exact
