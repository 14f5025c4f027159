"""tilelens-lsp: static memory-safety checks for Triton kernels, in the editor and in CI.

The analysis (directives → host compile → reader → access graph → clients) never imports the
server; the server and the CLI only orchestrate workers and format results.
"""

__version__ = "0.1.0"

__all__ = ["check_launch"]


def __getattr__(name: str):
    """`tilelens_lsp.check_launch`, imported on first use: the package itself stays cheap to import
    (the worker and the pytest plugin import it in every process)."""
    if name == "check_launch":
        from tilelens_lsp.api import check_launch  # the public API, one layer up: see tests/test_architecture.py

        return check_launch
    raise AttributeError(f"module 'tilelens_lsp' has no attribute {name!r}")
