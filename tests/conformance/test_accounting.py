"""The invariant behind "clean", over every kernel file the test suite compiles: each memory op that
some program can reach is accounted for (an access site, or a proof that no program runs it).

`tilelens_lsp.engines.accounting` enforces it at run time (a launch with an unexamined op is refused as
`unvisited`); these tests show that no tested TTIR trips it and that it catches an engine that
skips an op."""

from __future__ import annotations

from pathlib import Path

import pytest

from tilelens_lsp import pipeline
from tilelens_lsp.engines import accounting, select
from tilelens_lsp.engines.affine import handlers as affine_handlers
from tilelens_lsp.engines.enumerate import table as enumerate_table
from tilelens_lsp.settings import Settings

TESTS = Path(__file__).resolve().parents[1]
ROOT = TESTS.parent
FOLDERS = [
    TESTS / "conformance" / "kernels",
    TESTS / "conformance" / "bugs",
    TESTS / "golden" / "kernels",
    TESTS / "bench" / "kernels",
    TESTS / "unit" / "fixtures",
    ROOT / "samples",
]


def _kernel_files() -> list[Path]:
    files = []
    for folder in FOLDERS:
        for path in sorted(folder.rglob("*.py")):
            if "__pycache__" not in path.parts and "# tilelens:" in path.read_text(encoding="utf-8"):
                files.append(path)
    return files


def _unvisited(result) -> list[str]:
    return [d.message for launch in result.launches for d in launch.diagnostics if d.kind == "unvisited"]


def test_every_memory_op_of_every_tested_launch_is_accounted_for(monkeypatch):
    monkeypatch.setenv("TILELENS_CACHE_DIR", "off")  # each analysis has a fresh WarmState: nothing cached
    before = dict(accounting.COUNTS)
    problems = []
    analyzed = 0
    for path in _kernel_files():
        result = pipeline.analyze_path(path, path.parent, Settings())
        problems += [f"{path.name}: {m}" for m in _unvisited(result)]
        analyzed += sum(1 for launch in result.launches if launch.status == "analyzed")
    counts = {k: accounting.COUNTS[k] - before.get(k, 0) for k in ("launches", "memory-ops", "accounted")}
    print(
        f"accounting: {counts['launches']} launches checked, {counts['memory-ops']} memory ops "
        f"(in their call contexts), {counts['accounted']} accounted, {analyzed} launches analyzed"
    )
    assert not problems, problems[:5]
    assert counts["launches"] >= 150 and counts["memory-ops"] >= 300
    assert counts["accounted"] == counts["memory-ops"]


VECTOR_ADD = ROOT / "samples" / "vector_add.py"


@pytest.mark.parametrize("engine, handlers", [("enumerate", enumerate_table.HANDLERS), ("auto", affine_handlers.HANDLERS)])
def test_an_engine_that_skips_a_store_makes_the_launch_refused_as_unvisited(monkeypatch, engine, handlers):
    monkeypatch.setenv("TILELENS_CACHE_DIR", "off")
    monkeypatch.setenv(select.ENGINE_ENV, engine)
    monkeypatch.setitem(handlers, "tt.store", lambda g, op, env, ctx: [])  # a bug: the store is dropped
    result = pipeline.analyze_path(VECTOR_ADD, VECTOR_ADD.parent, Settings())
    assert result.launches and all(launch.status == "refused" for launch in result.launches)
    assert all(_unvisited(result) for _ in result.launches)
    assert "tt.store was never examined" in _unvisited(result)[0]
