"""Helpers shared by the test suites, imported as `from tests.support import ...`.

`results`: where the fixture kernels and samples are, how to find a launch's verdicts in a result, and
an in-process compile of a file's launches. `oracle` (Triton's interpreter, run in a subprocess of its
own through `oracle_runner`) and `directives_fallback` (a directive reader written apart from the
product's) are the independent oracles of the conformance and grid suites. tests/conftest.py puts the
repository root last on `sys.path` (it says why); nothing here edits `sys.path`.
"""

from tests.support.results import (
    FIXTURES,
    REPO,
    SAMPLES,
    Compiled,
    access,
    codes,
    compile_file,
    launch_at,
    launches_at,
    line_of,
    only,
    verdicts_by_kernel,
)

__all__ = [
    "FIXTURES",
    "REPO",
    "SAMPLES",
    "Compiled",
    "access",
    "codes",
    "compile_file",
    "launch_at",
    "launches_at",
    "line_of",
    "only",
    "verdicts_by_kernel",
]
