"""Session-wide test setup: results are cached in a temporary folder, never in the user's cache."""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

# The shared helpers import as `tests.support` from the repository root. It goes LAST on sys.path, not
# first as pytest's `pythonpath` option would put it: a tilelens_lsp found earlier must stay the one
# under test (the mutation run's mutated copy on PYTHONPATH, or a tilelens-lsp installed for testing).
_ROOT = str(Path(__file__).resolve().parents[1])
if _ROOT not in sys.path:
    sys.path.append(_ROOT)

os.environ.setdefault("TILELENS_CACHE_DIR", tempfile.mkdtemp(prefix="tilelens-test-cache-"))
os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")


# ---------------------------------------------------------------- untested or missing Triton (releases.py)
# The tests that compile or analyse skip, with the reason, when the installed Triton is not a tested
# release (and TILELENS_IR_ALLOW_UNTESTED_TRITON is unset) or is not installed: the IR suites, and the
# stages of tests/unit that reach Triton. The pure tests run whatever the release: tests/unit's
# launches/ and records/ stages and the files listed in _PURE_UNIT_FILES (text, records and interval
# arithmetic only), and every suite outside _IR_SUITES. With Triton missing, a pure test that imports
# it after all skips at that import (_SkipTritonImports) instead of failing. The gate's own test runs
# whatever the release. tests/test_without_triton.py runs tests/unit with Triton hidden and holds this.

_IR_SUITES = ("unit", "golden", "conformance", "release")
_GATE_TESTS = ("test_gate.py",)
_PURE_UNIT_STAGES = ("launches", "records")
_PURE_UNIT_FILES = (
    "engines/test_ranges.py",
    "pipeline/test_installed_roots.py",
    "lsp/test_linemap.py",
    "lsp/test_directive_help.py",
)


def needs_triton(rel) -> bool:
    """Whether the test file at `rel` (a path relative to tests/) compiles or analyses with Triton."""
    parts = rel.parts
    if len(parts) < 2 or parts[0] not in _IR_SUITES or rel.name in _GATE_TESTS:
        return False
    if parts[0] == "unit":
        inside = "/".join(parts[1:])
        return parts[1] not in _PURE_UNIT_STAGES and inside not in _PURE_UNIT_FILES
    return True


def _triton_importable() -> bool:
    import importlib.util

    try:
        return importlib.util.find_spec("triton") is not None
    except ImportError:
        return False


class _SkipTritonImports:
    """Without Triton, `import triton` in a test (or in what it calls in this process) skips that test;
    at a module's top level it skips the module's tests when they are collected."""

    def find_spec(self, name, path=None, target=None):
        if name == "triton" or name.startswith("triton."):
            import pytest

            pytest.skip(f"needs Triton (import {name}: Triton is not installed)", allow_module_level=True)
        return None


if not _triton_importable():
    sys.meta_path.insert(0, _SkipTritonImports())


def _untested_reason() -> str | None:
    from importlib.metadata import PackageNotFoundError, version

    from tilelens_lsp import releases

    try:
        installed = version("triton")
    except PackageNotFoundError:
        return "Triton is not installed"
    if releases.is_tested(installed) or releases.untested_allowed():
        return None
    return (
        f"Triton {installed} is not a tested release ({', '.join(releases.TESTED_RELEASES)}); "
        f"set {releases.ALLOW_ENV}=1 to run the IR tests anyway"
    )


# ---------------------------------------------------------------- markers (registered in pyproject.toml)
# `slow`: every test of the folders below (a real server over stdio, an editor, Triton's interpreter,
# fuzzing and faults through workers, a captured run, the benchmark and mutation scripts), plus the
# tests elsewhere that carry @pytest.mark.slow. `corpus`: tests/corpus (the real packages of
# .venv-corpus). `gpu`: tests that need a GPU, skipped on a host without one. The fast subset is
# `pytest -m "not slow and not corpus"`; a plain `pytest` (and CI) runs everything.

SLOW_SUITES = ("lsp", "editors", "conformance", "reliability", "capture", "bench", "mutation")
CORPUS_SUITES = ("corpus",)


def _has_gpu() -> bool:
    import shutil

    return shutil.which("nvidia-smi") is not None or os.path.exists("/dev/nvidia0")


def pytest_collection_modifyitems(config, items):
    import pathlib

    import pytest

    tests_dir = pathlib.Path(__file__).resolve().parent
    reason = _untested_reason()
    untested = pytest.mark.skip(reason=reason) if reason else None
    no_gpu = None if _has_gpu() else pytest.mark.skip(reason="needs a GPU (none on this host)")
    for item in items:
        try:
            rel = pathlib.Path(item.path).resolve().relative_to(tests_dir)
        except ValueError:
            continue
        suite = rel.parts[0] if len(rel.parts) > 1 else ""
        if suite in SLOW_SUITES:
            item.add_marker(pytest.mark.slow)
        if suite in CORPUS_SUITES:
            item.add_marker(pytest.mark.corpus)
        if no_gpu is not None and item.get_closest_marker("gpu"):
            item.add_marker(no_gpu)
        if untested is not None and needs_triton(rel):
            item.add_marker(untested)
