"""The TTIR reader agrees with Triton's MLIR bindings on every golden and every sample launch.

Runs `tools/bulk_align.py` (in process) over the installed release's goldens and over the TTIR of
every declared launch in `samples/`, and asserts nothing is misaligned or refused by the reader.
The counts are printed (`-s`) as the measurement.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
TOOLS = REPO_ROOT / "tools"


def _load(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def bulk_align():
    if str(TOOLS) not in sys.path:
        sys.path.insert(0, str(TOOLS))
    return _load("tilelens_tools_bulk_align", TOOLS / "bulk_align.py")


def _release() -> str:
    import triton

    from tilelens_lsp.releases import release_of

    return release_of(triton.__version__)


def test_goldens_and_samples_align(bulk_align, tmp_path):
    import triton

    goldens = REPO_ROOT / "tests" / "golden" / _release()
    paths = [goldens] if goldens.is_dir() else []
    tally = bulk_align.run(paths, [REPO_ROOT / "samples"], tmp_path / "dump", REPO_ROOT)
    for line in bulk_align.summary_lines(tally, triton.__version__):
        print(line)
    assert tally.compiled > 0, "no sample launch compiled"
    assert not tally.compile_failed, dict(tally.compile_failed)
    assert tally.files == tally.compiled + len(list(goldens.glob("*.ttir")) if goldens.is_dir() else [])
    assert not tally.unparseable, tally.examples
    assert not tally.misaligned, tally.examples
    assert not tally.refused, tally.examples
    assert tally.aligned == tally.files


def test_misalignment_is_reported(bulk_align, tmp_path):
    """A text whose printed ops disagree with the bindings' walk is counted misaligned, not aligned."""
    from tilelens_lsp.refusal import Refusal
    from tilelens_lsp.ttir import reader as ttir

    goldens = sorted((REPO_ROOT / "tests" / "golden" / _release()).glob("add_kernel__*.ttir"))
    if not goldens:
        pytest.skip("no vector-add golden for this release")
    text = goldens[0].read_text()
    ctx, parse = bulk_align.mlir_bindings()
    mlir_module = parse(str(goldens[0]), ctx)
    module = ttir.parse_module(text)
    # drop the reader's last op of the entry function: the walk no longer lines up
    entry = module.funcs[module.entry]
    entry.body.blocks[0].ops.pop(-2)
    with pytest.raises(Refusal) as info:
        ttir.check_alignment(module, mlir_module)
    assert info.value.kind == "reader-misalignment"


def test_cli_exit_status_and_json(tmp_path):
    """The script's own command line: JSON counts, exit 0 when everything aligns."""
    import json

    goldens = REPO_ROOT / "tests" / "golden" / _release()
    if not goldens.is_dir():
        pytest.skip("no goldens for this release")
    proc = subprocess.run(
        [sys.executable, str(TOOLS / "bulk_align.py"), str(goldens), "--json"],
        capture_output=True,
        text=True,
        cwd=REPO_ROOT,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["files"] == doc["aligned"] == len(list(goldens.glob("*.ttir")))
    assert doc["misaligned"] == doc["refused"] == 0
