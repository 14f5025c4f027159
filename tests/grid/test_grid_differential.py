"""The grid engine against the enumeration, on every conformance kernel and every control-flow fuzz case.

Each file is analysed twice in one process, with `TILELENS_ENGINE=enumerate` and with
`TILELENS_ENGINE=grid` (the grid engine forced on every launch, whatever its size). Where both
analyse a launch, every access the enumeration reports must lie inside the grid engine's footprint
at the same (op, line, pointer) (the grid engine never claims exactness, so containment is the whole
contract); a definite verdict of the grid engine (TL001, TL003, TL005) must be one the enumeration
reports too, and every TL001 of the enumeration must be a TL001 or TL002 of the grid engine (a TL003
of the enumeration, a TL003 of the grid engine, or an address bounded by the whole width: TL001/TL002
at an access). Refusals of the grid engine are counted by kind, never compared as clean.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from tests.support.cfg_kernels import EXAMPLES, SEED, kernel_source
from tests.support.fuzz import kernel_files
from tilelens_lsp.engines import select
from tilelens_lsp.pipeline import analyze_path

KERNELS = Path(__file__).resolve().parent.parent / "conformance" / "kernels"
DEFINITE = {"TL001", "TL003", "TL005"}


def _merge(spans) -> list[tuple[int, int]]:
    out: list[list[int]] = []
    for s, e in sorted(spans):
        if out and s <= out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return [(s, e) for s, e in out]


def _inside(inner, outer) -> bool:
    outer = _merge(outer)
    for s, e in _merge(inner):
        if not any(a <= s and e <= b for a, b in outer):
            return False
    return True


def _accesses(launch) -> dict[tuple, list]:
    out: dict[tuple, list] = {}
    for a in launch.accesses:
        out.setdefault((a.op, a.path, a.line, a.pointer), []).extend(a.elements)
    return out


def _codes(launch, codes) -> set[tuple[str, int]]:
    return {(d.code, d.line) for d in launch.diagnostics if d.code in codes}


def differences(enum_launch, grid_launch) -> list[str]:
    problems = []
    if grid_launch.engine != "grid":
        problems.append(f"answered by {grid_launch.engine!r}, not the grid engine")
    mine = _accesses(grid_launch)
    for key, spans in _accesses(enum_launch).items():
        if not spans:
            continue  # an access no program makes: nothing to contain
        if key not in mine:
            problems.append(f"{key}: the grid engine reports no footprint")
        elif not _inside(spans, mine[key]):
            problems.append(f"{key}: enumeration {_merge(spans)[:4]} not inside grid {_merge(mine[key])[:4]}")
    enum_codes = {(d.code, d.line) for d in enum_launch.diagnostics}
    for code, line in _codes(grid_launch, DEFINITE):
        if (code, line) not in enum_codes:
            problems.append(f"the grid engine reports {code} at line {line}, the enumeration does not")
    grid_codes = {(d.code, d.line) for d in grid_launch.diagnostics}
    for _, line in _codes(enum_launch, {"TL001"}):
        if ("TL001", line) not in grid_codes and ("TL002", line) not in grid_codes:
            problems.append(f"the enumeration's TL001 at line {line} is missing from the grid engine")
    return problems


def _compare_files(paths: list[Path], monkeypatch, root: Path | None = None) -> tuple[Counter, list[str]]:
    monkeypatch.setenv("TILELENS_CACHE_DIR", "off")
    counts: Counter = Counter()
    problems: list[str] = []
    for path in paths:
        monkeypatch.setenv(select.ENGINE_ENV, "enumerate")
        enum = analyze_path(path, workspace_root=root or path.parent)
        monkeypatch.setenv(select.ENGINE_ENV, "grid")
        grid = analyze_path(path, workspace_root=root or path.parent)
        for e, g in zip(enum.launches, grid.launches):
            counts["launches"] += 1
            if e.status != "analyzed":
                counts[f"enumeration {e.status}"] += 1
                continue
            if g.status != "analyzed":
                kinds = {d.kind for d in g.diagnostics if d.code in ("TL030", "TL050")}
                counts["grid refused"] += 1
                for k in kinds:
                    counts[f"grid refused: {k}"] += 1
                if any(d.code == "TL050" for d in g.diagnostics):
                    problems.append(
                        f"{path.name}:{g.line}: the grid engine crashed: "
                        f"{[d.message for d in g.diagnostics if d.code == 'TL050'][:1]}"
                    )
                continue
            counts["compared"] += 1
            # a bound the grid engine cannot tighten is a TL002 the enumeration does not give: counted
            if _codes(g, {"TL002"}) - _codes(e, {"TL002", "TL001"}):
                counts["grid TL002 where the enumeration has none"] += 1
            found = differences(e, g)
            if found:
                problems.append(f"{path.name}:{g.line} {g.config}: {found[:3]}")
            else:
                counts["contained"] += 1
    return counts, problems


def _report(name: str, counts: Counter) -> None:
    print(f"grid differential ({name}): " + ", ".join(f"{k}: {v}" for k, v in sorted(counts.items())))


@pytest.mark.slow  # every conformance kernel (or fuzz case) through two engines: tens of seconds
def test_grid_footprints_contain_the_enumeration_on_conformance_kernels(monkeypatch):
    counts, problems = _compare_files(sorted(KERNELS.glob("*.py")), monkeypatch, KERNELS)
    _report("conformance", counts)
    assert not problems, "\n".join(problems[:5])
    assert counts["compared"] >= counts["launches"] // 2


fuzz_files = kernel_files("cfg_fuzz", EXAMPLES, SEED, kernel_source)


@pytest.mark.slow  # every conformance kernel (or fuzz case) through two engines: tens of seconds
def test_grid_footprints_contain_the_enumeration_on_control_flow_fuzz(fuzz_files, monkeypatch):
    counts, problems = _compare_files(fuzz_files, monkeypatch)
    _report("cfg fuzz", counts)
    assert not problems, "\n".join(problems[:5])
    assert counts["compared"] >= len(fuzz_files) // 2
