"""The grid engine on small kernels, forced with `TILELENS_ENGINE=grid` and checked against the
enumeration of the same launch (an independent engine that evaluates every program): its footprints
must contain the enumeration's, its definite verdicts must be ones a concrete run shows. Fast: the
mutation run's selection includes this file (tests/grid holds the slower differential and scale tests).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support import REPO
from tilelens_lsp.engines import select
from tilelens_lsp.pipeline import analyze_path

GRID_KERNELS = REPO / "tests" / "grid" / "kernels"

HEADER = "import triton\nimport triton.language as tl\n\n\n"

ROWS = (
    HEADER
    + """@triton.jit
def rows(x_ptr, y_ptr, H, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    row = pid // H
    col = pid % H
    offs = row * (H * BLOCK) + col * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs))


# tilelens: rows[(24,)](fp32[3, 8, 16], fp32[3, 8, 16], 8, BLOCK=16)
"""
)

TAIL = (
    HEADER
    + """@triton.jit
def add(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask) + 1, mask=mask)


# tilelens: add[(4,)](fp32[61], fp32[61], 61, BLOCK=16)
"""
)

LOOP = (
    HEADER
    + """@triton.jit
def row_sum(x_ptr, y_ptr, n_cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + row * stride + cols, mask=cols < n_cols, other=0.0)
    tl.store(y_ptr + row, tl.sum(acc))


# tilelens: row_sum[(5,)](fp32[5, 70], fp32[5], 70, 70, BLOCK=32)
"""
)


def _analyze(path: Path, engine: str, monkeypatch):
    monkeypatch.setenv("TILELENS_CACHE_DIR", "off")
    monkeypatch.setenv(select.ENGINE_ENV, engine)
    (launch,) = analyze_path(path, workspace_root=path.parent).launches
    return launch


def _spans(launch) -> dict[tuple, list]:
    out: dict[tuple, list] = {}
    for a in launch.accesses:
        out.setdefault((a.op, a.line, a.pointer), []).extend(a.elements)
    return out


def _contained(inner: list, outer: list) -> bool:
    return all(any(a <= s and e <= b for a, b in outer) for s, e in inner)


def _both(tmp_path: Path, text: str, monkeypatch):
    path = tmp_path / "k.py"
    path.write_text(text)
    return _analyze(path, "enumerate", monkeypatch), _analyze(path, "grid", monkeypatch)


@pytest.mark.parametrize("text", [ROWS, TAIL, LOOP], ids=["div-mod", "masked-tail", "loop"])
def test_grid_footprints_contain_the_enumeration_and_stay_in_bounds(tmp_path, monkeypatch, text):
    enum, grid = _both(tmp_path, text, monkeypatch)
    assert grid.engine == "grid" and grid.status == "analyzed"
    mine = _spans(grid)
    for key, spans in _spans(enum).items():
        assert _contained(spans, mine[key]), (key, spans, mine[key])
    # these kernels stay inside their tensors, and the grid bound proves it (no false alarm)
    assert not [d for d in grid.diagnostics if d.code in ("TL001", "TL002", "TL003")]
    assert all(a.in_bounds for a in grid.accesses)


def test_split_program_ids_keep_rows_apart_for_races(tmp_path, monkeypatch):
    _, grid = _both(tmp_path, ROWS, monkeypatch)
    assert not [n for n in grid.notes if "races" in n]  # pid // H, pid % H: programs proven disjoint
    assert not [d for d in grid.diagnostics if d.code == "TL005"]


def test_an_unconfirmed_bound_is_never_definite(monkeypatch):
    grid = _analyze(GRID_KERNELS / "loose_bound.py", "grid", monkeypatch)
    codes = [d.code for d in grid.diagnostics]
    assert codes == ["TL002"], codes
    assert not grid.diagnostics[0].message.startswith("out-of-bounds")


def test_an_overflow_is_definite_only_with_its_concrete_witness(monkeypatch):
    grid = _analyze(GRID_KERNELS / "padded_copy_i32.py", "grid", monkeypatch)
    overflows = [d for d in grid.diagnostics if d.code == "TL003"]
    assert {d.line for d in overflows} == {15, 16}
    for d in overflows:
        pid = d.witness.pid[0]
        assert (pid // 2 if d.line == 15 else pid) * 8192 == d.witness.value > (1 << 31) - 1


def test_the_hover_and_the_json_name_the_engine(tmp_path, monkeypatch):
    from tilelens_lsp.lsp.hover import hover_markdown
    from tilelens_lsp.model import LaunchResult

    path = tmp_path / "k.py"
    path.write_text(TAIL)
    monkeypatch.setenv("TILELENS_CACHE_DIR", "off")
    monkeypatch.setenv(select.ENGINE_ENV, "grid")
    result = analyze_path(path, workspace_root=tmp_path)
    (launch,) = result.launches
    assert launch.to_json()["engine"] == "grid"
    assert LaunchResult.from_json(launch.to_json()).engine == "grid"
    access = launch.accesses[0]
    text = hover_markdown(result, access.path, access.line)
    assert text is not None and "engine grid" in text


CHUNKS = (
    HEADER
    + """@triton.jit
