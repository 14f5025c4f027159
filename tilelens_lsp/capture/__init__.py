"""Capture: launches recorded from a real run. In: a command to run (tests, a training step). Out: `[[launch]]`
tables of a `tilelens.toml` (read back by `launches.toml`), each tensor as its exact view.

`runner` runs the command with `hook.py` copied, by path, first on its processes' PYTHONPATH; the hook
imports nothing from tilelens_lsp (the program may use another interpreter) and only records.
"""
