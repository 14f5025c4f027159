"""Session-wide test setup: results are cached in a temporary folder, never in the user's cache."""

from __future__ import annotations

import os
import tempfile

os.environ.setdefault("TILELENS_CACHE_DIR", tempfile.mkdtemp(prefix="tilelens-test-cache-"))
os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")


# ---------------------------------------------------------------- untested Triton releases (releases.py)
# The IR test suites skip, with the reason, when the installed Triton is not a tested release and
# TILELENS_IR_ALLOW_UNTESTED_TRITON is unset. The gate's own test runs whatever the release.

_IR_SUITES = ("unit", "golden", "conformance", "release")
_GATE_TESTS = ("test_gate.py",)


def _untested_reason() -> str | None:
    from importlib.metadata import PackageNotFoundError, version

    from tilelens_lsp import releases

    try:
        installed = version("triton")
    except PackageNotFoundError:
        return "Triton is not installed"
    if releases.is_tested(installed) or releases.untested_allowed():
        return None
    return (f"Triton {installed} is not a tested release ({', '.join(releases.TESTED_RELEASES)}); "
            f"set {releases.ALLOW_ENV}=1 to run the IR tests anyway")


def pytest_collection_modifyitems(config, items):
    import pathlib

    import pytest

    reason = _untested_reason()
    if reason is None:
        return
    tests_dir = pathlib.Path(__file__).resolve().parent
    mark = pytest.mark.skip(reason=reason)
    for item in items:
        try:
            rel = pathlib.Path(item.path).resolve().relative_to(tests_dir)
        except ValueError:
            continue
        if rel.parts and rel.parts[0] in _IR_SUITES and rel.name not in _GATE_TESTS:
            item.add_marker(mark)
