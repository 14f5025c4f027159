"""Reliability and safety tests: shared setup and the one-line figures summary at the session's end."""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
LSP_TESTS = HERE.parent / "lsp"
for folder in (HERE, LSP_TESTS):           # relfig; lsphelp and the raw client of tests/lsp
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))

import relfig  # noqa: E402


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    line = relfig.summary()
    if line:
        terminalreporter.write_line(line)
