"""Reliability and safety tests: shared setup and the one-line figures summary at the session's end.

pytest puts this folder on sys.path (for relfig) and tests/ (for the `lsp` package: lsphelp and the
raw client of tests/lsp/test_process.py); no sys.path edits here.
"""

from __future__ import annotations

import relfig


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    line = relfig.summary()
    if line:
        terminalreporter.write_line(line)
