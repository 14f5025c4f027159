"""The analysis worker: a subprocess in the user's Python that runs the pipeline, and the parent's handle on it.

In: analysis requests (a file path, its workspace root, settings) as JSON lines from the parent.
Out: `FileResult`s, or a TL050 when the process crashed, hung or ran out of memory.
`main` runs in the child (`python -m tilelens_lsp.worker`); `process` in the CLI and the server.
This `__init__` imports neither, so the child never loads the parent's side and vice versa.
"""
