"""tilelens-lsp: static memory-safety checks for Triton kernels, in the editor and in CI.

The analysis (directives → host compile → reader → access graph → clients) never imports the
server; the server and the CLI only orchestrate workers and format results.
"""

__version__ = "0.1.0"
