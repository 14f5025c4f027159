"""Conformance counts, kept across the session and printed at its end whatever `-s`/`-q` say.

The summary line is the suite's measurement (docs/performance.md):
`conformance: K kernels, L launches, C compared, C conforming, R refused (kind: n, ...)`.
"""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass, field

import pytest


@dataclass
class ConformanceStats:
    kernels: set = field(default_factory=set)  # (file, kernel)
    launches: int = 0  # launch x autotune config records seen
    compared: int = 0
    conforming: int = 0
    refused: Counter = field(default_factory=Counter)
    not_analyzed: Counter = field(default_factory=Counter)  # compile-error, crashed, ... (failures)
    engines: Counter = field(default_factory=Counter)  # summary / enumeration, per compiled config
    engine_files: set = field(default_factory=set)

    def line(self) -> str:
        kinds = ", ".join(f"{k}: {n}" for k, n in sorted(self.refused.items()))
        text = (
            f"conformance: {len(self.kernels)} kernels, {self.launches} launches, {self.compared} compared, "
            f"{self.conforming} conforming, {sum(self.refused.values())} refused ({kinds})"
        )
        if self.engines:
            text += (
                f"; configs answered by the affine summary: {self.engines['summary']}, by enumeration: "
                f"{self.engines['enumeration']}"
            )
        if self.not_analyzed:
            text += "; not analyzed: " + ", ".join(f"{k}: {n}" for k, n in sorted(self.not_analyzed.items()))
        return text


_STATS = pytest.StashKey[ConformanceStats]()


def pytest_configure(config):
    config.stash[_STATS] = ConformanceStats()


@pytest.fixture(scope="session")
def conformance_stats(request) -> ConformanceStats:
    return request.config.stash[_STATS]


@pytest.fixture(scope="session")
def oracle_results() -> dict[str, dict]:
    """path -> the interpreter's footprints for every launch of that corpus file (oracle.run_file)."""
    from tests.support.oracle_runner import corpus_files, run_oracle_files

    use_cache = os.environ.get("TILELENS_CONFORMANCE_NO_CACHE") != "1"
    return run_oracle_files(corpus_files(), use_cache=use_cache)


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    stats = config.stash.get(_STATS, None)
    if stats is not None and stats.launches:
        terminalreporter.write_line(stats.line())
