"""Where the fixture kernels and samples are, how to find a launch's verdicts, and an in-process compile."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tilelens_lsp.model import Access, Diagnostic, FileResult, LaunchResult, LaunchSpec

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "unit" / "fixtures"
SAMPLES = REPO / "samples"


def line_of(path: Path, needle: str) -> int:
    """1-based number of the one line of `path` that contains `needle`."""
    hits = [i for i, line in enumerate(path.read_text().splitlines(), 1) if needle in line]
    assert len(hits) == 1, f"{needle!r} is on lines {hits} of {path.name}"
    return hits[0]


def launches_at(result: FileResult, line: int) -> list[LaunchResult]:
    found = [launch for launch in result.launches if launch.line == line]
    assert found, f"no launch declared on line {line}: {[l.line for l in result.launches]}"
    return found


def launch_at(result: FileResult, line: int) -> LaunchResult:
    found = launches_at(result, line)
    assert len(found) == 1, found
    return found[0]


def codes(launch: LaunchResult) -> list[str]:
    return sorted(d.code for d in launch.diagnostics)


def only(launch: LaunchResult, code: str) -> Diagnostic:
    found = [d for d in launch.diagnostics if d.code == code]
    assert len(found) == 1, launch.diagnostics
    return found[0]


def verdicts_by_kernel(path: Path) -> dict[str, list[tuple[str, int]]]:
    """Each kernel's (code, line) verdicts in `path`, analysed with the engine the environment chooses
    (`TILELENS_ENGINE`): what two engines are compared by."""
    from tilelens_lsp.pipeline import analyze_path

    result = analyze_path(path, workspace_root=path.parent)
    return {launch.kernel: sorted((d.code, d.line) for d in launch.diagnostics) for launch in result.launches}


def access(launch: LaunchResult, op: str, pointer: str) -> Access:
    found = [a for a in launch.accesses if a.op == op and a.pointer == pointer]
    assert len(found) == 1, launch.accesses
    return found[0]


@dataclass
class Compiled:
    """One host-compiled launch config; `ctx` keeps the MLIR context alive as long as `module`."""

    launch: LaunchSpec
    bound: Any
    module: Any
    ctx: Any

    @property
    def text(self) -> str:
        return self.module.str()


def compile_file(path: Path, root: Path | None = None, target: str = "cuda:89") -> list[Compiled]:
    """Every declared launch and config of `path`, compiled to TTIR in this process; any failure raises."""
    from tilelens_lsp import pipeline
    from tilelens_lsp.compile.compiler import compile_launch
    from tilelens_lsp.launches.scanner import parse_directives

    text = path.read_text()
    launches, errors = parse_directives(text)
    assert not errors, errors
    module = pipeline.import_module(path.resolve(), root)
    out = []
    for launch in launches:
        for c in compile_launch(getattr(module, launch.kernel), launch, target):
            if c.error is not None:
                raise c.error
            out.append(Compiled(launch, c.bound, c.module, c.context))
    return out