def chunks(x, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    for k in range(0, 3):
        if (pid % 7 == 3) | (k < 2):
            tl.store(x + pid * 24 + k * BLOCK + tl.arange(0, BLOCK), 1.0)


# tilelens: chunks[({P},)](fp32[{N}], BLOCK=8)
"""
)

ROWS_PADDED = (
    HEADER
    + """@triton.jit
def rows_padded(x, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    tl.store(x + (pid // 5) * 100 + (pid % 5) * 16 + tl.arange(0, BLOCK), 1.0)


# tilelens: rows_padded[({P},)](fp32[{N}], BLOCK=16)
"""
)

LANES_OR = (
    HEADER
    + """@triton.jit
def lanes_or(x, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    tl.store(x + pid * BLOCK + offs, 1.0, mask=(offs < BLOCK // 2) | (pid % 2 == 1))


# tilelens: lanes_or[({P},)](fp32[{N}], BLOCK=16)
"""
)

PIPTRIP = (
    HEADER
    + """@triton.jit
def piptrip(x, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    p = x + pid * 32 + tl.arange(0, BLOCK)
    for k in range(0, pid % 6):
        tl.store(p, 1.0)
        p += BLOCK


# tilelens: piptrip[({P},)](fp32[{N}], BLOCK=8)
"""
)


def _last_written(text: str, programs: int) -> int:
    """The highest element any program writes, by brute force (the kernels' own arithmetic, in Python)."""
    if "chunks" in text:
        return max(p * 24 + k * 8 + 7 for p in range(programs) for k in range(3) if p % 7 == 3 or k < 2)
    if "piptrip" in text:
        return max(p * 32 + k * 8 + 7 for p in range(programs) for k in range(p % 6))
    if "rows_padded" in text:
        return max((p // 5) * 100 + (p % 5) * 16 + 15 for p in range(programs))
    return max(p * 16 + (15 if p % 2 else 7) for p in range(programs))


@pytest.mark.parametrize(
    ("text", "programs"),
    [(CHUNKS, 54), (CHUNKS, 53), (ROWS_PADDED, 11), (ROWS_PADDED, 13), (LANES_OR, 9), (PIPTRIP, 53), (PIPTRIP, 54)],
    ids=[
        "or-guard-54",
        "or-guard-53",
        "div-mod-padded-11",
        "div-mod-padded-13",
        "or-mask",
        "trip-pid-mod-6",
        "trip-pid-mod-6-last-5",
    ],
)
@pytest.mark.parametrize("short", [False, True], ids=["fits", "one-short"])
def test_split_program_ids_and_or_guards_are_bounded_by_real_programs(tmp_path, monkeypatch, text, programs, short):
    """`pid // m`, `pid % m` at a grid that is no multiple of m (also as a loop's trip count), and `a | b`
    guards: the grid bound ends where the last real program writes (no TL002 where the storage holds
    it), and a storage one element short is a TL001 whose witness writes the element the brute force
    finds."""
    last = _last_written(text, programs)
    storage = last + (0 if short else 1)
    enum, grid = _both(tmp_path, text.replace("{P}", str(programs)).replace("{N}", str(storage)), monkeypatch)
    assert grid.engine == "grid" and grid.status == "analyzed"
    mine = _spans(grid)
    for key, spans in _spans(enum).items():
        assert _contained(spans, mine[key]), (key, spans, mine[key])
    codes = [d.code for d in grid.diagnostics if d.code in ("TL001", "TL002")]
    assert codes == (["TL001"] if short else []), [d.message for d in grid.diagnostics]
    assert max(e for spans in mine.values() for _, e in spans) - 1 == last  # the bound ends at a real write
    if short:
        (d,) = grid.diagnostics
        assert d.witness.element == last
        assert [(x.code, x.witness.element) for x in enum.diagnostics if x.code == "TL001"] == [("TL001", last)]
