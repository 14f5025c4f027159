"""End-to-end tests of the language server, and the helpers other suites share (lsphelp, RawClient).

A package, so tests/reliability imports them as `lsp.lsphelp` and `lsp.test_process` without
editing sys.path (pytest puts tests/ on it for tests/conftest.py).
"""
