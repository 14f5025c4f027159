"""Solved box images are kept across analyses in one process (`footprints.SolvedImages`): a second
analysis of an unchanged access takes its image instead of solving it again, charges the same work,
and answers exactly as the first did."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tilelens_lsp.engines.affine import AffineGraph, footprints
from tilelens_lsp.engines.affine.footprints import SolvedImages
from tilelens_lsp.pipeline import analyze_path

KERNEL = """import triton
import triton.language as tl


@triton.jit
def tail(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)  # past the end of x in the last program
    y = tl.load(y_ptr + offs, mask=offs < n)
    tl.store(out_ptr + offs, x + y, mask=offs < n)


# tilelens: tail[(5,)](fp32[70], fp32[80], fp32[80], 80, BLOCK=16)
"""


class Counting(SolvedImages):
    """Counts the problems solved (each one solved is offered to be kept)."""

    def __init__(self) -> None:
        super().__init__()
        self.solved = 0

    def put(self, key, starts, ends, work) -> None:
        self.solved += 1
        super().put(key, starts, ends, work)


def _run(tmp_path: Path, text: str, monkeypatch) -> tuple[list, list[int], int]:
    """The launches of one analysis, the work each summary spent, and how many problems were solved."""
    path = tmp_path / "k.py"
    path.write_text(text)
    works: list[int] = []
    run = AffineGraph.run
    kept = footprints.SOLVED
    assert isinstance(kept, Counting)
    before = kept.solved

    def counted_run(self):
        try:
            return run(self)
        finally:
            works.append(self.work)

    monkeypatch.setattr(AffineGraph, "run", counted_run)
    try:
        return analyze_path(path, workspace_root=tmp_path).launches, works, kept.solved - before
    finally:
        monkeypatch.setattr(AffineGraph, "run", run)


def _verdict(launch) -> tuple:
    return (
        launch.status,
        launch.engine,
        [(d.code, d.line, d.message) for d in launch.diagnostics],
        [(a.op, a.line, a.pointer, a.elements, a.exact) for a in launch.accesses],
    )


def test_a_second_analysis_takes_the_kept_images_charges_their_work_and_answers_the_same(tmp_path, monkeypatch):
    monkeypatch.setenv("TILELENS_CACHE_DIR", "off")
    monkeypatch.setattr(footprints, "SOLVED", Counting())
    first, first_work, first_solved = _run(tmp_path, KERNEL, monkeypatch)
    # a comment changed: the result cache misses, every access's problem is the one before
    second, second_work, second_solved = _run(tmp_path, KERNEL + "# edited\n", monkeypatch)
    assert first_solved > 0 and second_solved == 0
    assert first_work == second_work and first_work
    assert [_verdict(launch) for launch in first] == [_verdict(launch) for launch in second]
    assert any(d.code == "TL001" for d in first[0].diagnostics)


def test_an_edited_access_is_solved_again(tmp_path, monkeypatch):
    monkeypatch.setenv("TILELENS_CACHE_DIR", "off")
    monkeypatch.setattr(footprints, "SOLVED", Counting())
    masked = KERNEL.replace("tl.load(x_ptr + offs)", "tl.load(x_ptr + offs, mask=offs < n)").replace("fp32[70]", "fp32[80]")
    _, _, solved = _run(tmp_path, masked, monkeypatch)
    assert solved == 1  # three accesses, one problem
    edited = masked.replace("tl.load(x_ptr + offs, mask=offs < n)", "tl.load(x_ptr + offs, mask=offs < n - 10)")
    launches, _, solved = _run(tmp_path, edited, monkeypatch)
    assert solved == 1  # the load of x alone: y's load and the store keep theirs
    x = next(a for a in launches[0].accesses if a.pointer == "x_ptr")
    assert x.elements == ((0, 70),)


def test_the_kept_images_are_bounded_least_recently_used_out_first_and_read_only():
    kept = SolvedImages(limit=192)  # three entries of three intervals (48 bytes) with a 3-byte key: 153

    def put(name: str, n: int = 3) -> None:
        kept.put((name.encode().ljust(3),), np.arange(n, dtype=np.int64), np.arange(1, n + 1, dtype=np.int64), 7)

    def has(name: str) -> bool:
        return kept.get((name.encode().ljust(3),)) is not None

    for name in "abc":
        put(name)
    assert has("a")  # a is now the most recently used
    put("d")  # 204 bytes: past the limit, so b (the least recently used) goes
    assert not has("b") and has("a") and has("c") and has("d") and kept.size <= kept.limit
    put("big", 7)  # 115 bytes: more than half the limit, never kept
    assert not has("big")
    starts, _, work = kept.get((b"a  ",))
    assert work == 7
    with pytest.raises(ValueError):
        starts[0] = 5
