"""Relational guards at production size: the grid engine reads `o_t < eos - bos` as a bound on `bos + o_t`.

fla's varlen kernels at 262,144 programs (`kernels/varlen_heads*.py`) used to get a TL002 from the
grid engine where the enumeration (small launches) proves them clean. Pinned here: the correct
kernels are clean and their footprints end exactly at the storage's end (so the bound is the
relation's, not a looser one that happens to fit); each buggy twin keeps its TL002 at the row past the
end, computed here from the launch's shape; an address whose int32 arithmetic may wrap is never
narrowed (TL003 with a witness whose product really leaves int32). The varlen kernels of the
conformance corpus (checked against Triton's interpreter there) are run through the forced grid
engine as well: clean ones stay clean, every bug keeps its verdict line.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tilelens_lsp.engines import select
from tilelens_lsp.pipeline import analyze_path

KERNELS = Path(__file__).resolve().parent / "kernels"
CONFORMANCE = Path(__file__).resolve().parent.parent / "conformance"
T, H, D = 1 << 20, 16, 256
I32_MAX = (1 << 31) - 1
FINDINGS = {"TL001", "TL002", "TL003", "TL004", "TL005", "TL006"}


def _launch(path: Path):
    (launch,) = analyze_path(path, workspace_root=path.parent).launches
    return launch


def _footprint(launch, pointer: str) -> tuple[int, int]:
    spans = [iv for a in launch.accesses if a.pointer == pointer for iv in a.elements]
    return min(s for s, _ in spans), max(e for _, e in spans)


@pytest.mark.parametrize("name,row", [("varlen_heads.py", H), ("varlen_heads_wide_i64.py", H * D)])
def test_a_varlen_kernel_at_262144_programs_is_clean_and_ends_at_the_last_row(name, row):
    launch = _launch(KERNELS / name)
    assert launch.grid == (T // 64 * H, 1, 1)
    assert launch.engine == "grid" and launch.status == "analyzed"
    assert [d.message for d in launch.diagnostics if d.code in FINDINGS] == []
    for pointer in ("x", "y"):
        assert _footprint(launch, pointer) == (0, T * row)  # the last row is T - 1: tight, not merely inside
    assert all(not a.exact for a in launch.accesses if a.pointer in ("x", "y"))


@pytest.mark.parametrize("name", ["varlen_heads_mask_off_by_one.py", "varlen_heads_shifted_by_one.py"])
def test_its_buggy_twins_keep_their_tl002_at_the_row_past_the_end(name):
    path = KERNELS / name
    launch = _launch(path)
    assert launch.engine == "grid" and launch.status == "analyzed"
    lines = [i for i, text in enumerate(path.read_text().splitlines(), 1) if re.search(r"tl\.(load|store)\(\w \+ p", text)]
    found = [d for d in launch.diagnostics if d.code in FINDINGS]
    assert {(d.code, d.line) for d in found} == {("TL002", line) for line in lines}
    for d in found:
        assert T * H <= d.witness.element < (T + 1) * H  # row T: one past the T rows
    assert _footprint(launch, "x")[1] == (T + 1) * H  # and no further


def test_an_int32_address_that_may_wrap_is_not_narrowed_by_the_relation():
    path = KERNELS / "varlen_heads_wide_i32.py"
    launch = _launch(path)
    assert launch.engine == "grid" and launch.status == "analyzed"
    by_code: dict[str, list] = {}
    for d in launch.diagnostics:
        by_code.setdefault(d.code, []).append(d)
    (overflow,) = by_code["TL003"]
    assert overflow.witness.value > I32_MAX  # a concrete run's product, past int32
    # the wrapped row offset reaches the whole int32 width: both accesses stay flagged
    assert {d.line for d in by_code.get("TL001", []) + by_code.get("TL002", [])} == {overflow.line + 1, overflow.line + 2}
    assert _footprint(launch, "x")[0] < 0


def _varlen(folder: str) -> list[Path]:
    return sorted((CONFORMANCE / folder).glob("varlen_*.py"))


def test_the_forced_grid_engine_keeps_the_conformance_varlen_kernels_clean(monkeypatch):
    monkeypatch.setenv(select.ENGINE_ENV, "grid")
    paths = _varlen("kernels")
    assert len(paths) >= 5
    for path in paths:
        for launch in analyze_path(path, workspace_root=path.parent).launches:
            assert launch.engine == "grid" and launch.status == "analyzed", (path.name, launch.diagnostics)
            assert [d.message for d in launch.diagnostics if d.code in FINDINGS] == [], path.name


_EXPECT = re.compile(r"#\s*expect:\s*(TL\d{3})\s+at\s+line\s+(\d+)")


def test_the_forced_grid_engine_keeps_every_varlen_bug_of_the_conformance_corpus(monkeypatch):
    monkeypatch.setenv(select.ENGINE_ENV, "grid")
    paths = _varlen("bugs")
    assert len(paths) >= 7
    for path in paths:
        expected = {(code, int(line)) for code, line in _EXPECT.findall(path.read_text())}
        found = set()
        for launch in analyze_path(path, workspace_root=path.parent).launches:
            assert launch.engine == "grid", path.name
            found |= {(d.code, d.line) for d in launch.diagnostics}
        for code, line in expected:
            # the grid engine may weaken a definite verdict to a bound, never drop it
            allowed = {code, "TL002"} if code == "TL001" else {code}
            assert any((c, line) in found for c in allowed), (path.name, code, line, sorted(found))


def test_a_chunk_ending_at_the_minimum_of_its_split_and_the_sequence_is_clean_at_serving_size():
    # `offs < tl.minimum(start + CHUNK, eos - bos)` is read as both comparisons: the second relates
    # the chunk to its sequence, as `o_t < eos - bos` does above
    launch = _launch(KERNELS / "varlen_chunks_serving.py")
    assert launch.grid == (4096, 64, 1)
    assert (launch.engine, launch.status) == ("grid", "analyzed")
    assert [d.message for d in launch.diagnostics if d.code in FINDINGS] == []
    assert _footprint(launch, "x") == (0, 1 << 20)


def test_its_twin_one_past_the_sequence_gets_the_element_past_the_end():
    launch = _launch(KERNELS / "varlen_chunks_serving_one_past.py")
    assert (launch.engine, launch.status) == ("grid", "analyzed")
    found = [d for d in launch.diagnostics if d.code == "TL002"]
    assert {d.line for d in found} == {21, 22}
    assert {d.witness.element for d in found} == {1 << 20}
