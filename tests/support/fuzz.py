"""The runner of the differential fuzz tests (tests/conformance/test_*_fuzz.py): kernels generated
from a fixed seed are written out, run through the oracle (Triton's interpreter) in one batch and
analysed by the product; each analysed launch is paired with the interpreter's run of its config and
their footprints compared (`tests.support.footprints.compare`).

`bounds_fuzz` is the whole loop of the fuzz tests whose kernels may read past one array (each file
one launch, which must be analysed, and flagged where the interpreter really reads out of bounds).
What a test asserts of the counts, and anything else it demands of a launch, stays in the test.
"""

from __future__ import annotations

import os
import random
import textwrap
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.support.footprints import compare, config_matches, oracle_accesses
from tests.support.oracle_runner import run_oracle_files
from tilelens_lsp.model import FileResult, LaunchResult
from tilelens_lsp.pipeline import analyze_path

EXAMPLES_ENV = "TILELENS_FUZZ_EXAMPLES"


def examples(default: int) -> int:
    """How many kernels a fuzz test generates: `TILELENS_FUZZ_EXAMPLES`, else the test's default."""
    return int(os.environ.get(EXAMPLES_ENV, str(default)))


def kernel_text(signature: str, body: str, launch: str) -> str:
    """A kernel file: Triton's imports, `@triton.jit def SIGNATURE:` over `body` (indented here) and the
    `# tilelens:` directive that declares `launch`."""
    return (
        f"import triton\nimport triton.language as tl\n\n\n@triton.jit\n"
        f"def {signature}:\n{textwrap.indent(body, '    ')}\n\n\n# tilelens: {launch}\n"
    )


def write_kernels(folder: Path, stem: str, count: int, seed: int, source: Callable[[random.Random], str]) -> list[Path]:
    """`count` kernel files `stem_<i>.py` in `folder`, their sources drawn in order from one seeded rng."""
    rng = random.Random(seed)
    files = []
    for i in range(count):
        path = folder / f"{stem}_{i}.py"
        path.write_text(source(rng))
        files.append(path)
    return files


def kernel_files(stem: str, count: int, seed: int, source: Callable[[random.Random], str]):
    """A module-scoped fixture of the `write_kernels` files, in a temporary folder named after `stem`."""

    @pytest.fixture(scope="module")
    def files(tmp_path_factory) -> list[Path]:
        return write_kernels(tmp_path_factory.mktemp(stem.replace("_", "-")), stem, count, seed, source)

    return files


@dataclass(frozen=True)
class Fuzzed:
    """One generated kernel: its file, the oracle's runs of it (failed runs dropped), the product's result."""

    path: Path
    runs: list[dict]
    result: FileResult

    def problem(self, what: object) -> str:
        """A failure line about this kernel, its source appended."""
        return f"{self.path.name}: {what}\n{self.path.read_text()}"

    def compare(self, launch: LaunchResult) -> tuple[dict, list[str]]:
        """The interpreter's run of the launch's config, and where the product's footprints differ from it."""
        run = next(r for r in self.runs if config_matches(r["config"], launch.config))
        return run, compare(run, launch)


def oracle_runs(files: list[Path]) -> dict:
    """The oracle (Triton's interpreter) over all `files` in one batch."""
    return run_oracle_files(files, jobs=2, use_cache=False)


def fuzzed(files: list[Path], oracle: dict | None = None) -> Iterator[Fuzzed]:
    """The oracle over all `files` in one batch (or its runs, `oracle`, made once for several
    analyses), then the product over each; every kernel must run under the interpreter (a generator
    that writes kernels it cannot run tests nothing)."""
    oracle = oracle if oracle is not None else oracle_runs(files)
    for path in files:
        record = oracle[str(path)]
        runs = [r for r in record["runs"] if "error" not in r]
        assert runs and not record["errors"], f"the oracle could not run {path.name}: {record}\n{path.read_text()}"
        yield Fuzzed(path, runs, analyze_path(path, workspace_root=path.parent))


@dataclass
class BoundsTally:
    """What `bounds_fuzz` counted, and the failures it found (each with its kernel's source)."""

    compared: int = 0
    past: int = 0  # compared kernels whose interpreter run reads outside the array
    clean: int = 0  # compared kernels in bounds with neither TL001 nor TL002
    refused: int = 0
    problems: list[str] = field(default_factory=list)


def bounds_fuzz(
    files: list[Path],
    pointer: str,
    elements: int,
    array: str,
    refusable: frozenset[str] = frozenset(),
    oracle: dict | None = None,
    engine: str | None = None,
) -> BoundsTally:
    """Each file's one launch against the interpreter: its footprints must cover what the interpreter
    touched, and a run that reads `pointer` outside [0, elements) must be met by a TL001 or TL002
    (`array` names it in the failure). A launch not analysed is a failure, unless it carries TL030s
    whose refusal kinds are all in `refusable` (it is then counted as refused). With `engine`, a
    launch another engine answered is a failure (the caller forces the engine)."""
    tally = BoundsTally()
    for kernel in fuzzed(files, oracle):
        (launch,) = kernel.result.launches
        if engine is not None and launch.engine != engine:
            tally.problems.append(kernel.problem(f"answered by {launch.engine}, not the {engine} engine"))
        if launch.status != "analyzed":
            kinds = {d.message.split(":")[1].strip() for d in launch.diagnostics if d.code == "TL030"}
            if kinds and kinds <= refusable:  # a launch not analysed without a TL030 is a failure
                tally.refused += 1
                continue
            tally.problems.append(kernel.problem(f"{launch.status} {[d.message for d in launch.diagnostics][:2]}"))
            continue
        run, found = kernel.compare(launch)
        tally.compared += 1
        flagged = bool({d.code for d in launch.diagnostics} & {"TL001", "TL002"})
        if _reads_outside(run, pointer, elements):
            tally.past += 1
            if not flagged:
                found.append(f"the interpreter reads past {array} and the product says nothing")
        elif not flagged:
            tally.clean += 1
        if found:
            tally.problems.append(kernel.problem(found[:3]))
    return tally


def _reads_outside(run: dict, pointer: str, elements: int) -> bool:
    accesses = oracle_accesses(run).items()
    return any(key[3] == pointer and any(a < 0 or b > elements for a, b in ivs) for key, ivs in accesses)
