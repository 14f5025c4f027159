"""Launches at the sizes real models run (a rotary embedding over a million tokens): the analysis
answers with compact footprints, never a MemoryError (TL050) or a bitmap sized like the storage."""

from __future__ import annotations

import numpy as np

from tests.support import REPO
from tilelens_lsp import pipeline
from tilelens_lsp.clients.footprint import MAX_SPANS, coarsen
from tilelens_lsp.settings import Settings

ROPE = (REPO / "tests" / "conformance" / "kernels" / "rope.py").read_text().split("\n\n\n# tilelens")[0]


def test_a_million_token_rope_launch_is_answered_with_compact_footprints(tmp_path):
    path = tmp_path / "rope_1m.py"
    path.write_text(
        ROPE + "\n\n\n# tilelens: S = 1000000\n# tilelens: H = 32\n"
        "# tilelens: rope_kernel[(S, 1)](fp16[S, H, 128], fp16[S, 64], fp16[S, 64], fp16[S, H, 128], "
        "S, H, H * 128, 128, HALF=64)\n"
    )
    (launch,) = pipeline.analyze_path(path, tmp_path, Settings()).launches
    codes = {d.code for d in launch.diagnostics}
    assert "TL050" not in codes
    # pos * stride_s is computed in i32: past 2**31 it wraps, a real bug at this size
    assert {"TL003", "TL001"} <= codes
    assert launch.accesses and all(len(a.elements) <= MAX_SPANS for a in launch.accesses)
    q_loads = [a for a in launch.accesses if a.pointer == "q_ptr"]
    # the grid engine answers at this size: an exact footprint touches every token's 64 elements once,
    # a bound (exact: false) at least that many
    assert q_loads and all(a.touched == 1_000_000 * 64 if a.exact else a.touched >= 1_000_000 * 64 for a in q_loads)


def test_coarsening_keeps_the_largest_gaps_and_covers_every_interval():
    starts = np.array([0, 10, 12, 100, 103], dtype=np.int64)
    ends = np.array([5, 11, 20, 101, 110], dtype=np.int64)
    s, e = coarsen(starts, ends, limit=3)
    assert list(zip(s.tolist(), e.tolist())) == [(0, 5), (10, 20), (100, 110)]
    assert coarsen(starts, ends, limit=5)[0] is starts
