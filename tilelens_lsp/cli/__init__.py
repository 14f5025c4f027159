"""The command-line face: `tilelens-lsp check` for CI, `capture`, and the entry that starts the server.

In: paths, flags and the environment. Out: verdicts as text, JSON, SARIF or GitHub annotations
(report.py) and an exit code. Files are analysed in worker processes (worker/process.py); the
server (lsp/) is imported only when no subcommand is given. Nothing here imports pygls.
"""
